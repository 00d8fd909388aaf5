/**
 * Markdown, annotations and SARIF all render the same plan object and agree on what is flagged.
 */

import { fromMarkdown } from "mdast-util-from-markdown";
import { describe, expect, it } from "vitest";
import { renderPlanSarif } from "../src/adapters/report/sarif.ts";
import type { Plan } from "../src/core/plan/plan.ts";
import { renderPlanAnnotations } from "../src/core/render/plan-annotations.ts";
import { renderPlanMarkdown } from "../src/core/render/plan-markdown.ts";
import { runTerfyn } from "./helpers/cli.ts";
import { copyExample, grant } from "./helpers/example-project.ts";

async function widenedPlan(): Promise<Plan> {
  const dir = copyExample();
  await runTerfyn(["apply", "--project", ".", "--auto-approve"], dir);
  grant(dir, "Reviewer", "tool.workspace.write_file");
  const run = await runTerfyn(["plan", "--project", ".", "--json"], dir);
  expect(run.code).toBe(1);
  return JSON.parse(run.stdout) as Plan;
}

describe("plan renderers", () => {
  it("annotations: a failure on the forbidden grant line first, then the widening warning", async () => {
    const plan = await widenedPlan();
    const annotations = renderPlanAnnotations(plan, { pathPrefix: "examples/irl/" });
    expect(annotations.map((a) => [a.annotation_level, a.path, a.start_line, a.title])).toEqual([
      ["failure", "examples/irl/main.agent", 58, "Forbidden effect: workspace.write"],
      ["warning", "examples/irl/main.agent", 58, "Authority WIDENED: Agent/Reviewer"],
    ]);
    expect(annotations[0]).toMatchObject({ start_column: 5, end_column: 29 });
  });

  it("markdown: verdict first, table and risk delta, full plan collapsed", async () => {
    const plan = await widenedPlan();
    const md = renderPlanMarkdown(plan, { projectPath: "examples/irl" });
    expect(md.split("\n")[0]).toBe("### ⛔ Terfyn plan for `examples/irl`: forbidden by policy");
    expect(md).toContain("| `Agent/Reviewer` | **WIDENED** | – |");
    expect(md).toContain("- **high** authority_widening: AUTONOMOUS authority WIDENED\\.");
    expect(md).toContain("<details><summary>Full plan</summary>");
    expect(md).toContain('  spec.tools.2: -> "tool.workspace.write_file"');
    expect(md).toContain(plan.hash);
  });

  it("markdown: a hostile project path, message or plan text opens no link, image, mention, heading or </details>", async () => {
    const plan = await widenedPlan();
    const hostile =
      "x` ![i](https://t.invalid/p.png) [c](https://evil.invalid) @org/team </details>\n# H";
    plan.policy_violations = plan.policy_violations.map((v) => ({ ...v, message: hostile }));
    plan.risk_delta = plan.risk_delta.map((r) => ({ ...r, message: hostile }));
    const md = renderPlanMarkdown(plan, { projectPath: `a\`b ${hostile}` });
    // Read as GitHub would: a real Markdown parser, every node of the result.
    const nodes: { type: string; value?: string }[] = [];
    const walk = (n: { type: string; value?: string; children?: unknown[] }) => {
      nodes.push(n);
      for (const c of n.children ?? []) walk(c as typeof n);
    };
    walk(fromMarkdown(md) as never);
    expect(nodes.filter((n) => n.type === "link" || n.type === "image")).toEqual([]);
    expect(nodes.filter((n) => n.type === "heading")).toHaveLength(1);
    expect(nodes.filter((n) => n.type === "html").map((n) => n.value)).toEqual([
      "<details><summary>Full plan</summary>",
      "</details>",
    ]);
    for (const n of nodes.filter((x) => x.type === "text")) expect(n.value).not.toMatch(/@org/);
    expect(md.trimEnd().endsWith("</details>")).toBe(true);
    // The heading's code span holds the path literally: its fence outgrows the backtick inside.
    expect(md.split("\n")[0]).toMatch(/^### ⛔ Terfyn plan for ``a`b /);
  });

  it("markdown: a small budget truncates the details but keeps the verdict and the hash", async () => {
    const plan = await widenedPlan();
    for (const budget of [100, 700, 1000, 1500]) {
      const md = renderPlanMarkdown(plan, { projectPath: "p", budget });
      expect(md.length).toBeLessThanOrEqual(budget);
      expect(md).toContain("forbidden by policy");
    }
    const md = renderPlanMarkdown(plan, { projectPath: "p", budget: 1000 });
    expect(md).toContain(plan.hash);
    expect(md).toContain("truncated");
    expect(md.trimEnd().endsWith("</details>")).toBe(true);
  });

  it("sarif: a 2.1.0 log with one result per annotation, at the same places", async () => {
    const plan = await widenedPlan();
    const log = renderPlanSarif(plan, { pathPrefix: "examples/irl/", toolVersion: "1.2.3" });
    expect(log.version).toBe("2.1.0");
    const results = log.runs[0]?.results ?? [];
    expect(
      results.map((r) => [
        r.ruleId,
        r.level,
        r.locations?.[0]?.physicalLocation?.artifactLocation?.uri,
        r.locations?.[0]?.physicalLocation?.region?.startLine,
      ]),
    ).toEqual([
      ["terfyn/forbidden-effect", "error", "examples/irl/main.agent", 58],
      ["terfyn/authority-widened", "warning", "examples/irl/main.agent", 58],
    ]);
    expect(log.runs[0]?.properties?.planHash).toBe(plan.hash);
  });
});
