/**
 * The in-process review runner (the `ReviewRunner` port of review-runner-port.ts, which the
 * App's handlers and the Action's review-fix mode both use): a label starts a run, an approval
 * resumes it, a stop or a push ends it. Each call returns at once; the work
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
 * Each session holds the run directory's lock (src/adapters/fs/run-lock.ts, as `terfyn review`
 * does), so one process works on a run at a time. A run left `running` by a process that is gone
 * (a restart) is resumed, not abandoned: `interrupted()` lists them at startup and `recover`
 * takes the dead process's lock over (on another host: one whose heartbeat is older than
 * `lockStaleSeconds`) and runs the core again, which continues from its cursor
 * and each agent step from its journal (the publishers' markers make a repeated publish post
 * nothing twice). Each run's model calls and tokens are counted against two budgets
 * (`maxModelCalls`, `maxTokens`), kept in `model-spend.json` across sessions; the status comment
 * shows the spend.
 *
 * The runner is three parts: the queue (run-queue.ts: one piece of work per run at a time, at
 * most `maxConcurrent` runs at once), the session (review-session.ts: the clone, the core, the
 * status comment) and the model budget (model-budget.ts); this file holds the runs' files, their
 * locks and what each port call queues.
 *
 * The core does the run (runReview over DoctrineSteps with the App's effects). Its gate pauses
 * become the status comment's ledger (the gate, the hash, since when); an approval the App
 * accepted is appended to the run's approvals.jsonl and the run resumes, and the core checks
 * the hash again at the gate and inside every publisher.
 */

