/**
 * The GitHub App through Probot (`probot.receive` with real webhook payloads from
 * @octokit/webhooks-examples), GitHub as a stateful fake on nock with net connect disabled,
 * every REST request checked against GitHub's OpenAPI description. The runner is a recording
 * fake: these tests are about the triggers, the ledger, the gates by comment and the guards.
 */
import nock from "nock";
import { Probot } from "probot";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { type ReviewRunner, terfynApp } from "../src/app/app.ts";
import { parseLedger } from "../src/core/app/triggers.ts";
import { fixture, OWNER, REPO, recordRequests } from "./helpers/action-harness.ts";
import { fakeGitHub, humanComment } from "./helpers/fake-github.ts";
import { TestOctokit } from "./helpers/probot-octokit.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

// biome-ignore lint/suspicious/noExplicitAny: webhook example payloads are loose JSON, adapted field by field
type Loose = Record<string, any>;

const HEAD = "1".repeat(40);
const HASH = `sha256:${"e".repeat(64)}`;
const SLUG = "terfyn-test";
const APP = `${SLUG}[bot]`;

function recordingRunner() {
  const calls: string[] = [];
  const runner: ReviewRunner = {
    start: (job) => calls.push(`start ${job.pullRequest} ${job.head}`),
    approve: (_job, _l, by) => calls.push(`approve ${by.login} ${by.role}`),
    stop: (_job, _l, reason) => calls.push(`stop ${reason}`),
    recover: (job) => calls.push(`recover ${job.run}`),
  };
  return { runner, calls };
}

function newProbot(runner: ReviewRunner) {
  const probot = new Probot({
    githubToken: "test",
    Octokit: TestOctokit,
    logLevel: "fatal",
  });
  probot.load(terfynApp({ appSlug: SLUG, runner, now: () => new Date("2026-12-01T10:00:00Z") }));
  return probot;
}

async function receive(name: string, payload: Loose, runner: ReviewRunner) {
  const probot = new Probot({
    githubToken: "test",
    Octokit: TestOctokit,
    logLevel: "fatal",
  });
  probot.load(terfynApp({ appSlug: SLUG, runner, now: () => new Date("2026-12-01T10:00:00Z") }));
  const rec = recordRequests();
  try {
    await probot.receive({
      id: "delivery-1",
      name: name as "pull_request",
      payload: payload as never,
    });
  } finally {
    rec.stop();
  }
  expect(rec.problems).toEqual([]);
}

function labeled(
  opts: { sender?: string; senderType?: string; label?: string; fork?: boolean } = {},
): Loose {
  const p = fixture("pull_request.labeled") as Loose;
  p.number = 7;
  p.pull_request.number = 7;
  p.pull_request.head.sha = HEAD;
  p.pull_request.user.login = "alice";
  p.label = { ...(p.label ?? {}), name: opts.label ?? "terfyn:review-fix" };
  p.sender = { ...p.sender, login: opts.sender ?? "maria", type: opts.senderType ?? "User" };
  p.repository.name = REPO;
  p.repository.owner.login = OWNER;
  p.repository.full_name = `${OWNER}/${REPO}`;
  p.pull_request.base.repo.full_name = `${OWNER}/${REPO}`;
  p.pull_request.head.repo.full_name = opts.fork ? `mallory/${REPO}` : `${OWNER}/${REPO}`;
  return p;
}

function commented(body: string, user = "maria", type = "User"): Loose {
  const p = fixture("issue_comment.created") as Loose;
  p.issue.number = 7;
  p.issue.pull_request = { url: `https://api.github.com/repos/${OWNER}/${REPO}/pulls/7` };
  p.comment.body = body;
  p.comment.user = { ...p.comment.user, login: user, type };
  p.repository.name = REPO;
  p.repository.owner.login = OWNER;
  return p;
}

const ledgerComment = (ledger: Loose) => ({
  ...humanComment(APP, `${ledgerMarkerOf(ledger)}\nstatus`),
  user: { login: APP, type: "Bot" },
});
function ledgerMarkerOf(l: Loose): string {
  return `<!-- terfyn:ledger ${Buffer.from(JSON.stringify(l)).toString("base64url")} -->`;
}

