/**
 * The Action section of `npm run bench`: the bundled Action (dist/index.js) run as a runner runs
 * it, a child process `node dist/index.js` with the runner's environment, after checkout:
 *   - on the example pull request, end to end: a real git repository whose base commit holds
 *     examples/implement-review-loop under `agents/` and whose head commit adds the README's
 *     widening (`tool.workspace.write_file` in the Reviewer's grants, which the example's policy
 *     forbids; it also fails a capability test of the example). The GitHub API is a mock on
 *     127.0.0.1 (node:http, a random port, loopback only, stopped after the benchmark; it
 *     answers and never sends a request of its own) that counts the requests and records the
 *     comment and the check run. Every run is checked: exit code 1
 *     (failed step), one sticky comment with the WIDENED lines, one completed check run with
 *     conclusion failure and a failure annotation on the new grant's line of agents/main.agent,
 *     the step outputs and the job summary. Targets: wall time from spawn to exit, and API calls
 *     at most 3 + ceil(annotations / 50) (list comments, create the comment, create the check
 *     run, one update per further 50 annotations);
 *   - cold start: the same bundle with no work to do (a `push` event with an empty payload: it
 *     reads its inputs, logs "nothing to do" and exits 0 without an API call), against
 *     `node -e ""` measured in the same rounds.
 * Wall times are medians after warm-up runs, the measurements alternating order each round.
 * The mock answers at once: on GitHub each of the API calls adds its latency (typically 100-300
 * ms), which is why their number has a target of its own.
 *
 * Build the bundle first (`npm run build`): the benchmark measures dist/index.js as it is.
 * To profile the cold start: `echo {} > /tmp/e.json; env GITHUB_EVENT_NAME=schedule
 * GITHUB_EVENT_PATH=/tmp/e.json GITHUB_REPOSITORY=o/r INPUT_GITHUB-TOKEN=x node --cpu-prof
 * dist/index.js`. `--out DIR` keeps the repository (DIR/.terfyn-action-bench/repo) and the
 * runner's files (runner-pr/event.json) for profiling a pull-request run the same way.
 */
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { benchGit } from "./git-repo.ts";
import { median } from "./median.ts";
import { medianAndSpread, type Target } from "./target.ts";

export const TARGET_ACTION_MS = 500;
export const TARGET_COLD_START_MS = 150;
/** API calls a plan may take: list comments, create (or update) the comment, create the check run (the terfyn/approval status fits in the annotations term: at least one annotation whenever the PR changes authority)… */
const BASE_CALLS = 3;
/** …and one check-run update per further batch of annotations. */
const ANNOTATIONS_PER_REQUEST = 50;

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const DIST = join(REPO_ROOT, "dist", "index.js");
const EXAMPLE = join(REPO_ROOT, "examples", "implement-review-loop");
const PR_FIXTURE = join(
  REPO_ROOT,
  "__tests__",
  "fixtures",
  "github",
  "webhooks",
  "pull_request.opened.json",
);

const OWNER = "octo-org";
const REPO = "agents";
const PROJECT = "agents";
const PR_NUMBER = 7;
const AUTHOR = "alice";
const TOKEN = "bench-token";
/** The README's widening: a grant the example's policy forbids the Reviewer. */
const WIDENING_AGENT = "Reviewer";
/** Projects in the multi-project pull request. */
const MULTI_PROJECTS = 3;
const WIDENING_GRANT = "tool.workspace.write_file";
/** Cold-start rounds: at least this many, or 3x --reps. */
const COLD_MIN_REPS = 21;
/** A child still running after this long is a broken benchmark (and is killed). */
const CHILD_TIMEOUT_MS = 60_000;
/** The mock refuses bodies larger than this. */
const MAX_BODY_BYTES = 4 << 20;

export class ActionBenchBroken extends Error {}

export interface ActionBenchOptions {
  /** Measured repetitions and warm-up runs of the pull-request run (the median is reported). */
  reps: number;
  warmup: number;
  /** Where the repository and the runner's files go; created, and removed afterwards unless `keep`. */
  dir: string;
  keep: boolean;
}

