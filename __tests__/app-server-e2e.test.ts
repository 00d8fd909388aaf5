/**
 * The App's real server end to end (issue 23, item 2): started as the docs say (`npm start`, a
 * generated private key, a webhook secret, no slug), as its own process group, against a fake
 * GitHub Enterprise that is a real HTTP server (helpers/github-server.ts: App authentication by
 * JWT and installation tokens, REST checked against GitHub's OpenAPI description, GraphQL against
 * its schema, git over smart HTTP on a bare repository). One whole run, driven by signed
 * webhooks: label → 👀 and status comment → plan gate → `/terfyn approve` → publish gate →
 * approve → fast-forward push → thread replies → report. The server is killed (SIGKILL, with its
 * worker) at a gate and mid-phase and started again, and the run goes on. The same in the
 * Actions placement, where each dispatched job is the Action's bundle run as the runner runs it.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type Ledger, parseLedger } from "../src/core/app/triggers.ts";
import { appKeyPair } from "./helpers/app-key.ts";
import {
  build,
  commented,
  EXAMPLE,
  type Example,
  labeled,
  reviewThreadNodes,
  until,
} from "./helpers/app-runner.ts";
import { type GitHubServer, type Seen, startGitHubServer } from "./helpers/github-server.ts";
import { freePort } from "./helpers/local-server.ts";

const ROOT = join(import.meta.dirname, "..");
const OWNER = "octo-org";
const REPO = "numbers";
const SLUG = "terfyn-e2e";
const APP_ID = 31337;
const INSTALLATION = 777;
const SECRET = "e2e-webhook-secret";
const WORKFLOW_TOKEN = "ghs_workflowtoken00000000000000000000";
const STATE_KEY = "e2e-state-key-".padEnd(64, "k");

const { privateKey, publicKey } = appKeyPair();

/** How long any one step of a run may take here. */
const WAIT = 120_000;

/** The App's server: `npm start` in the repository, its own process group. */
class AppServer {
  proc: ChildProcess | undefined;
  log = "";
  constructor(
    readonly port: number,
    readonly env: Record<string, string>,
  ) {}
  async start(): Promise<void> {
    const p = spawn("npm", ["start", "--silent"], {
      cwd: ROOT,
      detached: true,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: process.env.HOME ?? "/",
        PORT: String(this.port),
        HOST: "127.0.0.1",
        ...this.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const seen = this.log.length;
    p.stdout?.on("data", (c: Buffer) => {
      this.log += c.toString("utf8");
    });
    p.stderr?.on("data", (c: Buffer) => {
      this.log += c.toString("utf8");
    });
    this.proc = p;
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (p.exitCode !== null) throw new Error(`the App exited ${p.exitCode}:\n${this.log}`);
      if (Date.now() > deadline)
        throw new Error(`the App did not listen:\n${this.log.slice(seen)}`);
      const up = await fetch(`http://127.0.0.1:${this.port}/`).then(
        () => true,
        () => false,
      );
      if (up) return;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  /** SIGKILL to the whole group: the server, tsx and the review worker it forked. */
  async kill(): Promise<void> {
    const p = this.proc;
    if (!p?.pid || p.exitCode !== null) return;
    const gone = new Promise((r) => p.once("exit", r));
    process.kill(-p.pid, "SIGKILL");
    await gone;
    // The worker is in the same group; wait until nothing of it is left.
    await until(
      () => {
        try {
          process.kill(-(p.pid as number), 0);
          return false;
        } catch {
          return true;
        }
      },
      WAIT,
      "the process group to be gone",
    );
  }
  /** A webhook as GitHub sends it: signed with the secret. */
  async deliver(event: string, payload: unknown): Promise<number> {
    const body = JSON.stringify(payload);
    const signature = `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
    const res = await fetch(`http://127.0.0.1:${this.port}/api/github/webhooks`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": event,
        "x-github-delivery": `d-${Math.random().toString(36).slice(2)}`,
        "x-hub-signature-256": signature,
      },
      body,
    });
    await res.text();
    return res.status;
  }
}

/** What a workflow job's runner gives the step: action.yml's defaults, then the `with:` values. */
function runnerInputs(given: Record<string, string>): Record<string, string> {
  const action = parse(readFileSync(join(ROOT, "action.yml"), "utf8")) as {
    inputs: Record<string, { default?: string }>;
  };
  const env: Record<string, string> = {};
  for (const [name, spec] of Object.entries(action.inputs))
    env[`INPUT_${name.toUpperCase()}`] = given[name] ?? spec.default ?? "";
  return env;
}

/**
 * One job of the review-fix workflow for a dispatch the App sent, run as the runner runs the
 * step: `node` on action.yml's `runs.main` in its own process, a fresh RUNNER_TEMP (a fresh
 * machine), the inputs the dispatch carried through the workflow's `with:`, the job's token and
 * GitHub Enterprise's URLs. Resolves with its exit code, log and outputs.
 */
