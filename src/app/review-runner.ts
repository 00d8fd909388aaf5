/**
 * The App's in-process review runner (the `ReviewRunner` port app.ts calls): a label starts a
 * run, an approval resumes it, a stop or a push ends it. Each call returns at once; the work
 * runs after the webhook's handler has returned, one session at a time per run (and at most
 * `maxConcurrent` runs at once), and every failure, a GitHub API error included, becomes the
 * run's terminal state with its reason in the status comment, never an unhandled rejection.
 *
 * A run's files live under `<runsDir>/<run>/`, all outside the clone:
 * - `run/`: the run directory (state.json, approvals.jsonl, the artifacts, report.md);
 * - `clone/`: the pull request's repository, cloned once at the start;
 * - `worktree/`: the run's own linked worktree of the clone (the agents work there);
 *
 * The token reaches git only as an `http.<origin>/.extraHeader` in the environment of git's own
 * processes (GIT_CONFIG_COUNT/KEY/VALUE): never on disk (a file the repository's commands, which
 * are the pull request's code, could read while the run works), never in argv (which any user on
 * the machine can read in the process list), never in the clone's `.git/config` or the remote
 * URL. The repository's commands and the agents' tools run with a stripped environment, so they
 * never see it. Global config is /dev/null: the App's user config plays no part.
 *
 * The core does the run (runReview over DoctrineSteps with the App's effects). Its gate pauses
 * become the status comment's ledger (the gate, the hash, since when); an approval the App
 * accepted is appended to the run's approvals.jsonl and the run resumes, and the core checks
 * the hash again at the gate and inside every publisher.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ReviewRunStore } from "../adapters/fs/review-run-store.ts";
import { GIT_HARDENING } from "../adapters/git/branch-writer.ts";
import { describeApiError } from "../adapters/github/client.ts";
import { appEffects, LEFT_OUT_FILE, type LeftOut } from "../adapters/github/review-effects.ts";
import type { Ledger } from "../core/app/triggers.ts";
import type { ModelPort } from "../core/engine/ports.ts";
import type { ResolvedProject } from "../core/model/project.ts";
import type { RunStatusDetails } from "../core/render/run-status.ts";
import { runReview } from "../core/review/orchestrator.ts";
import type { TerminalState } from "../core/review/phases.ts";
import type { ReviewOutcome, ReviewRunState } from "../core/review/ports.ts";
import { composeReport } from "../core/review/report.ts";
import { DoctrineSteps } from "../core/review/steps.ts";
import type { ReviewRunner, RunJob, RunReporter } from "./app.ts";

export interface InProcessRunnerOptions {
  /** The App's slug: commits are `<slug>[bot]`'s, and its replies are recognised by it. */
  appSlug: string;
  /** Where runs live (`<runsDir>/<run>/…`); must survive between webhook events. */
  runsDir: string;
  /** The review-response agents project. */
  agents: ResolvedProject;
  /** A model for one session (a script is consumed afresh per session, as in local mode). */
  model: () => Promise<ModelPort> | ModelPort;
  /** The clone URL of a job's repository. Default `https://github.com/<owner>/<repo>.git`. */
  cloneUrl?: (job: RunJob) => string;
  /** Runs executing at once. Default 1. */
  maxConcurrent?: number;
  now?: () => Date;
  log?: (line: string) => void;
  /** The environment the repository's commands' variables are read from. Default process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  commandTimeoutMs?: number;
}

const SAFE_RUN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const SAFE_BRANCH = /^(?!-)(?!.*\.\.)[A-Za-z0-9._/-]{1,250}$/;

export interface InProcessRunner extends ReviewRunner {
  /** Resolves when no session is running or queued (tests; a graceful shutdown). */
  idle(): Promise<void>;
  /** Where a run's files are. */
  paths(run: string): RunPaths;
}

export interface RunPaths {
  base: string;
  run: string;
  clone: string;
  worktree: string;
  gitDir: string;
  job: string;
}

