/**
 * The App's in-process runner end to end, offline: examples/review-fix (a real repository with a
 * real defect, served through a bare remote on disk) reviewed through webhooks delivered with
 * probot.receive, GitHub a fake on nock with net connect disabled, every REST request checked
 * against GitHub's OpenAPI description and every GraphQL one against the schema fixture. The
 * model script plays the agents. Label → the handler returns before any agent work → plan gate
 * on the status comment → a writer's approval → publish gate → approval → a fast-forward push
 * to the bare remote, marked replies, a ticket, `done`.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nock from "nock";
import { Probot, ProbotOctokit } from "probot";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { readProjectDirectory } from "../src/adapters/fs/read-project.ts";
import { FileRunLock, hostFacts } from "../src/adapters/fs/run-lock.ts";
import { createGateway } from "../src/adapters/github/gateway.ts";
import { appEffects, replyMarker, TICKETS_FILE } from "../src/adapters/github/review-effects.ts";
import { ModelRouter } from "../src/adapters/models/model-router.ts";
import { ScriptedModel } from "../src/adapters/models/model-script.ts";
import { terfynApp } from "../src/app/app.ts";
import {
  agentsProjectDir,
  defaultModelBudget,
  type InProcessRunner,
  inProcessRunner,
} from "../src/app/review-runner.ts";
import { parseLedger } from "../src/core/app/triggers.ts";
import { artifactHash } from "../src/core/review/gates.ts";
import type { PublishArtifact } from "../src/core/review/ports.ts";
import { validateProject } from "../src/core/validate.ts";
import { API, fixture, OWNER, REPO, recordRequests } from "./helpers/action-harness.ts";
import { type FakeComment, fakeGitHub, humanComment } from "./helpers/fake-github.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

// biome-ignore lint/suspicious/noExplicitAny: webhook example payloads are loose JSON, adapted field by field
type Loose = Record<string, any>;

const EXAMPLE = join(import.meta.dirname, "..", "examples", "review-fix");
const SLUG = "terfyn-test";
const APP = `${SLUG}[bot]`;
const T0 = "2026-12-01T10:00:00Z";
const LATER = "2026-12-01T11:00:00Z";

interface Example {
  repo: string;
  origin: string;
  request: string;
  head: string;
  base: string;
  older: string;
}

function build(): Example {
  const out = join(mkdtempSync(join(tmpdir(), "terfyn-app-runner-")), "repo");
  return JSON.parse(
    execFileSync(process.execPath, [join(EXAMPLE, "build-repo.mjs"), out], { encoding: "utf8" }),
  ) as Example;
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

interface RequestThread {
  id: string;
  path: string;
  original_line: number | null;
  line: number | null;
  original_commit: string;
  outdated: boolean;
  resolved: boolean;
  comments: { id: string; author: string; body: string; created_at: string; commit: string }[];
}

/**
 * GitHub's GraphQL side: the example's threads as reviewThreads, replies added by the mutation
 * (authored by the App's Bot) and listed in their thread from then on.
 */
