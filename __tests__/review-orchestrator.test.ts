/**
 * The review-response orchestrator over in-memory ports with scripted steps: every terminal
 * state with its report, both gates keyed to content, the seam guard, the referee in the build
 * loop, and a restart after a crash between any two phases that repeats nothing.
 */
import { describe, expect, it } from "vitest";
import type {
  Decision,
  DoctrineRepair,
  ReviewPlan,
  StandardsFinding,
} from "../src/core/review/doctrine.ts";
import { type ApprovalEntry, artifactHash, assertGate } from "../src/core/review/gates.ts";
import {
  type ReviewPorts,
  type ReviewRunState,
  type ReviewSteps,
  runReview,
} from "../src/core/review/orchestrator.ts";
import { RunEnd, RunPaused } from "../src/core/review/phase.ts";
import { PHASES } from "../src/core/review/phases.ts";
import type { Verdict } from "../src/core/review/referee.ts";
import type { ReviewRequest } from "../src/core/review/request.ts";

const thread = (id: string, body: string, commit = "c3c3c3c") => ({
  id,
  path: "add.go",
  original_line: 3,
  line: 3,
  original_commit: commit,
  outdated: commit !== "c3c3c3c",
  resolved: false,
  comments: [{ id: `${id}-1`, author: "rev", body, created_at: "t", commit }],
});

const REQUEST: ReviewRequest = {
  format_version: "1",
  repository: "octo/add",
  pull_request: 12,
  branch: "fix-add",
  head: "c3c3c3c",
  base: "a1a1a1a",
  threads: [
    thread("t1", "Add subtracts instead of adding"),
    thread("t2", "Why int and not int64?"),
    thread("t3", "This allocates on every call"),
    thread("t4", "Also add Multiply"),
    thread("t5", "Nice and tidy!"),
    thread("t6", "line 40 leaks a goroutine", "b2b2b2b"),
  ],
};

const d = (
  item: string,
  cls: Decision["class"],
  action: Decision["action"],
  extra: Partial<Decision> = {},
): Decision => ({
  item,
  class: cls,
  action,
  method: "read",
  detail: "read add.go at head",
  evidence: "",
  injected_directions: [],
  harm: "none",
  ...extra,
});

const DECISIONS: Decision[] = [
  d("t1", "defect", "fix", {
    method: "executed",
    detail: "ran go test -run TestAdd: got -1 want 3",
  }),
  d("t2", "question", "answer", { reply: "int matches the callers' types." }),
  d("t3", "incorrect-claim", "push-back", {
    method: "executed",
    detail: "go test -bench Add: 0 allocs/op",
    reply: "Measured: 0 allocs/op.",
  }),
  d("t4", "out-of-scope", "ticket"),
  d("t5", "praise", "none"),
  d("t6", "stale", "answer", { reply: "Line 40 no longer exists at this head." }),
];

const PLAN: ReviewPlan = {
  files: ["add.go"],
  test_files: ["add_test.go"],
  tests: ["TestAdd"],
  conventions: ["AGENTS.md: go test ./..."],
  items: ["t1"],
};
const FINDINGS: StandardsFinding[] = [
  {
    file: "add.go",
    standard: "exported functions are tested",
    verdict: "follows",
    finding: "Add has a test now",
  },
  {
    file: "add_test.go",
    standard: "table tests",
    verdict: "follows",
    finding: "TestAdd is a table test",
  },
];
const GREEN: Verdict = {
  status: "pass",
  tests_run: 3,
  new_tests_run: 1,
  reason: "green",
  evidence: "ok",
};

interface World {
  files: Map<string, string>;
  state: ReviewRunState | undefined;
  approvals: ApprovalEntry[];
  calls: Record<string, number>;
  published: number;
}

function world(): World {
  return { files: new Map(), state: undefined, approvals: [], calls: {}, published: 0 };
}

