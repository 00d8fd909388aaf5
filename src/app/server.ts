/**
 * The App as a standalone server (the package's start script; Probot's run: APP_ID, PRIVATE_KEY,
 * WEBHOOK_SECRET from the environment or .env; none of them: Probot's setup flow). `.env` is
 * loaded first, as Probot loads it, and the key read as Probot reads it; then every setting is
 * checked (core/app/app-env.ts), one message naming each problem. Webhooks are taken at `/` too
 * (where the setup flow registers them) unless WEBHOOK_PATH is set.
 * TERFYN_APP_SLUG names the App (its bot login is `<slug>[bot]`); unset, it is read from
 * `GET /app`. Review runs execute in a worker process this server forks (worker-runner.ts),
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

import { createProbot, run } from "probot";
import { loadPriceTable } from "../adapters/review/model-budget.ts";
import { appAgentModels, defaultRunsDir, shippedAgents } from "../adapters/review/review-runner.ts";
import { workerRunner } from "../adapters/review/worker-runner.ts";
import { openSandbox, visibleInSandbox } from "../adapters/sandbox/open-sandbox.ts";
import { appEnvMessage, checkAppEnv, cloneUrlTemplate, webBaseUrl } from "../core/app/app-env.ts";
import { type Placement, placementFromEnv, type ReviewRunner, terfynApp } from "./app.ts";
import { loadEnvFile, modelScriptProblem } from "./env-file.ts";
import { readAppKey } from "./private-key.ts";
import { secretFiles } from "./secret-files.ts";
import { unwiredRunner } from "./unwired-runner.ts";

// Probot's run() loads `.env` from the working directory over the environment; it is loaded
// here first, the same way, so the checks see the credentials Probot will use.
const cwd = process.cwd();
const envFileProblem = loadEnvFile(process.env, cwd);
// Everything the App needs from its environment, checked at once: one message names every
// problem. No credentials at all is Probot's setup (manifest) flow, which registers the App.
// The key is read as Probot will read it (a key it cannot use is a problem, not the setup flow).
const modelScript = modelScriptProblem(process.env, cwd);
const envCheck = checkAppEnv(process.env, readAppKey(process.env, cwd), {
  ...(modelScript ? { modelScript } : {}),
});
if (envFileProblem) envCheck.problems.unshift(envFileProblem);
let placement: Placement = { kind: "in-process" };
try {
  placement = placementFromEnv(process.env);
} catch (e) {
  envCheck.problems.push((e as Error).message);
}
try {
  appAgentModels(process.env);
} catch (e) {
  envCheck.problems.push((e as Error).message);
}
try {
  // The price table the status comment's cost estimate is priced with (TERFYN_PRICES).
  await loadPriceTable(undefined, process.env);
} catch (e) {
  envCheck.problems.push(`TERFYN_PRICES: ${(e as Error).message}`);
}
if (envCheck.problems.length > 0) {
  process.stderr.write(appEnvMessage(envCheck.problems));
  process.exit(1);
}
const setting = (name: string) => {
  const v = process.env[name];
  return v === undefined || v === "" ? undefined : Number(v);
};
const maxModelCalls = setting("TERFYN_APP_MAX_MODEL_CALLS");
const maxTokens = setting("TERFYN_APP_MAX_TOKENS");
const lockStaleSeconds = setting("TERFYN_LOCK_STALE_SECONDS");

/**
 * The App's slug (its bot login is `<slug>[bot]`): TERFYN_APP_SLUG when set, else the App's
 * own answer to `GET /app`, asked once with its JWT.
 */
async function appSlugOf(): Promise<string> {
  const given = process.env.TERFYN_APP_SLUG?.trim();
  if (given) return given;
  try {
    const octokit = await createProbot().auth();
    const { data } = await octokit.request("GET /app");
    const slug = (data as { slug?: unknown } | null)?.slug;
    if (typeof slug !== "string" || slug === "") throw new Error("GET /app answered no slug");
    return slug;
  } catch (e) {
    process.stderr.write(
      `terfyn app: cannot read the App's slug from GitHub (GET /app with the App's key: ${(e as Error).message}); check APP_ID and the private key, or set TERFYN_APP_SLUG\n`,
    );
    process.exit(1);
  }
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
  const hide = secretFiles(process.env, cwd);
  try {
    await openSandbox({ env: process.env, hide });
  } catch (e) {
    process.stderr.write(
      `terfyn app: ${(e as Error).message} (the App never runs a repository's commands unconfined; to run none here, place runs on GitHub Actions: TERFYN_APP_PLACEMENT=actions)\n`,
    );
    process.exit(1);
  }
  // The sessions run in a worker process whose environment holds none of the App's secrets.
  const cloneUrl = cloneUrlTemplate(process.env);
  return workerRunner({
    appSlug: slug,
    ...(cloneUrl ? { cloneUrl } : {}),
    runsDir,
    env: process.env,
    sandboxHide: hide,
    maxConcurrent: Number(process.env.TERFYN_APP_MAX_RUNS ?? "1") || 1,
    ...(maxModelCalls ? { maxModelCalls } : {}),
    ...(maxTokens ? { maxTokens } : {}),
    ...(lockStaleSeconds ? { lockStaleSeconds } : {}),
  });
}

if (envCheck.mode === "setup") {
  // Probot serves the setup page and registers the App from its manifest (app.yml); the App
  // itself is not loaded until APP_ID and the key exist.
  process.stderr.write(
    "terfyn app: no APP_ID or private key: starting the setup flow (register the App, then restart)\n",
  );
  await run(() => {});
} else {
  const appSlug = await appSlugOf();
  process.stderr.write(`terfyn app: running as ${appSlug}[bot]\n`);
  const app = terfynApp({
    appSlug,
    placement,
    runner: await runner(appSlug),
    webUrl: webBaseUrl(process.env),
  });
  await run(async (probot, { addHandler }) => {
    await app(probot);
    // Probot's setup flow registers the webhook URL as the server's own address followed by `/`
    // (manifest-creation.js, without WEBHOOK_PROXY_URL), not its webhook path: unless a path is
    // set, webhooks are taken at `/` too, their signatures verified as on the main path.
    if (!process.env.WEBHOOK_PATH) addHandler(await probot.getNodeMiddleware({ path: "/" }));
  });
}