function fakeGraphql(
  ex: Example,
  opts: {
    failThreads?: number;
    /** Issues disabled on the repository: every issues request answers 410. */
    issuesGone?: boolean;
    /** A reply to this thread answers this HTTP status. */
    failReply?: { thread: string; status: number };
  } = {},
) {
  const request = JSON.parse(readFileSync(ex.request, "utf8")) as { threads: RequestThread[] };
  const replies: { threadId: string; body: string }[] = [];
  const issues: { title: string; body: string; author?: string }[] = [];
  const comment = (c: RequestThread["comments"][number], t: RequestThread) => ({
    id: `PRRC_${c.id}`,
    fullDatabaseId: c.id,
    author: { login: c.author, __typename: "User" },
    body: c.body,
    createdAt: c.created_at,
    lastEditedAt: null,
    commit: { oid: c.commit },
    originalCommit: { oid: t.original_commit },
    diffHunk: "@@ -1,3 +1,3 @@",
  });
  const threads = () =>
    request.threads.map((t) => ({
      id: t.id,
      isResolved: t.resolved,
      isOutdated: t.outdated,
      path: t.path,
      line: t.line,
      originalLine: t.original_line,
      diffSide: "RIGHT",
      comments: {
        pageInfo: { hasNextPage: false, endCursor: null },
        nodes: [
          ...t.comments.map((c) => comment(c, t)),
          ...replies
            .filter((r) => r.threadId === t.id)
            .map((r, i) => ({
              ...comment(
                { id: `9${i}`, author: SLUG, body: r.body, created_at: LATER, commit: ex.head },
                t,
              ),
              author: { login: SLUG, __typename: "Bot" },
            })),
        ],
      },
    }));
  nock(API)
    .persist()
    .post("/graphql")
    .reply((_u, body) => {
      const b = body as { query: string; variables: Record<string, unknown> };
      if (b.query.includes("TerfynThreadReply")) {
        if (opts.failReply && opts.failReply.thread === b.variables.threadId)
          return [opts.failReply.status, { message: "Resource not accessible by integration" }];
        replies.push({ threadId: String(b.variables.threadId), body: String(b.variables.body) });
        return [
          200,
          {
            data: {
              addPullRequestReviewThreadReply: { comment: { id: `R${replies.length}`, url: "u" } },
            },
          },
        ];
      }
      if (opts.failThreads)
        return [opts.failThreads, { message: "Resource not accessible by integration" }];
      return [
        200,
        {
          data: {
            repository: {
              pullRequest: {
                number: 7,
                headRefName: "fix-add",
                headRefOid: ex.head,
                baseRefOid: ex.base,
                isCrossRepository: false,
                reviewThreads: {
                  pageInfo: { hasNextPage: false, endCursor: null },
                  nodes: threads(),
                },
              },
            },
          },
        },
      ];
    })
    .get(new RegExp(`^/repos/${OWNER}/${REPO}/compare/[0-9a-f]{40}\\.\\.\\.[0-9a-f]{40}`))
    .reply((uri) => {
      const [from, to] = decodeURIComponent(uri.split("/compare/")[1]!.split("?")[0]!).split("...");
      const ahead = Number(git(ex.origin, "rev-list", "--count", `${from}..${to}`));
      return [200, { ahead_by: ahead, behind_by: 0, status: "ahead" }];
    })
    .get(`/repos/${OWNER}/${REPO}/issues`)
    .query(true)
    .reply((uri) => {
      if (opts.issuesGone) return [410, { message: "Issues are disabled for this repo" }];
      const q = new URL(uri, API).searchParams;
      // GitHub's filters: issues by `creator`, in any state with state=all.
      const listed = issues
        .map((i, n) => ({ ...i, number: 101 + n, author: i.author ?? APP }))
        .filter((i) => !q.get("creator") || i.author === q.get("creator"));
      return [
        200,
        listed.map((i) => ({
          id: i.number,
          number: i.number,
          title: i.title,
          body: i.body,
          state: "open",
          user: { login: i.author, type: i.author.endsWith("[bot]") ? "Bot" : "User" },
          html_url: `https://github.com/${OWNER}/${REPO}/issues/${i.number}`,
        })),
      ];
    })
    .post(`/repos/${OWNER}/${REPO}/issues`)
    .reply((_u, body) => {
      if (opts.issuesGone) return [410, { message: "Issues are disabled for this repo" }];
      issues.push(body as { title: string; body: string });
      return [
        201,
        { number: 100 + issues.length, html_url: `https://github.com/${OWNER}/${REPO}/issues/1` },
      ];
    });
  return { replies, issues };
}

async function agents() {
  const v = validateProject((await readProjectDirectory(agentsProjectDir())).files);
  expect(v.ok).toBe(true);
  return v.project;
}

