/**
 * The App as a standalone server (the package's start script; Probot's run: APP_ID, PRIVATE_KEY,
 * WEBHOOK_SECRET from the environment or .env). TERFYN_APP_SLUG names the App (its bot login is
 * `<slug>[bot]`). Review runs execute in a worker process this server forks (worker-runner.ts),
 * whose environment holds none of the App's secrets: their files go under
 * TERFYN_APP_RUNS_DIR (default: the OS temp directory's terfyn-app-runs; it must survive
 * between webhook events, so point it at a persistent disk); the agents' models come from
 * ANTHROPIC_API_KEY, or, offline, from the model script TERFYN_MODEL_SCRIPT drives every agent
 * with. TERFYN_APP_MAX_MODEL_CALLS bounds each run's model calls (default: every agent step a run
 * can take at its agent's maxTurns), TERFYN_APP_MAX_TOKENS its input and output tokens (default:
 * 32,768 per call of that budget), TERFYN_LOCK_STALE_SECONDS how long a run's lock taken on
 * another host may go without its holder's heartbeat before it is taken over (default 600, at
 * least 60); a value that is not a whole number stops the App at startup.
 * TERFYN_APP_RUNNER=unwired ships the runner that ends every run `stuck` instead.
 * TERFYN_APP_PLACEMENT=actions runs nothing here: a label dispatches the workflow
 * TERFYN_APP_WORKFLOW (default terfyn-review-fix.yml) on the default branch, and the Action's
 * `mode: review-fix` runs it on the repository's runners (docs/github-app-placement.md). To host
 * it behind another Node server, mount `createNodeMiddleware(terfynApp(...), { probot })`.
 */

import { run } from "probot";
import { defaultRunsDir, shippedAgents } from "../adapters/review/review-runner.ts";
import { workerRunner } from "../adapters/review/worker-runner.ts";
import { openSandbox, visibleInSandbox } from "../adapters/sandbox/open-sandbox.ts";
import { type Placement, placementFromEnv, type ReviewRunner, terfynApp } from "./app.ts";
import { secretFiles } from "./secret-files.ts";
import { unwiredRunner } from "./unwired-runner.ts";

const appSlug = process.env.TERFYN_APP_SLUG;
if (!appSlug) {
  process.stderr.write(
    "terfyn app: set TERFYN_APP_SLUG to the App's slug (its bot login is <slug>[bot])\n",
  );
  process.exit(1);
}

/** A setting that is a whole number of at least `min`, or unset (the default); else the App stops. */
function integerSetting(name: string, min = 1): number | undefined {
  const v = process.env[name];
  if (v === undefined || v === "") return undefined;
  const n = Number(v);
  if (!/^\s*\d+\s*$/.test(v) || !Number.isSafeInteger(n) || n < min) {
    process.stderr.write(
      `terfyn app: ${name} must be ${min === 1 ? "a positive integer" : `an integer of at least ${min}`}, not ${JSON.stringify(v)}\n`,
    );
    process.exit(1);
  }
  return n;
}

// Read before anything starts, so a wrong value stops the App at once.
const maxModelCalls = integerSetting("TERFYN_APP_MAX_MODEL_CALLS");
const maxTokens = integerSetting("TERFYN_APP_MAX_TOKENS");
// At least two of a holder's 30-second heartbeats: a live holder is never judged stale.
const lockStaleSeconds = integerSetting("TERFYN_LOCK_STALE_SECONDS", 60);

let placement: Placement;
try {
  placement = placementFromEnv(process.env);
} catch (e) {
  process.stderr.write(`terfyn app: ${(e as Error).message}\n`);
  process.exit(1);
}

async function runner(slug: string): Promise<ReviewRunner> {
  // Placed on Actions, this process executes no run: no agents, no model key, no run files.
  if (process.env.TERFYN_APP_RUNNER === "unwired" || placement.kind === "actions")
    return unwiredRunner;
  // The shipped agents must validate before the App takes a label (the worker loads them again).
  try {
    await shippedAgents();
  } catch (e) {
    process.stderr.write(`terfyn app: ${(e as Error).message}\n`);
    process.exit(1);
  }
  if (!process.env.TERFYN_MODEL_SCRIPT && !process.env.ANTHROPIC_API_KEY)
    process.stderr.write(
      "terfyn app: neither ANTHROPIC_API_KEY nor TERFYN_MODEL_SCRIPT is set: agents with anthropic/ models will fail and their runs end stuck\n",
    );
  const runsDir = defaultRunsDir(process.env);
  // Nothing a run keeps may show inside another run's sandbox (other repositories' clones).
  const shown = visibleInSandbox(runsDir, process.env);
  if (shown) {
    process.stderr.write(
      `terfyn app: the runs directory ${runsDir} is under ${shown}, which every sandbox shows read-only, so one repository's commands could read another's runs; set TERFYN_APP_RUNS_DIR to a directory outside it (for example under /var/lib or /srv)\n`,
    );
    process.exit(1);
  }
  // The App executes repositories' code only in the sandbox: without one it does not start.
  const hide = secretFiles(process.env, process.cwd());
  try {
    await openSandbox({ env: process.env, hide });
  } catch (e) {
    process.stderr.write(
      `terfyn app: ${(e as Error).message} (the App never runs a repository's commands unconfined; to run none here, place runs on GitHub Actions: TERFYN_APP_PLACEMENT=actions)\n`,
    );
    process.exit(1);
  }
  // The sessions run in a worker process whose environment holds none of the App's secrets.
  return workerRunner({
    appSlug: slug,
    runsDir,
    env: process.env,
    sandboxHide: hide,
    maxConcurrent: Number(process.env.TERFYN_APP_MAX_RUNS ?? "1") || 1,
    ...(maxModelCalls ? { maxModelCalls } : {}),
    ...(maxTokens ? { maxTokens } : {}),
    ...(lockStaleSeconds ? { lockStaleSeconds } : {}),
  });
}

await run(terfynApp({ appSlug, placement, runner: await runner(appSlug) }));