export interface ActionBenchResult {
  rows: [string, string][];
  targets: Target[];
}

// ── The repository ────────────────────────────────────────────────────────────────────────────

function git(dir: string, ...args: string[]): string {
  return benchGit((m) => new ActionBenchBroken(m), dir, ...args).trim();
}

interface PrRepo {
  dir: string;
  base: string;
  head: string;
  /** 1-based line of the added grant in agents/main.agent at the head commit. */
  grantLine: number;
}

/** Base: the example under agents/; head: the Reviewer granted tool.workspace.write_file. */
function buildRepo(dir: string): PrRepo {
  mkdirSync(join(dir, PROJECT), { recursive: true });
  cpSync(EXAMPLE, join(dir, PROJECT), {
    recursive: true,
    filter: (src) => !src.split(/[\\/]/).includes(".terfyn"),
  });
  writeFileSync(join(dir, "README.md"), "agents\n");
  git(dir, "init", "-q");
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "The example project (base)");
  const base = git(dir, "rev-parse", "HEAD");

  // As __tests__/helpers/example-project.ts grant(): a line at the end of the grants block.
  const file = join(dir, PROJECT, "main.agent");
  const text = readFileSync(file, "utf8");
  const at = text.indexOf(`agent ${WIDENING_AGENT} {`);
  const grants = at < 0 ? -1 : text.indexOf("grants {", at);
  const close = grants < 0 ? -1 : text.indexOf("\n  }", grants);
  if (close < 0)
    throw new ActionBenchBroken(`no grants block for ${WIDENING_AGENT} in ${EXAMPLE}/main.agent`);
  const next = `${text.slice(0, close)}\n    ${WIDENING_GRANT}${text.slice(close)}`;
  writeFileSync(file, next);
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", `Grant the ${WIDENING_AGENT} ${WIDENING_GRANT}`);
  const head = git(dir, "rev-parse", "HEAD");
  const grantLine = next.slice(0, close + 1).split("\n").length;
  const shown = git(dir, "show", `${head}:${PROJECT}/main.agent`).split("\n")[grantLine - 1];
  if (shown !== `    ${WIDENING_GRANT}`)
    throw new ActionBenchBroken(`line ${grantLine} of the head's main.agent is ${shown}`);
  return { dir, base, head, grantLine };
}

/** N projects (agents1 … agentsN), each the example with the same widening at the head. */
function buildMultiRepo(dir: string, n: number): PrRepo {
  for (let i = 1; i <= n; i++) {
    mkdirSync(join(dir, `${PROJECT}${i}`), { recursive: true });
    cpSync(EXAMPLE, join(dir, `${PROJECT}${i}`), {
      recursive: true,
      filter: (src) => !src.split(/[\\/]/).includes(".terfyn"),
    });
  }
  git(dir, "init", "-q");
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "base");
  const base = git(dir, "rev-parse", "HEAD");
  for (let i = 1; i <= n; i++) {
    const file = join(dir, `${PROJECT}${i}`, "main.agent");
    const text = readFileSync(file, "utf8");
    const at = text.indexOf(`agent ${WIDENING_AGENT} {`);
    const close = text.indexOf("\n  }", text.indexOf("grants {", at));
    writeFileSync(file, `${text.slice(0, close)}\n    ${WIDENING_GRANT}${text.slice(close)}`);
  }
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "widen every project");
  return { dir, base, head: git(dir, "rev-parse", "HEAD"), grantLine: 0 };
}

function prPayload(repo: PrRepo): Record<string, unknown> {
  // biome-ignore lint/suspicious/noExplicitAny: webhook example payloads are loose JSON, adapted field by field
  const p = JSON.parse(readFileSync(PR_FIXTURE, "utf8")) as Record<string, any>;
  p.number = PR_NUMBER;
  p.pull_request.number = PR_NUMBER;
  p.pull_request.head.sha = repo.head;
  p.pull_request.base.sha = repo.base;
  p.pull_request.user.login = AUTHOR;
  p.repository.name = REPO;
  p.repository.owner.login = OWNER;
  p.repository.full_name = `${OWNER}/${REPO}`;
  return p;
}