const model = async () =>
  new ModelRouter({
    script: await ScriptedModel.load(join(EXAMPLE, "model-script.yaml")),
    forceScript: true,
    env: {},
  });

function labeled(ex: Example): Loose {
  const p = fixture("pull_request.labeled") as Loose;
  p.number = 7;
  p.pull_request.number = 7;
  p.pull_request.head.sha = ex.head;
  p.pull_request.head.ref = "fix-add";
  p.pull_request.user.login = "alice";
  p.label = { ...(p.label ?? {}), name: "terfyn:review-fix" };
  p.sender = { ...p.sender, login: "maria", type: "User" };
  p.repository.name = REPO;
  p.repository.owner.login = OWNER;
  p.repository.full_name = `${OWNER}/${REPO}`;
  p.pull_request.base.repo.full_name = `${OWNER}/${REPO}`;
  p.pull_request.head.repo.full_name = `${OWNER}/${REPO}`;
  return p;
}

function commented(body: string, user = "maria"): Loose {
  const p = fixture("issue_comment.created") as Loose;
  p.issue.number = 7;
  p.issue.pull_request = { url: `${API}/repos/${OWNER}/${REPO}/pulls/7` };
  p.comment.body = body;
  p.comment.user = { ...p.comment.user, login: user, type: "User" };
  p.repository.name = REPO;
  p.repository.owner.login = OWNER;
  return p;
}

function probotWith(runner: InProcessRunner) {
  const probot = new Probot({
    githubToken: "test",
    Octokit: ProbotOctokit.defaults({ retry: { enabled: false }, throttle: { enabled: false } }),
    logLevel: "fatal",
  });
  probot.load(terfynApp({ appSlug: SLUG, runner, now: () => new Date(T0) }));
  let n = 0;
  return (name: string, payload: Loose) =>
    probot.receive({
      id: `delivery-${++n}`,
      name: name as "pull_request",
      payload: payload as never,
    });
}

const status = (comments: FakeComment[]) => {
  const mine = comments.filter((c) => c.user.login === APP && parseLedger(c.body));
  expect(mine).toHaveLength(1);
  return { body: mine[0]!.body, ledger: parseLedger(mine[0]!.body)! };
};

/** A writer's approval, posted after the gate began. */
function approval(comments: FakeComment[], hash: string): string {
  const c = humanComment("maria", `Read it; fine.\n\n/terfyn approve ${hash}`);
  c.created_at = LATER;
  c.updated_at = LATER;
  comments.push(c);
  return c.body;
}

/** The in-process runner over the example's bare remote, in a fresh runs directory. */
const exampleRunner = async (
  ex: Example,
  extra: Partial<Parameters<typeof inProcessRunner>[0]> = {},
) =>
  inProcessRunner({
    appSlug: SLUG,
    runsDir: mkdtempSync(join(tmpdir(), "terfyn-app-runs-")),
    agents: await agents(),
    model,
    cloneUrl: () => ex.origin,
    now: () => new Date(T0),
    log: () => {},
    ...extra,
  });

/** A pull request on the example where maria may write. */
const writer = (ex: Example) =>
  fakeGitHub({
    me: APP,
    roles: { maria: { role_name: "write", permission: "write" } },
    pr: { headSha: ex.head, baseSha: ex.base, author: "alice" },
  });

/** The App's effects for a run's directories, as a resumed publish builds them. */
const runEffects = async (run: string, p: { clone: string; worktree: string; run: string }) =>
  appEffects({
    gateway: createGateway(
      "t",
      { owner: OWNER, repo: REPO },
      { fetch: globalThis.fetch, retries: 0 },
    ),
    repo: { owner: OWNER, repo: REPO },
    pullRequest: 7,
    triggerAt: T0,
    run,
    appSlug: SLUG,
    cloneDir: p.clone,
    worktreeDir: p.worktree,
    runDir: p.run,
    git: {},
    agents: await agents(),
    model: await model(),
    progress: () => {},
  });