function workflowJob(gh: GitHubServer, dispatch: { body: Record<string, unknown> }) {
  const inputs = (dispatch.body.inputs ?? {}) as Record<string, string>;
  const temp = mkdtempSync(join(tmpdir(), "terfyn-e2e-runner-"));
  const output = join(temp, "github-output");
  writeFileSync(output, "");
  const main = (parse(readFileSync(join(ROOT, "action.yml"), "utf8")) as { runs: { main: string } })
    .runs.main;
  const p = spawn(process.execPath, [join(ROOT, main)], {
    cwd: temp,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/",
      GITHUB_ACTIONS: "true",
      GITHUB_EVENT_NAME: "workflow_dispatch",
      GITHUB_REPOSITORY: `${OWNER}/${REPO}`,
      GITHUB_SERVER_URL: gh.origin,
      GITHUB_API_URL: `${gh.origin}/api/v3`,
      GITHUB_GRAPHQL_URL: `${gh.origin}/api/graphql`,
      GITHUB_WORKSPACE: temp,
      GITHUB_OUTPUT: output,
      RUNNER_TEMP: temp,
      TERFYN_MODEL_SCRIPT: join(EXAMPLE, "model-script.yaml"),
      ...runnerInputs({
        mode: "review-fix",
        "github-token": WORKFLOW_TOKEN,
        "state-key": STATE_KEY,
        "pull-request": inputs["pull-request"] ?? "",
        "head-sha": inputs["head-sha"] ?? "",
        run: inputs.run ?? "",
      }),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  p.stdout?.on("data", (c: Buffer) => (log += c.toString("utf8")));
  p.stderr?.on("data", (c: Buffer) => (log += c.toString("utf8")));
  jobLogs.push(() => log);
  return new Promise<{ code: number | null; log: string; outputs: Record<string, string> }>(
    (resolve) =>
      p.on("exit", (code) => {
        const outputs: Record<string, string> = {};
        for (const m of readFileSync(output, "utf8").matchAll(
          /^([^<\n]+)<<(\S+)\n([\s\S]*?)\n\2$/gm,
        ))
          outputs[m[1] as string] = m[3] as string;
        resolve({ code, log, outputs });
      }),
  );
}

/** The logs of the jobs run so far, printed when a test fails. */
const jobLogs: (() => string)[] = [];

const servers: AppServer[] = [];
const fakes: GitHubServer[] = [];
afterEach(async (ctx) => {
  // A failed run says what the server logged and what GitHub saw.
  if (ctx.task.result?.state === "fail")
    for (const s of servers)
      process.stderr.write(
        `--- the App's log ---\n${s.log}\n--- GitHub saw ---\n${fakes
          .flatMap((g) => g.seen.map((x) => `${x.as} ${x.method} ${x.path}`))
          .join("\n")}\n--- comments ---\n${fakes
          .flatMap((g) => g.comments.map((c) => `${c.user.login}: ${c.body}`))
          .join("\n---\n")}\n`,
      );
  if (ctx.task.result?.state === "fail")
    for (const log of jobLogs) process.stderr.write(`--- a workflow job ---\n${log()}\n`);
  jobLogs.splice(0);
  for (const s of servers.splice(0)) await s.kill();
  for (const g of fakes.splice(0)) await g.close();
});

// biome-ignore lint/suspicious/noExplicitAny: webhook payloads are loose JSON
type Loose = Record<string, any>;

function onRepo(p: Loose): Loose {
  p.repository.name = REPO;
  p.repository.owner.login = OWNER;
  p.repository.full_name = `${OWNER}/${REPO}`;
  p.repository.default_branch = "main";
  p.installation = { id: INSTALLATION, node_id: "MDIz" };
  return p;
}

function labelPayload(ex: Example): Loose {
  const p = onRepo(labeled(ex));
  p.pull_request.base.repo.full_name = `${OWNER}/${REPO}`;
  p.pull_request.head.repo.full_name = `${OWNER}/${REPO}`;
  p.pull_request.base.sha = ex.base;
  return p;
}

function approvalPayload(c: { id: number; body: string; created_at: string }): Loose {
  const p = onRepo(commented(c.body));
  p.comment.id = c.id;
  p.comment.created_at = c.created_at;
  p.comment.updated_at = c.created_at;
  return p;
}

async function setUp(extraEnv: Record<string, string> = {}, replier = SLUG) {
  const ex = build();
  execFileSync("git", ["--git-dir", ex.origin, "config", "receive.denyNonFastForwards", "true"]);
  const gh = await startGitHubServer({
    owner: OWNER,
    repo: REPO,
    bare: ex.origin,
    appId: APP_ID,
    slug: SLUG,
    installation: INSTALLATION,
    publicKey,
    pull: { number: 7, headRef: "fix-add", base: ex.base, author: "alice" },
    roles: { maria: "write", alice: "write" },
    threads: (replies) => reviewThreadNodes(ex, replies, replier),
    tokens: { workflow: WORKFLOW_TOKEN },
  });
  fakes.push(gh);
  const app = new AppServer(await freePort(), {
    APP_ID: String(APP_ID),
    PRIVATE_KEY: privateKey,
    WEBHOOK_SECRET: SECRET,
    GHE_HOST: gh.host,
    GHE_PROTOCOL: "http",
    LOG_LEVEL: "warn",
    TERFYN_APP_RUNS_DIR: mkdtempSync(join(tmpdir(), "terfyn-e2e-runs-")),
    TERFYN_MODEL_SCRIPT: join(EXAMPLE, "model-script.yaml"),
    ...extraEnv,
  });
  servers.push(app);
  return { ex, gh, app };
}

/** The ledger of `login`'s status comment, when there is one. */
function ledgerOf(gh: GitHubServer, login: string): { id: number; ledger: Ledger } | undefined {
  for (const c of gh.comments) {
    if (c.user.login !== login) continue;
    const ledger = parseLedger(c.body);
    if (ledger) return { id: c.id, ledger };
  }
  return undefined;
}

const atGate = (gh: GitHubServer, login: string, gate: string) => () => {
  const l = ledgerOf(gh, login)?.ledger;
  if (l?.terminal) throw new Error(`the run ended ${l.terminal}: ${JSON.stringify(l)}`);
  return l?.gate === gate ? l : undefined;
};

/** A writer's approval of `hash`, as a comment GitHub lists and the webhook it sends. */
function approve(gh: GitHubServer, hash: string) {
  return approvalPayload(gh.comment("maria", `Read it; fine.\n\n/terfyn approve ${hash}`));
}

/** Everything a run must have done and never done, whatever the placement. */
function expectDelivered(gh: GitHubServer, ex: Example, by: string[]) {
  expect(gh.problems).toEqual([]);
  // The branch was fast-forwarded from the head the run was asked about.
  const head = gh.head();
  expect(head).not.toBe(ex.head);
  execFileSync("git", ["--git-dir", ex.origin, "merge-base", "--is-ancestor", ex.head, head]);
  // Replies in the threads; the only mutation sent is the reply (nothing resolved).
  expect(gh.replies.length).toBeGreaterThan(0);
  const mutations = gh.seen
    .filter((s) => s.path === "/graphql")
    .map((s) => /^\s*(query|mutation)\s+(\w+)/.exec((s.body as { query: string }).query)?.[2]);
  expect(new Set(mutations)).toEqual(new Set(["TerfynReviewThreads", "TerfynThreadReply"]));
  // Every API and git request carried a token GitHub issued to the expected party.
  for (const s of gh.seen.filter((x) => !x.path.startsWith("/app")))
    expect(by, `${s.method} ${s.path}`).toContain(s.as);
}

describe("the App's server, end to end (npm start against a fake GitHub Enterprise)", () => {
  it("in process: label → plan gate → approve → publish gate → approve → push, replies, report; killed at a gate and mid-phase, it resumes", async () => {
    const { ex, gh, app } = await setUp();
    await app.start();
    const APP = `${SLUG}[bot]`;
    // The slug came from GET /app with the App's JWT (no TERFYN_APP_SLUG).
    expect(app.log).toContain(`running as ${APP}`);
    expect(gh.seen.find((s) => s.path === "/app")?.as).toBe("jwt");

    expect(await app.deliver("pull_request", labelPayload(ex))).toBe(200);
    await until(() => gh.reactions.includes("eyes"), WAIT, "👀");
    const plan = await until(atGate(gh, APP, "plan"), WAIT, "the plan gate");

    // Killed at the gate, started again: the approval is taken by the new process.
    await app.kill();
    await app.start();
    // Held: the first report of a phase running after the approval. The server is killed
    // while that phase runs (its report unanswered), then started again.
    const statusId = ledgerOf(gh, APP)?.id;
    const midPhase = gh.hold((s: Seen) => {
      if (s.method !== "PATCH" || s.path !== `/repos/${OWNER}/${REPO}/issues/comments/${statusId}`)
        return false;
      const l = parseLedger(String((s.body as { body?: string })?.body ?? ""));
      return !!l && !l.gate && !l.terminal && l.phase !== "plan";
    });
    expect(await app.deliver("issue_comment", approve(gh, plan.hash as string))).toBe(200);
    const held = await midPhase;
    const phase = parseLedger(String((held.body as { body: string }).body))?.phase;
    await app.kill();
    await app.start(); // recovers the interrupted run at start, no webhook needed
    const publish = await until(atGate(gh, APP, "publish"), WAIT, "the publish gate");

    expect(await app.deliver("issue_comment", approve(gh, publish.hash as string))).toBe(200);
    const end = await until(() => ledgerOf(gh, APP)?.ledger.terminal, WAIT, "the run's end");
    expect(end, app.log).toBe("done");
    expect(phase).toBeDefined();

    expectDelivered(gh, ex, ["installation"]);
    // A JWT for the App's routes only; installation tokens issued for each process.
    for (const s of gh.seen.filter((x) => x.path.startsWith("/app"))) expect(s.as).toBe("jwt");
    expect(gh.issued.length).toBeGreaterThanOrEqual(3);
    expect(
      gh.seen.some((s) => s.path.startsWith("git ") && s.path.endsWith("git-receive-pack")),
    ).toBe(true);
    // The check run on the head, as its creation and its updates leave it, says the run ended.
    const check = gh.checkRuns.at(-1);
    expect(Object.assign({}, check?.body, ...(check?.updates ?? []))).toMatchObject({
      status: "completed",
    });
    expect(app.log).not.toMatch(/internal error|TypeError|ReferenceError/);
  }, 600_000);
  it("on Actions: label → dispatch → a job to the plan gate → approve → a job to the publish gate → approve → a job pushes, replies, reports; the App killed at a gate and while a job runs", async () => {
    const { ex, gh, app } = await setUp({ TERFYN_APP_PLACEMENT: "actions" }, "github-actions");
    await app.start();
    const APP = `${SLUG}[bot]`;
    const JOB = "github-actions[bot]";
    expect(await app.deliver("pull_request", labelPayload(ex))).toBe(200);
    await until(() => gh.reactions.includes("eyes"), WAIT, "👀");
    const first = await until(() => gh.dispatches[0], WAIT, "the first dispatch");
    expect(first.workflow).toBe("terfyn-review-fix.yml");
    expect(first.body).toMatchObject({
      ref: "main",
      inputs: { "pull-request": "7", "head-sha": ex.head },
    });
    const run = (first.body.inputs as { run: string }).run;
    expect(run).toMatch(/\S/);
    expect(ledgerOf(gh, APP)?.ledger).toMatchObject({ run });

    const one = await workflowJob(gh, first);
    expect(one.code, one.log).toBe(0);
    expect(one.outputs).toMatchObject({ "review-run": run, "review-state": "awaiting-approval" });
    const plan = await until(atGate(gh, JOB, "plan"), WAIT, "the plan gate");

    // Killed at the gate, started again: the approval is passed on by the new process.
    await app.kill();
    await app.start();
    expect(await app.deliver("issue_comment", approve(gh, plan.hash as string))).toBe(200);
    const second = await until(() => gh.dispatches[1], WAIT, "the dispatch of the approval");
    expect(second.body).toMatchObject({ inputs: { run, "pull-request": "7" } });

    // The App is killed while the job runs and started again; the job does not need it.
    const running = workflowJob(gh, second);
    await app.kill();
    await app.start();
    const two = await running;
    expect(two.code, two.log).toBe(0);
    expect(two.outputs).toMatchObject({ "review-run": run, "review-state": "awaiting-approval" });
    const publish = await until(atGate(gh, JOB, "publish"), WAIT, "the publish gate");
    // Nothing was published before the publish gate.
    expect(gh.head()).toBe(ex.head);

    expect(await app.deliver("issue_comment", approve(gh, publish.hash as string))).toBe(200);
    const third = await until(() => gh.dispatches[2], WAIT, "the dispatch of the second approval");
    const three = await workflowJob(gh, third);
    expect(three.code, three.log).toBe(0);
    expect(three.outputs).toMatchObject({ "review-run": run, "review-state": "done" });
    expect(ledgerOf(gh, JOB)?.ledger.terminal).toBe("done");
    expect(gh.dispatches).toHaveLength(3);

    expectDelivered(gh, ex, ["installation", "workflow"]);
    // The App's token did the App's part (👀, its comment, the dispatches); the job's token the
    // run's (its status comment, the push, the replies).
    for (const s of gh.seen.filter((x) => x.path.endsWith("/dispatches")))
      expect(s.as).toBe("installation");
    for (const s of gh.seen.filter((x) => x.path.startsWith("git ") || x.path === "/graphql"))
      expect(s.as).toBe("workflow");
    // The run's state travelled between the jobs in the repository, one commit per job.
    expect(
      Number(
        execFileSync(
          "git",
          ["--git-dir", ex.origin, "rev-list", "--count", `refs/terfyn/runs/${run}`],
          {
            encoding: "utf8",
          },
        ).trim(),
      ),
    ).toBe(3);
    expect(app.log).not.toMatch(/internal error|TypeError|ReferenceError/);
  }, 600_000);
});
