/**
 * The Action's decisions as pure functions, against the source (src/core/ci): each project's
 * verdict by `fail-on` and approval (outcome.ts), then which approvals count, the
 * `terfyn/approval` status, the labels, the sticky comment, the step outputs and the failure
 * message (decisions.ts). The bundled Action's end-to-end tests (action*.test.ts) show them
 * wired to GitHub; these pin each rule so that removing one guard fails a test here.
 */
import { describe, expect, it } from "vitest";
import { generateSyntheticProject } from "../bench/synthetic-project.ts";
import {
  anyWidened,
  approvalStatus,
  commentAction,
  type ExistingComment,
  failureMessage,
  firstApprovalPerHash,
  nextLabels,
  OUTPUT_LIMIT,
  type PlannedProject,
  stepOutputs,
  stickyMarker,
} from "../src/core/ci/decisions.ts";
import {
  type Approval,
  decideOutcome,
  type ProjectOutcomeVerdict,
  type Verdict,
} from "../src/core/ci/outcome.ts";
import { sha256 } from "../src/core/plan/canonical-hash.ts";
import type { Plan } from "../src/core/plan/plan.ts";
import { planProject } from "../src/core/plan/plan-project.ts";
import { planToJson } from "../src/core/render/plan-json.ts";
import { validateProject } from "../src/core/validate.ts";

/** A real plan (a small synthetic project, everything new), reshaped by each case below. */
const REAL: Plan = (() => {
  const project = generateSyntheticProject({
    seed: 3,
    agents: 4,
    tools: 10,
    operationsPerTool: 2,
    grantsPerAgent: 2,
    workflows: 1,
    agentFiles: 1,
    toolFiles: 1,
  });
  const validation = validateProject(project.files.map((f) => ({ path: f.path, text: f.text })));
  const result = planProject(
    validation,
    { resources: [], source: { source: "none" } },
    { path: "." },
  );
  if (!result.ok) throw new Error("the synthetic project must plan");
  return result.plan;
})();

const H1 = `sha256:${"1".repeat(64)}`;
const H2 = `sha256:${"2".repeat(64)}`;

/**
 * A plan that changes nothing, with `over` on top: `summary` and `authority` are merged so a
 * case states only what it changes. Effect bounds and capability deltas are emptied so the
 * counts are the case's own.
 */
function plan(
  over: Omit<Partial<Plan>, "summary" | "authority"> & {
    summary?: Partial<Plan["summary"]>;
    authority?: Partial<Plan["authority"]>;
  } = {},
): Plan {
  const { summary, authority, ...rest } = over;
  return {
    ...REAL,
    hash: H1,
    changes: [],
    effect_bounds: [],
    capability_delta: [],
    guards_relaxed: [],
    policy_violations: [],
    ...rest,
    summary: {
      ...REAL.summary,
      add: 0,
      change: 0,
      destroy: 0,
      widened: false,
      forbidden: false,
      has_changes: false,
      ...summary,
    },
    authority: {
      ...REAL.authority,
      autonomous: "UNCHANGED",
      gated: "UNCHANGED",
      ...authority,
    },
  };
}

const PASSING = { results: [], passed: 0, failed: 0 };
const FAILING = { results: [], passed: 0, failed: 2 };

const WIDENED_AUTONOMOUS = plan({
  summary: { widened: true, has_changes: true },
  authority: { autonomous: "WIDENED" },
});
const WIDENED_GATED = plan({
  summary: { widened: true, has_changes: true },
  authority: { gated: "WIDENED" },
});
const GUARD_RELAXED = plan({
  summary: { widened: true, has_changes: true },
  guards_relaxed: [
    {
      address: "Policy/p",
      kind: "policy_relaxed",
      reason: "Policy/p no longer has the rule `forbid`",
    },
  ],
});
const CHANGED_NOT_WIDENED = plan({ summary: { has_changes: true, change: 1 } });
const FORBIDDEN = plan({
  summary: { forbidden: true, has_changes: true },
  policy_violations: [
    {
      code: "TF4001",
      policy: "Policy/p",
      rule: "forbid",
      agent: "A",
      effect: "repo.write",
      tool: "git",
      message: "agent `A` may reach repo.write",
    },
  ],
});

function judge(p: Plan | undefined, failOn: "forbidden" | "widening" | "any-change", more = {}) {
  return decideOutcome(
    { ...(p ? { plan: p } : {}), blocking: [], tests: PASSING, ...more },
    failOn,
    [{ hash: H2, login: "someone", role: "admin" }],
  );
}

