/**
 * The App's review runner as a worker process: the same runner port as the in-process runner
 * (review-runner.ts), with every session in a child process (review-worker.ts) whose
 * environment is the server's without a single secret-shaped variable. What stays in this
 * process: the App's private key and webhook secret (Probot's), each job's gateway over the
 * installation's Octokit, its token, and its status reporter; the worker asks for them by the
 * job's handle, one call at a time (worker-protocol.ts). The model key goes to the worker once,
 * over IPC, into the model adapter's settings only.
 *
 * The claims of label events are taken here (they are files under the runs directory, and
 * must be answered synchronously). If the worker dies, its sessions' locks are left to be
 * taken over: a new worker is forked on the next call, and `interrupted()` finds those runs.
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { passableEnvNames } from "../../core/review/repo-facts.ts";
import type { RunReporter } from "../github/status-reporter.ts";
import {
  claimHead,
  type InProcessRunner,
  type RunPaths,
  runLocks,
  runPaths,
  type SavedJob,
} from "./review-runner.ts";
import type { RunJob } from "./review-runner-port.ts";
import {
  type Ask,
  type FromWorker,
  GATEWAY_METHODS,
  type PlainJob,
  type ToWorker,
  toPlainError,
  type WorkerConfig,
} from "./worker-protocol.ts";

export interface WorkerRunnerOptions extends WorkerConfig {
  /** The server's environment: what the worker's is made from, and where the model key is. */
  env: Readonly<Record<string, string | undefined>>;
  log?: (line: string) => void;
}

/** Probot's settings that are not secret-shaped but are the App's, not a session's. */
const APP_SETTINGS = new Set(["APP_ID", "GITHUB_CLIENT_ID", "WEBHOOK_PROXY_URL", "WEBHOOK_PATH"]);

/** The names of model keys, handed to the worker over IPC when set. */
const MODEL_KEYS = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"] as const;

/**
 * The worker's environment: the server's, without any variable whose name is secret-shaped
 * (TOKEN, KEY, SECRET, PRIVATE, …: PRIVATE_KEY, WEBHOOK_SECRET, the model keys, a GITHUB_TOKEN
 * the operator left there) or not a plain name, and without the App's own settings.
 */
export function workerEnv(
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const names = Object.keys(env).filter((k) => env[k] !== undefined && !APP_SETTINGS.has(k));
  const out: Record<string, string> = {};
  for (const k of passableEnvNames(names).passed) out[k] = env[k] as string;
  return out;
}

export interface Held {
  job: RunJob;
  reporter: RunReporter;
}

/** A question the worker asks about a job it holds. */
export type Question = Ask & { id: number };

/**
 * The answer to a worker's question, from the job it names by handle: a gateway method (by
 * its name in GATEWAY_METHODS, nothing else), the token, or a status update.
 */
export async function answerQuestion(
  held: ReadonlyMap<number, Held>,
  m: Question,
): Promise<Extract<ToWorker, { type: "reply" }>> {
  const h = held.get(m.handle);
  try {
    if (!h) throw new Error(`no job is held under handle ${m.handle}`);
    let value: unknown;
    if (m.type === "token") value = h.job.token ? await h.job.token() : undefined;
    else if (m.type === "report") {
      const [ledger, details, progress] = m.args as Parameters<RunReporter["update"]>;
      await h.reporter.update(ledger, details, progress);
    } else {
      // Only the gateway's own methods, by name: the worker cannot reach anything else here.
      if (!(GATEWAY_METHODS as readonly string[]).includes(m.method))
        throw new Error(`${String(m.method)} is not a gateway method`);
      const fn = h.job.gateway[m.method] as (...a: unknown[]) => Promise<unknown>;
      value = await fn.apply(h.job.gateway, m.args);
    }
    return { type: "reply", id: m.id, ok: true, value: value ?? null };
  } catch (e) {
    return { type: "reply", id: m.id, ok: false, error: toPlainError(e) };
  }
}

export interface WorkerRunner extends InProcessRunner {
  /** The worker's pid, while one runs. */
  pid(): number | undefined;
  /** Stops the worker (a graceful shutdown; tests). */
  close(): Promise<void>;
}

