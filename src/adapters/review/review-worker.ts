/**
 * The App's review worker: the process the App's server forks to run review sessions (the
 * in-process runner, review-runner.ts), so that the process that starts the repository's
 * commands holds none of the App's secrets. Its environment is the server's without any
 * secret-shaped variable (worker-runner.ts); the model key arrives once over IPC and lives only
 * in the model adapter's settings; the installation token is asked for each time git needs it
 * and goes only into git's own environment; every GitHub API call and status comment update is
 * made by the server, which holds the installation's Octokit.
 *
 * Started by `child_process.fork`; it talks only over the IPC channel (worker-protocol.ts).
 */

import type { GitHubGateway } from "../github/gateway.ts";
import type { RunReporter } from "../github/status-reporter.ts";
import { openSandbox } from "../sandbox/open-sandbox.ts";
import { loadPriceTable } from "./model-budget.ts";
import {
  type InProcessRunner,
  inProcessRunner,
  modelFromEnv,
  shippedAgents,
} from "./review-runner.ts";
import type { RunJob } from "./review-runner-port.ts";
import {
  type Ask,
  type FromWorker,
  fromPlainError,
  GATEWAY_METHODS,
  type ModelSecrets,
  type PlainJob,
  type ToWorker,
  type WorkerConfig,
} from "./worker-protocol.ts";

const send = (m: FromWorker) => {
  process.send?.(m);
};

let nextId = 1;
const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();

/** Asks the server; resolves with its answer, or rejects with the error it reports. */
function ask(q: Ask): Promise<unknown> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    send({ ...q, id });
  });
}

function gatewayOf(handle: number): GitHubGateway {
  const gateway: Record<string, unknown> = {};
  for (const method of GATEWAY_METHODS)
    gateway[method] = (...args: unknown[]) => ask({ type: "call", handle, method, args });
  return gateway as unknown as GitHubGateway;
}

function jobOf(handle: number, job: PlainJob): RunJob {
  return {
    ...job,
    gateway: gatewayOf(handle),
    token: async () => {
      const token = await ask({ type: "token", handle });
      if (typeof token !== "string" || token === "")
        throw new Error("the App's installation token is not available");
      return token;
    },
  };
}

function reporterOf(handle: number): RunReporter {
  return {
    update: async (...args) => {
      await ask({ type: "report", handle, args });
    },
  };
}

async function runnerFor(config: WorkerConfig, secrets: ModelSecrets): Promise<InProcessRunner> {
  const template = config.cloneUrl;
  return inProcessRunner({
    appSlug: config.appSlug,
    runsDir: config.runsDir,
    agents: await shippedAgents(),
    sandbox: await openSandbox({
      env: process.env,
      ...(config.sandboxHide ? { hide: config.sandboxHide } : {}),
    }),
    // The key only in the model adapter's settings: never in process.env, so never inherited.
    model: modelFromEnv({ ...process.env, ...secrets }),
    log: (line) => send({ type: "log", line }),
    ...(template
      ? {
          cloneUrl: (job: RunJob) =>
            template.replaceAll("{owner}", job.repo.owner).replaceAll("{repo}", job.repo.repo),
        }
      : {}),
    ...(config.maxConcurrent ? { maxConcurrent: config.maxConcurrent } : {}),
    ...(config.maxModelCalls ? { maxModelCalls: config.maxModelCalls } : {}),
    ...(config.maxTokens ? { maxTokens: config.maxTokens } : {}),
    // TERFYN_PRICES reaches the worker's environment (it is not secret-shaped); checked at start.
    prices: await loadPriceTable(undefined, process.env),
    ...(config.lockStaleSeconds ? { lockStaleSeconds: config.lockStaleSeconds } : {}),
    ...(config.commandTimeoutMs ? { commandTimeoutMs: config.commandTimeoutMs } : {}),
  });
}

let runner: Promise<InProcessRunner> | undefined;

function handle(m: ToWorker): void {
  if (m.type === "init") {
    runner = runnerFor(m.config, m.secrets);
    runner.then(
      () => send({ type: "ready" }),
      (e) => {
        send({ type: "fatal", message: (e as Error).message });
        process.exit(1);
      },
    );
    return;
  }
  if (m.type === "reply") {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.ok) p?.resolve(m.value);
    else p?.reject(fromPlainError(m.error));
    return;
  }
  if (!runner) {
    send({ type: "log", line: `a ${m.type} before init was ignored` });
    return;
  }
  void runner.then(async (r) => {
    if (m.type === "ask") {
      const value = m.what === "idle" ? await r.idle() : await r.interrupted();
      send({ type: "answer", id: m.id, value: value ?? null });
      return;
    }
    const job = jobOf(m.handle, m.job);
    const reporter = reporterOf(m.handle);
    const work =
      m.type === "start"
        ? r.start(job, reporter)
        : m.type === "approve"
          ? r.approve(job, m.ledger, m.by, reporter)
          : m.type === "stop"
            ? r.stop(job, m.ledger, m.reason, reporter)
            : r.recover(job, m.ledger, reporter);
    await work.finally(() => send({ type: "done", handle: m.handle }));
  });
}

process.on("message", (m) => handle(m as ToWorker));
// The server gone, the worker goes: a session's lock is then taken over at the next start.
process.on("disconnect", () => process.exit(0));
