/**
 * The people around a review run, through the CLI on examples/review-fix: who approved or
 * refused a gate (`terfyn approve --by`, the git identity, the OS user; `--deny --reason`), a
 * validated approvals log, `terfyn review --stop`, what the gate reports and the end report
 * show (the plan beside its decisions; the commit, its proof per test and every reply and
 * ticket in full, escaped), and which model the agents run on (`--model`).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { ModelRouter } from "../src/adapters/models/model-router.ts";
import { runTerfyn } from "./helpers/cli.ts";
import { buildReviewExample, reviewStartArgs, reviewState } from "./helpers/review-run.ts";

const EXAMPLE = join(import.meta.dirname, "..", "examples", "review-fix");
const SCRIPT = join(EXAMPLE, "model-script.yaml");

const build = () => buildReviewExample("terfyn-review-people-");
type Built = ReturnType<typeof build>;

const state = reviewState;
const report = (b: Built) => readFileSync(join(b.runDir, "report.md"), "utf8");
const approvals = (b: Built) =>
  readFileSync(join(b.runDir, "approvals.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

const startArgs = (b: Built, script: string | null = SCRIPT) => reviewStartArgs(b, script);

/** The example's script with the Decider's decisions changed by `edit`. */
function deciderScript(
  b: Built,
  edit: (d: Record<string, unknown>) => Record<string, unknown>,
): string {
  const script = parseYaml(readFileSync(SCRIPT, "utf8")) as {
    agents: Record<string, { output?: Record<string, unknown> }[]>;
  };
  const last = script.agents.Decider?.at(-1);
  if (!last?.output) throw new Error("the example script has no Decider output");
  last.output = { decisions: (last.output.decisions as Record<string, unknown>[]).map(edit) };
  const file = join(b.runDir, "..", "model-script.yaml");
  writeFileSync(file, stringifyYaml(script));
  return file;
}

const approve = (b: Built, ...extra: string[]) =>
  runTerfyn(
    ["approve", "--run", b.runDir, "--hash", state(b.runDir).awaiting.hash, ...extra],
    b.repo,
  );