// ── The GitHub API mock ───────────────────────────────────────────────────────────────────────

interface Recorded {
  method: string;
  path: string;
  /** performance.now() when the request arrived and when its response was sent. */
  at: number;
  done: number;
}

interface Annotation {
  path: string;
  start_line: number;
  annotation_level: string;
  title?: string;
}

interface CheckRunBody {
  name?: string;
  head_sha?: string;
  status?: string;
  conclusion?: string;
  output?: { title?: string; annotations?: Annotation[] };
}

/**
 * The endpoints the Action calls, on 127.0.0.1 only. Everything else is a 404, recorded as an
 * unexpected request. Each run starts with reset().
 */
class MockGitHub {
  requests: Recorded[] = [];
  unexpected: string[] = [];
  comments: { body: string }[] = [];
  checkRuns: CheckRunBody[] = [];
  updates: CheckRunBody[] = [];
  private nextId = 1000;
  private readonly server = createServer((req, res) => {
    this.handle(req, res).catch((e: unknown) => {
      this.unexpected.push(`${req.method} ${req.url}: ${(e as Error).message}`);
      if (!res.headersSent) this.send(res, 500, { message: "mock failure" });
    });
  });

  async start(): Promise<string> {
    // No keep-alive beyond a second: a connection the child leaves open cannot hold stop() up.
    this.server.keepAliveTimeout = 1000;
    this.server.requestTimeout = 10_000;
    await new Promise<void>((ok, fail) => {
      this.server.once("error", fail);
      this.server.listen(0, "127.0.0.1", () => ok());
    });
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  async stop(): Promise<void> {
    const closed = new Promise<void>((ok) => this.server.close(() => ok()));
    this.server.closeAllConnections();
    await closed;
  }

  reset(): void {
    this.requests = [];
    this.unexpected = [];
    this.comments = [];
    this.checkRuns = [];
    this.updates = [];
  }

  private send(res: ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      "content-type": "application/json; charset=utf-8",
      "content-length": Buffer.byteLength(text),
    });
    res.end(text);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = performance.now();
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req as AsyncIterable<Buffer>) {
      size += c.length;
      if (size > MAX_BODY_BYTES) throw new Error(`body over ${MAX_BODY_BYTES} bytes`);
      chunks.push(c);
    }
    const text = Buffer.concat(chunks).toString("utf8");
    const body = text === "" ? undefined : (JSON.parse(text) as unknown);
    const method = req.method ?? "";
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const path = url.pathname;
    const record = { method, path: `${path}${url.search}`, at, done: at };
    this.requests.push(record);
    const reply = (status: number, data: unknown) => {
      this.send(res, status, data);
      record.done = performance.now();
    };
    if (req.headers.authorization !== `token ${TOKEN}`) {
      this.unexpected.push(`${method} ${path} without the token`);
      return reply(401, { message: "Bad credentials" });
    }
    const repo = `/repos/${OWNER}/${REPO}`;
    const comments = `${repo}/issues/${PR_NUMBER}/comments`;
    if (method === "GET" && path === comments) return reply(200, []);
    if (method === "POST" && path === comments) {
      const b = body as { body: string };
      this.comments.push(b);
      return reply(201, {
        id: this.nextId++,
        body: b.body,
        user: { login: "github-actions[bot]", type: "Bot" },
      });
    }
    if (method === "POST" && path === `${repo}/check-runs`) {
      this.checkRuns.push(body as CheckRunBody);
      return reply(201, { id: this.nextId++, app: { slug: "github-actions" } });
    }
    if (method === "POST" && new RegExp(`^${repo}/statuses/[0-9a-f]{40}$`).test(path)) {
      return reply(201, { id: this.nextId++ });
    }
    const update = new RegExp(`^${repo}/check-runs/(\\d+)$`).exec(path);
    if (method === "PATCH" && update) {
      this.updates.push(body as CheckRunBody);
      return reply(200, { id: Number(update[1]) });
    }
    this.unexpected.push(`${method} ${record.path}`);
    return reply(404, { message: "Not Found" });
  }
}

