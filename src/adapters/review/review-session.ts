/**
 * One session of a review run (the review runner's unit of work, review-runner.ts): with the
 * run's lock held, clone the pull request's branch when the run has no clone yet, run the core
 * (runReview over DoctrineSteps with the App's effects) until it pauses at a gate or ends, and
 * say so on the status comment. The model is counted against the run's budgets
 * (model-budget.ts); the token reaches only git's own processes (gitAuthEnv), never the sandbox.
 */

import { existsSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Ledger } from "../../core/app/triggers.ts";
import type { ModelPort } from "../../core/engine/ports.ts";
import type { PriceTable } from "../../core/model/prices.ts";
import type { ResolvedProject } from "../../core/model/project.ts";
import type { RunStatusDetails } from "../../core/render/run-status.ts";
import { runReview } from "../../core/review/orchestrator.ts";
import type { ReviewOutcome } from "../../core/review/ports.ts";
import { DoctrineSteps } from "../../core/review/steps.ts";
import { ReviewRunStore } from "../fs/review-run-store.ts";
import { GitProcessError, hardenedGitEnv, runGitProcess } from "../git/git-process.ts";
import { appEffects, LEFT_OUT_FILE, type LeftOut, readNotices } from "../github/review-effects.ts";
import type { Sandbox } from "../sandbox/sandbox.ts";
import type { WorkFiles } from "./local-effects.ts";
import { budgeted, describeSpend, type ModelSpend, readSpendFile } from "./model-budget.ts";
import type { InterruptedRun, RunJob, RunReporter } from "./review-runner-port.ts";

/** Where a run's files are (`<runsDir>/<run>/…`). */
export interface RunPaths {
  base: string;
  run: string;
  clone: string;
  worktree: string;
  gitDir: string;
  job: string;
  spend: string;
}

/** What every session of a runner shares: the runner's options, resolved. */
export interface SessionContext {
  appSlug: string;
  agents: ResolvedProject;
  sandbox: Sandbox;
  model: () => Promise<ModelPort> | ModelPort;
  cloneUrl: (job: RunJob) => string;
  /** Model calls and tokens one run may spend over all its sessions. */
  budget: number;
  tokenBudget: number;
  /** What the cost estimate is priced with (default: the shipped prices). */
  prices?: PriceTable;
  now: () => Date;
  log: (line: string) => void;
  env?: Readonly<Record<string, string | undefined>>;
  commandTimeoutMs?: number;
  restoreWork?: (run: string) => Promise<WorkFiles | undefined>;
}

/**
 * Runs the core until it pauses or ends, and reports that on the status comment. The caller
 * holds the run's lock; `verify` throws once it no longer does.
 */
export async function runSession(
  ctx: SessionContext,
  saved: InterruptedRun,
  job: RunJob,
  reporter: RunReporter,
  p: RunPaths,
  verify: () => void,
): Promise<void> {
  const { log, now } = ctx;
  const auth = await tokenEnv(ctx.cloneUrl(job), job);
  let outcome: ReviewOutcome;
  let store: ReviewRunStore;
  const spend = await readSpend(ctx, p);
  try {
    if (!existsSync(p.clone)) await clone(ctx.cloneUrl(job), saved.branch, p, auth);
    store = await ReviewRunStore.open(p.run);
    store.guard = verify;
    const progress = (l: string) => log(`${saved.run}: ${l}`);
    const effects = appEffects({
      gateway: job.gateway,
      repo: saved.repo,
      pullRequest: saved.pullRequest,
      triggerAt: saved.triggerAt,
      run: saved.run,
      appSlug: ctx.appSlug,
      cloneDir: p.clone,
      worktreeDir: p.worktree,
      runDir: p.run,
      git: gitOptions(ctx.appSlug, auth),
      agents: ctx.agents,
      sandbox: ctx.sandbox,
      model: budgeted(await ctx.model(), spend, async () => {
        verify();
        await writeFile(p.spend, `${JSON.stringify(spend)}\n`);
      }),
      progress,
      ...(ctx.env ? { env: ctx.env } : {}),
      ...(ctx.commandTimeoutMs ? { commandTimeoutMs: ctx.commandTimeoutMs } : {}),
      ...(ctx.restoreWork
        ? { restoreWork: () => ctx.restoreWork?.(saved.run) ?? Promise.resolve(undefined) }
        : {}),
    });
    const steps = new DoctrineSteps(effects, { files: store });
    const s = store;
    let shown: string | undefined;
    outcome = await runReview({
      runId: saved.run,
      files: s,
      readState: () => s.readState(),
      writeState: async (st) => {
        await s.writeState(st);
        // The status comment follows the run: each phase it enters is shown there.
        if (st.status === "running" && st.phase && st.phase !== shown) {
          shown = st.phase;
          await reporter.update(
            {
              run: saved.run,
              pull_request: saved.pullRequest,
              head: saved.head,
              phase: st.phase,
            },
            { note: `The run is in phase ${st.phase}.`, spend: describeSpend(spend, ctx.prices) },
            true,
          );
        }
      },
      approvals: () => s.approvals(),
      steps,
      now: () => now().toISOString(),
      progress,
      spend: () => describeSpend(spend, ctx.prices),
    });
  } finally {
    await rm(p.gitDir, { recursive: true, force: true });
  }
  const ledger: Ledger = {
    run: saved.run,
    pull_request: saved.pullRequest,
    head: saved.head,
    phase: "intake",
  };
  let report = (await store.read("report.md")) ?? "";
  const leftOut = await readLeftOut(p);
  const notices = await readNotices(p.run);
  if (notices.length > 0 && !report.includes("## On GitHub")) {
    report = `${report.trimEnd()}\n\n## On GitHub\n\n${notices.map((n) => `- ${n}`).join("\n")}\n`;
    await store.write("report.md", report);
  }
  const details: RunStatusDetails = {
    report,
    spend: describeSpend(spend, ctx.prices),
    ...(leftOut.length > 0 ? { leftOut } : {}),
    ...(notices.length > 0 ? { notices } : {}),
  };
  if (outcome.status === "awaiting-approval") {
    await reporter.update(
      {
        ...ledger,
        phase: `gate-${outcome.gate}`,
        gate: outcome.gate,
        hash: outcome.hash,
        since: now().toISOString(),
      },
      {
        ...details,
        note: `The run waits at the ${outcome.gate} gate for approval of ${outcome.artifact} (${outcome.hash}).`,
      },
    );
    return;
  }
  if (outcome.status === "interrupted") {
    // Paused, not ended: the clone and worktree stay for the resume.
    await reporter.update(
      { ...ledger, phase: outcome.phase, interrupted: true },
      {
        ...details,
        note: `The run stopped in phase ${outcome.phase}, not ended: ${outcome.reason}. Nothing is lost (approvals, artifacts, the answers the agents already had); a writer's \`/terfyn resume\` goes on in that phase.`,
      },
    );
    return;
  }
  await cleanUp(p, true);
  await reporter.update(
    { ...ledger, phase: "report", terminal: outcome.terminal },
    { ...details, note: `${outcome.terminal}: ${outcome.reason}` },
  );
}