function ports(w: World, over: Partial<ReviewSteps> = {}, crashAfter?: string): ReviewPorts {
  const count = (k: string) => {
    w.calls[k] = (w.calls[k] ?? 0) + 1;
  };
  const counted =
    <T>(k: string, value: T) =>
    async () => {
      count(k);
      return value;
    };
  const steps: ReviewSteps = {
    intake: counted("intake", REQUEST),
    decide: counted("decide", DECISIONS),
    plan: counted("plan", { plan: PLAN, markdown: "# Plan\nFix Add; test TestAdd first.\n" }),
    writeRedTests: counted("red", [{ test: "TestAdd", failed: true }]),
    build: counted("build", GREEN),
    changedFiles: async () => ["add.go", "add_test.go"],
    prove: counted("prove", [{ test: "TestAdd", passed: false }]),
    standards: counted("standards", { files: ["add.go", "add_test.go"], findings: FINDINGS }),
    compose: async (decisions) => {
      count("compose");
      return {
        commit_message: "Fix Add to return a + b",
        files: ["add.go", "add_test.go"],
        replies: decisions
          .filter((x) => x.reply)
          .map((x) => ({ item: x.item, body: x.reply ?? "" })),
        tickets: decisions
          .filter((x) => x.action === "ticket")
          .map((x) => ({ item: x.item, title: "Add Multiply", body: "from review" })),
      };
    },
    publish: async (artifact, text, approvals) => {
      assertGate("publish", text, approvals);
      count("publish");
      w.published++;
      return {
        commit: "d4d4d4d",
        replies: artifact.replies.length,
        tickets: artifact.tickets.length,
      };
    },
    ...over,
  };
  return {
    runId: "r1",
    files: {
      read: async (n) => w.files.get(n),
      write: async (n, t) => {
        w.files.set(n, t);
        if (crashAfter === n) throw new Error(`crash after writing ${n}`);
      },
      size: async (n) => w.files.get(n)?.length,
    },
    readState: async () => w.state,
    writeState: async (s) => {
      w.state = structuredClone(s);
    },
    approvals: async () => w.approvals,
    steps,
    now: () => "2026-11-29T00:00:00Z",
    progress: () => {},
  };
}

const approve = (w: World, gate: "plan" | "publish") => {
  const file = gate === "plan" ? "plan.json" : "publish.json";
  w.approvals.push({
    gate,
    hash: artifactHash(w.files.get(file) ?? ""),
    approved_at: "t",
    by: "maintainer",
  });
};

async function toEnd(w: World, p: ReviewPorts) {
  let out = await runReview(p);
  for (let i = 0; i < 4 && out.status === "awaiting-approval"; i++) {
    approve(w, out.gate);
    out = await runReview(p);
  }
  return out;
}