export function workerRunner(o: WorkerRunnerOptions): WorkerRunner {
  const log = o.log ?? ((l: string) => process.stderr.write(`terfyn app: ${l}\n`));
  const locks = runLocks(o.lockStaleSeconds);
  const held = new Map<number, Held>();
  const asked = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let nextHandle = 1;
  let nextAsk = 1;
  let child: ChildProcess | undefined;

  const config: WorkerConfig = {
    appSlug: o.appSlug,
    runsDir: o.runsDir,
    ...(o.cloneUrl ? { cloneUrl: o.cloneUrl } : {}),
    ...(o.maxConcurrent ? { maxConcurrent: o.maxConcurrent } : {}),
    ...(o.maxModelCalls ? { maxModelCalls: o.maxModelCalls } : {}),
    ...(o.maxTokens ? { maxTokens: o.maxTokens } : {}),
    ...(o.lockStaleSeconds ? { lockStaleSeconds: o.lockStaleSeconds } : {}),
    ...(o.commandTimeoutMs ? { commandTimeoutMs: o.commandTimeoutMs } : {}),
    ...(o.sandboxHide ? { sandboxHide: o.sandboxHide } : {}),
  };
  const secrets: Record<string, string> = {};
  for (const k of MODEL_KEYS) if (o.env[k]) secrets[k] = o.env[k] as string;

  const send = (m: ToWorker) => worker().send(m);

  const answer = async (m: Question) => {
    child?.send(await answerQuestion(held, m));
  };

  const worker = (): ChildProcess => {
    if (child && child.exitCode === null && child.signalCode === null && child.connected)
      return child;
    const entry = fileURLToPath(new URL("./review-worker.ts", import.meta.url));
    const c = fork(entry, [], {
      env: workerEnv(o.env),
      execArgv: ["--import", import.meta.resolve("tsx")],
      serialization: "advanced",
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    c.on("message", (raw) => {
      const m = raw as FromWorker;
      if (m.type === "log") log(m.line);
      else if (m.type === "fatal") log(`the review worker cannot start: ${m.message}`);
      else if (m.type === "done") held.delete(m.handle);
      else if (m.type === "answer") {
        const a = asked.get(m.id);
        asked.delete(m.id);
        a?.resolve(m.value);
      } else if (m.type === "call" || m.type === "token" || m.type === "report") void answer(m);
    });
    c.on("exit", (code, signal) => {
      if (child === c) child = undefined;
      held.clear();
      for (const a of asked.values())
        a.reject(new Error(`the review worker exited (${signal ?? code})`));
      asked.clear();
      if (code !== 0) log(`the review worker exited (${signal ?? `code ${code}`})`);
    });
    child = c;
    c.send({ type: "init", config, secrets } satisfies ToWorker);
    return c;
  };

  const plain = (job: RunJob): PlainJob => ({
    repo: { owner: job.repo.owner, repo: job.repo.repo },
    pullRequest: job.pullRequest,
    head: job.head,
    run: job.run,
    triggerAt: job.triggerAt,
    ...(job.branch !== undefined ? { branch: job.branch } : {}),
    ...(job.installation !== undefined ? { installation: job.installation } : {}),
  });

  const hold = (job: RunJob, reporter: RunReporter): number => {
    const handle = nextHandle++;
    held.set(handle, { job, reporter });
    return handle;
  };

  const ask = (what: "idle" | "interrupted"): Promise<unknown> => {
    const c = worker();
    const id = nextAsk++;
    return new Promise((resolve, reject) => {
      asked.set(id, { resolve, reject });
      c.send({ type: "ask", id, what } satisfies ToWorker);
    });
  };

  return {
    paths: (run: string): RunPaths => runPaths(o.runsDir, run),
    claim: (key) => claimHead(o.runsDir, locks, log, key),
    pid: () => child?.pid,
    async idle() {
      await ask("idle");
      // The worker is idle once its last answers are in: none is left to make here.
      while (held.size > 0) await new Promise((r) => setTimeout(r, 10));
    },
    async interrupted() {
      return (await ask("interrupted")) as SavedJob[];
    },
    async start(job, reporter) {
      send({ type: "start", handle: hold(job, reporter), job: plain(job) });
    },
    async approve(job, ledger, by, reporter) {
      send({ type: "approve", handle: hold(job, reporter), job: plain(job), ledger, by });
    },
    async stop(job, ledger, reason, reporter) {
      send({ type: "stop", handle: hold(job, reporter), job: plain(job), ledger, reason });
    },
    async recover(job, ledger, reporter) {
      send({ type: "recover", handle: hold(job, reporter), job: plain(job), ledger });
    },
    async close() {
      const c = child;
      if (!c) return;
      await new Promise<void>((resolve) => {
        c.once("exit", () => resolve());
        c.disconnect();
      });
    },
  };
}
