/**
 * What the App's process and its review worker (review-worker.ts) say to each other over the
 * IPC channel of `child_process.fork`. The worker runs the review sessions; the App's process
 * keeps everything that authenticates as the App: its private key and webhook secret, and the
 * installation's Octokit. So the worker asks the App's process for each GitHub API call (by
 * the gateway's method name), for the installation token when git needs it, and for each
 * status comment update; it gets the model key once, in memory, never in its environment.
 */
import type { Ledger } from "../../core/app/triggers.ts";
import type { GitHubGateway } from "../github/gateway.ts";
import type { InterruptedRun } from "./review-runner-port.ts";

/** The worker's runner, as plain data (everything else the worker finds itself). */
export interface WorkerConfig {
  appSlug: string;
  runsDir: string;
  /** The clone URL: `{owner}` and `{repo}` replaced. Default `https://github.com/{owner}/{repo}.git`. */
  cloneUrl?: string;
  maxConcurrent?: number;
  maxModelCalls?: number;
  maxTokens?: number;
  lockStaleSeconds?: number;
  commandTimeoutMs?: number;
  /** Paths hidden from every sandboxed command (the App's secret files). */
  sandboxHide?: string[];
}

/** Model keys, for the model adapter only: kept in the worker's memory, not its environment. */
export type ModelSecrets = Record<string, string>;

/** A job as data: what the App's handlers know of it, without the gateway or the token. */
export type PlainJob = Omit<InterruptedRun, "branch"> & { branch?: string };

export type ToWorker =
  | { type: "init"; config: WorkerConfig; secrets: ModelSecrets }
  | { type: "start"; handle: number; job: PlainJob }
  | {
      type: "approve";
      handle: number;
      job: PlainJob;
      ledger: Ledger;
      by: { login: string; role: string };
    }
  | { type: "stop"; handle: number; job: PlainJob; ledger: Ledger; reason: string }
  | { type: "recover"; handle: number; job: PlainJob; ledger: Ledger }
  | { type: "ask"; id: number; what: "idle" | "interrupted" }
  | { type: "reply"; id: number; ok: true; value: unknown }
  | { type: "reply"; id: number; ok: false; error: PlainError };

export type FromWorker =
  | { type: "ready" }
  | { type: "fatal"; message: string }
  | { type: "log"; line: string }
  | { type: "done"; handle: number }
  | (Ask & { id: number })
  | { type: "answer"; id: number; value: unknown };

/** What the worker asks the server about a job it holds (its handle), without the ask's id. */
export type Ask =
  | { type: "call"; handle: number; method: GatewayMethod; args: unknown[] }
  | { type: "token"; handle: number }
  | { type: "report"; handle: number; args: unknown[] };

/** The gateway's methods the worker may call: exactly GitHubGateway's, by name. */
export const GATEWAY_METHODS = [
  "identity",
  "listIssueComments",
  "createIssueComment",
  "updateIssueComment",
  "createCheckRun",
  "setCommitStatus",
  "collaboratorRole",
  "getPullRequest",
  "openPullRequestsWithHead",
  "listPullRequestCommits",
  "setLabels",
  "graphql",
  "addReaction",
  "listIssuesBy",
  "createIssue",
  "dispatchWorkflow",
  "compareCommits",
] as const satisfies readonly (keyof GitHubGateway)[];

export type GatewayMethod = (typeof GATEWAY_METHODS)[number];

/** An error as data: what describeApiError reads (the HTTP status and GitHub's message). */
export interface PlainError {
  message: string;
  status?: number;
  data?: { message?: string };
}

export function toPlainError(e: unknown): PlainError {
  const err = e as { message?: unknown; status?: unknown; response?: { data?: unknown } };
  const data = err?.response?.data as { message?: unknown } | undefined;
  return {
    message: typeof err?.message === "string" ? err.message : String(e),
    ...(typeof err?.status === "number" ? { status: err.status } : {}),
    ...(typeof data?.message === "string" ? { data: { message: data.message } } : {}),
  };
}

/** The error again, with the fields describeApiError reads. */
export function fromPlainError(p: PlainError): Error {
  const e = new Error(p.message) as Error & { status?: number; response?: { data?: unknown } };
  if (p.status !== undefined) e.status = p.status;
  if (p.data) e.response = { data: p.data };
  return e;
}

// Every method of the gateway is in the list (a new one must be added to be callable).
const _everyMethod: Exclude<keyof GitHubGateway, GatewayMethod> extends never ? true : never = true;
void _everyMethod;