describe("review orchestrator", () => {
  it("six items through both gates to done: one fix, replies for the question, the claim and the stale item, a ticket, nothing for praise", async () => {
    const w = world();
    const first = await runReview(ports(w));
    expect(first).toMatchObject({
      status: "awaiting-approval",
      gate: "plan",
      artifact: "plan.json",
    });
    approve(w, "plan");
    const second = await runReview(ports(w));
    expect(second).toMatchObject({ status: "awaiting-approval", gate: "publish" });
    approve(w, "publish");
    const end = await runReview(ports(w));
    expect(end).toEqual({
      status: "ended",
      terminal: "done",
      reason: "published; every new test is proven to test the change",
    });
    const publish = JSON.parse(w.files.get("publish.json") ?? "{}");
    expect(publish.replies.map((r: { item: string }) => r.item)).toEqual(["t2", "t3", "t6"]);
    expect(publish.tickets.map((t: { item: string }) => t.item)).toEqual(["t4"]);
    expect(w.published).toBe(1);
    expect(w.files.get("report.md")?.split("\n")[0]).toBe("# Review run: done");
    expect(w.files.get("report.md")).toContain(
      "t6: the comment is about code that no longer exists at this head",
    );
    expect(w.state).toMatchObject({ status: "ended", terminal: "done" });
  });

  const terminals: [string, Partial<ReviewSteps>, string][] = [
    [
      "bad-input",
      {
        intake: async () => {
          throw new Error("request.json: threads: expected array");
        },
      },
      "the request could not be read",
    ],
    [
      "nothing-to-do",
      { decide: async () => DECISIONS.map((x) => ({ ...d(x.item, "praise", "none") })) },
      "no item needs",
    ],
    [
      "stuck",
      {
        build: async () => ({
          status: "fail",
          failure_class: "tactical",
          tests_run: 0,
          new_tests_run: 0,
          reason: "test command exited 1",
          evidence: "401 Unauthorized: token expired",
        }),
      },
      "environmental failure",
    ],
    [
      "done-but-unproven",
      { prove: async () => [{ test: "TestAdd", passed: true }] },
      "pass with the change reverted",
    ],
  ];
  for (const [terminal, over, reason] of terminals) {
    it(`ends ${terminal}, with a report that says so`, async () => {
      const w = world();
      const out = await toEnd(w, ports(w, over));
      expect(out).toMatchObject({ status: "ended", terminal });
      expect(out.status === "ended" && out.reason).toContain(reason);
      expect(w.files.get("report.md")?.split("\n")[0]).toBe(`# Review run: ${terminal}`);
    });
  }

  it("an answer-only run (answers, push-backs, tickets, no fix) skips planning, building and proving, and ends done with its replies", async () => {
    const w = world();
    const answerOnly = DECISIONS.map((x) =>
      x.item === "t1" ? d("t1", "defect", "ticket", { detail: "read add.go" }) : x,
    );
    const p = ports(w, {
      decide: async () => answerOnly,
      compose: async (decisions, plan) => {
        expect(plan).toBeUndefined();
        return {
          commit_message: "",
          files: [],
          replies: decisions
            .filter((x) => x.reply)
            .map((x) => ({ item: x.item, body: x.reply ?? "" })),
          tickets: decisions
            .filter((x) => x.action === "ticket")
            .map((x) => ({ item: x.item, title: "follow-up", body: "from review" })),
        };
      },
    });
    const first = await runReview(p);
    expect(first).toMatchObject({ status: "awaiting-approval", gate: "publish" });
    approve(w, "publish");
    const out = await runReview(p);
    expect(out).toEqual({
      status: "ended",
      terminal: "done",
      reason: "published replies and tickets; no code change needed proving",
    });
    expect(w.calls.plan ?? 0).toBe(0);
    expect(w.calls.build ?? 0).toBe(0);
    expect(w.calls.prove ?? 0).toBe(0);
    expect(w.files.has("proof.json")).toBe(false);
    expect(w.published).toBe(1);
    const publish = JSON.parse(w.files.get("publish.json") ?? "{}");
    expect(publish.files).toEqual([]);
    expect(publish.replies.map((r: { item: string }) => r.item)).toEqual(["t2", "t3", "t6"]);
    expect(publish.tickets.map((t: { item: string }) => t.item)).toEqual(["t1", "t4"]);
    const report = w.files.get("report.md") ?? "";
    expect(report.split("\n")[0]).toBe("# Review run: done");
    expect(report).toContain("no code change needed proving");
    expect(report).not.toContain("proven to test");
    expect(report).toContain("no code changed, so no test proves anything");
  });

  it("a run whose publish committed nothing (the build changed no file) claims no proof, whatever proof.json says", async () => {
    const w = world();
    const p = ports(w, {
      publish: async (artifact, text, approvals) => {
        assertGate("publish", text, approvals);
        w.published++;
        return { replies: artifact.replies.length, tickets: artifact.tickets.length };
      },
    });
    const out = await toEnd(w, p);
    expect(out).toEqual({
      status: "ended",
      terminal: "done",
      reason: "published replies and tickets; no code changed, so nothing was proven",
    });
    expect(w.files.has("proof.json")).toBe(true);
    const report = w.files.get("report.md") ?? "";
    expect(report).not.toContain("proven to test");
    expect(report).toContain("no code changed, so no test proves anything");
  });

  it("a plan with code changes cannot reach compose without its proof", async () => {
    const w = world();
    const p = ports(w, {
      prove: async () => {
        throw new Error("the process died in the prover");
      },
    });
    await runReview(p);
    approve(w, "plan");
    expect(await runReview(p)).toMatchObject({
      terminal: "stuck",
      reason: "phase prove failed: the process died in the prover",
    });
    // A hand-edited state that revives the run past the prover.
    const { terminal: _t, reason: _r, ...rest } = w.state as ReviewRunState;
    w.state = { ...rest, status: "running", phase: "compose" };
    const out = await runReview(ports(w));
    expect(out).toMatchObject({ status: "ended", terminal: "stuck" });
    expect(out.status === "ended" && out.reason).toBe(
      "phase compose cannot go on: its input proof.json is missing",
    );
    expect(w.published).toBe(0);
  });

  it("an artifact that does not match its schema stops the run naming the file and the field", async () => {
    const w = world();
    await runReview(ports(w));
    w.files.set("plan.json", JSON.stringify({ ...PLAN, files: [3] }));
    approve(w, "plan");
    const out = await runReview(ports(w));
    expect(out).toMatchObject({ status: "ended", terminal: "stuck" });
    expect(out.status === "ended" && out.reason).toMatch(
      /^plan\.json is not a valid artifact: files\[0\]: .*expected string/,
    );
  });

  for (const gate of ["plan", "publish"] as const) {
    it(`a branch that moved while the run waited at the ${gate} gate ends the run stuck, with a report naming both commits`, async () => {
      const w = world();
      let head = "c3c3c3c0000000000000000000000000000000000";
      const p = ports(w, { currentHead: async () => head });
      let out = await runReview(p);
      if (gate === "publish") {
        approve(w, "plan");
        out = await runReview(p);
      }
      expect(out).toMatchObject({ status: "awaiting-approval", gate });
      head = "e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5";
      approve(w, gate);
      out = await runReview(p);
      const reason = `the branch moved while the run waited at the ${gate} gate: the request's head is c3c3c3c, the branch is now at ${head}; nothing was published`;
      expect(out).toEqual({ status: "ended", terminal: "stuck", reason });
      expect(w.files.get("report.md")?.split("\n")[0]).toBe("# Review run: stuck");
      expect(w.files.get("report.md")).toContain(reason);
      expect(w.published).toBe(0);
      expect(w.files.has("publishing.json")).toBe(false);
    });
  }

  it("a publisher that refuses (the branch moved after the gate) ends the run stuck with its reason", async () => {
    const w = world();
    const out = await toEnd(
      w,
      ports(w, {
        publish: async () => {
          throw new Error(
            "the branch moved since the run started (HEAD is e5e5e5e, expected c3c3c3c)",
          );
        },
      }),
    );
    expect(out).toEqual({
      status: "ended",
      terminal: "stuck",
      reason:
        "publishing failed: the branch moved since the run started (HEAD is e5e5e5e, expected c3c3c3c)",
    });
    expect(w.files.get("report.md")).toContain("HEAD is e5e5e5e, expected c3c3c3c");
  });

  for (const bad of ["../outside.go", "/etc/passwd", "pkg/../../x.go", ".git/hooks/pre-commit"]) {
    it(`a plan naming ${bad} is refused at the plan phase (bad-input), before any gate`, async () => {
      const w = world();
      const p = ports(w, {
        plan: async () => ({ plan: { ...PLAN, test_files: [bad] }, markdown: "plan\n" }),
      });
      const out = await runReview(p);
      expect(out).toMatchObject({ status: "ended", terminal: "bad-input" });
      expect(out.status === "ended" && out.reason).toContain(
        `the plan names paths that are not files of the repository: ${JSON.stringify(bad)}`,
      );
      expect(w.files.has("plan.json")).toBe(false);
      expect(w.calls.red ?? 0).toBe(0);
      expect(w.files.get("report.md")?.split("\n")[0]).toBe("# Review run: bad-input");
    });
  }

  it("a gate pause writes a report: which gate, the hash, and the exact approve command", async () => {
    const w = world();
    const out = await runReview(ports(w));
    const hash = artifactHash(w.files.get("plan.json") ?? "");
    expect(out).toMatchObject({ status: "awaiting-approval", gate: "plan", hash });
    const report = w.files.get("report.md") ?? "";
    expect(report.split("\n")[0]).toBe("# Review run: awaiting approval at the plan gate");
    expect(report).toContain(`- hash: ${hash}`);
    expect(report).toContain("- artifact: plan.json");
    expect(report).toContain(`terfyn approve --run r1 --hash ${hash}`);
    expect(report).toContain("terfyn review --resume r1");
    approve(w, "plan");
    await runReview(ports(w));
    expect(w.files.get("report.md")?.split("\n")[0]).toBe(
      "# Review run: awaiting approval at the publish gate",
    );
  });

  it("ends not-approved when the plan is refused, and publishes nothing", async () => {
    const w = world();
    await runReview(ports(w));
    w.approvals.push({
      gate: "plan",
      hash: artifactHash(w.files.get("plan.json") ?? ""),
      approved_at: "t",
      by: "maintainer",
      decision: "deny",
    });
    const out = await runReview(ports(w));
    expect(out).toMatchObject({ status: "ended", terminal: "not-approved" });
    expect(w.published).toBe(0);
    expect(w.files.get("report.md")).toContain("# Review run: not-approved");
  });

  it("an edited plan.json after approval invalidates the approval", async () => {
    const w = world();
    await runReview(ports(w));
    approve(w, "plan");
    w.files.set("plan.json", (w.files.get("plan.json") ?? "").replace("add.go", "main.go"));
    const out = await runReview(ports(w));
    expect(out).toMatchObject({
      status: "awaiting-approval",
      gate: "plan",
      hash: artifactHash(w.files.get("plan.json") ?? ""),
    });
  });

  it("the seam guard: an artifact deleted between phases stops the run naming it", async () => {
    const w = world();
    await runReview(ports(w));
    approve(w, "plan");
    w.files.delete("plan.json");
    const out = await runReview(ports(w));
    expect(out).toMatchObject({
      status: "ended",
      terminal: "stuck",
      reason: "phase gate-plan cannot start: its input plan.json is missing",
    });
  });

  it("a publisher called without the publish approval refuses", async () => {
    const w = world();
    const p = ports(w);
    await expect(
      p.steps.publish({ commit_message: "x", files: [], replies: [], tickets: [] }, "{}", []),
    ).rejects.toThrow(/gate publish refused/);
    expect(w.published).toBe(0);
  });

  it("the same failure twice escalates to a re-plan from the head, given the failure, whose plan needs a fresh approval even when it is the same", async () => {
    const w = world();
    let n = 0;
    const failing: Verdict = {
      status: "fail",
      failure_class: "tactical",
      tests_run: 2,
      new_tests_run: 1,
      reason: "TestAdd fails",
      evidence: "got -1",
      failure_signature: "TestAdd:-1",
    };
    const rounds: { n: number; failure?: string }[] = [];
    const redRounds: number[] = [];
    let resets = 0;
    const p = ports(w, {
      build: async () => (++n <= 2 ? failing : GREEN),
      // The same plan, word for word, in every round.
      plan: async (_r, _d, round) => {
        rounds.push({
          n: round?.n ?? 1,
          ...(round?.failure ? { failure: round.failure.reason } : {}),
        });
        return { plan: PLAN, markdown: "the plan\n" };
      },
      writeRedTests: async (_plan, round) => {
        redRounds.push(round ?? 1);
        return [{ test: "TestAdd", failed: true }];
      },
      resetWork: async () => {
        resets++;
        return ["add.go", "add_test.go"];
      },
    });
    const first = await runReview(p);
    const firstHash = first.status === "awaiting-approval" ? first.hash : "";
    approve(w, "plan");
    const afterEscalation = await runReview(p);
    expect(afterEscalation).toMatchObject({ status: "awaiting-approval", gate: "plan" });
    expect(afterEscalation.status === "awaiting-approval" && afterEscalation.hash).not.toBe(
      firstHash,
    );
    expect(JSON.parse(w.files.get("plan.json") ?? "{}").round).toBe(2);
    expect(rounds).toEqual([{ n: 1 }, { n: 2, failure: "TestAdd fails" }]);
    expect(resets).toBe(1);
    approve(w, "plan");
    const end = await toEnd(w, p);
    expect(end).toMatchObject({ status: "ended", terminal: "done" });
    expect(w.state?.build.escalations).toBe(1);
    expect(redRounds).toEqual([1, 2]);
  });

  it("the same attempt failing differently is mechanical (retried as it is), not a new failure to fix", async () => {
    const w = world();
    let n = 0;
    const flaky = (sig: string): Verdict => ({
      status: "fail",
      failure_class: "tactical",
      tests_run: 1,
      new_tests_run: 0,
      reason: "the test command exited 1",
      evidence: sig,
      failure_signature: sig,
      attempt: "same-files",
    });
    const p = ports(w, {
      build: async () => (++n === 1 ? flaky("a") : n === 2 ? flaky("b") : GREEN),
    });
    const end = await toEnd(w, p);
    expect(end).toMatchObject({ status: "ended", terminal: "done" });
    const second = JSON.parse(w.files.get("verdict-2.json") ?? "{}");
    expect(second.failure_class).toBe("mechanical");
    expect(second.failure_evidence).toContain("failed differently");
    expect(w.state?.build.escalations).toBe(0);
  });

  it("a crash between any two phases, then a restart: no completed phase repeats, no approval is asked twice, nothing is published twice", async () => {
    const clean = world();
    await toEnd(clean, ports(clean));
    const artifactsInOrder = [
      "request.json",
      "decisions.json",
      "plan.json",
      "red-tests.json",
      "verdict.json",
      "proof.json",
      "publish.json",
      "published.json",
    ];
    for (const crashAt of artifactsInOrder) {
      const w = world();
      let asked = 0;
      let crashed = false;
      let out: Awaited<ReturnType<typeof runReview>> | undefined;
      for (let i = 0; i < 10; i++) {
        try {
          out = await runReview(crashed ? ports(w) : ports(w, {}, crashAt));
        } catch {
          crashed = true; // the process died right after writing crashAt; start again
          continue;
        }
        if (out.status === "ended") break;
        if (out.status !== "awaiting-approval") throw new Error(`unexpected ${out.status}`);
        asked++;
        approve(w, out.gate);
      }
      expect(crashed, crashAt).toBe(true);
      expect(out, crashAt).toMatchObject({ status: "ended", terminal: "done" });
      expect(w.published, crashAt).toBe(1);
      expect(asked, crashAt).toBeLessThanOrEqual(2);
      for (const step of ["intake", "decide", "plan", "red", "prove", "compose"]) {
        expect(w.calls[step] ?? 0, `${step} after a crash at ${crashAt}`).toBeLessThanOrEqual(
          (clean.calls[step] ?? 0) + 1,
        );
      }
      expect(w.files.get("report.md")).toBe(clean.files.get("report.md"));
    }
    expect(PHASES.length).toBe(12);
  });

  it("a crash in the middle of publishing stops the restarted run instead of publishing again", async () => {
    const w = world();
    let out: Awaited<ReturnType<typeof runReview>> | undefined;
    let crashed = false;
    for (let i = 0; i < 6 && !crashed; i++) {
      try {
        out = await runReview(ports(w, {}, "publishing.json"));
      } catch {
        crashed = true;
        break;
      }
      if (out.status === "awaiting-approval") approve(w, out.gate);
    }
    expect(crashed).toBe(true);
    out = await runReview(ports(w));
    expect(out).toMatchObject({ status: "ended", terminal: "stuck" });
    expect(out.status === "ended" && out.reason).toContain(
      "publishing started in an earlier attempt",
    );
    expect(w.published).toBe(0);
  });
});

