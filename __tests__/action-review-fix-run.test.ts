/**
 * The Action's `mode: review-fix` running a whole review-fix run, offline, one job per dispatch
 * as GitHub Actions would run them: every job starts on a "fresh machine" (an empty runs
 * directory), loads the run's files from `refs/terfyn/runs/<run>` on the remote (a bare
 * repository on disk standing in for GitHub's git), and saves them back when the run pauses or
 * ends. GitHub's API is a fake on nock (net connect disabled), every request checked against the
 * OpenAPI description and GraphQL schema fixtures. The model script plays the agents.
 */
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { ledgerMarker, parseLedger } from "../src/core/app/triggers.ts";
import {
  build,
  countingModel,
  type Example,
  fakeGraphql,
  forgeState,
  git,
  LATER,
  outageModel,
  reviewFixJob,
} from "./helpers/app-runner.ts";
import { type FakeComment, fakeGitHub, humanComment } from "./helpers/fake-github.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

const BOT = "github-actions[bot]";

function setup() {
  const ex = build();
  const gh = fakeGitHub({
    me: BOT,
    roles: {
      maria: { role_name: "write", permission: "write" },
      tom: { role_name: "triage", permission: "triage" },
      alice: { role_name: "write", permission: "write" },
    },
    pr: { headSha: ex.head, baseSha: ex.base, author: "alice", headRef: "fix-add" },
  });
  const fake = fakeGraphql(ex, { slug: "github-actions" });
  return { ex, gh, fake };
}

/** One job: a fresh runs directory, the inputs the App's dispatch gives. */
const job = (ex: Example, inputs: Record<string, string>) => reviewFixJob(ex.origin, inputs);

/** The run's status comment (the workflow token's), and its ledger. */
function status(comments: FakeComment[]) {
  const mine = comments.filter((c) => c.user.login === BOT && parseLedger(c.body));
  expect(mine).toHaveLength(1);
  return { body: mine[0]!.body, ledger: parseLedger(mine[0]!.body)! };
}

function say(comments: FakeComment[], login: string, body: string): void {
  const c = humanComment(login, body);
  c.created_at = LATER;
  c.updated_at = LATER;
  comments.push(c);
}

const stateRef = (ex: Example, run: string) =>
  git(ex.origin, "rev-parse", "--verify", `refs/terfyn/runs/${run}`);

