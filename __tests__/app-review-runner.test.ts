/**
 * The App's in-process runner end to end, offline: examples/review-fix (a real repository with a
 * real defect, served through a bare remote on disk) reviewed through webhooks delivered with
 * probot.receive, GitHub a fake on nock with net connect disabled, every REST request checked
 * against GitHub's OpenAPI description and every GraphQL one against the schema fixture. The
 * model script plays the agents. Label → the handler returns before any agent work → plan gate
 * on the status comment → a writer's approval → publish gate → approval → a fast-forward push
 * to the bare remote, marked replies, a ticket, `done`.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { FileRunLock, hostFacts } from "../src/adapters/fs/run-lock.ts";
import { replyMarker, TICKETS_FILE } from "../src/adapters/github/review-effects.ts";
import { defaultModelBudget } from "../src/adapters/review/review-runner.ts";
import { artifactHash } from "../src/core/review/gates.ts";
import type { PublishArtifact } from "../src/core/review/ports.ts";
import { recordRequests } from "./helpers/action-harness.ts";
import {
  APP,
  agents,
  approval,
  build,
  commented,
  countingModel,
  type Example,
  exampleRunner,
  fakeGraphql,
  git,
  LATER,
  type Loose,
  labeled,
  leftRunningAtPlan,
  outageModel,
  probotWith,
  restartedRunner,
  runEffects,
  status,
  throughPublish,
  until,
  writer,
} from "./helpers/app-runner.ts";
import { fakeGitHub } from "./helpers/fake-github.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

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
    const { ex, gh, runsDir, run, state } = await leftRunningAtPlan();
    expect(state()).toMatchObject({ status: "running", phase: "plan" });

    // Another App process while the first still lives: the run's lock is held; nothing happens.
    const otherCalls: string[] = [];
    const other = await exampleRunner(ex, { runsDir, model: countingModel(otherCalls) });
    expect(await other.interrupted()).toEqual([]);
    await probotWith(other)("pull_request", labeled(ex));
    await other.idle();
    expect(otherCalls).toEqual([]);
    expect(state()).toMatchObject({ status: "running", phase: "plan" });

    // The App restarted: the first process's pid is gone. At startup the run is resumed.
    const lines: string[] = [];
    const calls: string[] = [];
    const restarted = await restartedRunner(ex, runsDir, calls, lines);
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

describe("the App's runner when the model's API does not answer", () => {
  it("an outage during the Builder pauses the run in build (not stuck), said on the status comment; /terfyn status does not resume it, a writer's /terfyn resume does, and it goes on to done", async () => {
    const ex = build();
    const gh = writer(ex);
    fakeGraphql(ex);
    let down = false;
    const calls: string[] = [];
    const runner = await exampleRunner(ex, { model: outageModel(calls, () => down) });
    const receive = probotWith(runner);
    try {
      await receive("pull_request", labeled(ex));
      await runner.idle();
      down = true;
      await receive(
        "issue_comment",
        commented(approval(gh.comments, status(gh.comments).ledger.hash!)),
      );
      await runner.idle();
      let s = status(gh.comments);
      expect(s.ledger).toMatchObject({ phase: "build", interrupted: true });
      expect(s.ledger.terminal).toBeUndefined();
      expect(s.body).toContain("The run stopped in phase build, not ended");
      expect(s.body).toContain("529 after retries");
      expect(s.body).toContain("/terfyn resume");
      expect(gh.checkRuns.at(-1)?.body).toMatchObject({ conclusion: "neutral" });
      const state = JSON.parse(
        readFileSync(join(runner.paths(s.ledger.run).run, "state.json"), "utf8"),
      );
      expect(state).toMatchObject({ status: "interrupted", phase: "build" });

      // Anyone's /terfyn status shows it again but does not resume it.
      const before = calls.length;
      down = false;
      await receive("issue_comment", commented("/terfyn status", "someone"));
      await runner.idle();
      expect(calls.length).toBe(before);
      expect(status(gh.comments).ledger).toMatchObject({ interrupted: true });

      // A writer's /terfyn resume goes on in build: no earlier agent is asked again.
      await receive("issue_comment", commented("/terfyn resume"));
      await runner.idle();
      s = status(gh.comments);
      expect(s.ledger).toMatchObject({ gate: "publish" });
      expect(s.ledger.interrupted).toBeUndefined();
      expect(new Set(calls.slice(before))).toEqual(new Set(["Builder", "StandardsReviewer"]));
      await receive("issue_comment", commented(approval(gh.comments, s.ledger.hash!)));
      await runner.idle();
      expect(status(gh.comments).ledger).toMatchObject({ terminal: "done" });
    } finally {
      gh.done();
    }
  }, 180_000);
});

describe("the App's runner at publish: what GitHub refuses", () => {
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
