/**
 * The decision doctrine through the CLI (docs/review-decisions.md; doctrines 11, 14–16): each
 * guarantee holds in a real `terfyn review` run over examples/review-fix, with a copy of the
 * example's model script edited per test. A decision that would lie ends the run stuck, naming
 * the item, before decisions.json is written.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { runTerfyn } from "./helpers/cli.ts";
import { buildReviewExample, reviewStartArgs, reviewState } from "./helpers/review-run.ts";

const EXAMPLE = join(import.meta.dirname, "..", "examples", "review-fix");

interface Built {
  repo: string;
  request: string;
  head: string;
  older: string;
  runDir: string;
}

/** build-repo.mjs prints the older commit too. */
const build = () => buildReviewExample("terfyn-review-decisions-") as unknown as Built;

const state = reviewState;

type Turn = { output?: Record<string, unknown>; toolCalls?: { tool: string }[] };
type Script = { agents: Record<string, Turn[]> };
type D = Record<string, unknown>;

/**
 * A copy of the example's model script, changed by `edit`, written as `name` next to the run
 * directory. Asked for a repair, an agent with no `Agent@step` turns plays its turns again (a
 * model that does not correct itself), so a broken answer ends the run after its repair turn.
 */
function scriptWith(b: Built, edit: (script: Script) => void, name = "model-script.yaml"): string {
  const script = parseYaml(readFileSync(join(EXAMPLE, "model-script.yaml"), "utf8")) as Script;
  edit(script);
  const file = join(b.runDir, "..", name);
  writeFileSync(file, stringifyYaml(script));
  return file;
}

/** The output of `agent`'s last turn in a script. */
function outputOf<T>(s: Script, agent: string): T {
  const output = s.agents[agent]?.at(-1)?.output;
  if (!output) throw new Error(`the example script has no ${agent} output`);
  return output as T;
}

/** The Decider's decisions in a script. */
const decisionsOf = (s: Script) => outputOf<{ decisions: D[] }>(s, "Decider").decisions;

/** Edits the Decider's decision for `item`. */
const editDecision = (s: Script, item: string, edit: (d: D) => D) => {
  const out = outputOf<{ decisions: D[] }>(s, "Decider");
  out.decisions = out.decisions.map((d) => (d.item === item ? edit(d) : d));
};

const startArgs = (b: Built, script: string, runDir = b.runDir, extra: string[] = []) =>
  reviewStartArgs(b, script, extra, runDir);

/** A run that ends stuck at the decide phase: exit 1, a report naming the problem, no decisions.json. */
async function expectStuckAtDecide(b: Built, script: string, ...problems: string[]) {
  const r = await runTerfyn(startArgs(b, script), b.repo);
  expect(r.code, r.stderr).toBe(1);
  expect(r.stderr).not.toContain("internal error");
  expect(state(b.runDir)).toMatchObject({ status: "ended", terminal: "stuck" });
  const report = readFileSync(join(b.runDir, "report.md"), "utf8");
  expect(report.split("\n")[0]).toBe("# Review run: stuck");
  expect(report).toContain("(phase decide)");
  for (const p of problems) {
    expect(state(b.runDir).reason).toContain(p);
    expect(report).toContain(p);
  }
  expect(existsSync(join(b.runDir, "decisions.json"))).toBe(false);
  return r;
}