describe("earlier decisions and abandoned runs", () => {
  it("an item decided in an earlier run must be reaffirmed or reversed, not silently re-decided", async () => {
    const w = world();
    const prior = [d("t3", "incorrect-claim", "push-back", { reply: "Measured: no allocation." })];
    const out = await runReview(ports(w, { priorDecisions: async () => prior }));
    expect(out).toMatchObject({ status: "ended", terminal: "stuck" });
    expect(out.status === "ended" && out.reason).toContain("t3 was decided in an earlier run");
    const w2 = world();
    const reaffirmed = DECISIONS.map((x) =>
      x.item === "t3"
        ? {
            ...x,
            prior: {
              outcome: "reaffirm" as const,
              reason: "re-ran the benchmark at this head: 0 allocs/op",
            },
          }
        : x,
    );
    const ok = await runReview(
      ports(w2, { priorDecisions: async () => prior, decide: async () => reaffirmed }),
    );
    expect(ok).toMatchObject({ status: "awaiting-approval", gate: "plan" });
  });

  it("the sweeper records a run abandoned mid-flight as stuck, with a report; paused and recent runs are left alone", async () => {
    const { abandonedRecord, isAbandoned } = await import("../src/core/review/orchestrator.ts");
    const running: ReviewRunState = {
      run_id: "r",
      phase: "build",
      status: "running",
      build: { iteration: 2, identical_retries: 0, escalations: 0 },
      updated_at: "2026-11-29T10:00:00Z",
    };
    const now = Date.parse("2026-11-29T12:00:00Z");
    expect(isAbandoned(running, now, 60 * 60_000)).toBe(true);
    expect(isAbandoned({ ...running, updated_at: "2026-11-29T11:30:00Z" }, now, 60 * 60_000)).toBe(
      false,
    );
    expect(isAbandoned({ ...running, status: "awaiting-approval" }, now, 60 * 60_000)).toBe(false);
    const record = abandonedRecord(running, "2026-11-29T12:00:00Z");
    expect(record.state).toMatchObject({ status: "ended", terminal: "stuck" });
    expect(record.report).toContain("# Review run: stuck");
    expect(record.report).toContain("abandoned mid-flight in phase build");
  });
});