// ── Running the bundle ────────────────────────────────────────────────────────────────────────

interface ChildRun {
  /** Spawn to exit. */
  ms: number;
  spawnedAt: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function runNode(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<ChildRun> {
  return new Promise((ok, fail) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const spawnedAt = performance.now();
    const child = spawn(process.execPath, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let exitedAt = spawnedAt;
    const timer = setTimeout(() => child.kill("SIGKILL"), CHILD_TIMEOUT_MS);
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    child.on("error", (e) => {
      clearTimeout(timer);
      fail(new ActionBenchBroken(`cannot start node ${args.join(" ")}: ${e.message}`));
    });
    child.on("exit", () => {
      exitedAt = performance.now();
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      ok({
        ms: exitedAt - spawnedAt,
        spawnedAt,
        code,
        signal,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      });
    });
  });
}

/**
 * Dropped from the parent's environment: what a runner sets (set below instead), proxies (the
 * mock is on loopback, which @actions/http-client never proxies anyway), NODE_OPTIONS, and
 * NODE_EXTRA_CA_CERTS (which makes every Node start-up read and parse a certificate bundle, ~35
 * ms on a development machine; a GitHub-hosted runner does not set it, and the mock is plain HTTP).
 */
const DROPPED_ENV =
  /^(GITHUB_|INPUT_|RUNNER_|ACTIONS_|TERFYN_)|^(https?_proxy|all_proxy|no_proxy|NODE_OPTIONS|NODE_EXTRA_CA_CERTS)$/i;

function baseEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !DROPPED_ENV.test(k)));
}

interface Runner {
  env: NodeJS.ProcessEnv;
  output: string;
  summary: string;
}

/** A runner's files (event payload, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, RUNNER_TEMP) and environment. */
function runnerFor(
  dir: string,
  name: string,
  event: string,
  payload: unknown,
  api: string,
  repo: PrRepo,
): Runner {
  const files = join(dir, `runner-${name}`);
  mkdirSync(files, { recursive: true });
  const eventPath = join(files, "event.json");
  writeFileSync(eventPath, JSON.stringify(payload));
  const output = join(files, "output");
  const summary = join(files, "summary");
  return {
    output,
    summary,
    env: {
      ...baseEnv(),
      GITHUB_ACTIONS: "true",
      GITHUB_EVENT_PATH: eventPath,
      GITHUB_EVENT_NAME: event,
      GITHUB_REPOSITORY: `${OWNER}/${REPO}`,
      GITHUB_WORKSPACE: repo.dir,
      GITHUB_SHA: repo.head,
      GITHUB_OUTPUT: output,
      GITHUB_STEP_SUMMARY: summary,
      // The plan-json-file output goes here, removed with the bench's directory (not to /tmp).
      RUNNER_TEMP: files,
      GITHUB_API_URL: api,
      GITHUB_SERVER_URL: "https://github.com",
      INPUT_PROJECT: PROJECT,
      "INPUT_GITHUB-TOKEN": TOKEN,
    },
  };
}

function clearRunnerFiles(r: Runner): void {
  writeFileSync(r.output, "");
  writeFileSync(r.summary, "");
}

function readOutputs(r: Runner): Record<string, string> {
  const outputs: Record<string, string> = {};
  const text = readFileSync(r.output, "utf8");
  for (const m of text.matchAll(/^([^<\n]+)<<(\S+)\n([\s\S]*?)\n\2$/gm))
    outputs[m[1] as string] = m[3] as string;
  return outputs;
}