describe("terfyn review: provenance decides (doctrine 14)", () => {
  it("a stale item (its anchored line gone at head) decided fix without evidence verified at head is refused: stuck, naming it", async () => {
    const b = build();
    const script = scriptWith(b, (s) =>
      editDecision(s, "RT_106", (d) => ({ ...d, class: "defect", action: "fix" })),
    );
    await expectStuckAtDecide(
      b,
      script,
      "RT_106 is anchored to code that is gone at head, and is decided fix without evidence verified at head",
    );
  }, 120_000);

  it("evidence verified at another commit, or only searched, is not evidence at head: refused", async () => {
    const b = build();
    const script = scriptWith(b, (s) =>
      editDecision(s, "RT_106", (d) => ({
        ...d,
        class: "defect",
        action: "fix",
        verified_at: "0123456789abcdef0123456789abcdef01234567",
      })),
    );
    await expectStuckAtDecide(b, script, "RT_106 is anchored to code that is gone at head");
    const c = build();
    const searched = scriptWith(c, (s) =>
      editDecision(s, "RT_106", (d) => ({
        ...d,
        class: "defect",
        action: "fix",
        method: "searched",
        verified_at: c.head,
      })),
    );
    await expectStuckAtDecide(c, searched, "RT_106 is anchored to code that is gone at head");
  }, 120_000);

  it("the same fix verified at head passes; the Decider was given each thread's provenance and Terfyn records it on the decision", async () => {
    const b = build();
    const script = scriptWith(b, (s) => {
      editDecision(s, "RT_106", (d) => ({
        ...d,
        class: "defect",
        action: "fix",
        verified_at: b.head,
        // The Decider cannot rewrite the thread's provenance: Terfyn records the request's.
        provenance: {
          made_against: b.head,
          commits_behind: 0,
          anchor_moved: false,
          anchor_gone: false,
        },
      }));
      outputOf<{ items: string[] }>(s, "Planner").items = ["RT_101", "RT_106"];
    });
    const r = await runTerfyn(startArgs(b, script), b.repo);
    expect(r.code, r.stderr).toBe(2);
    expect(state(b.runDir).awaiting.gate).toBe("plan");
    const { decisions } = JSON.parse(readFileSync(join(b.runDir, "decisions.json"), "utf8")) as {
      decisions: D[];
    };
    const by = new Map(decisions.map((d) => [d.item, d]));
    expect(by.get("RT_106")?.provenance).toEqual({
      made_against: b.older,
      commits_behind: 1,
      anchor_moved: true,
      anchor_gone: true,
    });
    expect(by.get("RT_101")?.provenance).toEqual({
      made_against: b.head,
      commits_behind: 0,
      anchor_moved: false,
      anchor_gone: false,
    });
    const input = deciderInputOf(b.runDir) as { threads: { id: string; provenance: unknown }[] };
    expect(input.threads.find((t) => t.id === "RT_106")?.provenance).toEqual(
      by.get("RT_106")?.provenance,
    );
  }, 120_000);

  it('the report marks "outdated but still true" and "current but stale" distinctly', async () => {
    const b = build();
    const script = scriptWith(b, (s) => {
      // No fix: an answer-only run, through the publish gate to done.
      editDecision(s, "RT_101", ({ reply: _r, ...d }) => ({ ...d, action: "ticket" }));
      editDecision(s, "RT_106", (d) => ({
        ...d,
        class: "defect",
        action: "ticket",
        verified_at: b.head,
        evidence: "src/add.js still has a call that prints at head",
      }));
      editDecision(s, "RT_102", (d) => ({
        ...d,
        class: "stale",
        action: "answer",
        evidence: "the empty-list case was settled in an earlier commit",
      }));
    });
    let r = await runTerfyn(startArgs(b, script), b.repo);
    expect(r.code, r.stderr).toBe(2);
    expect(state(b.runDir).awaiting.gate).toBe("publish");
    r = await runTerfyn(
      ["approve", "--run", b.runDir, "--hash", state(b.runDir).awaiting.hash],
      b.repo,
    );
    expect(r.code, r.stderr).toBe(0);
    r = await runTerfyn(["review", "--resume", b.runDir], b.repo);
    expect(r.code, r.stderr).toBe(0);
    const report = readFileSync(join(b.runDir, "report.md"), "utf8");
    expect(report).toMatch(
      new RegExp(
        `- RT\\\\_106: outdated but still true: made against ${b.older.slice(0, 12)} \\(1 behind head\\) and its anchor moved, but the claim holds at ${b.head.slice(0, 12)}`,
      ),
    );
    expect(report).toContain(
      "- RT\\_102: current but stale: its anchor is unchanged at this head, yet the claim no longer holds",
    );
    expect(report).not.toContain("RT\\_102: the comment is about code that no longer exists");
    expect(report).toMatch(/\| RT\\_106 \| defect \| ticket \| read \| outdated, still true \|/);
    expect(report).toMatch(/\| RT\\_102 \| stale \| answer \| read \| current, stale \|/);
    expect(report).toMatch(/\| RT\\_101 \| defect \| ticket \| executed \| current \|/);
  }, 120_000);
});