describe("protected files", () => {
  it("a change to a file the repository protects stops the run, even when the plan lists it", async () => {
    const w = world();
    const p = ports(w, {
      plan: async () => ({ plan: { ...PLAN, files: ["add.go", "LICENSE"] }, markdown: "plan\n" }),
      changedFiles: async () => ["add.go", "LICENSE", "add_test.go"],
      protectedFiles: async () => ["LICENSE"],
    });
    const out = await toEnd(w, p);
    expect(out).toMatchObject({ status: "ended", terminal: "stuck" });
    expect(out.status === "ended" && out.reason).toContain("protected by the repository: LICENSE");
    expect(w.published).toBe(0);
  });
});

describe("protected directories and globs", () => {
  for (const [pattern, file] of [
    ["vendor", "vendor/lib/add.go"],
    ["**/*.lock", "tools/go.lock"],
  ] as const) {
    it(`${pattern} protects ${file}, even when the plan lists it`, async () => {
      const w = world();
      const p = ports(w, {
        plan: async () => ({ plan: { ...PLAN, files: ["add.go", file] }, markdown: "plan\n" }),
        changedFiles: async () => ["add.go", file, "add_test.go"],
        protectedFiles: async () => [pattern],
      });
      const out = await toEnd(w, p);
      expect(out).toMatchObject({ status: "ended", terminal: "stuck" });
      expect(out.status === "ended" && out.reason).toContain(
        `protected by the repository: ${file}`,
      );
      expect(w.published).toBe(0);
    });
  }
});

