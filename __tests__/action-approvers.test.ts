/**
 * Issue 22, item 3: "the pusher approves himself". The bundled Action against real git
 * repositories and the fake GitHub: whoever changed the pull request (a commit's author or
 * committer, as GitHub maps them to logins; the sender of the event that pushed its head) may
 * not approve it, both in the `issue_comment` job (a reply says why) and among existing
 * comments in a later `pull_request` job. The pusher is known to the `issue_comment` job only
 * through the record the `pull_request` job leaves in its own sticky comment; a record someone
 * else planted is never trusted, and without a trusted record, or with an incomplete commit
 * list, no approval counts.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  commitAll,
  copyInto,
  fixture,
  git,
  newRepo,
  OWNER,
  REPO,
  runAction,
} from "./helpers/action-harness.ts";
import { EXAMPLE, write } from "./helpers/example-project.ts";
import { fakeGitHub, humanComment } from "./helpers/fake-github.ts";

beforeAll(() => {
  nock.disableNetConnect();
});
afterEach(() => {
  nock.cleanAll();
});

// biome-ignore lint/suspicious/noExplicitAny: webhook example payloads are loose JSON
type Loose = Record<string, any>;
type Gh = ReturnType<typeof fakeGitHub>;

const deployer =
  "agent Deployer {\n  input CodingState\n  output CodingState\n  grants {\n    tool.workspace.run_tests\n  }\n}\n";

/**
 * A pull request of two commits: the first adds an agent that may run the tests (a widening no
 * policy forbids), the second touches the README.
 */
function twoCommitPr(): { repo: string; base: string; first: string; head: string } {
  const repo = newRepo();
  copyInto(EXAMPLE, repo, "agents");
  write(repo, "README.md", "agents\n");
  // The base configures the judge, so the pull_request job counts approvals too.
  mkdirSync(join(repo, ".github"));
  write(repo, ".github/terfyn.yml", "approvers: write\n");
  const base = commitAll(repo, "base");
  git(repo, "checkout", "-q", "-b", "feature");
  write(join(repo, "agents"), "deployer.agent", deployer);
  const first = commitAll(repo, "a deployer");
  write(repo, "README.md", "agents, and a deployer\n");
  const head = commitAll(repo, "readme");
  git(repo, "checkout", "-q", "main");
  return { repo, base, first, head };
}

function prPayload(
  r: { base: string; head: string },
  opts: { action?: string; sender?: string; commits?: number } = {},
): Loose {
  const p = fixture("pull_request.opened") as Loose;
  p.action = opts.action ?? "opened";
  p.number = 7;
  p.pull_request.number = 7;
  p.pull_request.head.sha = r.head;
  p.pull_request.base.sha = r.base;
  p.pull_request.user.login = "alice";
  p.pull_request.merge_commit_sha = null;
  p.pull_request.labels = [];
  p.pull_request.commits = opts.commits ?? 2;
  p.sender.login = opts.sender ?? "alice";
  p.repository.name = REPO;
  p.repository.owner.login = OWNER;
  p.repository.full_name = `${OWNER}/${REPO}`;
  return p;
}

function commentPayload(body: string, user: string): Loose {
  const p = fixture("issue_comment.created") as Loose;
  p.action = "created";
  p.issue.number = 7;
  p.issue.pull_request = { url: `https://api.github.com/repos/${OWNER}/${REPO}/pulls/7` };
  p.comment.body = body;
  p.comment.user.login = user;
  p.comment.user.type = "User";
  p.comment.created_at = "2026-12-01T10:00:00Z";
  p.comment.updated_at = "2026-12-01T10:00:00Z";
  p.repository.name = REPO;
  p.repository.owner.login = OWNER;
  return p;
}

const INPUTS = { project: "agents", "fail-on": "widening" };

/** The fake GitHub for the pull request: alice's, both commits authored by alice unless told. */
function github(
  r: { base: string; first: string; head: string },
  commits?: { sha: string; author: string | null; committer: string | null }[],
): Gh {
  return fakeGitHub({
    pr: { headSha: r.head, baseSha: r.base, author: "alice" },
    prCommits: commits ?? [
      { sha: r.first, author: "alice", committer: "web-flow" },
      { sha: r.head, author: "alice", committer: "web-flow" },
    ],
    roles: {
      mallory: { role_name: "write", permission: "write" },
      carl: { role_name: "write", permission: "write" },
      bob: { role_name: "maintain", permission: "write" },
    },
  });
}

