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
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
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

async function setUp(extraEnv: Record<string, string> = {}) {
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
    threads: (replies) => reviewThreadNodes(ex, replies, SLUG),
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
});