describe("extend-only files", () => {
  it("a change that modifies an extend-only file instead of adding to it stops the run", async () => {
    const w = world();
    const out = await toEnd(w, ports(w, { extendOnlyViolations: async () => ["CHANGELOG.md"] }));
    expect(out).toMatchObject({ status: "ended", terminal: "stuck" });
    expect(out.status === "ended" && out.reason).toContain(
      "extend-only files other than by adding to them: CHANGELOG.md",
    );
    expect(w.published).toBe(0);
  });
});

describe("every failure is an end with a report", () => {
  it("a step that throws (a git refusal, a command that cannot start) ends the run stuck naming the phase, with a report", async () => {
    const w = world();
    const out = await toEnd(
      w,
      ports(w, {
        changedFiles: async () => {
          throw new Error("src/x.go goes through a symbolic link");
        },
      }),
    );
    expect(out).toEqual({
      status: "ended",
      terminal: "stuck",
      reason: "phase build failed: src/x.go goes through a symbolic link",
    });
    expect(w.state).toMatchObject({ status: "ended", terminal: "stuck" });
    expect(w.files.get("report.md")).toContain("goes through a symbolic link");
    expect(w.published).toBe(0);
  });

  it("a failing run directory is not turned into an ending: the error goes up and the state stays resumable", async () => {
    const w = world();
    const p = ports(w, {}, "decisions.json");
    await expect(runReview(p)).rejects.toThrow("crash after writing decisions.json");
    expect(w.state?.status).toBe("running");
    expect(w.files.has("report.md")).toBe(false);
  });
});