describe("mode: review-fix runs a review-fix run across jobs", () => {
  it("dispatch → plan gate (state saved) → approval → publish gate → approval → a fast-forward push, replies, a ticket, done; each job on a fresh machine", async () => {
    const { ex, gh, fake } = setup();
    const first = await job(ex, { "pull-request": "7", "head-sha": ex.head });
    expect(first).toMatchObject({ state: "awaiting-approval" });
    expect(first.failed).toBeUndefined();
    const run = first.run!;
    let s = status(gh.comments);
    expect(s.ledger).toMatchObject({ run, gate: "plan", head: ex.head });
    // The status comment names the state saved in the repository, and the state holds the run.
    expect(s.ledger.state).toBe(stateRef(ex, run));
    const files = git(ex.origin, "ls-tree", "-r", "--name-only", `refs/terfyn/runs/${run}`);
    expect(files).toMatch(/^run\/state\.json$/m);
    expect(files).toMatch(/^run\/plan\.json$/m);
    expect(files).toMatch(/^job\.json$/m);
    expect(files).not.toMatch(/run\.lock/);
    const planHash = s.ledger.hash!;
    expect(s.body).toContain(`/terfyn approve ${planHash}`);
    // The status comment followed the run through its phases on the way to the gate.
    const phases = gh.bodies.flatMap((b) => parseLedger(b)?.phase ?? []);
    expect(phases).toEqual(expect.arrayContaining(["intake", "decide", "plan", "gate-plan"]));

    // A dispatch with no approval among the comments: the run still waits, nothing else.
    say(gh.comments, "alice", `/terfyn approve ${planHash}`); // the PR's author
    say(gh.comments, "tom", `/terfyn approve ${planHash}`); // triage
    const waiting = await job(ex, { "pull-request": "7", "head-sha": ex.head, run });
    expect(waiting).toMatchObject({ run, state: "awaiting-approval" });
    s = status(gh.comments);
    expect(s.ledger.gate).toBe("plan");
    expect(s.body).toMatch(/still waits at the plan gate/);
    expect(s.body).toMatch(/tom has the triage role/);
    expect(s.ledger.state).toBe(stateRef(ex, run));

    say(gh.comments, "maria", `Read it.\n\n/terfyn approve ${planHash}`);
    const second = await job(ex, { "pull-request": "7", "head-sha": ex.head, run });
    expect(second).toMatchObject({ run, state: "awaiting-approval" });
    s = status(gh.comments);
    expect(s.ledger.gate).toBe("publish");
    const publishHash = s.ledger.hash!;
    // Nothing is published before the publish gate; the built files travel in the state.
    expect(git(ex.origin, "rev-parse", "fix-add")).toBe(ex.head);
    expect(fake.replies).toEqual([]);
    expect(git(ex.origin, "ls-tree", "-r", "--name-only", `refs/terfyn/runs/${run}`)).toMatch(
      /^work\/src\/add\.js$/m,
    );
    const approvalsSoFar = git(ex.origin, "show", `refs/terfyn/runs/${run}:run/approvals.jsonl`);
    expect(approvalsSoFar).toContain("@maria (write)");

    say(gh.comments, "maria", `/terfyn approve ${publishHash}`);
    const third = await job(ex, { "pull-request": "7", "head-sha": ex.head, run });
    expect(third).toMatchObject({ run, state: "done" });
    expect(third.failed).toBeUndefined();
    s = status(gh.comments);
    expect(s.ledger.terminal).toBe("done");
    const pushed = git(ex.origin, "rev-parse", "fix-add");
    expect(git(ex.origin, "rev-parse", "fix-add^")).toBe(ex.head);
    expect(git(ex.origin, "diff", "--name-only", ex.head, pushed).split("\n").sort()).toEqual([
      "src/add.js",
      "test/add.test.js",
    ]);
    expect(fake.replies.map((r) => r.threadId).sort()).toEqual([
      "RT_101",
      "RT_102",
      "RT_103",
      "RT_106",
    ]);
    expect(fake.issues).toHaveLength(1);
    // The state's history is one commit per job, each on the one before (never forced).
    expect(Number(git(ex.origin, "rev-list", "--count", `refs/terfyn/runs/${run}`))).toBe(4);

    // A dispatch after the end does nothing more.
    const again = await job(ex, { "pull-request": "7", "head-sha": pushed, run });
    expect(again).toMatchObject({ run, state: "done" });
    expect(fake.replies).toHaveLength(4);
  }, 180_000);

  it("the model's API down during the Builder: the job saves the run interrupted with the files its agents wrote and succeeds; the next dispatch goes on in build on a fresh machine, asking no earlier agent again", async () => {
    const { ex, gh, fake } = setup();
    const first = await job(ex, { "pull-request": "7", "head-sha": ex.head });
    const run = first.run!;
    say(gh.comments, "maria", `/terfyn approve ${status(gh.comments).ledger.hash}`);
    const calls: string[] = [];
    const down = outageModel(calls, () => true);
    const cut = await reviewFixJob(
      ex.origin,
      { "pull-request": "7", "head-sha": ex.head, run },
      down,
    );
    expect(cut).toMatchObject({ run, state: "interrupted" });
    expect(cut.failed).toBeUndefined();
    let s = status(gh.comments);
    expect(s.ledger).toMatchObject({ phase: "build", interrupted: true, state: stateRef(ex, run) });
    expect(s.body).toContain("529 after retries");
    // The TestWriter's test travels in the state: a fresh machine has no worktree.
    const saved = git(ex.origin, "ls-tree", "-r", "--name-only", `refs/terfyn/runs/${run}`);
    expect(saved).toMatch(/^work\/test\/add\.test\.js$/m);
    expect(saved).toMatch(/^work\.json$/m);
    expect(
      JSON.parse(git(ex.origin, "show", `refs/terfyn/runs/${run}:run/state.json`)),
    ).toMatchObject({ status: "interrupted", phase: "build" });

    // A writer's /terfyn resume (the App dispatches it): the run goes on in build.
    say(gh.comments, "maria", "/terfyn resume");
    const later: string[] = [];
    const counting = countingModel(later);
    const resumed = await reviewFixJob(
      ex.origin,
      { "pull-request": "7", "head-sha": ex.head, run },
      counting,
    );
    expect(resumed).toMatchObject({ run, state: "awaiting-approval" });
    expect(new Set(later)).toEqual(new Set(["Builder", "StandardsReviewer"]));
    s = status(gh.comments);
    expect(s.ledger.gate).toBe("publish");
    expect(s.ledger.interrupted).toBeUndefined();
    say(gh.comments, "maria", `/terfyn approve ${s.ledger.hash}`);
    const done = await job(ex, { "pull-request": "7", "head-sha": ex.head, run });
    expect(done).toMatchObject({ run, state: "done" });
    const pushed = git(ex.origin, "rev-parse", "fix-add");
    expect(git(ex.origin, "diff", "--name-only", ex.head, pushed).split("\n").sort()).toEqual([
      "src/add.js",
      "test/add.test.js",
    ]);
    expect(fake.replies).toHaveLength(4);
  }, 240_000);

  it("a state ref pushed by someone else (not the one the status comment names) is refused", async () => {
    const { ex, gh } = setup();
    const first = await job(ex, { "pull-request": "7", "head-sha": ex.head });
    const run = first.run!;
    const planHash = status(gh.comments).ledger.hash!;
    // A forged state: the saved one with an approval added, pushed as the ref's next commit,
    // signed by someone who holds the state key too: only the status comment's check is left.
    const approval = `{"gate":"plan","hash":"${planHash}","approved_at":"${LATER}","by":"@alice (write)"}`;
    forgeState(ex.origin, run, (work) =>
      appendFileSync(join(work, "run", "approvals.jsonl"), `${approval}\n`),
    );
    const r = await job(ex, { "pull-request": "7", "head-sha": ex.head, run });
    expect(r.failed).toMatch(
      /is not the one run .* status comment names .*changed outside the run/,
    );
    expect(git(ex.origin, "rev-parse", "fix-add")).toBe(ex.head);
    expect(status(gh.comments).ledger.gate).toBe("plan");
  }, 120_000);

  it("a state without the workflow key's MAC is refused, even when the status comment names it", async () => {
    const { ex, gh } = setup();
    const first = await job(ex, { "pull-request": "7", "head-sha": ex.head });
    const run = first.run!;
    const planHash = status(gh.comments).ledger.hash!;
    // Someone who can push the ref and edit the bot's comment, but does not hold the state key.
    const approval = `{"gate":"plan","hash":"${planHash}","approved_at":"${LATER}","by":"@alice (write)"}`;
    const forged = forgeState(
      ex.origin,
      run,
      (work) => appendFileSync(join(work, "run", "approvals.jsonl"), `${approval}\n`),
      null,
    );
    const comment = gh.comments.find((c) => c.user.login === BOT && parseLedger(c.body))!;
    const ledger = parseLedger(comment.body)!;
    comment.body = comment.body.replace(
      ledgerMarker(ledger),
      ledgerMarker({ ...ledger, state: forged }),
    );
    const r = await job(ex, { "pull-request": "7", "head-sha": ex.head, run });
    expect(r).toMatchObject({
      failed: expect.stringMatching(/carries no MAC: it was not saved by a job of this workflow/),
    });
    expect(git(ex.origin, "rev-parse", "fix-add")).toBe(ex.head);
    // The same forgery signed with another key (another workflow's, an old one) fares no better.
    const other = forgeState(ex.origin, run, () => {}, "another-key-".padEnd(64, "x"));
    comment.body = comment.body.replace(
      ledgerMarker({ ...ledger, state: forged }),
      ledgerMarker({ ...ledger, state: other }),
    );
    const again = await job(ex, { "pull-request": "7", "head-sha": ex.head, run });
    expect(again.failed).toMatch(/carries a MAC this workflow's state key does not reproduce/);
    expect(status(gh.comments).ledger.gate).toBe("plan");
  }, 180_000);

  it("a state whose job.json is for another pull request is refused, even when the status comment names it", async () => {
    const { ex, gh } = setup();
    const first = await job(ex, { "pull-request": "7", "head-sha": ex.head });
    const run = first.run!;
    // The saved state with its job.json saying pull request 8, signed with the state key, and
    // the status comment (as if the workflow token had written it) naming that commit: only the
    // job.json check is left.
    const forged = forgeState(ex.origin, run, (work) => {
      const j = JSON.parse(readFileSync(join(work, "job.json"), "utf8"));
      writeFileSync(join(work, "job.json"), JSON.stringify({ ...j, pullRequest: 8 }));
    });
    const comment = gh.comments.find((c) => c.user.login === BOT && parseLedger(c.body))!;
    const ledger = parseLedger(comment.body)!;
    comment.body = comment.body.replace(
      ledgerMarker(ledger),
      ledgerMarker({ ...ledger, state: forged }),
    );
    expect(parseLedger(comment.body)?.state).toBe(forged);
    const r = await job(ex, { "pull-request": "7", "head-sha": ex.head, run });
    expect(r.failed).toMatch(/job\.json is for another run or pull request/);
    expect(git(ex.origin, "rev-parse", "fix-add")).toBe(ex.head);
  }, 120_000);

  it("a push while the run waits at a gate ends it stuck: approvals are void", async () => {
    const { ex, gh } = setup();
    const first = await job(ex, { "pull-request": "7", "head-sha": ex.head });
    const run = first.run!;
    const planHash = status(gh.comments).ledger.hash!;
    say(gh.comments, "maria", `/terfyn approve ${planHash}`);
    const moved = "c".repeat(40);
    gh.pr = { ...gh.pr!, headSha: moved };
    const r = await job(ex, { "pull-request": "7", "head-sha": moved, run });
    expect(r).toMatchObject({ run, state: "stuck" });
    expect(r.failed).toMatch(/a push moved the branch/);
    const s = status(gh.comments);
    expect(s.ledger.terminal).toBe("stuck");
    expect(git(ex.origin, "rev-parse", "fix-add")).toBe(ex.head);
  }, 120_000);

  it("the model-call budget holds over all the run's jobs (the spend travels in the state)", async () => {
    const { ex, gh } = setup();
    const first = await job(ex, { "pull-request": "7", "head-sha": ex.head });
    const run = first.run!;
    const spent = JSON.parse(
      git(ex.origin, "show", `refs/terfyn/runs/${run}:model-spend.json`),
    ) as { calls: number };
    expect(spent.calls).toBeGreaterThan(0);
    say(gh.comments, "maria", `/terfyn approve ${status(gh.comments).ledger.hash}`);
    // The next job may make no call beyond what the first one spent.
    const r = await job(ex, {
      "pull-request": "7",
      "head-sha": ex.head,
      run,
      "max-model-calls": String(spent.calls),
    });
    expect(r).toMatchObject({ run, state: "stuck" });
    expect(r.failed).toMatch(/model-call budget is spent/);
    expect(status(gh.comments).body).toContain(`${spent.calls} of ${spent.calls} model calls`);
  }, 120_000);

  it("a writer's /terfyn stop ends the run; a triage user's is ignored", async () => {
    const { ex, gh } = setup();
    const first = await job(ex, { "pull-request": "7", "head-sha": ex.head });
    const run = first.run!;
    say(gh.comments, "tom", "/terfyn stop");
    const ignored = await job(ex, { "pull-request": "7", "head-sha": ex.head, run });
    expect(ignored.state).toBe("awaiting-approval");
    say(gh.comments, "maria", "/terfyn stop");
    const stopped = await job(ex, { "pull-request": "7", "head-sha": ex.head, run });
    expect(stopped).toMatchObject({ run, state: "stuck" });
    expect(stopped.failed).toMatch(/stopped by @maria/);
    expect(status(gh.comments).ledger.terminal).toBe("stuck");
  }, 120_000);
});