describe("decideOutcome: fail-on and approvals", () => {
  it("fail-on: forbidden never fails a widening; it asks for an approval", () => {
    for (const p of [WIDENED_AUTONOMOUS, WIDENED_GATED, GUARD_RELAXED]) {
      const v = judge(p, "forbidden");
      expect(v).toMatchObject({ verdict: "needs-approval", failing: false, approvable: true });
    }
    expect(judge(CHANGED_NOT_WIDENED, "forbidden")).toMatchObject({
      verdict: "no-authority-change",
      failing: false,
    });
  });

  it("fail-on: widening fails on autonomous authority WIDENED or a relaxed guard, not on gated alone", () => {
    expect(judge(WIDENED_AUTONOMOUS, "widening")).toMatchObject({
      verdict: "needs-approval",
      failing: true,
      reasons: ["authority WIDENED and this plan is not approved"],
    });
    expect(judge(GUARD_RELAXED, "widening")).toMatchObject({
      verdict: "needs-approval",
      failing: true,
      reasons: [
        "1 guard relaxed (Policy/p no longer has the rule forbid) and this plan is not approved",
      ],
    });
    expect(judge(WIDENED_GATED, "widening")).toMatchObject({
      verdict: "needs-approval",
      failing: false,
    });
    expect(judge(CHANGED_NOT_WIDENED, "widening").verdict).toBe("no-authority-change");
  });

  it("fail-on: any-change needs an approval for any change, and fails without one", () => {
    expect(judge(CHANGED_NOT_WIDENED, "any-change")).toMatchObject({
      verdict: "needs-approval",
      failing: true,
      reasons: ["the plan has changes and is not approved"],
    });
    expect(judge(WIDENED_GATED, "any-change")).toMatchObject({
      verdict: "needs-approval",
      failing: true,
    });
    expect(judge(plan(), "any-change")).toMatchObject({
      verdict: "no-authority-change",
      failing: false,
    });
  });

  it("an approval counts only when its hash is the plan's hash", () => {
    const other: Approval = { hash: H2, login: "bob", role: "maintain" };
    const exact: Approval = { hash: H1, login: "carol", role: "admin" };
    for (const failOn of ["forbidden", "widening", "any-change"] as const) {
      const tests = PASSING;
      const stale = decideOutcome({ plan: WIDENED_AUTONOMOUS, blocking: [], tests }, failOn, [
        other,
      ]);
      expect(stale.verdict).toBe("needs-approval");
      expect(stale.approval).toBeUndefined();
      const ok = decideOutcome({ plan: WIDENED_AUTONOMOUS, blocking: [], tests }, failOn, [
        other,
        exact,
      ]);
      expect(ok).toMatchObject({ verdict: "approved", failing: false, approval: exact });
    }
    // With any-change a plain change needs (and takes) the approval too.
    expect(
      decideOutcome({ plan: CHANGED_NOT_WIDENED, blocking: [], tests: PASSING }, "any-change", [
        exact,
      ]).verdict,
    ).toBe("approved");
  });

  it("blocked (forbidden effect, failing test, no plan, conflict) fails in every mode, approved or not", () => {
    const exact: Approval = { hash: H1, login: "carol", role: "admin" };
    for (const failOn of ["forbidden", "widening", "any-change"] as const) {
      const cases = [
        decideOutcome({ plan: FORBIDDEN, blocking: [], tests: PASSING }, failOn, [exact]),
        decideOutcome({ plan: WIDENED_AUTONOMOUS, blocking: [], tests: FAILING }, failOn, [exact]),
        decideOutcome({ blocking: [], tests: PASSING }, failOn, [exact]),
        decideOutcome(
          { plan: WIDENED_AUTONOMOUS, blocking: [], tests: PASSING, conflicts: ["a.agent"] },
          failOn,
          [exact],
        ),
      ];
      for (const v of cases) expect(v).toMatchObject({ verdict: "blocked", failing: true });
    }
  });
});

/** A verdict of `kind` with the given counts (the rest zero). */
function verdict(
  kind: Verdict,
  more: Omit<Partial<ProjectOutcomeVerdict>, "counts"> & {
    counts?: Partial<ProjectOutcomeVerdict["counts"]>;
  } = {},
): ProjectOutcomeVerdict {
  const { counts, ...rest } = more;
  return {
    verdict: kind,
    failing: kind === "blocked",
    reasons: [],
    approvable: kind === "needs-approval",
    ...rest,
    counts: { widened: 0, forbidden: 0, failedTests: 0, changes: 0, errors: 0, ...counts },
  };
}