const excerpt = (r: ChildRun) =>
  `${r.stdout}${r.stderr}`.trim().split("\n").slice(-15).join("\n").slice(-3000);

interface PrRunFacts {
  ms: number;
  /** Spawn to the first request's arrival; first arrival to last response; last response to exit. */
  toFirstCall: number;
  api: number;
  afterApi: number;
  calls: number;
  /** Between the arrivals of the first and the second write (POST comment, POST check run). */
  writeGap: number;
  /** 3 + ceil(annotations / 50). */
  bound: number;
  annotations: number;
  failures: number;
  byEndpoint: string;
}

/** Checks one pull-request run did what it should; returns its figures. */
function checkPrRun(r: ChildRun, mock: MockGitHub, runner: Runner, repo: PrRepo): PrRunFacts {
  const problems: string[] = [];
  if (r.code !== 1) problems.push(`exit code ${r.code ?? r.signal} (expected 1: a failed step)`);
  // The step fails on the project (here first for the capability test the widening breaks).
  if (!r.stdout.includes(`::error::terfyn: ${PROJECT}: `))
    problems.push(`no "::error::terfyn: ${PROJECT}: …" line`);
  if (mock.unexpected.length > 0)
    problems.push(`unexpected API requests: ${mock.unexpected.join(", ")}`);
  const seq = mock.requests.map((q) => `${q.method} ${q.path.replace(/\?.*$/, "")}`);
  const repoPath = `/repos/${OWNER}/${REPO}`;
  const want = [
    `GET ${repoPath}/issues/${PR_NUMBER}/comments`,
    `POST ${repoPath}/check-runs`,
    `POST ${repoPath}/issues/${PR_NUMBER}/comments`,
  ];
  if (seq.slice(0, 3).join(", ") !== want.join(", "))
    problems.push(`API requests ${seq.join(", ")} (expected ${want.join(", ")}, then updates)`);

  const comment = mock.comments[0]?.body ?? "";
  if (mock.comments.length !== 1) problems.push(`${mock.comments.length} comments (expected 1)`);
  for (const s of [
    `<!-- terfyn:plan project=${PROJECT} -->`,
    `| \`Agent/${WIDENING_AGENT}\` | \`workspace.write\` | autonomous |`,
    "autonomous -> WIDENED",
  ])
    if (!comment.includes(s)) problems.push(`the comment lacks ${JSON.stringify(s)}`);

  const check = mock.checkRuns[0];
  const annotations = [...mock.checkRuns, ...mock.updates].flatMap(
    (c) => c.output?.annotations ?? [],
  );
  if (mock.checkRuns.length !== 1 || !check) {
    problems.push(`${mock.checkRuns.length} check runs (expected 1)`);
  } else {
    if (check.name !== `terfyn: ${PROJECT}`) problems.push(`check run named ${check.name}`);
    if (check.head_sha !== repo.head) problems.push(`check run on ${check.head_sha}`);
    if (check.status !== "completed" || check.conclusion !== "failure")
      problems.push(`check run ${check.status}/${check.conclusion} (expected completed/failure)`);
    const failure = annotations.find(
      (a) =>
        a.annotation_level === "failure" &&
        a.path === `${PROJECT}/main.agent` &&
        a.start_line === repo.grantLine,
    );
    if (!failure)
      problems.push(
        `no failure annotation on ${PROJECT}/main.agent:${repo.grantLine} (annotations: ${annotations
          .map((a) => `${a.annotation_level} ${a.path}:${a.start_line}`)
          .join(", ")})`,
      );
  }
  const bound = BASE_CALLS + Math.ceil(annotations.length / ANNOTATIONS_PER_REQUEST);
  const patches = Math.max(0, Math.ceil(annotations.length / ANNOTATIONS_PER_REQUEST) - 1);
  if (mock.updates.length !== patches)
    problems.push(`${mock.updates.length} check-run updates (expected ${patches})`);

  const outputs = readOutputs(runner);
  if (outputs.forbidden !== "true") problems.push(`output forbidden=${outputs.forbidden}`);
  if (outputs.widened !== "true") problems.push(`output widened=${outputs.widened}`);
  if (!/^sha256:[0-9a-f]{64}$/.test(outputs["plan-hash"] ?? ""))
    problems.push(`output plan-hash=${outputs["plan-hash"]}`);
  let plan: { summary?: { forbidden?: boolean }; policy_violations?: unknown[] } | undefined;
  try {
    plan = JSON.parse(outputs["plan-json"] ?? "null");
  } catch {
    problems.push("output plan-json is not JSON");
  }
  if (plan?.summary?.forbidden !== true || (plan.policy_violations?.length ?? 0) === 0)
    problems.push("the plan (output plan-json) does not forbid the widening");
  if (!readFileSync(runner.summary, "utf8").includes("autonomous -> WIDENED"))
    problems.push("the job summary lacks `autonomous -> WIDENED`");
  if (problems.length > 0)
    throw new ActionBenchBroken(
      `the Action did not do what it should on the example PR: ${problems.join("; ")}\n${excerpt(r)}`,
    );

  const writes = mock.requests.filter((q) => q.method !== "GET");
  const first = Math.min(...mock.requests.map((q) => q.at));
  const last = Math.max(...mock.requests.map((q) => q.done));
  const count = (m: string, suffix: string) =>
    seq.filter((s) => s.startsWith(`${m} `) && new RegExp(suffix).test(s)).length;
  return {
    ms: r.ms,
    toFirstCall: first - r.spawnedAt,
    api: last - first,
    afterApi: r.spawnedAt + r.ms - last,
    calls: mock.requests.length,
    writeGap: (writes[1]?.at ?? 0) - (writes[0]?.at ?? 0),
    bound,
    annotations: annotations.length,
    failures: annotations.filter((a) => a.annotation_level === "failure").length,
    byEndpoint: `${count("GET", "/comments$")} list comments, ${count("POST", "/comments$")} create comment, ${count("POST", "/check-runs$")} create check run, ${count("PATCH", "/check-runs/")} update check run, ${count("POST", "/statuses/")} commit status; bound ${BASE_CALLS} + ceil(${annotations.length}/${ANNOTATIONS_PER_REQUEST}) = ${bound}`,
  };
}