describe("the label trigger", () => {
  it("a writer's label starts one run: 👀, a status comment with the ledger, a check run", async () => {
    const gh = fakeGitHub({
      me: APP,
      roles: { maria: { role_name: "write", permission: "write" } },
    });
    const r = recordingRunner();
    await receive("pull_request", labeled(), r.runner);
    gh.done();
    expect(r.calls).toEqual([`start 7 ${HEAD}`]);
    expect(gh.requests).toContain("POST reaction eyes");
    const status = gh.comments.find((c) => c.user.login === APP);
    expect(parseLedger(status?.body ?? "")).toMatchObject({
      pull_request: 7,
      head: HEAD,
      phase: "intake",
    });
    expect((gh.checkRuns[0]!.body as Loose).name).toBe("terfyn: review-fix");
  });

  const ignored: [string, Parameters<typeof labeled>[0]][] = [
    ["a bot", { sender: "dependabot[bot]", senderType: "Bot" }],
    ["the App itself", { sender: APP, senderType: "Bot" }],
    ["another label", { label: "bug" }],
  ];
  for (const [name, opts] of ignored) {
    it(`a label from ${name} starts nothing and sends nothing, not even a read`, async () => {
      const gh = fakeGitHub({
        me: APP,
        roles: { maria: { role_name: "write", permission: "write" } },
      });
      const r = recordingRunner();
      await receive("pull_request", labeled(opts), r.runner);
      gh.done();
      expect(r.calls).toEqual([]);
      expect(gh.requests).toEqual([]);
    });
  }

  it("a triage user's label is declined with a report, even though author_association says MEMBER", async () => {
    const gh = fakeGitHub({ me: APP, roles: { tom: { role_name: "triage", permission: "read" } } });
    const r = recordingRunner();
    const p = labeled({ sender: "tom" });
    p.pull_request.author_association = "MEMBER";
    await receive("pull_request", p, r.runner);
    gh.done();
    expect(r.calls).toEqual([]);
    const status = gh.comments.find((c) => c.user.login === APP)?.body ?? "";
    expect(status).toContain("has the triage role");
    expect(parseLedger(status)?.terminal).toBe("bad-input");
  });

  it("a fork's pull request is declined with a report", async () => {
    const gh = fakeGitHub({
      me: APP,
      roles: { maria: { role_name: "admin", permission: "admin" } },
    });
    const r = recordingRunner();
    await receive("pull_request", labeled({ fork: true }), r.runner);
    gh.done();
    expect(r.calls).toEqual([]);
    expect(gh.comments.find((c) => c.user.login === APP)?.body).toContain("comes from a fork");
  });

  it("a redelivered label (a run already on this head) starts nothing; the runner may find the run again", async () => {
    const running = ledgerComment({ run: "r1", pull_request: 7, head: HEAD, phase: "build" });
    const gh = fakeGitHub({
      me: APP,
      comments: [running],
      roles: { maria: { role_name: "write", permission: "write" } },
    });
    const r = recordingRunner();
    await receive("pull_request", labeled(), r.runner);
    gh.done();
    expect(r.calls).toEqual(["recover r1"]);
    expect(gh.requests.filter((q) => !q.startsWith("GET"))).toEqual([]);
  });

  it("two label events for one head at once (two labels, a redelivery) start one run and post one status comment", async () => {
    const gh = fakeGitHub({
      me: APP,
      roles: { maria: { role_name: "write", permission: "write" } },
    });
    const r = recordingRunner();
    const probot = newProbot(r.runner);
    const rec = recordRequests();
    try {
      await Promise.all(
        ["delivery-a", "delivery-b"].map((id) =>
          probot.receive({ id, name: "pull_request", payload: labeled() as never }),
        ),
      );
    } finally {
      rec.stop();
      gh.done();
    }
    expect(rec.problems).toEqual([]);
    expect(r.calls).toEqual([`start 7 ${HEAD}`]);
    expect(gh.comments.filter((c) => c.user.login === APP)).toHaveLength(1);
  });

  it("a ledger planted by someone else is not the App's: it neither blocks nor drives a run", async () => {
    const planted = humanComment(
      "mallory",
      ledgerMarkerOf({ run: "r1", pull_request: 7, head: HEAD, phase: "build" }),
    );
    const gh = fakeGitHub({
      me: APP,
      comments: [planted],
      roles: { maria: { role_name: "write", permission: "write" } },
    });
    const r = recordingRunner();
    await receive("pull_request", labeled(), r.runner);
    gh.done();
    expect(r.calls).toEqual([`start 7 ${HEAD}`]);
  });
});