const APPROVED = (login: string) =>
  verdict("approved", { approval: { hash: H1, login, role: "write" } });

describe("firstApprovalPerHash", () => {
  it("keeps the first approval of each hash, in order", () => {
    const a1 = { hash: H1, login: "first", role: "admin" };
    const b = { hash: H2, login: "other", role: "write" };
    const a2 = { hash: H1, login: "second", role: "admin" };
    expect(firstApprovalPerHash([a1, b, a2])).toEqual([a1, b]);
    expect(firstApprovalPerHash([a2, a1])).toEqual([a2]);
    expect(firstApprovalPerHash([])).toEqual([]);
  });
});

describe("approvalStatus: blocked beats needs-approval beats approved", () => {
  it("failure naming every blocked project, whatever else waits or is approved", () => {
    expect(
      approvalStatus(
        ["ok", "wait", "bad", "worse"],
        [APPROVED("alice"), verdict("needs-approval"), verdict("blocked"), verdict("blocked")],
      ),
    ).toEqual({ state: "failure", description: "blocked: bad, worse" });
  });

  it("pending naming every project that needs an approval, when none is blocked", () => {
    expect(
      approvalStatus(
        ["ok", "wait", ".", "calm"],
        [
          APPROVED("alice"),
          verdict("needs-approval"),
          verdict("needs-approval"),
          verdict("no-authority-change"),
        ],
      ),
    ).toEqual({
      state: "pending",
      description: "needs /terfyn approve: wait, (repository root)",
    });
  });

  it("success: approved by each approver, or no approval needed", () => {
    expect(
      approvalStatus(
        ["a", "b", "c"],
        [APPROVED("alice"), verdict("no-authority-change"), APPROVED("bob")],
      ),
    ).toEqual({ state: "success", description: "approved by @alice, @bob" });
    expect(approvalStatus(["a"], [verdict("no-authority-change")])).toEqual({
      state: "success",
      description: "no approval needed",
    });
  });

  it("shows the invisible characters of a project's name", () => {
    const s = approvalStatus(["a\u202eb"], [verdict("blocked")]);
    expect(s.description).toBe("blocked: a\\u202Eb");
  });
});

describe("nextLabels", () => {
  const forbiddenBlock = verdict("blocked", { counts: { forbidden: 1 } });

  it("keeps the pull request's other labels and adds terfyn:widened and terfyn:forbidden", () => {
    expect(nextLabels(["bug", "ui"], [forbiddenBlock], true)).toEqual({
      labels: ["bug", "ui", "terfyn:widened", "terfyn:forbidden"],
      changed: true,
    });
  });

  it("removes only Terfyn's labels when they no longer apply", () => {
    expect(
      nextLabels(["terfyn:widened", "bug", "terfyn:forbidden"], [verdict("approved")], false),
    ).toEqual({ labels: ["bug"], changed: true });
    expect(nextLabels(["terfyn:forbidden", "bug"], [], true)).toEqual({
      labels: ["bug", "terfyn:widened"],
      changed: true,
    });
  });

  it("terfyn:forbidden only for a project blocked with a forbidden effect or a failing test", () => {
    const has = (v: ProjectOutcomeVerdict) =>
      nextLabels([], [v], false).labels.includes("terfyn:forbidden");
    expect(has(verdict("blocked", { counts: { forbidden: 2 } }))).toBe(true);
    expect(has(verdict("blocked", { counts: { failedTests: 1 } }))).toBe(true);
    // Blocked by errors or a conflict, not by a forbidden effect.
    expect(has(verdict("blocked", { counts: { errors: 3 } }))).toBe(false);
    // Counts alone do not label a project that is not blocked.
    expect(has(verdict("needs-approval", { counts: { forbidden: 1, failedTests: 1 } }))).toBe(
      false,
    );
  });

  it("unchanged (in any order) means no call", () => {
    expect(nextLabels(["bug"], [verdict("no-authority-change")], false)).toEqual({
      labels: ["bug"],
      changed: false,
    });
    expect(
      nextLabels(["terfyn:forbidden", "bug", "terfyn:widened"], [forbiddenBlock], true),
    ).toEqual({ labels: ["bug", "terfyn:widened", "terfyn:forbidden"], changed: false });
    expect(nextLabels([], [], false)).toEqual({ labels: [], changed: false });
  });

  it("terfyn:widened comes from any plan that widens", () => {
    const projects: PlannedProject[] = [
      { path: "a", plan: plan(), tests: PASSING },
      { path: "b", tests: PASSING },
      { path: "c", plan: GUARD_RELAXED, tests: PASSING },
    ];
    expect(anyWidened(projects)).toBe(true);
    expect(anyWidened(projects.slice(0, 2))).toBe(false);
  });
});