function checkColdRun(r: ChildRun, mock: MockGitHub, runner: Runner): void {
  const problems: string[] = [];
  if (r.code !== 0) problems.push(`exit code ${r.code ?? r.signal} (expected 0)`);
  if (!r.stdout.includes("nothing to do")) problems.push(`no "nothing to do" line`);
  if (mock.requests.length > 0)
    problems.push(`${mock.requests.length} API requests (expected none)`);
  if (readFileSync(runner.output, "utf8") !== "") problems.push("it set outputs");
  if (problems.length > 0)
    throw new ActionBenchBroken(
      `the Action with nothing to do did more: ${problems.join("; ")}\n${excerpt(r)}`,
    );
}

// ── Measurement helpers ───────────────────────────────────────────────────────────────────────

const fmt = (x: number) => `${x.toFixed(1)} ms`;
const spread = (xs: number[]) =>
  `min ${fmt(Math.min(...xs))}, max ${fmt(Math.max(...xs))}, ${xs.length} runs`;

// ── The benchmark ─────────────────────────────────────────────────────────────────────────────

export async function runActionBench(opts: ActionBenchOptions): Promise<ActionBenchResult> {
  let bundleBytes: number;
  try {
    bundleBytes = statSync(DIST).size;
  } catch {
    throw new ActionBenchBroken(`${DIST} does not exist: run \`npm run build\` first`);
  }
  rmSync(opts.dir, { recursive: true, force: true });
  const repoDir = join(opts.dir, "repo");
  mkdirSync(repoDir, { recursive: true });
  const mock = new MockGitHub();
  try {
    const repo = buildRepo(repoDir);
    const api = await mock.start();
    const pr = runnerFor(opts.dir, "pr", "pull_request", prPayload(repo), api, repo);
    const idle = runnerFor(opts.dir, "schedule", "schedule", {}, api, repo);

    // 1. The example PR, end to end.
    const prRuns: PrRunFacts[] = [];
    for (let i = 0; i < opts.warmup + opts.reps; i++) {
      mock.reset();
      clearRunnerFiles(pr);
      const r = await runNode([DIST], pr.env, repo.dir);
      const facts = checkPrRun(r, mock, pr, repo);
      if (i >= opts.warmup) prRuns.push(facts);
    }

    // 2. Cold start with nothing to do, against `node -e ""`, alternating order each round.
    const coldReps = Math.max(COLD_MIN_REPS, 3 * opts.reps);
    const coldWarmup = Math.max(3, opts.warmup);
    const bundle: number[] = [];
    const node: number[] = [];
    for (let i = 0; i < coldWarmup + coldReps; i++) {
      const runBundle = async () => {
        mock.reset();
        clearRunnerFiles(idle);
        const r = await runNode([DIST], idle.env, repo.dir);
        checkColdRun(r, mock, idle);
        return r.ms;
      };
      const runBare = async () => {
        const r = await runNode(["-e", ""], idle.env, repo.dir);
        if (r.code !== 0) throw new ActionBenchBroken(`node -e "" exited ${r.code ?? r.signal}`);
        return r.ms;
      };
      let tb: number;
      let tn: number;
      if (i % 2 === 0) {
        tb = await runBundle();
        tn = await runBare();
      } else {
        tn = await runBare();
        tb = await runBundle();
      }
      if (i >= coldWarmup) {
        bundle.push(tb);
        node.push(tn);
      }
    }

    // 3. N projects in one pull request: the comments are listed once, then a check run and a
    //    comment per project and one status: at most 1 + 2N + ceil(annotations / 50).
    const multiDir = join(opts.dir, "multi");
    mkdirSync(multiDir, { recursive: true });
    const multiRepo = buildMultiRepo(multiDir, MULTI_PROJECTS);
    const multi = runnerFor(
      opts.dir,
      "multi",
      "pull_request",
      prPayload(multiRepo),
      api,
      multiRepo,
    );
    multi.env.INPUT_PROJECT = `${PROJECT}*`;
    mock.reset();
    clearRunnerFiles(multi);
    const mr = await runNode([DIST], multi.env, multiRepo.dir);
    if (mr.code !== 1)
      throw new ActionBenchBroken(`the ${MULTI_PROJECTS}-project run exited ${mr.code}`);
    const multiAnnotations = [...mock.checkRuns, ...mock.updates].flatMap(
      (c) => c.output?.annotations ?? [],
    ).length;
    const multiCalls = mock.requests.length;
    const multiBound =
      1 + 2 * MULTI_PROJECTS + Math.ceil(multiAnnotations / ANNOTATIONS_PER_REQUEST);
    if (mock.comments.length !== MULTI_PROJECTS || mock.checkRuns.length !== MULTI_PROJECTS)
      throw new ActionBenchBroken(
        `the ${MULTI_PROJECTS}-project run made ${mock.comments.length} comments and ${mock.checkRuns.length} check runs`,
      );

    const wall = prRuns.map((f) => f.ms);
    const prMs = median(wall);
    const last = prRuns[prRuns.length - 1] as PrRunFacts;
    const calls = Math.max(...prRuns.map((f) => f.calls));
    const callsOk = prRuns.every((f) => f.calls <= f.bound);
    const coldMs = median(bundle);
    const nodeMs = median(node);
    const rows: [string, string][] = [
      [
        "action: bundle",
        `dist/index.js, ${(bundleBytes / 1024).toFixed(0)} KiB; node ${process.version}, run as \`node dist/index.js\` (child process)`,
      ],
      [
        "  the PR",
        `${PROJECT}/ = examples/implement-review-loop at base ${repo.base.slice(0, 12)}; head ${repo.head.slice(0, 12)} grants the ${WIDENING_AGENT} ${WIDENING_GRANT} (${PROJECT}/main.agent:${repo.grantLine}), which the policy forbids`,
      ],
      [
        "  GitHub API",
        `mock on ${api} (loopback; answers at once, no latency); ${opts.dir}${opts.keep ? "" : " (removed afterwards)"}`,
      ],
      [
        "  child environment",
        `the runner's variables, and the parent's without ${
          Object.keys(process.env)
            .filter((k) => DROPPED_ENV.test(k))
            .sort()
            .join(", ") || "nothing"
        }`,
      ],
      [
        "  checked, every run",
        `exit 1 (the policy forbids the widening), 1 comment with the WIDENED lines, 1 check run completed/failure with a failure annotation on ${PROJECT}/main.agent:${repo.grantLine}, outputs and summary`,
      ],
      ["  repetitions", `${opts.reps} measured after ${opts.warmup} warm-up (median)`],
      ["action PR wall", `${fmt(prMs)}  (spawn to exit; ${spread(wall)})`],
      [
        "  spawn -> first API call",
        `${fmt(median(prRuns.map((f) => f.toFirstCall)))}  (start-up, git objects, plan both sides, capability tests, summary and outputs)`,
      ],
      [
        "  API calls",
        `${fmt(median(prRuns.map((f) => f.api)))}  (first request to last response, against the mock)`,
      ],
      [
        "    of which between writes",
        `${fmt(median(prRuns.map((f) => f.writeGap)))}  (first to second mutating request: the write limiter lets a burst of 10 through, then spaces writes 1 s apart)`,
      ],
      ["  last response -> exit", fmt(median(prRuns.map((f) => f.afterApi)))],
      [
        "API calls per plan",
        `${calls}  (${last.byEndpoint}; ${last.annotations} annotations, ${last.failures} failure)`,
      ],
      [
        "cold start (nothing to do)",
        `${fmt(coldMs)}  (schedule event, empty payload: inputs read, "nothing to do", exit 0, no API call; ${spread(bundle)})`,
      ],
      [`  node -e ""`, `${fmt(nodeMs)}  (baseline, same rounds; ${spread(node)})`],
      ["  bundle over node", fmt(coldMs - nodeMs)],
    ];
    rows.push([
      `API calls, ${MULTI_PROJECTS} projects`,
      `${multiCalls}  (bound 1 + 2×${MULTI_PROJECTS} + ceil(${multiAnnotations}/${ANNOTATIONS_PER_REQUEST}) = ${multiBound}; ${mr.ms.toFixed(0)} ms end to end)`,
    ]);
    const ms = (xs: number[]) =>
      medianAndSpread(median(xs), Math.min(...xs), Math.max(...xs), xs.length);
    const targets: Target[] = [
      [
        `action on the example PR < ${TARGET_ACTION_MS} ms`,
        prMs < TARGET_ACTION_MS,
        `${(prMs / TARGET_ACTION_MS).toFixed(2)}x the target: ${ms(wall)}`,
      ],
      [
        `API calls, N projects <= 1 + 2N + ceil(annotations / ${ANNOTATIONS_PER_REQUEST})`,
        multiCalls <= multiBound,
        `${multiCalls} calls, bound ${multiBound}`,
      ],
      [
        `API calls <= ${BASE_CALLS} + ceil(annotations / ${ANNOTATIONS_PER_REQUEST})`,
        callsOk,
        `at most ${calls} calls over ${prRuns.length} runs`,
      ],
      [
        `bundle cold start < ${TARGET_COLD_START_MS} ms`,
        coldMs < TARGET_COLD_START_MS,
        `${(coldMs / TARGET_COLD_START_MS).toFixed(2)}x the target: ${ms(bundle)}`,
      ],
    ];
    return { rows, targets };
  } finally {
    await mock.stop();
    if (!opts.keep) rmSync(opts.dir, { recursive: true, force: true });
  }
}