/** The run's model spend so far (model-spend.json), against this runner's budgets. */
function readSpend(ctx: SessionContext, p: RunPaths): Promise<ModelSpend> {
  return readSpendFile(p.spend, ctx.budget, ctx.tokenBudget);
}

/** What a session leaves (`git/`, where earlier versions kept a token) goes at its end; the clone and worktree when the run ends. */
export async function cleanUp(p: RunPaths, ended: boolean): Promise<void> {
  await rm(p.gitDir, { recursive: true, force: true });
  if (ended) {
    await rm(p.worktree, { recursive: true, force: true });
    await rm(p.clone, { recursive: true, force: true });
  }
}

/** How the run's git runs: as `<slug>[bot]`, no global or system config, the token in its environment. */
function gitOptions(appSlug: string, auth: Record<string, string>) {
  return {
    identity: { name: `${appSlug}[bot]`, email: `${appSlug}[bot]@users.noreply.github.com` },
    env: { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1", ...auth },
  };
}

/** The token for one session, as git config in the environment, for the clone URL's origin only. */
async function tokenEnv(url: string, job: RunJob): Promise<Record<string, string>> {
  // A URL (not a path on disk): the token goes to that server only, over the protocol the
  // App was configured with (GHE_PROTOCOL; the API calls there carry it the same way).
  if (!/^https?:\/\//.test(url)) return {};
  const token = job.token ? await job.token() : undefined;
  return token ? gitAuthEnv(new URL(url).origin, token) : {};
}

async function readLeftOut(
  p: RunPaths,
): Promise<{ comment: string; author: string; reason: string }[]> {
  try {
    const list = JSON.parse(await readFile(join(p.run, LEFT_OUT_FILE), "utf8")) as LeftOut[];
    return list.map((l) => ({ comment: l.comment, author: l.author, reason: l.reason }));
  } catch {
    return [];
  }
}

/**
 * An installation token as git config carried in the environment (GIT_CONFIG_COUNT/KEY/VALUE):
 * an extra Authorization header for `origin` only. Refuses a token that could break the header.
 */
export function gitAuthEnv(origin: string, token: string): Record<string, string> {
  if (!/^[A-Za-z0-9_.-]+$/.test(token))
    throw new Error("the installation token has unexpected characters");
  const basic = Buffer.from(`x-access-token:${token}`, "utf8").toString("base64");
  return {
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: `http.${origin}/.extraHeader`,
    GIT_CONFIG_VALUE_0: `AUTHORIZATION: basic ${basic}`,
  };
}

/**
 * Clones the pull request's branch into `p.clone`, with git hardened as the branch writer runs
 * it (no hooks, no credential helper or askpass, no ext:: transport) and its environment an
 * allowlist; the token comes only from `auth` (gitAuthEnv), in git's environment.
 */
async function clone(
  url: string,
  branch: string,
  p: RunPaths,
  auth: Record<string, string>,
): Promise<void> {
  if (url.startsWith("-")) throw new Error(`not a clone URL: ${url}`);
  await rm(p.clone, { recursive: true, force: true });
  await mkdir(dirname(p.clone), { recursive: true });
  const args = [
    "clone",
    "--quiet",
    "--no-tags",
    "--no-recurse-submodules",
    "--branch",
    branch,
    "--",
    url,
    p.clone,
  ];
  try {
    await runGitProcess(args, { env: hardenedGitEnv(auth) });
  } catch (e) {
    if (!(e instanceof GitProcessError)) throw e;
    throw new Error(
      e.exitCode === null
        ? e.stderr
        : `cloning the pull request's branch ${branch} failed (exit ${e.exitCode}): ${e.stderr.trim().split("\n").at(-1) ?? ""}`,
    );
  }
}