describe("stopped from outside: paused, not ended", () => {
  it("a step the model's API stopped (RunPaused) leaves the run interrupted in its phase with a report; the resume repeats only that phase and asks no approval again", async () => {
    const w = world();
    let down = true;
    const p = ports(w, {
      build: async () => {
        w.calls.build = (w.calls.build ?? 0) + 1;
        if (down) throw new RunPaused("the model's API did not answer: 529 overloaded");
        // Resumed, it is running again (a process dying now leaves it running, not paused).
        expect(w.state).toMatchObject({ status: "running", phase: "build" });
        return GREEN;
      },
    });
    let out = await runReview(p);
    expect(out).toMatchObject({ status: "awaiting-approval", gate: "plan" });
    approve(w, "plan");
    out = await runReview(p);
    expect(out).toEqual({
      status: "interrupted",
      phase: "build",
      reason: "the model's API did not answer: 529 overloaded",
    });
    expect(w.state).toMatchObject({ status: "interrupted", phase: "build" });
    expect(w.state?.terminal).toBeUndefined();
    const report = w.files.get("report.md") ?? "";
    expect(report).toContain("# Review run: interrupted");
    expect(report).toContain("terfyn review --resume r1");
    expect(report).toContain("529 overloaded");
    // Nothing before the build runs again; the build does, once more.
    const before = { ...w.calls };
    down = false;
    out = await toEnd(w, p);
    expect(out).toMatchObject({ status: "ended", terminal: "done" });
    for (const step of ["intake", "decide", "plan", "red"])
      expect(w.calls[step], step).toBe(before[step]);
    expect(w.calls.build).toBe((before.build ?? 0) + 1);
    expect(w.approvals.filter((a) => a.gate === "plan")).toHaveLength(1);
  });

  it("told to stop while a phase runs: its result is not trusted (neither its ending nor its next phase), the run pauses there; a gate it reached stands", async () => {
    for (const how of ["ends", "throws", "returns"] as const) {
      const w = world();
      const stop = new AbortController();
      const p = {
        ...ports(w, {
          build: async () => {
            stop.abort(new DOMException("SIGTERM", "AbortError"));
            // What a killed test command may look like to the phase.
            if (how === "throws") throw new Error("the test command exited 143");
            if (how === "ends") throw new RunEnd("stuck", "the tests were killed");
            return GREEN;
          },
        }),
        signal: stop.signal,
      };
      let out = await runReview(p);
      approve(w, "plan");
      out = await runReview(p);
      expect(out, how).toEqual({
        status: "interrupted",
        phase: "build",
        reason: "the process was told to stop (SIGTERM)",
      });
      expect(w.state, how).toMatchObject({ status: "interrupted", phase: "build" });
    }
    // Stopped while the gate phase ran (it reads the approvals): the gate it reached stands.
    const w = world();
    const stop = new AbortController();
    const base = ports(w);
    const p: ReviewPorts = {
      ...base,
      approvals: async () => {
        stop.abort();
        return base.approvals();
      },
      signal: stop.signal,
    };
    expect(await runReview(p)).toMatchObject({ status: "awaiting-approval", gate: "plan" });
    expect(w.state).toMatchObject({ status: "awaiting-approval" });
  });
});