/** The Markdown outside fenced code blocks, as CommonMark reads the fences (by length). */
function outsideFences(md: string): string {
  const out: string[] = [];
  let fence: string | undefined;
  for (const line of md.split("\n")) {
    const m = /^ {0,3}(`{3,})/.exec(line);
    if (fence === undefined) {
      if (m) fence = m[1];
      else out.push(line);
    } else if (m && m[1]!.length >= fence.length && line.trim() === m[1]) fence = undefined;
  }
  return out.join("\n");
}

/** An environment where git reads no global or system config. */
const NO_GIT_CONFIG = { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };

describe("terfyn approve: who approved, and refusals", () => {
  it("records --by, else the git identity of the current directory, else the OS user; the report shows each gate's approver", async () => {
    const b = build();
    expect((await runTerfyn(startArgs(b), b.repo)).code).toBe(2);
    // In the repository: its git identity.
    const plan = await approve(b);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain("by Numbers Author <author@numbers.example>");
    expect(approvals(b)[0]).toMatchObject({
      gate: "plan",
      by: "Numbers Author <author@numbers.example>",
    });
    expect((await runTerfyn(["review", "--resume", b.runDir], b.repo)).code).toBe(2);
    // Outside any repository, with no git config: the OS user.
    const elsewhere = mkdtempSync(join(tmpdir(), "terfyn-nogit-"));
    const pub = await runTerfyn(
      ["approve", "--run", b.runDir, "--hash", state(b.runDir).awaiting.hash],
      elsewhere,
      { ...NO_GIT_CONFIG, USER: "os-user" },
    );
    expect(pub.code, pub.stderr).toBe(0);
    expect(approvals(b)[1]).toMatchObject({ gate: "publish", by: "os-user" });
    const end = await runTerfyn(["review", "--resume", b.runDir], b.repo);
    expect(end.code, end.stderr).toBe(0);
    const text = report(b);
    expect(text).toContain("## Approvals");
    // Shown escaped: the name is outside text (no mention, no autolink, no HTML).
    expect(text).toContain(
      "- plan gate: approved by Numbers Author \\<author@\u2060numbers\\.example\\> at ",
    );
    expect(text).toMatch(/- publish gate: approved by os\\-user at /);
  }, 120_000);

  it("--by NAME wins over the git identity", async () => {
    const b = build();
    await runTerfyn(startArgs(b), b.repo);
    const r = await approve(b, "--by", "Maintainer Mo");
    expect(r.code, r.stderr).toBe(0);
    expect(approvals(b)[0].by).toBe("Maintainer Mo");
    expect((await approve(b, "--by", " ")).code).toBe(1);
  }, 60_000);

  it("--deny --reason records a refusal; the resumed run ends not-approved, and the report says who refused and why; --deny without --reason is a usage error", async () => {
    const b = build();
    await runTerfyn(startArgs(b), b.repo);
    const bare = await approve(b, "--deny");
    expect(bare.code).toBe(1);
    expect(bare.stderr).toMatch(/--deny needs --reason/);
    expect(bare.stderr).toMatch(/terfyn approve --help/);
    expect(existsSync(join(b.runDir, "approvals.jsonl"))).toBe(false);
    const denied = await approve(
      b,
      "--deny",
      "--reason",
      "the plan misses the rounding",
      "--by",
      "Rae",
    );
    expect(denied.code, denied.stderr).toBe(0);
    expect(denied.stdout).toMatch(/^refused gate plan/);
    expect(approvals(b)[0]).toMatchObject({
      gate: "plan",
      decision: "deny",
      reason: "the plan misses the rounding",
      by: "Rae",
    });
    const r = await runTerfyn(["review", "--resume", b.runDir], b.repo);
    expect(r.code).toBe(1);
    expect(state(b.runDir)).toMatchObject({ status: "ended", terminal: "not-approved" });
    expect(report(b)).toContain("- plan gate: refused by Rae at ");
    expect(report(b)).toContain(": the plan misses the rounding");
  }, 60_000);

  it("approve, then refuse the same hash: the refusal wins, the run ends not-approved and nothing moves", async () => {
    const b = build();
    await runTerfyn(startArgs(b), b.repo);
    const before = execFileSync("git", ["rev-parse", "HEAD"], { cwd: b.repo, encoding: "utf8" });
    expect((await approve(b, "--by", "Ann")).code).toBe(0);
    const denied = await approve(b, "--deny", "--reason", "on second thought, no", "--by", "Rae");
    expect(denied.code, denied.stderr).toBe(0);
    const r = await runTerfyn(["review", "--resume", b.runDir], b.repo);
    expect(r.code, r.stderr).toBe(1);
    expect(state(b.runDir)).toMatchObject({ status: "ended", terminal: "not-approved" });
    expect(existsSync(join(b.runDir, "publish.json"))).toBe(false);
    expect(execFileSync("git", ["rev-parse", "HEAD"], { cwd: b.repo, encoding: "utf8" })).toBe(
      before,
    );
  }, 60_000);

  it("a malformed line in approvals.jsonl is refused with its location, by approve and by resume; the run is untouched", async () => {
    const b = build();
    await runTerfyn(startArgs(b), b.repo);
    writeFileSync(
      join(b.runDir, "approvals.jsonl"),
      `${JSON.stringify({ gate: "plan", hash: state(b.runDir).awaiting.hash })}\n`,
    );
    const before = readFileSync(join(b.runDir, "state.json"), "utf8");
    const a = await approve(b);
    expect(a.code).toBe(1);
    expect(a.stderr).toMatch(
      /approvals\.jsonl:1 is not an approval record \(`approved_at` must be a timestamp; `by` must name who\)/,
    );
    expect(a.stderr).not.toContain("internal error");
    const r = await runTerfyn(["review", "--resume", b.runDir], b.repo);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/approvals\.jsonl:1 is not an approval record/);
    expect(readFileSync(join(b.runDir, "state.json"), "utf8")).toBe(before);
  }, 60_000);
});

describe("terfyn review --stop", () => {
  it("stops a paused run: stuck with who and why, a report, the worktree released; a second stop is refused", async () => {
    const b = build();
    expect((await runTerfyn(startArgs(b), b.repo)).code).toBe(2);
    const worktree = `${b.runDir}.worktree`;
    expect(existsSync(worktree)).toBe(true);
    const r = await runTerfyn(
      ["review", "--stop", b.runDir, "--reason", "superseded by a new push", "--by", "Sam"],
      b.repo,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split("\n")[0]).toBe(
      "stopped: stuck: stopped by Sam: superseded by a new push",
    );
    expect(state(b.runDir)).toMatchObject({
      status: "ended",
      terminal: "stuck",
      reason: "stopped by Sam: superseded by a new push",
    });
    expect(report(b).split("\n")[0]).toBe("# Review run: stuck");
    expect(report(b)).toContain("Reason: stopped by Sam: superseded by a new push");
    expect(existsSync(worktree)).toBe(false);
    expect(
      execFileSync("git", ["worktree", "list"], { cwd: b.repo, encoding: "utf8" }),
    ).not.toContain("run.worktree");
    expect(existsSync(join(b.runDir, ".terfyn-run.lock"))).toBe(false);

    const again = await runTerfyn(["review", "--stop", b.runDir], b.repo);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      /already ended stuck \(stopped by Sam: superseded by a new push\); nothing stopped/,
    );
    // The resumed run stays ended.
    const resumed = await runTerfyn(["review", "--resume", b.runDir], b.repo);
    expect(resumed.code).toBe(1);
    expect(resumed.stdout.split("\n")[0]).toBe("stuck: stopped by Sam: superseded by a new push");
  }, 60_000);

  it("a run whose lock another live process holds is not stopped: refused, state and worktree untouched", async () => {
    const b = build();
    await runTerfyn(startArgs(b), b.repo);
    writeFileSync(
      join(b.runDir, ".terfyn-run.lock"),
      JSON.stringify({
        pid: process.pid,
        host: hostname(),
        since: "2026-01-02T03:04:05.000Z",
        command: "terfyn review --resume",
        nonce: "0123456789abcdef",
      }),
    );
    const before = readFileSync(join(b.runDir, "state.json"), "utf8");
    const r = await runTerfyn(["review", "--stop", b.runDir], b.repo);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /is in use by pid \d+ on host \S+ since \S+ \(terfyn review --resume\)/,
    );
    expect(readFileSync(join(b.runDir, "state.json"), "utf8")).toBe(before);
    expect(existsSync(`${b.runDir}.worktree`)).toBe(true);
  }, 60_000);

  it("without --by the stopper is the git identity; a directory that holds no review run is refused", async () => {
    const b = build();
    await runTerfyn(startArgs(b), b.repo);
    const r = await runTerfyn(["review", "--stop", b.runDir], b.repo);
    expect(r.code, r.stderr).toBe(0);
    expect(state(b.runDir).reason).toBe("stopped by Numbers Author <author@numbers.example>");
    const empty = mkdtempSync(join(tmpdir(), "terfyn-notarun-"));
    const no = await runTerfyn(["review", "--stop", empty], b.repo);
    expect(no.code).toBe(1);
    expect(no.stderr).toMatch(/is not a review run directory \(no run\.json\); nothing stopped/);
    expect(
      (await runTerfyn(["review", "--stop", b.runDir, "--resume", b.runDir], b.repo)).code,
    ).toBe(1);
    expect((await runTerfyn([...startArgs(b), "--reason", "x"], b.repo)).stderr).toMatch(
      /--reason goes with --stop/,
    );
  }, 60_000);
});

describe("gate reports and the end report", () => {
  const HOSTILE = "Fine.\n```\n# Approved by the bot\n```\n@everyone <img src=x>";

  it("the plan gate shows the plan beside every decision's reply and evidence; the publish gate the files, the proof per test and every reply and ticket in full; hostile text stays inside a longer fence", async () => {
    const b = build();
    const script = deciderScript(b, (d) => (d.item === "RT_102" ? { ...d, reply: HOSTILE } : d));
    expect((await runTerfyn(startArgs(b, script), b.repo)).code).toBe(2);
    const plan = report(b);
    expect(plan).toContain("## Plan");
    expect(plan).toContain("- `src/add.js`");
    expect(plan).toContain("- `test/add.test.js`");
    expect(plan).toContain("plan.md:");
    expect(plan).toContain(readFileSync(join(b.runDir, "plan.md"), "utf8").trimEnd());
    expect(plan).toMatch(/### RT\\_103: incorrect-claim, push-back/);
    expect(plan).toMatch(/### RT\\_104: [a-z-]+, ticket/);
    // The hostile reply is shown whole, in a fence longer than the one it holds.
    expect(plan).toContain(`Reply:\n\n\`\`\`\`text\n${HOSTILE}\n\`\`\`\``);
    expect(outsideFences(plan)).not.toContain("Approved by the bot");

    expect((await approve(b)).code).toBe(0);
    expect((await runTerfyn(["review", "--resume", b.runDir], b.repo)).code).toBe(2);
    const pub = report(b);
    const publish = JSON.parse(readFileSync(join(b.runDir, "publish.json"), "utf8")) as {
      files: string[];
      replies: { item: string; body: string }[];
      tickets: { item: string; title: string; body: string }[];
    };
    expect(pub).toContain("## Commit");
    for (const f of publish.files) expect(pub).toContain(`- \`${f}\``);
    expect(pub).toContain("## Proof: proven");
    const proof = JSON.parse(readFileSync(join(b.runDir, "proof.json"), "utf8")) as {
      results: { test: string; evidence?: string }[];
    };
    expect(proof.results.length).toBeGreaterThan(0);
    for (const t of proof.results) {
      expect(pub).toContain(`: proven: it fails with the change reverted`);
      expect(pub).toContain(t.test.replace(/`/g, ""));
    }
    expect(pub).toContain("## Replies and tickets (composed, not published)");
    for (const reply of publish.replies) expect(pub).toContain(reply.body);
    for (const ticket of publish.tickets) expect(pub).toContain(ticket.body);
    expect(publish.replies.find((r) => r.item === "RT_102")?.body).toContain(
      "# Approved by the bot",
    );

    expect((await approve(b)).code).toBe(0);
    const end = await runTerfyn(["review", "--resume", b.runDir], b.repo);
    expect(end.code, end.stderr).toBe(0);
    const done = report(b);
    expect(done).toContain("## Proof: proven");
    expect(done).toContain("## Files changed");
    for (const f of publish.files) expect(done).toContain(`- \`${f}\``);
    expect(done).toContain("## Replies and tickets\n");
    for (const ticket of publish.tickets) expect(done).toContain(ticket.body);
    expect(done).toContain("## Evidence");
    const decisions = JSON.parse(readFileSync(join(b.runDir, "decisions.json"), "utf8"))
      .decisions as { item: string; evidence: string }[];
    for (const d of decisions) expect(done).toContain(d.evidence);
    // Nothing hostile is rendered outside a fence, in any of the three reports.
    for (const r of [plan, pub, done])
      expect(outsideFences(r)).not.toContain("Approved by the bot");
  }, 120_000);
});

describe("terfyn review --model", () => {
  it("--model anthropic/… without ANTHROPIC_API_KEY is a clear error before any work; --model-script wins over it; the flag is kept in run.json", async () => {
    const b = build();
    const r = await runTerfyn(
      [...startArgs(b, null), "--model", "anthropic/claude-sonnet-5-5"],
      b.repo,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "--model: anthropic/claude-sonnet-5-5 needs ANTHROPIC_API_KEY in the environment; nothing was started",
    );
    expect(existsSync(b.runDir)).toBe(false);
    const declared = await runTerfyn([...startArgs(b, null), "--model", "declared"], b.repo);
    expect(declared.code).toBe(1);
    expect(declared.stderr).toMatch(/anthropic\/claude-opus-5-5 needs ANTHROPIC_API_KEY/);
    const unknown = await runTerfyn([...startArgs(b, null), "--model", "nope/x"], b.repo);
    expect(unknown.stderr).toContain("no adapter for the model `nope/x`");
    expect(existsSync(b.runDir)).toBe(false);

    // A script drives every agent whatever --model says, with or without a key.
    const scripted = await runTerfyn(
      [...startArgs(b), "--model", "anthropic/claude-sonnet-5-5"],
      b.repo,
    );
    expect(scripted.code, scripted.stderr).toBe(2);
    expect(JSON.parse(readFileSync(join(b.runDir, "run.json"), "utf8"))).toMatchObject({
      model: "anthropic/claude-sonnet-5-5",
    });
  }, 60_000);

  it("a resume without the key of the model run.json names is refused before any work; --model on resume replaces it", async () => {
    const b = build();
    expect((await runTerfyn(startArgs(b), b.repo)).code).toBe(2);
    const runJson = join(b.runDir, "run.json");
    const config = JSON.parse(readFileSync(runJson, "utf8"));
    delete config.modelScript;
    writeFileSync(runJson, JSON.stringify({ ...config, model: "anthropic/claude-sonnet-5-5" }));
    expect((await approve(b)).code).toBe(0);
    const before = readFileSync(join(b.runDir, "state.json"), "utf8");
    const r = await runTerfyn(["review", "--resume", b.runDir], b.repo);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("needs ANTHROPIC_API_KEY");
    expect(readFileSync(join(b.runDir, "state.json"), "utf8")).toBe(before);
    const back = await runTerfyn(
      ["review", "--resume", b.runDir, "--model-script", SCRIPT, "--model", "mock/gpt-4"],
      b.repo,
    );
    expect(back.code, back.stderr).toBe(2);
    expect(JSON.parse(readFileSync(runJson, "utf8")).model).toBe("mock/gpt-4");
  }, 60_000);

  it("--agent-model NAME=MODEL: an unknown agent is a usage error, its model needs its key before any work, and the overrides are kept in run.json and joined on resume", async () => {
    const b = build();
    const unknown = await runTerfyn(
      [...startArgs(b), "--agent-model", "Reviewer=mock/gpt-4"],
      b.repo,
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(
      "review: --agent-model: there is no agent Reviewer (the agents: Builder, Decider, Planner, StandardsReviewer, TestWriter)",
    );
    const keyless = await runTerfyn(
      [...startArgs(b, null), "--agent-model", "Builder=anthropic/claude-haiku-5-5"],
      b.repo,
    );
    expect(keyless.code).toBe(1);
    expect(keyless.stderr).toContain(
      "anthropic/claude-haiku-5-5 needs ANTHROPIC_API_KEY in the environment; nothing was started",
    );
    expect(existsSync(b.runDir)).toBe(false);
    const started = await runTerfyn(
      [
        ...startArgs(b),
        "--agent-model",
        "Builder=mock/gpt-4",
        "--agent-model",
        "Decider=mock/gpt-4",
      ],
      b.repo,
    );
    expect(started.code, started.stderr).toBe(2);
    const runJson = join(b.runDir, "run.json");
    expect(JSON.parse(readFileSync(runJson, "utf8")).agentModels).toEqual({
      Builder: "mock/gpt-4",
      Decider: "mock/gpt-4",
    });
    expect((await approve(b)).code).toBe(0);
    const resumed = await runTerfyn(
      ["review", "--resume", b.runDir, "--agent-model", "Builder=mock/script"],
      b.repo,
    );
    expect(resumed.code, resumed.stderr).toBe(2);
    expect(JSON.parse(readFileSync(runJson, "utf8")).agentModels).toEqual({
      Builder: "mock/script",
      Decider: "mock/gpt-4",
    });
  }, 60_000);

  it("the router runs every agent on the chosen model, whatever it declares", async () => {
    const router = new ModelRouter({ model: "mock/gpt-4", env: {} });
    const turn = await router.turn({
      agent: "Decider",
      model: "anthropic/claude-opus-5-5",
      system: "",
      messages: [{ role: "user", content: "hi" }],
      tools: [],
      ordinal: 0,
    } as never);
    expect(turn.response).toBeDefined();
    await expect(
      new ModelRouter({ env: {} }).turn({
        agent: "Decider",
        model: "anthropic/claude-opus-5-5",
        system: "",
        messages: [],
        tools: [],
        ordinal: 0,
      } as never),
    ).rejects.toThrow(/ANTHROPIC_API_KEY/);
  });

  it.skipIf(!process.env.ANTHROPIC_API_KEY)(
    "runs the review agents on the real model with --model anthropic/… (needs ANTHROPIC_API_KEY)",
    async () => {
      const b = build();
      const r = await runTerfyn(
        [
          ...startArgs(b, null),
          "--model",
          `anthropic/${process.env.TERFYN_ANTHROPIC_MODEL ?? "claude-sonnet-5-5"}`,
        ],
        b.repo,
        { ANTHROPIC_API_KEY: process.env.ANTHROPIC_API_KEY ?? "" },
      );
      // Whatever the model decides, the run stops at a gate or ends with a report.
      expect([0, 1, 2]).toContain(r.code);
      expect(existsSync(join(b.runDir, "report.md"))).toBe(true);
    },
    600_000,
  );
});