describe("the App's in-process runner", () => {
  it("label → plan gate → approval → publish gate → approval → a fast-forward push, marked replies, a ticket, done", async () => {
    const ex = build();
    const gh = writer(ex);
    const fake = fakeGraphql(ex);
    const runner = await exampleRunner(ex);
    const receive = probotWith(runner);
    const rec = recordRequests();
    try {
      await receive("pull_request", labeled(ex));
      // The handler returned before any agent work: nothing is decided yet.
      const run = status(gh.comments).ledger.run;
      const p = runner.paths(run);
      expect(existsSync(join(p.run, "decisions.json"))).toBe(false);
      await runner.idle();

      const state = () => JSON.parse(readFileSync(join(p.run, "state.json"), "utf8"));
      expect(state()).toMatchObject({ status: "awaiting-approval", awaiting: { gate: "plan" } });
      const planHash = state().awaiting.hash as string;
      let s = status(gh.comments);
      expect(s.ledger).toMatchObject({ run, gate: "plan", hash: planHash, head: ex.head });
      expect(s.body).toContain(`/terfyn approve ${planHash}`);
      // The request the App read is the example's (its threads), from GitHub.
      const request = JSON.parse(readFileSync(join(p.run, "request.json"), "utf8"));
      expect(request.threads.map((t: { id: string }) => t.id)).toEqual([
        "RT_101",
        "RT_102",
        "RT_103",
        "RT_104",
        "RT_105",
        "RT_106",
      ]);
      // No token on disk at a gate pause, none in the clone's config.
      expect(existsSync(p.gitDir)).toBe(false);
      expect(readFileSync(join(p.clone, ".git", "config"), "utf8")).not.toMatch(
        /extraheader|authorization/i,
      );

      await receive("issue_comment", commented(approval(gh.comments, planHash)));
      await runner.idle();
      expect(state()).toMatchObject({ status: "awaiting-approval", awaiting: { gate: "publish" } });
      const publishHash = state().awaiting.hash as string;
      s = status(gh.comments);
      expect(s.ledger).toMatchObject({ gate: "publish", hash: publishHash });
      // Nothing is published before the publish gate.
      expect(git(ex.origin, "rev-parse", "fix-add")).toBe(ex.head);
      expect(fake.replies).toEqual([]);

      await receive("issue_comment", commented(approval(gh.comments, publishHash)));
      await runner.idle();
      expect(state()).toMatchObject({ status: "ended", terminal: "done" });
      s = status(gh.comments);
      expect(s.ledger.terminal).toBe("done");
      expect(s.body).toContain("✅ Terfyn review-fix · done");

      // A fast-forward push: one commit on the PR's head, the planned files only.
      const pushed = git(ex.origin, "rev-parse", "fix-add");
      expect(pushed).not.toBe(ex.head);
      expect(git(ex.origin, "rev-parse", "fix-add^")).toBe(ex.head);
      expect(git(ex.origin, "diff", "--name-only", ex.head, pushed).split("\n").sort()).toEqual([
        "src/add.js",
        "test/add.test.js",
      ]);
      // Replies in their threads, each with its marker; nothing for praise; the ticket as an issue.
      const publishText = readFileSync(join(p.run, "publish.json"), "utf8");
      expect(artifactHash(publishText)).toBe(publishHash);
      expect(fake.replies.map((r) => r.threadId).sort()).toEqual([
        "RT_101",
        "RT_102",
        "RT_103",
        "RT_106",
      ]);
      for (const r of fake.replies)
        expect(r.body).toContain(replyMarker(run, r.threadId, publishHash));
      expect(fake.issues).toHaveLength(1);
      expect(fake.issues[0]!.body).toContain(
        `<!-- terfyn:ticket run=${run} item=RT_104 hash=${publishHash} -->`,
      );
      // The run's clone, worktree and token file are gone; its run directory stays.
      expect(existsSync(p.clone) || existsSync(p.worktree) || existsSync(p.gitDir)).toBe(false);
      expect(existsSync(join(p.run, "report.md"))).toBe(true);

      // A repeated publish of the same artifact (a resumed or redelivered one) posts nothing twice.
      const effects = await runEffects(run, p);
      const artifact = JSON.parse(publishText) as PublishArtifact;
      const approvals = [
        { gate: "publish" as const, hash: publishHash, approved_at: LATER, by: "@maria" },
      ];
      expect(await effects.replies.publish(artifact, publishText, approvals)).toBe(4);
      expect(await effects.tickets.publish(artifact, publishText, approvals)).toBe(1);
      expect(fake.replies).toHaveLength(4);
      expect(fake.issues).toHaveLength(1);
      // The run directory's record of its tickets lost (a rerun on a fresh disk): the ticket is
      // found by its marker among the App's issues on GitHub, and not opened again.
      rmSync(join(p.run, TICKETS_FILE), { force: true });
      expect(await effects.tickets.publish(artifact, publishText, approvals)).toBe(1);
      expect(fake.issues).toHaveLength(1);
      expect(JSON.parse(readFileSync(join(p.run, TICKETS_FILE), "utf8"))).toEqual({
        [`<!-- terfyn:ticket run=${run} item=RT_104 hash=${publishHash} -->`]: 101,
      });
      // A marker planted in someone else's issue proves nothing: only the App's issues count.
      const retitled = JSON.stringify({
        ...artifact,
        tickets: [{ item: "RT_104", title: "Another", body: "b" }],
      });
      const retitledHash = artifactHash(retitled);
      fake.issues.push({
        title: "planted",
        body: `<!-- terfyn:ticket run=${run} item=RT_104 hash=${retitledHash} -->`,
        author: "mallory",
      });
      expect(
        await effects.tickets.publish(JSON.parse(retitled), retitled, [
          { gate: "publish", hash: retitledHash, approved_at: LATER, by: "@maria" },
        ]),
      ).toBe(1);
      expect(fake.issues.filter((i) => !i.author)).toHaveLength(2);
      // A reply addressed to a thread the request did not read is refused, even when approved.
      const stray = JSON.stringify({
        ...artifact,
        replies: [{ item: "PRRT_elsewhere", body: "x" }],
      });
      await expect(
        effects.replies.publish(JSON.parse(stray), stray, [
          { gate: "publish", hash: artifactHash(stray), approved_at: LATER, by: "@maria" },
        ]),
      ).rejects.toThrow(/not a review thread of the request/);
      expect(fake.replies).toHaveLength(4);
      // And an unapproved artifact is refused by the publishers themselves.
      await expect(effects.replies.publish(artifact, `${publishText} `, approvals)).rejects.toThrow(
        /gate publish refused/,
      );
      await expect(effects.tickets.publish(artifact, `${publishText} `, approvals)).rejects.toThrow(
        /gate publish refused/,
      );
      await expect(
        effects.commit.publish(artifact, `${publishText} `, approvals, {
          branch: "fix-add",
          head: ex.head,
        }),
      ).rejects.toThrow(/gate publish refused/);
    } finally {
      rec.stop();
      gh.done();
    }
    expect(rec.problems).toEqual([]);
    // Every kind of request went through the checked fetch (REST and GraphQL).
    const kinds = new Set(
      rec.requests.map((r) => `${r.method} ${r.path.split("?")[0]!.replace(/\/\d+$/, "/N")}`),
    );
    for (const k of [
      "POST /graphql",
      "POST /repos/octo-org/agents/issues",
      "GET /repos/octo-org/agents/issues",
      "PATCH /repos/octo-org/agents/issues/comments/N",
    ])
      expect(kinds).toContain(k);
  }, 240_000);

  it("an approval while another live process holds the run's lock is not recorded: the approvals log is written only under the lock", async () => {
    const ex = build();
    const gh = writer(ex);
    fakeGraphql(ex);
    const runner = await exampleRunner(ex);
    const receive = probotWith(runner);
    const rec = recordRequests();
    try {
      await receive("pull_request", labeled(ex));
      await runner.idle();
      const p = runner.paths(status(gh.comments).ledger.run);
      const planHash = JSON.parse(readFileSync(join(p.run, "state.json"), "utf8")).awaiting.hash;
      // Another live process (here: a lock this test holds) works on the run.
      const held = new FileRunLock(hostFacts).acquire(p.run, "another terfyn process");
      try {
        await receive("issue_comment", commented(approval(gh.comments, planHash)));
        await runner.idle();
        expect(existsSync(join(p.run, "approvals.jsonl"))).toBe(false);
        expect(JSON.parse(readFileSync(join(p.run, "state.json"), "utf8"))).toMatchObject({
          status: "awaiting-approval",
          awaiting: { gate: "plan", hash: planHash },
        });
      } finally {
        held.release();
      }
    } finally {
      rec.stop();
      gh.done();
    }
  }, 240_000);

  it("a failure outside the core (the clone) ends the run stuck with the reason, never an unhandled rejection", async () => {
    const ex = build();
    const gh = writer(ex);
    const runner = await exampleRunner(ex, {
      cloneUrl: () => join(ex.origin, "..", "no-such-remote.git"),
    });
    const receive = probotWith(runner);
    try {
      await receive("pull_request", labeled(ex));
      await runner.idle();
    } finally {
      gh.done();
    }
    const s = status(gh.comments);
    expect(s.ledger.terminal).toBe("stuck");
    expect(s.body).toMatch(/cloning the pull request's branch fix\\-add failed/);
  }, 60_000);

  it("a GitHub API failure during the run (403 on the review threads) ends it with the reason on the status comment", async () => {
    const ex = build();
    const gh = writer(ex);
    fakeGraphql(ex, { failThreads: 403 });
    const runner = await exampleRunner(ex);
    const receive = probotWith(runner);
    const rec = recordRequests();
    try {
      await receive("pull_request", labeled(ex));
      await runner.idle();
    } finally {
      rec.stop();
      gh.done();
    }
    expect(rec.problems).toEqual([]);
    const s = status(gh.comments);
    expect(s.ledger.terminal).toBe("bad-input");
    expect(s.body).toMatch(/reading the review threads of #7 failed \(HTTP 403/);
    expect(git(ex.origin, "rev-parse", "fix-add")).toBe(ex.head);
  }, 120_000);
});

/** Polls `f` until it is true (a background session's progress), or fails after `ms`. */
async function until(f: () => boolean, ms = 90_000): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("the App's runner: budgets, restarts and one run per head", () => {
  it("the default model-call budget is every agent step a run can take at its agent's maxTurns", async () => {
    // Decider once; per plan round (1 + 2 re-plans): Planner, TestWriter, 5 Builder iterations.
    expect(defaultModelBudget(await agents())).toBe(12 + 3 * (12 + 12 + 5 * 12));
  });

  it("two App processes on one runs directory: two label events at once start one run", async () => {
    const ex = build();
    const gh = writer(ex);
    const runsDir = mkdtempSync(join(tmpdir(), "terfyn-app-runs-"));
    const a = await exampleRunner(ex, {
      runsDir,
      cloneUrl: () => join(ex.origin, "..", "none.git"),
    });
    const b = await exampleRunner(ex, {
      runsDir,
      cloneUrl: () => join(ex.origin, "..", "none.git"),
    });
    try {
      await Promise.all([
        probotWith(a)("pull_request", labeled(ex)),
        probotWith(b)("pull_request", labeled(ex)),
      ]);
      await Promise.all([a.idle(), b.idle()]);
    } finally {
      gh.done();
    }
    // One status comment (status() asserts exactly one), so one run.
    expect(status(gh.comments).ledger.head).toBe(ex.head);
  }, 60_000);

  it("the model-call budget ends the run stuck with its spend in the report and the status comment", async () => {
    const ex = build();
    const gh = writer(ex);
    fakeGraphql(ex);
    const runner = await exampleRunner(ex, { maxModelCalls: 1 });
    try {
      await probotWith(runner)("pull_request", labeled(ex));
      await runner.idle();
    } finally {
      gh.done();
    }
    const s = status(gh.comments);
    expect(s.ledger.terminal).toBe("stuck");
    expect(s.body).toMatch(/model\\-call budget is spent \\\(1 of 1 model calls/);
    expect(s.body).toMatch(/Model spend: 1 of 1 model calls\./);
    expect((gh.checkRuns.at(-1)!.body as Loose).conclusion).toBe("failure");
    const report = readFileSync(join(runner.paths(s.ledger.run).run, "report.md"), "utf8");
    expect(report).toMatch(/model-call budget is spent \(1 of 1 model calls/);
  }, 120_000);

  it("a run left running by a process that is gone is resumed at startup, from its cursor; one a live process holds is left alone", async () => {
    const ex = build();
    const gh = writer(ex);
    fakeGraphql(ex);
    const runsDir = mkdtempSync(join(tmpdir(), "terfyn-app-runs-"));
    // The first App process: its Planner never answers (the process is about to die).
    let hung = false;
    const first = await exampleRunner(ex, {
      runsDir,
      model: async () => {
        const m = await model();
        return {
          turn: (r) => {
            if (r.agent !== "Planner") return m.turn(r);
            hung = true;
            return new Promise(() => {});
          },
        };
      },
    });
    await probotWith(first)("pull_request", labeled(ex));
    await until(() => hung);
    const run = status(gh.comments).ledger.run;
    const state = () =>
      JSON.parse(readFileSync(join(first.paths(run).run, "state.json"), "utf8")) as Loose;
    expect(state()).toMatchObject({ status: "running", phase: "plan" });

    const counting = (calls: string[]) => async () => {
      const m = await model();
      return {
        turn: (r: Parameters<typeof m.turn>[0]) => {
          calls.push(r.agent);
          return m.turn(r);
        },
      };
    };
    // Another App process while the first still lives: the run's lock is held; nothing happens.
    const otherCalls: string[] = [];
    const other = await exampleRunner(ex, { runsDir, model: counting(otherCalls) });
    expect(await other.interrupted()).toEqual([]);
    await probotWith(other)("pull_request", labeled(ex));
    await other.idle();
    expect(otherCalls).toEqual([]);
    expect(state()).toMatchObject({ status: "running", phase: "plan" });

    // The App restarted: the first process's pid is gone. At startup the run is resumed.
    const lines: string[] = [];
    const calls: string[] = [];
    const restarted = await exampleRunner(ex, {
      runsDir,
      model: counting(calls),
      lockFacts: { host: hostFacts.host, pidAlive: () => false },
      log: (l) => lines.push(l),
    });
    try {
      probotWith(restarted);
      await until(() => state().status === "awaiting-approval");
      await restarted.idle();
    } finally {
      gh.done();
    }
    expect(lines.join("\n")).toMatch(/was interrupted; resuming it in phase plan/);
    // The decide phase was not repeated: only the Planner ran.
    expect(calls.length).toBeGreaterThan(0);
    expect(new Set(calls)).toEqual(new Set(["Planner"]));
    const s = status(gh.comments);
    expect(s.ledger).toMatchObject({ run, gate: "plan", hash: state().awaiting.hash });
  }, 180_000);
});

describe("the App's runner at publish: what GitHub refuses", () => {
  /** Label → plan gate → approval → publish gate → approval: the run's publish, however it ends. */
  async function throughPublish(ex: Example, gh: ReturnType<typeof fakeGitHub>) {
    const runner = await exampleRunner(ex);
    const receive = probotWith(runner);
    await receive("pull_request", labeled(ex));
    await runner.idle();
    for (const gate of ["plan", "publish"]) {
      const s = status(gh.comments);
      expect(s.ledger.gate).toBe(gate);
      await receive("issue_comment", commented(approval(gh.comments, s.ledger.hash!)));
      await runner.idle();
    }
    return { runner, run: status(gh.comments).ledger.run };
  }
  const writer = (ex: Example) =>
    fakeGitHub({
      me: APP,
      roles: { maria: { role_name: "write", permission: "write" } },
      pr: { headSha: ex.head, baseSha: ex.base, author: "alice" },
    });

  it("a 403 on a reply ends the run stuck with that cause in the status comment and the check run; a rerun reposts nothing", async () => {
    const ex = build();
    const gh = writer(ex);
    const opts: Parameters<typeof fakeGraphql>[1] = {
      failReply: { thread: "RT_102", status: 403 },
    };
    const fake = fakeGraphql(ex, opts);
    try {
      const { runner, run } = await throughPublish(ex, gh);
      const s = status(gh.comments);
      expect(s.ledger.terminal).toBe("stuck");
      expect(s.body).toMatch(/replying in review thread RT\\_102 failed \\\(HTTP 403/);
      const check = gh.checkRuns.at(-1)!.body as Loose;
      expect(check.conclusion).toBe("failure");
      expect(check.output.summary).toMatch(
        /replying in review thread RT\\_102 failed \\\(HTTP 403/,
      );
      const p = runner.paths(run);
      expect(readFileSync(join(p.run, "report.md"), "utf8")).toMatch(
        /replying in review thread RT_102 failed \(HTTP 403/,
      );
      // The reply before it was posted, once; nothing after it.
      expect(fake.replies.map((r) => r.threadId)).toEqual(["RT_101"]);

      // The permission fixed, the same publish again: RT_101's reply (its marker) is not reposted.
      delete opts.failReply;
      const publishText = readFileSync(join(p.run, "publish.json"), "utf8");
      const hash = artifactHash(publishText);
      const effects = await runEffects(run, p);
      expect(
        await effects.replies.publish(JSON.parse(publishText) as PublishArtifact, publishText, [
          { gate: "publish", hash, approved_at: LATER, by: "@maria" },
        ]),
      ).toBe(4);
      expect(fake.replies.map((r) => r.threadId).sort()).toEqual([
        "RT_101",
        "RT_102",
        "RT_103",
        "RT_106",
      ]);
    } finally {
      gh.done();
    }
  }, 240_000);

  it("issues disabled (410): the commit and the replies publish, the run is done, the tickets left unopened are on the status comment and in the report", async () => {
    const ex = build();
    const gh = writer(ex);
    const fake = fakeGraphql(ex, { issuesGone: true });
    try {
      const { runner, run } = await throughPublish(ex, gh);
      const s = status(gh.comments);
      expect(s.ledger.terminal).toBe("done");
      expect(s.body).toContain("**Not published:**");
      expect(s.body).toMatch(
        /Issues are disabled on this repository \\\(HTTP 410\\\): 1 ticket was not opened \\\(RT\\_104\\\)/,
      );
      expect(git(ex.origin, "rev-parse", "fix-add^")).toBe(ex.head);
      expect(fake.replies).toHaveLength(4);
      expect(fake.issues).toEqual([]);
      const report = readFileSync(join(runner.paths(run).run, "report.md"), "utf8");
      expect(report).toMatch(
        /## On GitHub\n\n- Issues are disabled on this repository \(HTTP 410\)/,
      );
    } finally {
      gh.done();
    }
  }, 240_000);
});