describe("stickyMarker", () => {
  it("names the project, URI-encoded so a path cannot end the HTML comment", () => {
    expect(stickyMarker("agents")).toBe("<!-- terfyn:plan project=agents -->");
    expect(stickyMarker("a b/-->x")).toBe("<!-- terfyn:plan project=a%20b%2F--%3Ex -->");
  });
});

describe("commentAction", () => {
  const marker = stickyMarker("agents");
  const body = `${marker}\nthe plan`;
  const own = (id: number, text: string): ExistingComment => ({
    id,
    body: text,
    author: "terfyn-bot",
    url: `https://example.test/c/${id}`,
  });
  const base = {
    mode: "changes" as const,
    verdict: "needs-approval" as Verdict,
    hasChanges: true,
    me: "terfyn-bot",
    marker,
    body,
  };

  it("updates our own comment, and leaves it alone when the body is the same", () => {
    expect(commentAction({ ...base, comments: [own(7, `${marker}\nold plan`)] })).toEqual({
      kind: "update",
      id: 7,
    });
    expect(commentAction({ ...base, comments: [own(7, body)] })).toEqual({
      kind: "unchanged",
      url: "https://example.test/c/7",
    });
  });

  it("never edits a comment someone else planted with our marker", () => {
    const planted = { ...own(3, `${marker}\n✅ all fine`), author: "mallory" };
    expect(commentAction({ ...base, comments: [planted] })).toEqual({ kind: "create" });
    // Not even one planted with the exact body.
    expect(commentAction({ ...base, comments: [{ ...planted, body }] })).toEqual({
      kind: "create",
    });
    // Nor when we do not know who we are.
    expect(
      commentAction({ ...base, me: undefined, comments: [{ ...own(4, body), author: "" }] }),
    ).toEqual({ kind: "create" });
    // And ours is found past it.
    expect(commentAction({ ...base, comments: [planted, own(9, "x")] }).kind).toBe("create");
    expect(commentAction({ ...base, comments: [planted, own(9, `${marker}x`)] })).toEqual({
      kind: "update",
      id: 9,
    });
  });

  it("our comment for another project, or with the marker not first, is not this one", () => {
    const other = own(5, `${stickyMarker("other")}\nplan`);
    const quoted = own(6, `> ${marker}\nplan`);
    expect(commentAction({ ...base, comments: [other, quoted] })).toEqual({ kind: "create" });
  });

  it("comment: changes skips a new comment when nothing changed, but still updates ours", () => {
    const quiet = { ...base, verdict: "no-authority-change" as Verdict, hasChanges: false };
    expect(commentAction({ ...quiet, comments: [] })).toEqual({ kind: "skip" });
    expect(commentAction({ ...quiet, comments: [own(8, `${marker}\nold`)] })).toEqual({
      kind: "update",
      id: 8,
    });
    expect(commentAction({ ...quiet, mode: "always", comments: [] })).toEqual({ kind: "create" });
  });

  it("comment: changes comments on changes, on any other verdict, and without a plan", () => {
    const quiet = { ...base, verdict: "no-authority-change" as Verdict, comments: [] };
    expect(commentAction({ ...quiet, hasChanges: true })).toEqual({ kind: "create" });
    expect(commentAction({ ...quiet, hasChanges: undefined })).toEqual({ kind: "create" });
    for (const v of ["blocked", "needs-approval", "approved"] as const)
      expect(commentAction({ ...quiet, verdict: v, hasChanges: false })).toEqual({
        kind: "create",
      });
  });
});