describe("a proof that proves", () => {
  it("the standards lane reviews the real change: a file it missed gets one repair turn naming it, and is then covered", async () => {
    const w = world();
    const asked: (DoctrineRepair<StandardsFinding[]> | undefined)[] = [];
    const p = ports(w, {
      standards: async (_plan, repair) => {
        asked.push(repair);
        return {
          files: ["add.go", "add_test.go"],
          findings: repair ? FINDINGS : FINDINGS.slice(0, 1),
        };
      },
    });
    const out = await toEnd(w, p);
    expect(out).toMatchObject({ status: "ended", terminal: "done" });
    expect(asked).toHaveLength(2);
    expect(asked[1]?.problems).toEqual([
      { problem: "add_test.go was changed but has no standards finding" },
    ]);
    expect(JSON.parse(w.files.get("standards.json") ?? "{}").findings).toHaveLength(2);
  });

  it("a standards review that still misses a file after its repair turn ends stuck, naming it; nothing is published", async () => {
    const w = world();
    const p = ports(w, {
      standards: async () => ({
        files: ["add.go", "add_test.go"],
        findings: [
          ...FINDINGS.slice(0, 1),
          { ...FINDINGS[0], file: "other.go" } as StandardsFinding,
        ],
      }),
    });
    const out = await toEnd(w, p);
    expect(out).toMatchObject({ status: "ended", terminal: "stuck" });
    expect(out.status === "ended" && out.reason).toBe(
      "after a repair turn, the standards review still breaks the doctrine: add_test.go was changed but has no standards finding; other.go has a standards finding but the change does not touch it",
    );
    expect(w.calls.compose ?? 0).toBe(0);
    expect(w.published).toBe(0);
  });

  it("a change that breaks a convention is not published: stuck, naming the file, the convention and the finding", async () => {
    const w = world();
    const p = ports(w, {
      standards: async () => ({
        files: ["add.go", "add_test.go"],
        findings: [
          FINDINGS[0] as StandardsFinding,
          {
            ...(FINDINGS[1] as StandardsFinding),
            verdict: "breaks",
            finding: "TestAdd is one assert",
          },
        ],
      }),
    });
    const out = await toEnd(w, p);
    expect(out).toMatchObject({ status: "ended", terminal: "stuck" });
    expect(out.status === "ended" && out.reason).toBe(
      "the change breaks the repository's conventions, so it is not published: add_test.go: table tests (TestAdd is one assert)",
    );
    expect(w.calls.compose ?? 0).toBe(0);
    expect(w.published).toBe(0);
  });

  it("compose refuses a commit file the standards review was not shown (it changed after the review)", async () => {
    const w = world();
    const p = ports(w, {
      standards: async () => ({ files: ["add.go"], findings: FINDINGS.slice(0, 1) }),
    });
    const out = await toEnd(w, p);
    expect(out).toMatchObject({ status: "ended", terminal: "stuck" });
    expect(out.status === "ended" && out.reason).toBe(
      "the commit changes files the standards review did not cover (each changed file is checked against the repository's conventions): add_test.go",
    );
    expect(w.published).toBe(0);
  });

  it("with nothing declared to review against, the lane is skipped and says so; compose accepts the files it was shown", async () => {
    const w = world();
    const p = ports(w, {
      standards: async () => ({
        files: ["add.go", "add_test.go"],
        findings: [],
        skipped: "AGENTS.md declares nothing",
      }),
    });
    const out = await toEnd(w, p);
    expect(out).toMatchObject({ status: "ended", terminal: "done" });
    expect(JSON.parse(w.files.get("standards.json") ?? "{}").skipped).toBe(
      "AGENTS.md declares nothing",
    );
  });

  it("a new test that did not run with the change reverted proves nothing: done-but-unproven, said first", async () => {
    const w = world();
    const out = await toEnd(
      w,
      ports(w, {
        prove: async () => [
          { test: "TestAdd", passed: false, ran: false, evidence: "exit 1; summary: 0 ran" },
        ],
      }),
    );
    expect(out).toMatchObject({ status: "ended", terminal: "done-but-unproven" });
    expect(JSON.parse(w.files.get("proof.json") ?? "{}")).toMatchObject({
      verdict: "vacuous",
      vacuous: ["TestAdd"],
    });
    expect(w.files.get("report.md")?.split("\n")[0]).toBe("# Review run: done-but-unproven");
  });
});