/** What the runner keeps about a job between sessions (never a token). */
interface SavedJob {
  repo: { owner: string; repo: string };
  pullRequest: number;
  head: string;
  run: string;
  triggerAt: string;
  branch: string;
}

export function inProcessRunner(o: InProcessRunnerOptions): InProcessRunner {
  const now = o.now ?? (() => new Date());
  const log = o.log ?? ((l: string) => process.stderr.write(`terfyn app: ${l}\n`));
  const chains = new Map<string, Promise<void>>();
  const limit = Math.max(1, o.maxConcurrent ?? 1);
  let active = 0;
  const waiting: (() => void)[] = [];
  const slot = async () => {
    if (active >= limit) await new Promise<void>((r) => waiting.push(r));
    active++;
  };
  const free = () => {
    active--;
    waiting.shift()?.();
  };

  const paths = (run: string): RunPaths => {
    if (!SAFE_RUN.test(run)) throw new Error(`not a run id: ${JSON.stringify(run)}`);
    const base = join(o.runsDir, run);
    return {
      base,
      run: join(base, "run"),
      clone: join(base, "clone"),
      worktree: join(base, "worktree"),
      gitDir: join(base, "git"),
      job: join(base, "job.json"),
    };
  };

  /** Queues `work` after the run's earlier sessions; its failure is reported, never thrown. */
  const enqueue = (
    job: RunJob,
    reporter: RunReporter,
    fallback: Ledger,
    work: () => Promise<void>,
  ) => {
    const prev = chains.get(job.run) ?? Promise.resolve();
    const next = prev.then(async () => {
      await slot();
      try {
        await work();
      } catch (e) {
        await fail(job, reporter, fallback, e);
      } finally {
        free();
      }
    });
    chains.set(job.run, next);
    void next.finally(() => {
      if (chains.get(job.run) === next) chains.delete(job.run);
    });
  };

  /** A failure outside the core (cloning, a token, the status comment): the run ends stuck. */
  const fail = async (job: RunJob, reporter: RunReporter, ledger: Ledger, e: unknown) => {
    const reason = describeApiError(e, `run ${job.run}`);
    log(reason);
    try {
      const p = paths(job.run);
      if (existsSync(p.run)) {
        const store = await ReviewRunStore.open(p.run);
        const state = await store.readState().catch(() => undefined);
        if (state?.status !== "ended") await endRun(store, state, job.run, "stuck", reason);
      }
      await cleanUp(p, true);
    } catch (inner) {
      log(`could not record the end of run ${job.run}: ${(inner as Error).message}`);
    }
    try {
      await reporter.update(
        { ...ledger, gate: undefined, hash: undefined, terminal: "stuck" },
        {
          note: reason,
        },
      );
    } catch (inner) {
      log(describeApiError(inner, `reporting the end of run ${job.run}`));
    }
  };

  /** Ends a run the core is not running (stopped, or failed outside it), with a report. */
  const endRun = async (
    store: ReviewRunStore,
    state: ReviewRunState | undefined,
    run: string,
    terminal: TerminalState,
    reason: string,
  ) => {
    const report = composeReport({
      terminal,
      reason,
      ...(state?.phase ? { phase: state.phase } : {}),
    });
    await store.write("report.md", report);
    const ended: ReviewRunState = {
      ...(state ?? {
        run_id: run,
        status: "ended",
        build: { iteration: 0, identical_retries: 0, escalations: 0 },
      }),
      status: "ended",
      terminal,
      reason,
      updated_at: now().toISOString(),
    };
    delete ended.phase;
    delete ended.awaiting;
    await store.writeState(ended);
    return report;
  };

  /** What a session leaves (`git/`, where earlier versions kept a token) goes at its end; the clone and worktree when the run ends. */
  const cleanUp = async (p: RunPaths, ended: boolean) => {
    await rm(p.gitDir, { recursive: true, force: true });
    if (ended) {
      await rm(p.worktree, { recursive: true, force: true });
      await rm(p.clone, { recursive: true, force: true });
    }
  };

  const gitOptions = (auth: Record<string, string>) => ({
    identity: { name: `${o.appSlug}[bot]`, email: `${o.appSlug}[bot]@users.noreply.github.com` },
    env: { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1", ...auth },
  });

  /** The token for one session, as git config in the environment, for the clone URL's origin only. */
  const tokenEnv = async (url: string, job: RunJob): Promise<Record<string, string>> => {
    if (!/^https:\/\//.test(url)) return {};
    const token = job.token ? await job.token() : undefined;
    return token ? gitAuthEnv(new URL(url).origin, token) : {};
  };

  const cloneUrl = (job: RunJob) =>
    o.cloneUrl?.(job) ?? `https://github.com/${job.repo.owner}/${job.repo.repo}.git`;

  /** Runs the core until it pauses or ends, and reports that on the status comment. */
  const session = async (saved: SavedJob, job: RunJob, reporter: RunReporter) => {
    const p = paths(saved.run);
    const auth = await tokenEnv(cloneUrl(job), job);
    let outcome: ReviewOutcome;
    let store: ReviewRunStore;
    try {
      if (!existsSync(p.clone)) await clone(cloneUrl(job), saved.branch, p, auth);
      store = await ReviewRunStore.open(p.run);
      const progress = (l: string) => log(`${saved.run}: ${l}`);
      const effects = appEffects({
        gateway: job.gateway,
        repo: saved.repo,
        pullRequest: saved.pullRequest,
        triggerAt: saved.triggerAt,
        run: saved.run,
        appSlug: o.appSlug,
        cloneDir: p.clone,
        worktreeDir: p.worktree,
        runDir: p.run,
        git: gitOptions(auth),
        agents: o.agents,
        model: await o.model(),
        progress,
        ...(o.env ? { env: o.env } : {}),
        ...(o.commandTimeoutMs ? { commandTimeoutMs: o.commandTimeoutMs } : {}),
      });
      const steps = new DoctrineSteps(effects, { files: store });
      const s = store;
      outcome = await runReview({
        runId: saved.run,
        files: s,
        readState: () => s.readState(),
        writeState: (st) => s.writeState(st),
        approvals: () => s.approvals(),
        steps,
        now: () => now().toISOString(),
        progress,
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
    const report = (await store.read("report.md")) ?? "";
    const leftOut = await readLeftOut(p);
    const details: RunStatusDetails = {
      report,
      ...(leftOut.length > 0 ? { leftOut } : {}),
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
    await cleanUp(p, true);
    await reporter.update(
      { ...ledger, phase: "report", terminal: outcome.terminal },
      { ...details, note: `${outcome.terminal}: ${outcome.reason}` },
    );
  };

  const readSaved = async (p: RunPaths): Promise<SavedJob> => {
    try {
      return JSON.parse(await readFile(p.job, "utf8")) as SavedJob;
    } catch {
      throw new Error(`run ${JSON.stringify(p.base)} is not known to this App's runner`);
    }
  };

  const ledgerOf = (job: RunJob): Ledger => ({
    run: job.run,
    pull_request: job.pullRequest,
    head: job.head,
    phase: "intake",
  });

  return {
    paths,

    async idle() {
      while (chains.size > 0) await Promise.allSettled([...chains.values()]);
    },

    start(job, reporter) {
      enqueue(job, reporter, ledgerOf(job), async () => {
        const p = paths(job.run);
        if (existsSync(p.job)) {
          log(`run ${job.run} already exists; the start is not repeated`);
          return;
        }
        const branch = job.branch ?? "";
        if (!SAFE_BRANCH.test(branch))
          throw new Error(
            `the pull request's branch ${JSON.stringify(branch)} is not a plain branch name`,
          );
        const saved: SavedJob = {
          repo: { owner: job.repo.owner, repo: job.repo.repo },
          pullRequest: job.pullRequest,
          head: job.head,
          run: job.run,
          triggerAt: job.triggerAt,
          branch,
        };
        await mkdir(p.base, { recursive: true });
        await writeFile(p.job, `${JSON.stringify(saved, null, 2)}\n`);
        await session(saved, job, reporter);
      });
    },

    approve(job, ledger, by, reporter) {
      enqueue(job, reporter, ledger, async () => {
        const p = paths(ledger.run);
        const saved = await readSaved(p);
        const store = await ReviewRunStore.open(p.run);
        const state = await store.readState();
        const awaiting = state?.status === "awaiting-approval" ? state.awaiting : undefined;
        // The approval the App accepted must be of exactly what this run awaits.
        if (!state || !awaiting || awaiting.gate !== ledger.gate || awaiting.hash !== ledger.hash) {
          await reporter.update(ledger, {
            note: `The approval by @${by.login} was not recorded: the run does not await ${ledger.hash ?? "anything"} (it is ${state?.status ?? "unknown"}${state?.awaiting ? `, awaiting ${state.awaiting.hash}` : ""}).`,
          });
          return;
        }
        await store.appendApproval({
          gate: awaiting.gate,
          hash: awaiting.hash,
          approved_at: now().toISOString(),
          by: `@${by.login} (${by.role})`,
        });
        const resumed: Ledger = { ...ledger, phase: state.phase ?? ledger.phase };
        delete resumed.gate;
        delete resumed.hash;
        delete resumed.since;
        await reporter.update(resumed, {
          note: `@${by.login} approved the ${awaiting.gate} gate (${awaiting.hash}); the run continues.`,
        });
        await session(saved, job, reporter);
      });
    },

    stop(job, ledger, reason, reporter) {
      enqueue(job, reporter, ledger, async () => {
        const p = paths(ledger.run);
        let report: string | undefined;
        if (existsSync(p.run)) {
          const store = await ReviewRunStore.open(p.run);
          const state = await store.readState();
          if (state?.status === "ended") {
            await cleanUp(p, true);
            return;
          }
          report = await endRun(store, state, ledger.run, "stuck", reason);
        }
        await cleanUp(p, true);
        await reporter.update(
          { ...ledger, gate: undefined, hash: undefined, terminal: "stuck" },
          { note: reason, ...(report ? { report } : {}) },
        );
      });
    },
  };
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
  const env: Record<string, string> = {};
  for (const k of ["PATH", "HOME", "LANG", "TMPDIR"]) {
    const v = process.env[k];
    if (v !== undefined) env[k] = v;
  }
  Object.assign(env, {
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_CONFIG_NOSYSTEM: "1",
    ...auth,
    GIT_TERMINAL_PROMPT: "0",
    LC_ALL: "C",
  });
  const args = [
    ...GIT_HARDENING,
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
  const stderr = await new Promise<string>((resolve, reject) => {
    const child = spawn("git", args, { env, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.on("data", (c: Buffer) => {
      err += c.toString("utf8");
    });
    child.on("error", (e) => reject(new Error(`cannot run git: ${e.message}`)));
    child.on("close", (code) =>
      code === 0
        ? resolve(err)
        : reject(
            new Error(
              `cloning the pull request's branch ${branch} failed (exit ${code}): ${err.trim().split("\n").at(-1) ?? ""}`,
            ),
          ),
    );
  });
  void stderr;
}

/** The review-response agents shipped with Terfyn, found from this file (src/ or dist/). */
export function agentsProjectDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, "agents", "review-response");
    if (existsSync(join(candidate, "terfyn.yaml"))) return candidate;
    dir = dirname(dir);
  }
  throw new Error(
    "cannot find agents/review-response, the review-response agents shipped with Terfyn",
  );
}

/** Where runs live by default: TERFYN_APP_RUNS_DIR, else under the OS temp directory. */
export function defaultRunsDir(env: Readonly<Record<string, string | undefined>>): string {
  return env.TERFYN_APP_RUNS_DIR ?? join(tmpdir(), "terfyn-app-runs");
}
