/**
 * The Action's renderers and readers, directly: every surface stays inside GitHub's budget with
 * the verdict, the head of the widened list and the footer kept (a 2,600-agent plan), the
 * approval command is found only in prose (CommonMark), values are escaped, and project files
 * are read from git by object id whatever their names hold.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generateSyntheticProject } from "../bench/synthetic-project.ts";
import { readProjectInRepository } from "../src/adapters/git/read-revision.ts";
import { effectiveRole, parseApprovalComment } from "../src/core/approvals/approval-comment.ts";
import { decideOutcome } from "../src/core/ci/outcome.ts";
import { planProject } from "../src/core/plan/plan-project.ts";
import { mdCode, mdText } from "../src/core/render/markdown-escape.ts";
import {
  CHECK_OUTPUT_BUDGET,
  COMMENT_BUDGET,
  JOB_SUMMARY_BUDGET,
  renderProjectReport,
  unifiedDiff,
} from "../src/core/render/pr-report.ts";
import { runCapabilityTests } from "../src/core/testing/capability-tests.ts";
import { validateProject } from "../src/core/validate.ts";

const H = `sha256:${"c".repeat(64)}`;

describe("approval commands are parsed as CommonMark", () => {
  const counts: [string, string][] = [
    ["a line of its own", `/terfyn approve ${H}`],
    ["after prose, with a blank line", `Looks right.\n\n/terfyn approve ${H}`],
    ["a line inside a paragraph", `Looks right.\n/terfyn approve ${H}\nthanks`],
    ["in a list item", `- /terfyn approve ${H}`],
  ];
  for (const [name, body] of counts)
    it(`counts ${name}`, () =>
      expect(parseApprovalComment(body)).toEqual({ kind: "approve", hash: H }));
  const never: [string, string][] = [
    ["a fenced block", `\`\`\`\n/terfyn approve ${H}\n\`\`\``],
    ["a tilde fence", `~~~\n/terfyn approve ${H}\n~~~`],
    ["an indented block", `text\n\n    /terfyn approve ${H}`],
    ["a block quote", `> /terfyn approve ${H}`],
    ["a lazy block quote continuation", `> quoted\n/terfyn approve ${H}`],
    ["an HTML comment block", `<!--\n/terfyn approve ${H}\n-->`],
    ["an inline HTML comment", `note <!-- \n/terfyn approve ${H} -->`],
    ["a code span", `\`/terfyn approve ${H}\``],
    ["a details HTML block", `<details>\n/terfyn approve ${H}\n</details>`],
    ["emphasis", `*/terfyn approve ${H}*`],
    ["text around it on the line", `please /terfyn approve ${H}`],
  ];
  for (const [name, body] of never)
    it(`ignores ${name}`, () => expect(parseApprovalComment(body)?.kind).not.toBe("approve"));
});

describe("repository roles", () => {
  it("reads role_name (maintain, triage) over the legacy permission", () => {
    expect(effectiveRole({ role_name: "maintain", permission: "write" }).level).toBe("maintain");
    expect(effectiveRole({ role_name: "triage", permission: "read" }).level).toBe("triage");
  });
  it("ranks a custom role by its base permissions", () => {
    const r = effectiveRole({
      role_name: "security-reviewer",
      permission: "write",
      user: { permissions: { admin: false, maintain: true, push: true, triage: true, pull: true } },
    });
    expect(r).toEqual({ level: "maintain", name: "security-reviewer" });
  });
});

describe("escaping", () => {
  it("a code span holds backticks, pipes and newlines literally", () => {
    expect(mdCode("a`b")).toBe("``a`b``");
    expect(mdCode("x|y", { inTable: true })).toBe("`x\\|y`");
    expect(mdCode("a\nb")).toBe("`a⏎b`");
  });
  it("prose cannot start markup or mention anyone", () => {
    const t = mdText("# x @admin ![i](https://e/x) </details>");
    expect(t).not.toMatch(/^#/);
    expect(t).not.toContain("@admin");
    expect(t).not.toContain("</details>");
    expect(t).not.toContain("![");
  });
});

describe("a changed system prompt", () => {
  it("is a line diff", () => {
    expect(unifiedDiff("a\nb\nc\n", "a\nB\nc\n")).toBe(" a\n-b\n+B\n c");
  });
});

describe("budgets at 2,600 agents", () => {
  const project = generateSyntheticProject({
    seed: 7,
    agents: 2600,
    tools: 100,
    operationsPerTool: 10,
    grantsPerAgent: 5,
    workflows: 200,
    agentFiles: 26,
    toolFiles: 10,
  });
  const validation = validateProject(project.files.map((f) => ({ path: f.path, text: f.text })));
  const result = planProject(
    validation,
    { resources: [], source: { source: "none" } },
    { path: "." },
  );
  if (!result.ok) throw new Error("the synthetic project must plan");
  const tests = runCapabilityTests(validation);
  const outcome = decideOutcome({ plan: result.plan, blocking: [], tests }, "widening");
  const report = {
    path: "big",
    outcome,
    plan: result.plan,
    tests,
    blocking: [],
    revisions: {
      event: "pull_request" as const,
      base: "a".repeat(40),
      head: "b".repeat(40),
      merge: { id: "d".repeat(40), computed: false },
    },
    runUrl: "https://github.com/o/r/actions/runs/1",
    approvers: "write",
  };
  for (const [surface, budget] of [
    ["comment", COMMENT_BUDGET],
    ["check summary", CHECK_OUTPUT_BUDGET],
    ["job summary", JOB_SUMMARY_BUDGET],
  ] as const) {
    it(`the ${surface} keeps the verdict, the widened head and the footer within ${budget}`, () => {
      const body = renderProjectReport(report, { budget, fullPlanAt: "the job summary" });
      expect(body.length).toBeLessThanOrEqual(budget);
      expect(body.split("\n")[0]).toMatch(/^### .* Terfyn · `big` · (needs approval|blocked) \(/);
      expect(body).toContain("**Authority widened**");
      expect(body).toMatch(/… and \d+ more/);
      expect(body).toContain(`Plan \`${result.plan.hash}\``);
      expect(body).toContain("merge `dddddddddddd`");
    });
  }
});