describe("gates by comment", () => {
  const waiting = {
    run: "r1",
    pull_request: 7,
    head: HEAD,
    phase: "gate-plan",
    gate: "plan",
    hash: HASH,
    since: "2026-12-01T08:00:00Z",
  };
  const pr = { headSha: HEAD, baseSha: "2".repeat(40), author: "alice" };

  it("an approval of the awaited hash by a writer reaches the runner", async () => {
    const c = humanComment("maria", `ok\n\n/terfyn approve ${HASH}`);
    const gh = fakeGitHub({
      me: APP,
      pr,
      comments: [ledgerComment(waiting), c],
      roles: { maria: { role_name: "maintain", permission: "write" } },
    });
    const r = recordingRunner();
    await receive("issue_comment", commented(c.body), r.runner);
    gh.done();
    expect(r.calls).toEqual(["approve maria maintain"]);
  });

  const refused: [string, string, string, Loose][] = [
    ["the PR's author", "alice", `/terfyn approve ${HASH}`, {}],
    ["a stale hash", "maria", `/terfyn approve sha256:${"0".repeat(64)}`, {}],
    ["a code block", "maria", `\`\`\`\n/terfyn approve ${HASH}\n\`\`\``, {}],
    [
      "a push since the gate began",
      "maria",
      `/terfyn approve ${HASH}`,
      { headSha: "3".repeat(40) },
    ],
  ];
  for (const [name, user, body, prExtra] of refused) {
    it(`refuses an approval from ${name}`, async () => {
      const c = humanComment(user, body);
      const gh = fakeGitHub({
        me: APP,
        pr: { ...pr, ...prExtra },
        comments: [ledgerComment(waiting), c],
        roles: { [user]: { role_name: "admin", permission: "admin" } },
      });
      const r = recordingRunner();
      await receive("issue_comment", commented(body, user), r.runner);
      gh.done();
      expect(r.calls).toEqual([]);
    });
  }

  it("an edited approval never counts", async () => {
    const c = humanComment("maria", `/terfyn approve ${HASH}`, true);
    const gh = fakeGitHub({
      me: APP,
      pr,
      comments: [ledgerComment(waiting), c],
      roles: { maria: { role_name: "admin", permission: "admin" } },
    });
    const r = recordingRunner();
    await receive("issue_comment", commented(c.body), r.runner);
    gh.done();
    expect(r.calls).toEqual([]);
  });

  it("a bot's approval is not even read", async () => {
    const gh = fakeGitHub({ me: APP, pr, comments: [ledgerComment(waiting)] });
    const r = recordingRunner();
    await receive(
      "issue_comment",
      commented(`/terfyn approve ${HASH}`, "helper[bot]", "Bot"),
      r.runner,
    );
    gh.done();
    expect(r.calls).toEqual([]);
    expect(gh.requests).toEqual([]);
  });

  it("/terfyn stop from a writer stops the run; from a reader it is refused", async () => {
    const gh = fakeGitHub({
      me: APP,
      pr,
      comments: [ledgerComment(waiting)],
      roles: {
        maria: { role_name: "write", permission: "write" },
        rita: { role_name: "read", permission: "read" },
      },
    });
    const r = recordingRunner();
    await receive("issue_comment", commented("/terfyn stop", "rita"), r.runner);
    await receive("issue_comment", commented("/terfyn stop", "maria"), r.runner);
    gh.done();
    expect(r.calls).toEqual(["stop stopped by @maria"]);
  });

  it("a push during a gate stops the run and says both commits", async () => {
    const gh = fakeGitHub({ me: APP, comments: [ledgerComment(waiting)] });
    const r = recordingRunner();
    const p = fixture("pull_request.synchronize") as Loose;
    p.pull_request.number = 7;
    p.number = 7;
    p.pull_request.head.sha = "4".repeat(40);
    p.repository.name = REPO;
    p.repository.owner.login = OWNER;
    await receive("pull_request", p, r.runner);
    gh.done();
    expect(r.calls).toEqual([
      `stop a push moved the branch from ${HEAD.slice(0, 12)} to ${"4".repeat(12)}: approvals are void and the run stops (never a force-push)`,
    ]);
  });
});
