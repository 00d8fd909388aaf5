/**
 * A verdict per pull request (issue 22, item 2). A commit status and a check run belong to the
 * commit, so every open pull request whose head is that commit shows them. A second pull
 * request from the same head into a branch that already holds the change must not turn the
 * first (into main, needing an approval) green: the head's `terfyn/approval` and check run are
 * success only when every such pull request is acceptable, and say which one is not. And a
 * base change (`edited` with `changes.base`) re-plans, while an edit of the title does not.
 * The bundled Action on real git repositories against the fake GitHub.
 */
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type SharedHeadPullRequest,
  sharedHeadFailing,
  sharedHeadStatus,
} from "../src/core/ci/decisions.ts";
import type { ProjectOutcomeVerdict } from "../src/core/ci/outcome.ts";
import { git, pullRequestOpened, runAction } from "./helpers/action-harness.ts";
import { edit, prRepo } from "./helpers/example-project.ts";
import { fakeGitHub } from "./helpers/fake-github.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

/** A widening no policy forbids: more model turns per call. */
const widen = (p: string) => edit(p, "main.agent", "maxTurns 8", "maxTurns 9");

/**
 * PR #7 into main widens and needs an approval. `release` already holds the head (it was
 * merged there), so PR #9 from the same head into `release` changes nothing.
 */
function twoPullRequests() {
  const r = prRepo(widen);
  git(r.repo, "branch", "release", r.head);
  const gh = fakeGitHub({
    pr: { headSha: r.head, baseSha: r.base, author: "alice" },
    prs: { 9: { headSha: r.head, baseSha: r.head, author: "alice", baseRef: "release" } },
  });
  return { r, gh };
}

describe("a verdict per pull request on a shared head", () => {
  it("the pull request into the branch that already holds the change does not turn the head green", async () => {
    const { r, gh } = twoPullRequests();
    const p = pullRequestOpened(r.head, r.head) as Record<string, Record<string, unknown>>;
    p.number = 9 as never;
    (p.pull_request as Record<string, unknown>).number = 9;
    (p.pull_request as Record<string, Record<string, unknown>>).base!.ref = "release";
    const run = await runAction({
      event: "pull_request",
      payload: p,
      workspace: r.repo,
      inputs: { project: "agents", comment: "always" },
    });
    gh.done();
    expect(run.failed).toBe(false);
    const status = gh.statuses.find((s) => s.context === "terfyn/approval");
    expect(status?.state).toBe("pending");
    expect(status?.description).toBe("#7 (into main): needs /terfyn approve: agents");
    expect(gh.requests).toContain("GET commit pulls");
  });

  it("the check run names each pull request and fails when another one's verdict fails", async () => {
    const { r, gh } = twoPullRequests();
    const p = pullRequestOpened(r.head, r.head) as Record<string, Record<string, unknown>>;
    p.number = 9 as never;
    (p.pull_request as Record<string, unknown>).number = 9;
    await runAction({
      event: "pull_request",
      payload: p,
      workspace: r.repo,
      inputs: { project: "agents", "fail-on": "widening" },
    });
    gh.done();
    const check = gh.checkRuns[0]!.body as { conclusion: string; output: { summary: string } };
    expect(check.output.summary).toContain(
      "This commit is also the head of #7 (into `main`): needs approval",
    );
    expect(check.conclusion).toBe("failure");
  });

  it("cannot show success when the other pull requests cannot be listed", async () => {
    const r = prRepo((p) => edit(p, "main.agent", "maxTurns 8", "maxTurns 7"));
    const gh = fakeGitHub({
      pr: { headSha: r.head, baseSha: r.base, author: "alice" },
      fail: { "GET commit pulls": 500 },
    });
    await runAction({
      event: "pull_request",
      payload: pullRequestOpened(r.base, r.head),
      workspace: r.repo,
      inputs: { project: "agents" },
    });
    gh.done();
    const status = gh.statuses.find((s) => s.context === "terfyn/approval");
    expect(status).toMatchObject({
      state: "pending",
      description: "cannot list the other pull requests with this head; re-run the job",
    });
  });

  it("re-plans when the base changes (edited with changes.base), not when the title does", async () => {
    const r = prRepo(widen);
    for (const [changes, planned] of [
      [{ title: { from: "old" } }, false],
      [{ base: { ref: { from: "release" }, sha: { from: r.head } } }, true],
    ] as const) {
      const gh = fakeGitHub({ pr: { headSha: r.head, baseSha: r.base, author: "alice" } });
      const p = pullRequestOpened(r.base, r.head) as Record<string, unknown>;
      p.action = "edited";
      p.changes = changes;
      const run = await runAction({
        event: "pull_request",
        payload: p,
        workspace: r.repo,
        inputs: { project: "agents" },
      });
      gh.done();
      expect(run.failed).toBe(false);
      expect(gh.statuses.length > 0, JSON.stringify(changes)).toBe(planned);
      if (!planned) expect(run.stdout).toContain("nothing to re-plan");
    }
  });
});

describe("shared-head decisions, from source", () => {
  const v = (verdict: ProjectOutcomeVerdict["verdict"], failing = false) =>
    ({ verdict, failing, reasons: [], counts: {} }) as unknown as ProjectOutcomeVerdict;
  const other = (n: number, ...vs: ProjectOutcomeVerdict[]): SharedHeadPullRequest => ({
    number: n,
    base: `b${n}`,
    paths: vs.map(() => "agents"),
    verdicts: vs,
  });
  const ok = { state: "success" as const, description: "no approval needed" };

  it("success only when every pull request is acceptable; the worst state wins", () => {
    expect(sharedHeadStatus({ number: 7, status: ok }, [])).toEqual(ok);
    expect(sharedHeadStatus({ number: 7, status: ok }, [other(9, v("approved"))]).state).toBe(
      "success",
    );
    const waiting = sharedHeadStatus({ number: 7, status: ok }, [other(9, v("needs-approval"))]);
    expect(waiting).toEqual({
      state: "pending",
      description: "#9 (into b9): needs /terfyn approve: agents",
    });
    expect(
      sharedHeadStatus({ number: 7, status: ok }, [
        other(9, v("needs-approval")),
        other(11, v("blocked", true)),
      ]).state,
    ).toBe("failure");
    expect(sharedHeadStatus({ number: 7, status: ok }, undefined).state).toBe("pending");
    const long = sharedHeadStatus(
      { number: 7, status: ok },
      Array.from({ length: 12 }, (_x, i) => other(100 + i, v("needs-approval"))),
    );
    expect(long.description.length).toBeLessThanOrEqual(140);
  });

  it("a project's check run fails when any pull request's verdict for it fails", () => {
    expect(sharedHeadFailing("agents", v("approved"), [other(9, v("blocked", true))])).toBe(true);
    expect(sharedHeadFailing("agents", v("approved"), [other(9, v("approved"))])).toBe(false);
    expect(sharedHeadFailing("agents", v("blocked", true), [])).toBe(true);
  });
});