/** The plan job (`pull_request`) against the fake in place: its hash; its sticky comment stays. */
async function plan(
  r: { repo: string; base: string; head: string },
  opts: { action?: string; sender?: string; inputs?: Record<string, string> } = {},
) {
  const run = await runAction({
    event: "pull_request",
    payload: prPayload(r, opts),
    workspace: r.repo,
    inputs: { ...INPUTS, ...opts.inputs },
  });
  return { run, hash: run.outputs["plan-hash"] as string };
}

/** The approve job (`issue_comment`) for a new comment by `user`. */
async function approve(r: { repo: string }, gh: Gh, user: string, hash: string) {
  const body = `/terfyn approve ${hash}`;
  gh.comments.push(humanComment(user, body));
  return runAction({
    event: "issue_comment",
    payload: commentPayload(body, user),
    workspace: r.repo,
    inputs: INPUTS,
  });
}

const replies = (gh: Gh) =>
  gh.comments.filter(
    (c) => c.user.login === "github-actions[bot]" && !c.body.startsWith("<!-- terfyn:plan"),
  );
const sticky = (gh: Gh) =>
  gh.comments.find((c) => c.body.startsWith("<!-- terfyn:plan project=agents -->"));

describe("who changed the pull request may not approve it (issue 22, item 3)", () => {
  it("control: an uninvolved maintainer's approval counts", async () => {
    const r = twoCommitPr();
    const gh = github(r);
    const { hash } = await plan(r);
    expect(gh.statuses.at(-1)).toMatchObject({ state: "pending" });
    expect(sticky(gh)?.body).toContain(`<!-- terfyn:pushed-by ${r.head} alice -->`);
    await approve(r, gh, "bob", hash);
    gh.done();
    expect(replies(gh).at(-1)?.body).toMatch(/^✅ Approved by @bob \(maintain\)/);
    expect(gh.statuses.at(-1)).toMatchObject({ state: "success", context: "terfyn/approval" });
    // The re-evaluation keeps the record in the sticky comment.
    expect(sticky(gh)?.body).toContain(`<!-- terfyn:pushed-by ${r.head} alice -->`);
  });

  it("a co-author (a commit authored by @mallory on @alice's pull request) is refused with the reason; the status stays pending", async () => {
    const r = twoCommitPr();
    const gh = github(r, [
      { sha: r.first, author: "mallory", committer: "web-flow" },
      { sha: r.head, author: "alice", committer: "web-flow" },
    ]);
    const { hash } = await plan(r);
    const run = await approve(r, gh, "mallory", hash);
    gh.done();
    expect(run.failed).toBe(false);
    expect(replies(gh)).toHaveLength(1);
    expect(replies(gh)[0]!.body).toBe(
      `❌ Not approved: @mallory authored a commit of this pull request (${r.first.slice(0, 7)}…); approvals must come from someone who did not change it.`,
    );
    expect(gh.statuses.at(-1)).toMatchObject({ state: "pending" });
    expect(gh.requests).toContain("GET pull commits");
  });

  it("a committer who authored nothing is refused likewise", async () => {
    const r = twoCommitPr();
    const gh = github(r, [
      { sha: r.first, author: "alice", committer: "web-flow" },
      { sha: r.head, author: "alice", committer: "carl" },
    ]);
    const { hash } = await plan(r);
    await approve(r, gh, "carl", hash);
    gh.done();
    expect(replies(gh)[0]!.body).toContain(
      `@carl committed a commit of this pull request (${r.head.slice(0, 7)}…)`,
    );
    expect(gh.statuses.at(-1)).toMatchObject({ state: "pending" });
  });

  it("the sender of the latest synchronize is refused in the issue_comment job (from the plan job's record) and not counted by a later pull_request job", async () => {
    const r = twoCommitPr();
    const gh = github(r);
    const { hash } = await plan(r, { action: "synchronize", sender: "mallory" });
    expect(sticky(gh)?.body.endsWith(`<!-- terfyn:pushed-by ${r.head} mallory -->\n`)).toBe(true);
    await approve(r, gh, "mallory", hash);
    expect(replies(gh)[0]!.body).toContain(
      `@mallory pushed the head of this pull request (${r.head.slice(0, 7)}…); approvals must come from someone who did not change it`,
    );
    expect(gh.statuses.at(-1)).toMatchObject({ state: "pending" });
    // A later pull_request event that pushed nothing (a label) keeps the record and does not
    // count mallory's approval among the comments.
    const later = await plan(r, { action: "labeled", sender: "alice" });
    gh.done();
    expect(later.run.outputs.approved).toBe("false");
    expect(gh.statuses.at(-1)).toMatchObject({ state: "pending" });
    expect(sticky(gh)?.body).toContain(`<!-- terfyn:pushed-by ${r.head} mallory -->`);
  });

  it("a later pull_request job counts an uninvolved approval among the comments", async () => {
    const r = twoCommitPr();
    const gh = github(r);
    const { hash } = await plan(r, { action: "synchronize", sender: "mallory" });
    gh.comments.push(humanComment("bob", `/terfyn approve ${hash}`));
    const later = await plan(r, { action: "labeled", sender: "alice" });
    gh.done();
    expect(later.run.outputs.approved).toBe("true");
    expect(gh.statuses.at(-1)).toMatchObject({ state: "success" });
  });

  it("a pushed-by marker planted in someone else's comment is never trusted: no record, no approval", async () => {
    const r = twoCommitPr();
    const gh = github(r);
    // The plan job writes no comment of its own, so it leaves no record.
    const { hash } = await plan(r, { action: "synchronize", inputs: { comment: "never" } });
    expect(sticky(gh)).toBeUndefined();
    gh.comments.push(
      humanComment(
        "mallory",
        `<!-- terfyn:plan project=agents -->\nlooks fine\n<!-- terfyn:pushed-by ${r.head} alice -->\n`,
      ),
    );
    await approve(r, gh, "bob", hash);
    gh.done();
    expect(replies(gh)[0]!.body).toContain(
      `❌ Not approved: the Action has no record of who pushed ${r.head.slice(0, 12)}; wait for the plan job`,
    );
    expect(gh.statuses.at(-1)).toMatchObject({ state: "pending" });
  });

  it("a record of an older head is no record for the current one", async () => {
    const r = twoCommitPr();
    const gh = github(r);
    const { hash } = await plan(r);
    // The head moves on (a push whose plan job has not run yet): the record names the old one.
    const sticky0 = sticky(gh)!;
    sticky0.body = sticky0.body.replace(r.head, r.first);
    await approve(r, gh, "bob", hash);
    gh.done();
    expect(replies(gh)[0]!.body).toContain("the Action has no record of who pushed");
  });

  it("fails closed when the pull request has more commits than GitHub lists (300 > 250): no approval counts, in either job", async () => {
    const r = twoCommitPr();
    const gh = github(r);
    const { hash } = await plan(r);
    gh.prCommitCount = 300;
    await approve(r, gh, "bob", hash);
    expect(replies(gh)[0]!.body).toContain(
      "❌ Not approved: the pull request has 300 commits but GitHub lists only 2 (it lists at most 250)",
    );
    expect(gh.statuses.at(-1)).toMatchObject({ state: "pending" });
    // The pull_request job, told 300 commits by its event, does not count bob's comment either.
    const later = await runAction({
      event: "pull_request",
      payload: prPayload(r, { action: "labeled", commits: 300 }),
      workspace: r.repo,
      inputs: INPUTS,
    });
    gh.done();
    expect(later.outputs.approved).toBe("false");
    expect(later.stdout).toContain("no approval counts: the pull request has 300 commits");
    expect(gh.statuses.at(-1)).toMatchObject({ state: "pending" });
  });

  it("fails closed when the commit list cannot be read (HTTP 500)", async () => {
    const r = twoCommitPr();
    const gh = github(r);
    const { hash } = await plan(r);
    gh.fail["GET pull commits"] = 500;
    await approve(r, gh, "bob", hash);
    gh.done();
    expect(replies(gh)[0]!.body).toContain(
      "❌ Not approved: the pull request's commits cannot be read (listing the pull request's commits failed (HTTP 500)",
    );
    expect(gh.statuses.at(-1)).toMatchObject({ state: "pending" });
  });
});