import { createHash } from "node:crypto";
import { existsSync, mkdirSync, rmdirSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import type { Ledger } from "../../core/app/triggers.ts";
import type { ModelPort } from "../../core/engine/ports.ts";
import { type AgentModels, parseAgentModels } from "../../core/model/agent-models.ts";
import type { PriceTable } from "../../core/model/prices.ts";
import type { ResolvedProject } from "../../core/model/project.ts";
import type { TerminalState } from "../../core/review/phases.ts";
import type { ReviewRunState } from "../../core/review/ports.ts";
import { composeReport } from "../../core/review/report.ts";
import {
  DEFAULT_OTHER_HOST_STALE_MS,
  type HostFacts,
  takeoverMessage,
} from "../../core/runs/run-lock.ts";
import { validateProject } from "../../core/validate.ts";
import { readProjectDirectory } from "../fs/read-project.ts";
import { ReviewRunStore } from "../fs/review-run-store.ts";
import { FileRunLock, hostFacts, RunLockHeldError } from "../fs/run-lock.ts";
import { branchNameProblem } from "../git/branch-writer.ts";
import { describeApiError } from "../github/client.ts";
import { RUN_ID } from "../github/run-state-ref.ts";
import { ModelRouter } from "../models/model-router.ts";
import { ScriptedModel } from "../models/model-script.ts";
import type { Sandbox } from "../sandbox/sandbox.ts";
import type { WorkFiles } from "./local-effects.ts";
import {
  DEFAULT_TOKENS_PER_CALL,
  defaultModelBudget,
  defaultTokenBudget,
  describeSpend,
  type ModelSpend,
} from "./model-budget.ts";
import type { InterruptedRun, ReviewRunner, RunJob, RunReporter } from "./review-runner-port.ts";
import {
  cleanUp,
  gitAuthEnv,
  type RunPaths,
  runSession,
  type SessionContext,
} from "./review-session.ts";
import { RunQueue } from "./run-queue.ts";

export {
  DEFAULT_TOKENS_PER_CALL,
  defaultModelBudget,
  defaultTokenBudget,
  describeSpend,
  gitAuthEnv,
  type ModelSpend,
  type RunPaths,
};

export interface InProcessRunnerOptions {
  /** The App's slug: commits are `<slug>[bot]`'s, and its replies are recognised by it. */
  appSlug: string;
  /** Where runs live (`<runsDir>/<run>/…`); must survive between webhook events. */
  runsDir: string;
  /** The review-response agents project. */
  agents: ResolvedProject;
  /** Where the repository's commands and the agents' tests run (never unconfined here). */
  sandbox: Sandbox;
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
  /**
   * Model calls one run may make over all its sessions (TERFYN_APP_MAX_MODEL_CALLS). Default:
   * `defaultModelBudget(agents)`, every agent step a run can take at its agent's maxTurns.
   */
  maxModelCalls?: number;
  /**
   * Input and output tokens one run may spend over all its sessions, as the model's `usage`
   * reports them (TERFYN_APP_MAX_TOKENS). Default: `defaultTokenBudget` of the call budget.
   */
  maxTokens?: number;
  /** What the report's cost estimate is priced with (default: the shipped prices). */
  prices?: PriceTable;
  /** What this process can tell about a lock's owner (tests: a restarted App sees the old pid gone). */
  lockFacts?: HostFacts;
  /**
   * What a run had written in a worktree that is gone, put back when its worktree is made anew
   * (the Action's review-fix mode: each job is a fresh machine).
   */
  restoreWork?: (run: string) => Promise<WorkFiles | undefined>;
  /**
   * How long a run's lock taken on another host may go without its holder's heartbeat before
   * this App takes it over (TERFYN_LOCK_STALE_SECONDS). Default 600. A lock of a live process
   * on this host is never taken over, however old.
   */
  lockStaleSeconds?: number;
}

export interface InProcessRunner extends ReviewRunner {
  /** Each call queues the run's work and returns at once; the promise settles when it is over. */
  start(job: RunJob, reporter: RunReporter): Promise<void>;
  approve(
    job: RunJob,
    ledger: Ledger,
    by: { login: string; role: string },
    reporter: RunReporter,
  ): Promise<void>;
  stop(job: RunJob, ledger: Ledger, reason: string, reporter: RunReporter): Promise<void>;
  recover(job: RunJob, ledger: Ledger, reporter: RunReporter): Promise<void>;
  /** Resolves when no session is running or queued (tests; a graceful shutdown). */
  idle(): Promise<void>;
  /** The runs this process may resume: `running`, no session here, no live process's lock. */
  interrupted(): Promise<SavedJob[]>;
  /** Where a run's files are. */
  paths(run: string): RunPaths;
  /** Holds a pull request head while a label event is handled (its directory goes on release). */
  claim(key: string): { release(): void } | undefined;
}

/** What the runner keeps about a job between sessions (never a token): what a restart resumes. */
export type SavedJob = InterruptedRun;

/** A run's job.json as it is read back: by the App from its runs directory, by the Action from a saved state. */
export const savedJobSchema: z.ZodType<SavedJob> = z.object({
  repo: z.object({ owner: z.string().min(1), repo: z.string().min(1) }),
  pullRequest: z.number().int().positive(),
  head: z.string().regex(/^[0-9a-f]{40}$/),
  run: z.string().regex(RUN_ID),
  triggerAt: z.string(),
  branch: z.string(),
  installation: z.number().int().optional(),
});

/**
 * Whether the run waits at a gate whose answer is already recorded: the App appended the
 * approval (or refusal) of exactly what the gate awaits, and the process died before the core
 * read it. Such a run was interrupted, not left waiting: resuming it lets the core take the
 * answer (the gate checks it again against the artifact's bytes).
 */
async function answeredGate(
  runDir: string,
  awaiting: { gate: string; hash: string } | undefined,
): Promise<boolean> {
  if (!awaiting) return false;
  return (await (await ReviewRunStore.open(runDir)).approvals()).some(
    (a) => a.gate === awaiting.gate && a.hash === awaiting.hash,
  );
}

/** job.json's bytes as a SavedJob, or undefined when they are not JSON or not a job. */
export function parseSavedJob(bytes: string | Buffer | undefined): SavedJob | undefined {
  if (bytes === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString());
  } catch {
    return undefined;
  }
  const parsed = savedJobSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

export function inProcessRunner(o: InProcessRunnerOptions): InProcessRunner {
  const now = o.now ?? (() => new Date());
  const log = o.log ?? ((l: string) => process.stderr.write(`terfyn app: ${l}\n`));
  const queue = new RunQueue(o.maxConcurrent ?? 1);

  const paths = (run: string): RunPaths => runPaths(o.runsDir, run);

  /** Queues `work` after the run's earlier sessions; its failure is reported, never thrown. */
  const enqueue = (
    job: RunJob,
    reporter: RunReporter,
    fallback: Ledger,
    work: () => Promise<void>,
  ) => queue.enqueue(job.run, work, (e) => fail(job, reporter, fallback, e));

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

  const locks = runLocks(o.lockStaleSeconds, o.lockFacts ?? hostFacts, now);
  const budget = o.maxModelCalls ?? defaultModelBudget(o.agents);
  const sessionContext: SessionContext = {
    appSlug: o.appSlug,
    agents: o.agents,
    sandbox: o.sandbox,
    model: o.model,
    cloneUrl: (job) =>
      o.cloneUrl?.(job) ?? `https://github.com/${job.repo.owner}/${job.repo.repo}.git`,
    budget,
    tokenBudget: o.maxTokens ?? defaultTokenBudget(budget),
    ...(o.prices ? { prices: o.prices } : {}),
    now,
    log,
    ...(o.env ? { env: o.env } : {}),
    ...(o.commandTimeoutMs ? { commandTimeoutMs: o.commandTimeoutMs } : {}),
    ...(o.restoreWork ? { restoreWork: o.restoreWork } : {}),
  };

  /**
   * The run directory's lock (the CLI's, src/adapters/fs/run-lock.ts): one process works on a
   * run at a time; a lock whose process is gone (the App restarted) is taken over. Undefined
   * when a live process holds it.
   */
  const lockRun = (p: RunPaths, run: string) => {
    mkdirSync(p.run, { recursive: true });
    try {
      const lock = locks.acquire(p.run, `terfyn app ${run}`);
      if (lock.tookOver) log(takeoverMessage(`run ${run}`, lock.tookOver));
      return lock;
    } catch (e) {
      if (e instanceof RunLockHeldError) return undefined;
      throw e;
    }
  };

  /**
   * Runs the core until it pauses or ends, and reports that on the status comment. The run's
   * lock is held throughout; when a live process holds it, nothing is done (that process is
   * working on the run). `before` runs once the lock is held; when it returns false, nothing more.
   */
  const session = async (
    saved: SavedJob,
    job: RunJob,
    reporter: RunReporter,
    before?: () => Promise<boolean>,
  ) => {
    const p = paths(saved.run);
    const lock = lockRun(p, saved.run);
    if (!lock) {
      log(`run ${saved.run} is held by another process; this one leaves it alone`);
      return;
    }
    try {
      // `before` may decide there is nothing to run (an approval of something the run does not await).
      if (before && !(await before())) return;
      await runSession(sessionContext, saved, job, reporter, p, () => lock.verify());
    } finally {
      lock.release();
    }
  };

  const readSaved = async (p: RunPaths): Promise<SavedJob> => {
    const saved = parseSavedJob(await readFile(p.job).catch(() => undefined));
    if (!saved) throw new Error(`run ${JSON.stringify(p.base)} is not known to this App's runner`);
    return saved;
  };

  const ledgerOf = (job: RunJob): Ledger => ({
    run: job.run,
    pull_request: job.pullRequest,
    head: job.head,
    phase: "intake",
  });

  return {
    paths,

    idle: () => queue.idle(),

    claim: (key) => claimHead(o.runsDir, locks, log, key),

    async interrupted() {
      // At startup: the empty claim directories earlier versions left behind go too.
      const claimsDir = join(o.runsDir, ".claims");
      for (const name of await readdir(claimsDir).catch(() => [] as string[]))
        removeEmptyDir(join(claimsDir, name), log);
      const out: SavedJob[] = [];
      const names = await readdir(o.runsDir).catch(() => [] as string[]);
      for (const name of names.sort()) {
        if (!RUN_ID.test(name) || queue.has(name)) continue;
        const p = paths(name);
        if (!existsSync(p.job)) continue;
        try {
          const state = JSON.parse(
            await readFile(join(p.run, "state.json"), "utf8").catch(() => "{}"),
          );
          if (state.status === "ended") continue;
          // At a gate with no answer recorded: it waits for a person, not for a process.
          if (state.status === "awaiting-approval" && !(await answeredGate(p.run, state.awaiting)))
            continue;
          const held = locks.holder(p.run);
          if (held && !held.stale) continue;
          out.push(await readSaved(p));
        } catch (e) {
          log(`cannot tell whether run ${name} was interrupted: ${(e as Error).message}`);
        }
      }
      return out;
    },

    recover(job, ledger, reporter) {
      if (queue.has(job.run)) {
        log(`run ${job.run} has a session in this process; nothing to recover`);
        return Promise.resolve();
      }
      return enqueue(job, reporter, ledger, async () => {
        const p = paths(job.run);
        if (!existsSync(p.job)) {
          await reporter.update(
            { ...ledger, gate: undefined, hash: undefined, terminal: "stuck" },
            {
              note: "The run was interrupted (the App restarted while it worked) and its files are not in this App's runs directory, so it cannot be resumed; nothing more was done. Remove the label and add it again to start a new run.",
            },
          );
          return;
        }
        const saved = await readSaved(p);
        const state = await (await ReviewRunStore.open(p.run)).readState();
        if (state?.status === "ended" && state.terminal) {
          await cleanUp(p, true);
          const report = (await readFile(join(p.run, "report.md"), "utf8").catch(() => "")) || "";
          await reporter.update(
            {
              ...ledger,
              phase: "report",
              gate: undefined,
              hash: undefined,
              terminal: state.terminal,
            },
            { note: `${state.terminal}: ${state.reason ?? ""}`, ...(report ? { report } : {}) },
          );
          return;
        }
        if (
          state?.status === "awaiting-approval" &&
          state.awaiting &&
          !(await answeredGate(p.run, state.awaiting))
        ) {
          if (ledger.gate === state.awaiting.gate && ledger.hash === state.awaiting.hash) return;
          await reporter.update(
            {
              ...ledger,
              phase: `gate-${state.awaiting.gate}`,
              gate: state.awaiting.gate,
              hash: state.awaiting.hash,
              since: state.updated_at,
            },
            {
              note: `The run waits at the ${state.awaiting.gate} gate for approval of ${state.awaiting.artifact} (${state.awaiting.hash}).`,
            },
          );
          return;
        }
        // Running with no session here: the process that ran it is gone. The core resumes it
        // from its cursor, and each agent step from its journal; the publishers post nothing
        // twice (markers), so resuming is safe.
        await session(saved, job, reporter, async () => {
          const at = state?.phase ?? "intake";
          log(`run ${job.run} was interrupted; resuming it in phase ${at}`);
          await reporter.update(
            {
              ...ledger,
              phase: state?.phase ?? ledger.phase,
              gate: undefined,
              hash: undefined,
              interrupted: undefined,
            },
            {
              note:
                state?.status === "interrupted"
                  ? `The run resumes in phase ${at}, where it stopped (${state.reason ?? "no reason recorded"}).`
                  : `The run was interrupted (the App restarted while it worked in phase ${at}); it resumes where it stopped.`,
            },
          );
          return true;
        });
      });
    },

    start(job, reporter) {
      return enqueue(job, reporter, ledgerOf(job), async () => {
        const p = paths(job.run);
        if (existsSync(p.job)) {
          log(`run ${job.run} already exists; the start is not repeated`);
          return;
        }
        const branch = job.branch ?? "";
        const badBranch = branchNameProblem(branch);
        if (badBranch) throw new Error(badBranch);
        const saved: SavedJob = {
          repo: { owner: job.repo.owner, repo: job.repo.repo },
          pullRequest: job.pullRequest,
          head: job.head,
          run: job.run,
          triggerAt: job.triggerAt,
          branch,
          ...(job.installation !== undefined ? { installation: job.installation } : {}),
        };
        await mkdir(p.base, { recursive: true });
        await writeFile(p.job, `${JSON.stringify(saved, null, 2)}\n`);
        await session(saved, job, reporter);
      });
    },

    approve(job, ledger, by, reporter) {
      return enqueue(job, reporter, ledger, async () => {
        const p = paths(ledger.run);
        const saved = await readSaved(p);
        // The approval is checked and recorded under the run's lock: never while another
        // process works on the run (it could be past this gate, or about to read the log).
        await session(saved, job, reporter, async () => {
          const store = await ReviewRunStore.open(p.run);
          const state = await store.readState();
          const awaiting = state?.status === "awaiting-approval" ? state.awaiting : undefined;
          // The approval the App accepted must be of exactly what this run awaits.
          if (
            !state ||
            !awaiting ||
            awaiting.gate !== ledger.gate ||
            awaiting.hash !== ledger.hash
          ) {
            await reporter.update(ledger, {
              note: `The approval by @${by.login} was not recorded: the run does not await ${ledger.hash ?? "anything"} (it is ${state?.status ?? "unknown"}${state?.awaiting ? `, awaiting ${state.awaiting.hash}` : ""}).`,
            });
            return false;
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
          return true;
        });
      });
    },

    stop(job, ledger, reason, reporter) {
      return enqueue(job, reporter, ledger, async () => {
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

/**
 * The runs' locks (the CLI's, src/adapters/fs/run-lock.ts): a lock taken on another host is
 * stale once its heartbeat is `lockStaleSeconds` old (default 600).
 */
export function runLocks(
  lockStaleSeconds: number | undefined,
  facts: HostFacts = hostFacts,
  now: () => Date = () => new Date(),
): FileRunLock {
  return new FileRunLock(facts, now, undefined, {
    otherHostStaleMs:
      lockStaleSeconds !== undefined ? lockStaleSeconds * 1000 : DEFAULT_OTHER_HOST_STALE_MS,
  });
}

/** Where a run's files are under `runsDir`; throws on anything but a run id. */
export function runPaths(runsDir: string, run: string): RunPaths {
  if (!RUN_ID.test(run)) throw new Error(`not a run id: ${JSON.stringify(run)}`);
  const base = join(runsDir, run);
  return {
    base,
    run: join(base, "run"),
    clone: join(base, "clone"),
    worktree: join(base, "worktree"),
    gitDir: join(base, "git"),
    job: join(base, "job.json"),
    spend: join(base, "model-spend.json"),
  };
}

/**
 * Holds a pull request head (`key`) across processes while a label event is handled, or
 * undefined when another process holds it. One directory per head (hashed: the key holds `/`);
 * never a run id (those never start with a dot). It goes with the claim's release, so none
 * pile up.
 */
export function claimHead(
  runsDir: string,
  locks: FileRunLock,
  log: (line: string) => void,
  key: string,
): { release(): void } | undefined {
  const dir = join(runsDir, ".claims", createHash("sha256").update(key).digest("hex"));
  for (let round = 0; ; round++) {
    mkdirSync(dir, { recursive: true });
    let held: ReturnType<typeof locks.acquire>;
    try {
      held = locks.acquire(dir, `terfyn app label ${key}`);
    } catch (e) {
      if (e instanceof RunLockHeldError) return undefined;
      // Another process released the same claim and removed its directory between our
      // mkdir and our lock: make it again.
      if ((e as NodeJS.ErrnoException).code === "ENOENT" && round < 4) continue;
      throw e;
    }
    return {
      release() {
        held.release();
        removeEmptyDir(dir, log);
      },
    };
  }
}

/**
 * Removes a claim's directory once its lock is released, only when nothing is left in it:
 * rmdir(2) refuses a directory that holds anything (another process's lock, or the temp file
 * it is about to link in), and that process's claim goes on undisturbed.
 */
function removeEmptyDir(dir: string, log: (line: string) => void): void {
  try {
    rmdirSync(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "ENOTEMPTY" && code !== "EEXIST" && code !== "ENOENT")
      log(`could not remove the claim directory ${dir}: ${(e as Error).message}`);
  }
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

/** The shipped review-response agents, validated; throws naming the directory when they do not validate. */
export async function shippedAgents(): Promise<ResolvedProject> {
  const dir = agentsProjectDir();
  const validation = validateProject((await readProjectDirectory(dir)).files);
  if (!validation.ok) throw new Error(`the review-response agents in ${dir} do not validate`);
  return validation.project;
}

/**
 * The model of each session, from the environment: the model script TERFYN_MODEL_SCRIPT plays
 * every agent (read afresh per session), else each agent's declared model (ANTHROPIC_API_KEY).
 */
export function modelFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  /** Agents on another model than they declare (the Action's `agent-models`); else TERFYN_APP_AGENT_MODELS. */
  agentModels?: AgentModels,
): () => Promise<ModelPort> {
  return async () => {
    const path = env.TERFYN_MODEL_SCRIPT;
    const script = path ? await ScriptedModel.load(path) : undefined;
    const over = agentModels ?? appAgentModels(env);
    return new ModelRouter({
      ...(script ? { script } : {}),
      forceScript: script !== undefined,
      ...(Object.keys(over).length > 0 ? { agentModels: over } : {}),
      env,
    });
  };
}

/**
 * TERFYN_APP_AGENT_MODELS (`Name=provider/model`, comma-separated): which shipped agents run on
 * another model than they declare. The App's start (src/app/server.ts) calls this to refuse a
 * bad value; here too an entry that does not parse is an error, never skipped.
 */
export function appAgentModels(env: Readonly<Record<string, string | undefined>>): AgentModels {
  const parsed = parseAgentModels(
    env.TERFYN_APP_AGENT_MODELS ?? "",
    REVIEW_AGENT_NAMES,
    "TERFYN_APP_AGENT_MODELS",
  );
  if ("problem" in parsed) throw new Error(parsed.problem);
  return parsed.models;
}

/** The shipped review agents, by name. */
export const REVIEW_AGENT_NAMES = [
  "Decider",
  "Planner",
  "TestWriter",
  "Builder",
  "StandardsReviewer",
] as const;

/** Where runs live by default: TERFYN_APP_RUNS_DIR, else under the OS temp directory. */
export function defaultRunsDir(env: Readonly<Record<string, string | undefined>>): string {
  return env.TERFYN_APP_RUNS_DIR ?? join(tmpdir(), "terfyn-app-runs");
}
