/**
 * A pull request that relaxes a guard without touching a grant (issue 21's first class): a
 * policy rule deleted, a `maxLoopLimit` raised, a loop limit raised, a workflow's `approve`
 * gate removed. Each is a widening: the bundled Action (real git repositories, GitHub a fake on nock)
 * says "needs approval" with a "Guards relaxed" section and a pending `terfyn/approval`, and
 * fails with `fail-on: widening`. A pull request that relaxes nothing stays green.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { decideOutcome, type FailOn } from "../src/core/ci/outcome.ts";
import type { Plan } from "../src/core/plan/plan.ts";
import { fixture, git, OWNER, REPO, runAction } from "./helpers/action-harness.ts";
import { runTerfyn } from "./helpers/cli.ts";
import { EXAMPLE, edit, prRepo, write } from "./helpers/example-project.ts";
import { fakeGitHub } from "./helpers/fake-github.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

// biome-ignore lint/suspicious/noExplicitAny: webhook example payloads are loose JSON
type Loose = Record<string, any>;

async function open(r: { repo: string; base: string; head: string }, failOn?: string) {
  const gh = fakeGitHub({ pr: { headSha: r.head, baseSha: r.base, author: "alice" } });
  const p = fixture("pull_request.opened") as Loose;
  p.number = 7;
  p.pull_request.number = 7;
  p.pull_request.head.sha = r.head;
  p.pull_request.base.sha = r.base;
  p.repository.name = REPO;
  p.repository.owner.login = OWNER;
  p.repository.full_name = `${OWNER}/${REPO}`;
  const run = await runAction({
    event: "pull_request",
    payload: p,
    workspace: r.repo,
    inputs: { project: "agents", ...(failOn ? { "fail-on": failOn } : {}) },
  });
  gh.done();
  const comment =
    gh.comments.find((c) => c.body.includes("terfyn:plan project=agents"))?.body ?? "";
  const approval = gh.statuses.find((s) => s.context === "terfyn/approval");
  return { run, comment, approval };
}

const POLICIES = () => readFileSync(join(EXAMPLE, "policies.yaml"), "utf8");

const RELAXATIONS: [string, (p: string) => void, RegExp][] = [
  [
    "a forbid policy deleted",
    (p) => write(p, "policies.yaml", POLICIES().split("\n---\n")[1] ?? ""),
    /policy_relaxed: Policy\/no-reviewer-writes is removed, with the rule forbid/,
  ],
  [
    "maxLoopLimit raised to 100000",
    (p) => edit(p, "policies.yaml", "maxLoopLimit: 10", "maxLoopLimit: 100000"),
    /policy_relaxed: Policy\/bounded-autonomy no longer has the rule maxLoopLimit: 10/,
  ],
  [
    // The example's own capability test bounds the loop at 3: the test goes with the raise.
    "a loop's limit raised from 3 to 8",
    (p) => {
      edit(p, "main.agent", "limit 3", "limit 8");
      edit(p, "tests/capabilities.yaml", "limit: 3", "limit: 8");
    },
    /loop_bound_raised: Workflow\/ImplementAndReview may now run up to 8 iterations \(was 3\)/,
  ],
];

/** The plan the CLI (from source) computes for the pull request, and the Action's verdict on it. */
async function judged(r: { repo: string; base: string; head: string }, failOn: FailOn) {
  git(r.repo, "checkout", "-q", r.head);
  try {
    const out = await runTerfyn(
      ["plan", "--project", "agents", "--against", r.base, "--json"],
      r.repo,
    );
    expect(out.code, out.stderr).toBe(0);
    const plan = JSON.parse(out.stdout) as Plan;
    const tests = { results: [], passed: 0, failed: 0 };
    return { plan, outcome: decideOutcome({ plan, blocking: [], tests }, failOn) };
  } finally {
    git(r.repo, "checkout", "-q", "main");
  }
}

describe("guards relaxed are widenings", () => {
  for (const [name, change, listed] of RELAXATIONS) {
    it(`${name}: needs approval, listed under Guards relaxed, and fail-on: widening fails`, async () => {
      const r = prRepo(change);
      const dflt = await open(r);
      expect(dflt.run.failed).toBe(false);
      expect(dflt.comment.split("\n")[1]).toMatch(/^### ⚠️ Terfyn · `agents` · needs approval/);
      expect(dflt.comment).toContain("**Guards relaxed** (each one WIDENED)");
      expect(dflt.comment).toMatch(listed);
      expect(dflt.approval?.state).not.toBe("success");
      const strict = await open(r, "widening");
      expect(strict.run.failed).toBe(true);
      expect(strict.run.stdout).toMatch(/::error::terfyn: agents: .*guard.* relaxed/);
      // The same from the sources: the plan and the verdict the bundled Action is built from.
      const { plan, outcome } = await judged(r, "widening");
      expect(plan.summary.widened).toBe(true);
      expect(plan.guards_relaxed.length).toBeGreaterThan(0);
      expect(outcome).toMatchObject({ verdict: "needs-approval", failing: true });
    });
  }

  it("a workflow's approve gate removed is a relaxed guard", async () => {
    const call = "    implementation = Implementer(state)\n";
    const gate = '    approve implementation "ready for review"\n';
    const r = prRepo(
      (p) => edit(p, "main.agent", gate, ""),
      (p) => edit(p, "main.agent", call, `${call}${gate}`),
    );
    const strict = await open(r, "widening");
    expect(strict.comment).toMatch(
      /approval_removed: Workflow\/ImplementAndReview no longer asks a human/,
    );
    expect(strict.run.failed).toBe(true);
    expect((await judged(r, "widening")).outcome.failing).toBe(true);
  });

  it("renaming the agent a policy names blocks: the policy would protect nothing", async () => {
    const r = prRepo((p) => {
      for (const f of ["main.agent", "tests/capabilities.yaml"])
        writeFileSync(
          join(p, f),
          readFileSync(join(p, f), "utf8").replaceAll("Reviewer", "Critic"),
        );
    });
    const dflt = await open(r);
    expect(dflt.run.failed).toBe(true);
    expect(dflt.comment.split("\n")[1]).toMatch(/^### ⛔ Terfyn · `agents` · blocked/);
    expect(dflt.comment).toMatch(/TF3011/);
    expect(dflt.comment).toMatch(
      /Policy\/no-reviewer-writes forbids `workspace.write` for agent `Reviewer`, which is not declared/,
    );
  });

  it("a change that only tightens (a lower loop limit and maxLoopLimit) stays green", async () => {
    const r = prRepo((p) => {
      edit(p, "main.agent", "limit 3", "limit 2");
      edit(p, "policies.yaml", "maxLoopLimit: 10", "maxLoopLimit: 5");
    });
    const strict = await open(r, "widening");
    expect(strict.run.failed).toBe(false);
    expect(strict.comment).not.toContain("Guards relaxed");
    expect(strict.approval?.state).toBe("success");
    const { plan, outcome } = await judged(r, "widening");
    expect(plan.guards_relaxed).toEqual([]);
    expect(outcome.failing).toBe(false);
  });
});