describe("stepOutputs", () => {
  const one = (p: Plan | undefined, tests = PASSING): PlannedProject => ({
    path: "agents",
    ...(p ? { plan: p } : {}),
    tests,
  });

  it("one project: its plan's hash and JSON, every output in order", () => {
    const p = CHANGED_NOT_WIDENED;
    const r = stepOutputs([one(p)], [verdict("no-authority-change")], "/tmp/plan.json");
    expect(r.warning).toBeUndefined();
    expect(Object.keys(r.outputs)).toEqual([
      "plan-hash",
      "widened",
      "forbidden",
      "has-changes",
      "approved",
      "plan-json",
      "plan-json-file",
    ]);
    expect(r.outputs).toEqual({
      "plan-hash": H1,
      widened: "false",
      forbidden: "false",
      "has-changes": "true",
      approved: "false",
      "plan-json": JSON.stringify(planToJson(p)),
      "plan-json-file": "/tmp/plan.json",
    });
    expect(stepOutputs([one(undefined)], [verdict("blocked")], "f").outputs).toMatchObject({
      "plan-hash": "",
      "has-changes": "false",
      "plan-json": "null",
    });
  });

  it("several projects: one hash over each project's path and hash, the plans as an array", () => {
    const projects = [
      { ...one(WIDENED_AUTONOMOUS), path: "a" },
      { ...one(undefined), path: "b" },
      { ...one({ ...CHANGED_NOT_WIDENED, hash: H2 }), path: "c" },
    ];
    const r = stepOutputs(
      projects,
      [verdict("needs-approval"), verdict("blocked"), verdict("no-authority-change")],
      "f",
    );
    expect(r.outputs["plan-hash"]).toBe(
      sha256([
        { project: "a", hash: H1 },
        { project: "b", hash: "" },
        { project: "c", hash: H2 },
      ]),
    );
    expect(r.outputs["plan-json"]).toBe(
      JSON.stringify([
        planToJson(WIDENED_AUTONOMOUS),
        planToJson({ ...CHANGED_NOT_WIDENED, hash: H2 }),
      ]),
    );
    expect(r.outputs.widened).toBe("true");
    // The hash of several projects binds their paths.
    expect(
      stepOutputs([{ ...projects[0]!, path: "z" }, ...projects.slice(1)], [], "f").outputs[
        "plan-hash"
      ],
    ).not.toBe(r.outputs["plan-hash"]);
  });

  it("forbidden: a forbidden effect or a failing capability test in any project", () => {
    const f = (ps: PlannedProject[]) => stepOutputs(ps, [], "f").outputs.forbidden;
    expect(f([one(plan()), one(FORBIDDEN)])).toBe("true");
    expect(f([one(plan()), one(plan(), FAILING)])).toBe("true");
    expect(f([one(undefined, FAILING)])).toBe("true");
    expect(f([one(plan()), one(WIDENED_AUTONOMOUS)])).toBe("false");
  });

  it("approved: true only when something is approved and nothing needs approval or is blocked", () => {
    const a = (vs: ProjectOutcomeVerdict[]) =>
      stepOutputs(
        vs.map(() => one(plan())),
        vs,
        "f",
      ).outputs.approved;
    expect(a([APPROVED("alice")])).toBe("true");
    expect(a([APPROVED("alice"), verdict("no-authority-change")])).toBe("true");
    expect(a([APPROVED("alice"), verdict("needs-approval")])).toBe("false");
    expect(a([APPROVED("alice"), verdict("blocked")])).toBe("false");
    expect(a([verdict("no-authority-change")])).toBe("false");
  });

  it("plan-json is empty above the 1,000,000-character limit, with a warning; at the limit it is kept", () => {
    const sized = (n: number) => {
      const p = plan();
      const pad = n - JSON.stringify(planToJson(p)).length;
      return plan({ project: `${p.project}${"x".repeat(pad)}` });
    };
    const at = stepOutputs([one(sized(OUTPUT_LIMIT))], [], "/tmp/p.json");
    expect(at.outputs["plan-json"]).toHaveLength(OUTPUT_LIMIT);
    expect(at.warning).toBeUndefined();
    const over = stepOutputs([one(sized(OUTPUT_LIMIT + 1))], [], "/tmp/p.json");
    expect(over.outputs["plan-json"]).toBe("");
    expect(over.outputs["plan-json-file"]).toBe("/tmp/p.json");
    expect(over.warning).toBe(
      "the plan JSON is 1000001 characters, over the 1 MB output limit; plan-json is empty and the plan is in the file named by plan-json-file",
    );
  });
});

describe("failureMessage", () => {
  it("undefined when no project fails", () => {
    expect(failureMessage(["a", "b"], [verdict("needs-approval"), APPROVED("x")])).toBeUndefined();
    expect(failureMessage([], [])).toBeUndefined();
  });

  it("each failing project with its reasons, in order, invisible characters shown", () => {
    expect(
      failureMessage(
        ["a", "b", "c\nd"],
        [
          verdict("blocked", { reasons: ["1 capability test failed", "1 policy violation"] }),
          verdict("needs-approval", { reasons: ["not failing"] }),
          verdict("needs-approval", { failing: true, reasons: ["authority WIDENED"] }),
        ],
      ),
    ).toBe("a: 1 capability test failed; 1 policy violation; c⏎d: authority WIDENED");
  });
});
