/**
 * The example workflow in docs/github-app-placement.md is the one the App's dispatch fits: it
 * triggers on workflow_dispatch with the three inputs the App sends, asks for exactly the four
 * write scopes a run uses, queues per pull request, and passes the inputs to the Action's
 * review-fix mode through `with:` (never a `run:` script), every key an input of action.yml.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { DEFAULT_WORKFLOW } from "../src/app/app.ts";

/** A GitHub expression, `$` + `{{ e }}` (built, so no string holds a template placeholder). */
const ex = (e: string) => ["$", `{{ ${e} }}`].join("");

const root = join(import.meta.dirname, "..");
const doc = readFileSync(join(root, "docs", "github-app-placement.md"), "utf8");
const blocks = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] as string);
// biome-ignore lint/suspicious/noExplicitAny: a parsed workflow file
const workflow = parse(blocks[0] ?? "") as Record<string, any>;
const action = parse(readFileSync(join(root, "action.yml"), "utf8")) as {
  inputs: Record<string, { default?: string }>;
};

describe("the placement workflow file (docs/github-app-placement.md)", () => {
  it("is named as the App's default and dispatched with the inputs the App sends", () => {
    expect(doc).toContain(`.github/workflows/${DEFAULT_WORKFLOW}`);
    const inputs = workflow.on.workflow_dispatch.inputs;
    expect(Object.keys(workflow.on)).toEqual(["workflow_dispatch"]);
    expect(Object.keys(inputs).sort()).toEqual(["head-sha", "pull-request", "run"]);
    expect(inputs["pull-request"].required).toBe(true);
    expect(inputs["head-sha"].required).toBe(true);
    expect(inputs.run.required).toBe(false);
  });

  it("asks for exactly contents, pull-requests, issues and checks write, nothing at the top", () => {
    expect(workflow.permissions).toEqual({});
    const jobs = Object.values(workflow.jobs) as Record<string, unknown>[];
    expect(jobs).toHaveLength(1);
    expect(jobs[0]?.permissions).toEqual({
      contents: "write",
      "pull-requests": "write",
      issues: "write",
      checks: "write",
    });
  });

  it("names each job after its run and pull request (the App finds a job that ended badly by it)", () => {
    expect(workflow["run-name"]).toBe(
      `terfyn review-fix ${ex("inputs.run || 'new'")} on #${ex("inputs.pull-request")}`,
    );
  });

  it("queues one run per pull request", () => {
    expect(workflow.concurrency.group).toContain(ex("inputs.pull-request"));
    expect(workflow.concurrency["cancel-in-progress"]).toBe(false);
  });

  it("runs the Action in review-fix mode (no checkout: the job clones the branch itself), inputs through with:, the key from secrets", () => {
    // biome-ignore lint/suspicious/noExplicitAny: workflow steps
    const steps = (Object.values(workflow.jobs)[0] as any).steps as Record<string, any>[];
    // The sandbox step, then the Action. No shell step holds an expression (script injection).
    expect(steps).toHaveLength(2);
    for (const s of steps.filter((s) => "run" in s)) expect(String(s.run)).not.toContain("${{");
    expect(String(steps[0]?.run)).toContain("apt-get install -y bubblewrap");
    expect(String(steps[0]?.run)).toContain("userns,");
    const terfyn = steps.find((s) => String(s.uses).startsWith("terfyn/terfyn@"));
    expect(terfyn?.with).toEqual({
      mode: "review-fix",
      "pull-request": ex("inputs.pull-request"),
      "head-sha": ex("inputs.head-sha"),
      run: ex("inputs.run"),
      "state-key": ex("secrets.TERFYN_STATE_KEY"),
    });
    expect(terfyn?.env).toEqual({ ANTHROPIC_API_KEY: ex("secrets.ANTHROPIC_API_KEY") });
    for (const key of Object.keys(terfyn?.with ?? {})) expect(action.inputs).toHaveProperty(key);
    expect(action.inputs.mode?.default).toBe("plan");
  });
});
