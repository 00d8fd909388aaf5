/**
 * Runs the bundled Action (dist/index.js) in this process the way the runner does: event
 * payload in GITHUB_EVENT_PATH, inputs as INPUT_*, outputs in GITHUB_OUTPUT, the summary in
 * GITHUB_STEP_SUMMARY. nock intercepts Node's global fetch (TERFYN_ACTION_GLOBAL_FETCH=1); every
 * request is recorded and checked against GitHub's OpenAPI description.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { openApiProblems, type RecordedRequest } from "./openapi.ts";

const DIST = join(import.meta.dirname, "..", "..", "dist", "index.js");
let runs = 0;

export const API = "https://api.github.com";
export const OWNER = "octo-org";
export const REPO = "agents";

export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.com",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.com",
      GIT_CONFIG_NOSYSTEM: "1",
      // Fixed dates make commit ids, and so the golden comments, reproducible.
      GIT_AUTHOR_DATE: "2026-12-01T09:00:00Z",
      GIT_COMMITTER_DATE: "2026-12-01T09:00:00Z",
    },
  }).trim();
}

export function newRepo(): string {
  const dir = mkdtempSync(join(tmpdir(), "terfyn-action-"));
  git(dir, "init", "-q", "-b", "main");
  git(dir, "config", "commit.gpgsign", "false");
  return dir;
}

export function commitAll(dir: string, message: string): string {
  git(dir, "add", "-A");
  git(dir, "commit", "-qm", message, "--allow-empty");
  return git(dir, "rev-parse", "HEAD");
}

export function copyInto(src: string, dir: string, sub: string): void {
  mkdirSync(join(dir, sub), { recursive: true });
  cpSync(src, join(dir, sub), { recursive: true });
}

export function fixture(name: string): Record<string, unknown> {
  return JSON.parse(
    readFileSync(
      join(import.meta.dirname, "..", "fixtures", "github", "webhooks", `${name}.json`),
      "utf8",
    ),
  );
}

export interface ActionRun {
  outputs: Record<string, string>;
  summary: string;
  stdout: string;
  failed: boolean;
  requests: RecordedRequest[];
}

/**
 * Records every request the Action sends (by wrapping the global fetch it is handed, ahead of
 * nock) and checks each against the OpenAPI description.
 */
/**
 * GitHub's example `pull_request.opened` payload, for pull request 7 of this repository from
 * `base` to `head`.
 */
export function pullRequestOpened(base: string, head: string): Record<string, unknown> {
  // biome-ignore lint/suspicious/noExplicitAny: webhook example payloads are loose JSON
  const p = fixture("pull_request.opened") as Record<string, any>;
  p.number = 7;
  p.pull_request.number = 7;
  p.pull_request.head.sha = head;
  p.pull_request.base.sha = base;
  p.repository.name = REPO;
  p.repository.owner.login = OWNER;
  p.repository.full_name = `${OWNER}/${REPO}`;
  return p;
}

export function recordRequests(): {
  requests: RecordedRequest[];
  problems: string[];
  stop: () => void;
} {
  const requests: RecordedRequest[] = [];
  const problems: string[] = [];
  const original = globalThis.fetch;
  globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const req = new Request(input, init);
    const text = req.method === "GET" || req.method === "HEAD" ? "" : await req.clone().text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    const url = new URL(req.url);
    const r = { method: req.method, path: `${url.pathname}${url.search}`, body };
    requests.push(r);
    problems.push(...openApiProblems(r));
    return original(req);
  }) as typeof fetch;
  return {
    requests,
    problems,
    stop: () => {
      globalThis.fetch = original;
    },
  };
}

export async function runAction(opts: {
  event: string;
  payload: unknown;
  workspace: string;
  inputs: Record<string, string>;
  /** GITHUB_SHA: on pull_request, GitHub's test merge commit. */
  sha?: string;
  /** More environment (or a different GITHUB_SERVER_URL). */
  env?: Record<string, string>;
  /** The bundle to run (action.yml's `runs.main` in some tree); default this checkout's dist/index.js. */
  bundle?: string;
}): Promise<ActionRun> {
  const dir = mkdtempSync(join(tmpdir(), "terfyn-runner-"));
  const eventPath = join(dir, "event.json");
  const outputPath = join(dir, "output");
  const summaryPath = join(dir, "summary");
  writeFileSync(eventPath, JSON.stringify(opts.payload));
  writeFileSync(outputPath, "");
  writeFileSync(summaryPath, "");
  const saved = { ...process.env };
  for (const k of Object.keys(process.env)) if (k.startsWith("INPUT_")) delete process.env[k];
  Object.assign(process.env, {
    GITHUB_EVENT_PATH: eventPath,
    GITHUB_EVENT_NAME: opts.event,
    GITHUB_REPOSITORY: `${OWNER}/${REPO}`,
    GITHUB_WORKSPACE: opts.workspace,
    GITHUB_OUTPUT: outputPath,
    GITHUB_STEP_SUMMARY: summaryPath,
    GITHUB_API_URL: API,
    GITHUB_SERVER_URL: "https://github.com",
    GITHUB_SHA: opts.sha ?? "",
    GITHUB_RUN_ID: "4242",
    RUNNER_TEMP: dir,
    TERFYN_ACTION_GLOBAL_FETCH: "1",
    "INPUT_GITHUB-TOKEN": "test-token",
    ...opts.env,
  });
  for (const [k, v] of Object.entries(opts.inputs)) process.env[`INPUT_${k.toUpperCase()}`] = v;
  const rec = recordRequests();
  const writes: string[] = [];
  const originalWrite = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array) => {
    writes.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString());
    return true;
  }) as typeof process.stdout.write;
  const exitCode = process.exitCode;
  try {
    await import(`${pathToFileURL(opts.bundle ?? DIST).href}?run=${++runs}`);
  } finally {
    process.stdout.write = originalWrite;
    rec.stop();
    process.env = saved;
  }
  const failed = process.exitCode === 1;
  process.exitCode = exitCode;
  if (rec.problems.length > 0)
    throw new Error(
      `requests that do not match GitHub's OpenAPI description:\n${rec.problems.join("\n")}`,
    );
  const outputs: Record<string, string> = {};
  const text = readFileSync(outputPath, "utf8");
  for (const m of text.matchAll(/^([^<\n]+)<<(\S+)\n([\s\S]*?)\n\2$/gm))
    outputs[m[1] as string] = m[3] as string;
  return {
    outputs,
    summary: readFileSync(summaryPath, "utf8"),
    stdout: writes.join(""),
    failed,
    requests: rec.requests,
  };
}