describe("a small budget", () => {
  it("still keeps the headline, the head of the widened list and the footer", async () => {
    const { generateSyntheticProject: gen } = await import("../bench/synthetic-project.ts");
    const p = gen({
      seed: 3,
      agents: 300,
      tools: 20,
      operationsPerTool: 5,
      grantsPerAgent: 4,
      workflows: 20,
      agentFiles: 3,
      toolFiles: 2,
    });
    const v = validateProject(p.files.map((f) => ({ path: f.path, text: f.text })));
    const planned = planProject(v, { resources: [], source: { source: "none" } }, { path: "." });
    if (!planned.ok) throw new Error("must plan");
    const tests = runCapabilityTests(v);
    const body = renderProjectReport(
      {
        path: "small",
        outcome: decideOutcome({ plan: planned.plan, blocking: [], tests }, "forbidden"),
        plan: planned.plan,
        tests,
        blocking: [],
        revisions: { event: "pull_request", base: "a".repeat(40), head: "b".repeat(40) },
        approvers: "write",
      },
      { budget: 6_000 },
    );
    expect(body.length).toBeLessThanOrEqual(6_000);
    expect(body).toContain("**Authority widened**");
    expect(body).toMatch(/… and \d+ more/);
    expect(body).toContain(`Plan \`${planned.plan.hash}\``);
  });
});

describe("reading a commit by object id", () => {
  it("gives every file its own bytes whatever its name holds, and flags unsafe names", async () => {
    const repo = mkdtempSync(join(tmpdir(), "terfyn-names-"));
    const g = (...a: string[]) => execFileSync("git", a, { cwd: repo, encoding: "utf8" });
    g("init", "-q");
    const names = [
      "terfyn.yaml",
      "a\nb.agent",
      "tab\t.yaml",
      'q "x".agent',
      "sp ace.agent",
      "z.agent",
    ];
    for (const n of names) writeFileSync(join(repo, n), `// ${JSON.stringify(n)}\n`);
    writeFileSync(join(repo, "terfyn.yaml"), "# project\n");
    g("add", "-A");
    g("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "x");
    const read = await readProjectInRepository(repo, "", "HEAD");
    const byPath = new Map(read.files.map((f) => [f.path, f.text]));
    for (const n of ['q "x".agent', "sp ace.agent", "z.agent"])
      expect(byPath.get(n)).toBe(`// ${JSON.stringify(n)}\n`);
    expect(byPath.has("a\nb.agent")).toBe(false);
    expect(read.diagnostics.map((d) => [d.code, d.span.file]).sort()).toEqual([
      ["TF2010", "a\\u000ab.agent"],
      ["TF2010", "tab\\u0009.yaml"],
    ]);
  });
});

describe("reading a directory from disk", () => {
  it("reports a project file whose name holds a newline (TF2010) instead of skipping it", async () => {
    const { readProjectDirectory } = await import("../src/adapters/fs/read-project.ts");
    const dir = mkdtempSync(join(tmpdir(), "terfyn-disk-names-"));
    writeFileSync(join(dir, "terfyn.yaml"), "# project\n");
    writeFileSync(join(dir, "x.agent\n"), "// hidden\n");
    const read = await readProjectDirectory(dir);
    expect(read.diagnostics.map((d) => d.code)).toEqual(["TF2010"]);
    expect(read.files.map((f) => f.path)).toEqual(["terfyn.yaml"]);
  });
});