/** The input the Decider was given (agents/decide/input.json, next to its journal). */
function deciderInputOf(runDir: string): unknown {
  return JSON.parse(readFileSync(join(runDir, "agents", "decide", "input.json"), "utf8"));
}

/** The tool operations the Decider's journal shows it called. */
function deciderCalls(runDir: string): string[] {
  return readFileSync(join(runDir, "agents", "decide", "journal.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { type: string; tool?: string })
    .flatMap((e) => (e.type === "effect.intent" && e.tool ? [e.tool] : []));
}

describe("terfyn review: decisions that cannot lie (doctrines 11, 16)", () => {
  it("harm: reachable with no path from an entry point is refused: stuck, naming the item", async () => {
    const b = build();
    const script = scriptWith(b, (s) =>
      editDecision(s, "RT_101", ({ path: _p, ...d }) => ({ ...d, harm: "reachable" })),
    );
    await expectStuckAtDecide(
      b,
      script,
      "RT_101 claims `harm: reachable` with no `path` from an entry point",
    );
  }, 120_000);

  it("one repair turn: told the rule it broke, a Decider that fixes its answer goes on; the repair sees its answer and the rule", async () => {
    const b = build();
    const script = scriptWith(b, (s) => {
      const good = structuredClone(s.agents.Decider?.at(-1)?.output);
      editDecision(s, "RT_101", ({ path: _p, ...d }) => ({ ...d, harm: "reachable" }));
      // The repair turn (its own step) answers with the decisions as they were.
      s.agents["Decider@decide-repair"] = [{ output: good as Record<string, unknown> }];
    });
    const r = await runTerfyn(startArgs(b, script), b.repo);
    expect(r.code, r.stderr).toBe(2);
    const decided = JSON.parse(readFileSync(join(b.runDir, "decisions.json"), "utf8"));
    const rt101 = decided.decisions.find((d: D) => d.item === "RT_101");
    expect(rt101.harm === "reachable" ? rt101.path : "latent or none").toBeTruthy();
    const input = JSON.parse(
      readFileSync(join(b.runDir, "agents", "decide-repair", "input.json"), "utf8"),
    );
    expect(input.repair.broken_rules).toEqual([
      "RT_101 claims `harm: reachable` with no `path` from an entry point: name the path, or call the harm latent",
    ]);
    expect(input.threads.length).toBeGreaterThan(0);
  }, 120_000);

  it("the same harm called latent passes", async () => {
    const b = build();
    const script = scriptWith(b, (s) =>
      editDecision(s, "RT_101", ({ path: _p, ...d }) => ({ ...d, harm: "latent" })),
    );
    const r = await runTerfyn(startArgs(b, script), b.repo);
    expect(r.code, r.stderr).toBe(2);
  }, 120_000);

  it("`executed` with no run_tests or command call in the Decider's journal is refused: stuck, naming each item", async () => {
    const b = build();
    const script = scriptWith(b, (s) => {
      s.agents.Decider = (s.agents.Decider ?? []).filter(
        (t) => !t.toolCalls?.some((c) => c.tool === "tool.workspace.run_tests"),
      );
    });
    await expectStuckAtDecide(
      b,
      script,
      "RT_101 claims `executed` but the Decider ran nothing",
      "RT_103 claims `executed` but the Decider ran nothing",
    );
    expect(deciderCalls(b.runDir)).toEqual(Array(4).fill("tool.workspace.read_file"));
  }, 120_000);

  it("a missing test is a test-gap, not a defect: it can be fixed, never pushed back", async () => {
    const b = build();
    const script = scriptWith(b, (s) =>
      editDecision(s, "RT_102", (d) => ({ ...d, class: "test-gap", action: "push-back" })),
    );
    await expectStuckAtDecide(
      b,
      script,
      "RT_102 a test-gap item cannot be answered with push-back",
    );
  }, 120_000);

  it("a fix the plan does not cover is refused at the plan phase: stuck, naming it, no plan.json", async () => {
    const b = build();
    const script = scriptWith(b, (s) => {
      outputOf<{ items: string[] }>(s, "Planner").items = [];
    });
    const r = await runTerfyn(startArgs(b, script), b.repo);
    expect(r.code, r.stderr).toBe(1);
    expect(state(b.runDir)).toMatchObject({ terminal: "stuck" });
    expect(state(b.runDir).reason).toBe(
      "after a repair turn, the plan still breaks the doctrine: RT_101 is decided fix but the plan does not cover it",
    );
    expect(readFileSync(join(b.runDir, "report.md"), "utf8")).toContain("(phase plan)");
    expect(existsSync(join(b.runDir, "plan.json"))).toBe(false);
  }, 120_000);
});

describe("terfyn review --prior: reaffirm or reverse, never drift (doctrine 15)", () => {
  /** A first run (to the plan gate: its decisions.json written), then the second run's directory. */
  async function firstRun(b: Built): Promise<{ prior: string; second: string; earlier: D[] }> {
    const r = await runTerfyn(startArgs(b, join(EXAMPLE, "model-script.yaml")), b.repo);
    expect(r.code, r.stderr).toBe(2);
    const earlier = (
      JSON.parse(readFileSync(join(b.runDir, "decisions.json"), "utf8")) as { decisions: D[] }
    ).decisions;
    return { prior: b.runDir, second: join(b.runDir, "..", "run2"), earlier };
  }

  const reaffirmAll = (s: Script) => {
    for (const d of decisionsOf(s))
      d.prior = { outcome: "reaffirm", reason: `re-verified at this head: ${d.detail}` };
  };

  it("the second run's Decider gets the earlier decisions; every matching item reaffirmed with fresh verification passes", async () => {
    const b = build();
    const { prior, second, earlier } = await firstRun(b);
    const script = scriptWith(b, reaffirmAll, "second.yaml");
    const r = await runTerfyn(startArgs(b, script, second, ["--prior", prior]), b.repo);
    expect(r.code, r.stderr).toBe(2);
    expect(state(second).awaiting.gate).toBe("plan");
    expect(JSON.parse(readFileSync(join(second, "run.json"), "utf8")).prior).toBe(prior);
    const input = deciderInputOf(second) as { prior_decisions: D[] };
    expect(input.prior_decisions).toEqual(earlier);
    const { decisions } = JSON.parse(readFileSync(join(second, "decisions.json"), "utf8")) as {
      decisions: D[];
    };
    expect(decisions.map((d) => (d.prior as { outcome: string }).outcome)).toEqual(
      earlier.map(() => "reaffirm"),
    );
    const report = readFileSync(join(second, "report.md"), "utf8");
    expect(report).toContain("awaiting approval at the plan gate");
  }, 120_000);

  it("an item of the earlier run decided again with no reaffirm or reverse is refused", async () => {
    const b = build();
    const { prior, second } = await firstRun(b);
    const r = await runTerfyn(
      startArgs(b, join(EXAMPLE, "model-script.yaml"), second, ["--prior", prior]),
      b.repo,
    );
    expect(r.code, r.stderr).toBe(1);
    expect(state(second)).toMatchObject({ terminal: "stuck" });
    expect(state(second).reason).toContain(
      "RT_101 was decided in an earlier run: reaffirm it with fresh verification or reverse it with a reason",
    );
  }, 120_000);

  it('a "reaffirm" that flips the decision is refused: stuck, naming it', async () => {
    const b = build();
    const { prior, second } = await firstRun(b);
    const script = scriptWith(
      b,
      (s) => {
        reaffirmAll(s);
        editDecision(s, "RT_103", ({ reply: _r, ...d }) => ({
          ...d,
          class: "defect",
          action: "ticket",
        }));
      },
      "second.yaml",
    );
    const r = await runTerfyn(startArgs(b, script, second, ["--prior", prior]), b.repo);
    expect(r.code, r.stderr).toBe(1);
    expect(state(second)).toMatchObject({ terminal: "stuck" });
    const reason = state(second).reason as string;
    expect(reason).toContain(
      'RT_103 "reaffirms" the earlier decision (incorrect-claim, push-back) while changing it to defect, ticket',
    );
    expect(readFileSync(join(second, "report.md"), "utf8")).toContain('RT_103 "reaffirms"');
    expect(existsSync(join(second, "decisions.json"))).toBe(false);
  }, 120_000);

  it("a reaffirm on a search alone is not fresh verification: refused", async () => {
    const b = build();
    const { prior, second } = await firstRun(b);
    const script = scriptWith(
      b,
      (s) => {
        reaffirmAll(s);
        editDecision(s, "RT_104", (d) => ({ ...d, method: "searched" }));
      },
      "second.yaml",
    );
    const r = await runTerfyn(startArgs(b, script, second, ["--prior", prior]), b.repo);
    expect(r.code, r.stderr).toBe(1);
    expect(state(second).reason).toContain(
      "RT_104 reaffirmed on a searched method: a reaffirm needs fresh verification in this run",
    );
  }, 120_000);

  it("a decision that claims an earlier decision no earlier run made is refused", async () => {
    const b = build();
    const script = scriptWith(b, (s) =>
      editDecision(s, "RT_102", (d) => ({
        ...d,
        prior: { outcome: "reaffirm", reason: "re-read src/format.js at head" },
      })),
    );
    await expectStuckAtDecide(
      b,
      script,
      "RT_102 says it reaffirms an earlier decision, but no earlier run decided it",
    );
  }, 120_000);

  it('a "reverse" that keeps the decision is refused; one that changes it, saying why, passes', async () => {
    const b = build();
    const { prior, second } = await firstRun(b);
    const kept = scriptWith(
      b,
      (s) => {
        reaffirmAll(s);
        editDecision(s, "RT_104", (d) => ({
          ...d,
          prior: { outcome: "reverse", reason: "changed my mind" },
        }));
      },
      "kept.yaml",
    );
    let r = await runTerfyn(startArgs(b, kept, second, ["--prior", prior]), b.repo);
    expect(r.code, r.stderr).toBe(1);
    expect(state(second).reason).toContain(
      'RT_104 "reverses" the earlier decision (out-of-scope, ticket) but keeps it',
    );
    const third = join(b.runDir, "..", "run3");
    const changed = scriptWith(
      b,
      (s) => {
        reaffirmAll(s);
        editDecision(s, "RT_104", (d) => ({
          ...d,
          class: "question",
          action: "answer",
          reply: "multiply is not part of this change; the invoice work will add it",
          prior: {
            outcome: "reverse",
            reason: "the earlier ticket duplicates one the invoice work already tracks",
          },
        }));
      },
      "changed.yaml",
    );
    r = await runTerfyn(startArgs(b, changed, third, ["--prior", prior]), b.repo);
    expect(r.code, r.stderr).toBe(2);
    const { decisions } = JSON.parse(readFileSync(join(third, "decisions.json"), "utf8")) as {
      decisions: D[];
    };
    expect(decisions.find((d) => d.item === "RT_104")).toMatchObject({
      class: "question",
      action: "answer",
      prior: { outcome: "reverse" },
    });
  }, 120_000);
});
