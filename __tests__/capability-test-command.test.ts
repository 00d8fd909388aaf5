/**
 * `terfyn test`: the example's capability tests pass, and fail the moment a grant change lets
 * the Reviewer write, naming the grant and its line; JUnit output; every assertion kind.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runTerfyn } from "./helpers/cli.ts";
import { copyExample, edit, grant, NO_REVIEWER_POLICY, write } from "./helpers/example-project.ts";

describe("terfyn test", () => {
  it("passes on the example: one PASS line per assertion, then N passed, M failed", async () => {
    const dir = copyExample();
    const run = await runTerfyn(["test", "--project", "."], dir);
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines).toEqual([
      "PASS capabilities: forbidEffect { agent: Reviewer, effect: workspace.write }",
      "PASS capabilities: allowEffect { agent: Implementer, effect: workspace.write, mode: autonomous }",
      "PASS capabilities: maxIterations { workflow: ImplementAndReview, limit: 3 }",
      "PASS capabilities: workflowEffects { workflow: ImplementAndReview, equals: [workspace.read, workspace.write, process.exec] }",
      "4 passed, 0 failed",
    ]);
  });

  it("fails the moment a grant lets the Reviewer write, naming the grant and the .agent line", async () => {
    const dir = copyExample();
    write(dir, "policies.yaml", NO_REVIEWER_POLICY); // the test must catch it even without the policy
    grant(dir, "Reviewer", "tool.workspace.write_file");
    const run = await runTerfyn(["test", "--project", ".", "--junit", "out/junit.xml"], dir);
    expect(run.code).toBe(1);
    const line =
      readFileSync(join(dir, "main.agent"), "utf8")
        .split("\n")
        .indexOf("    tool.workspace.write_file", 45) + 1;
    expect(run.stdout).toContain(
      `FAIL capabilities: forbidEffect { agent: Reviewer, effect: workspace.write }: Agent/Reviewer reaches workspace.write through tool.workspace.write_file (autonomous) at main.agent:${line}\n`,
    );
    expect(run.stdout.trimEnd().split("\n").at(-1)).toBe("3 passed, 1 failed");
    const xml = readFileSync(join(dir, "out", "junit.xml"), "utf8");
    expect(xml).toMatch(/<testsuites[^>]* tests="4" failures="1"/);
    expect(xml).toContain(
      '<failure message="Agent/Reviewer reaches workspace.write through tool.workspace.write_file (autonomous)" type="forbidEffect"/>',
    );
  });

  it("checks every assertion kind, with a reason for each failure", async () => {
    const dir = copyExample();
    edit(
      dir,
      "main.agent",
      "    tool.workspace.write_file\n",
      "    tool.workspace.write_file requires approval\n",
    );
    write(
      dir,
      "tests/more.yaml",
      `apiVersion: terfyn.dev/v1
kind: CapabilityTest
metadata: { name: more }
spec:
  assertions:
    - allowEffect: { agent: Implementer, effect: workspace.write, mode: autonomous }
    - allowEffect: { agent: Implementer, effect: workspace.write, mode: gated }
    - allowEffect: { agent: Reviewer, effect: network.egress }
    - maxIterations: { workflow: ImplementAndReview, limit: 2 }
    - workflowEffects: { workflow: ImplementAndReview, equals: [workspace.read, process.exec, network.egress] }
    - requiresApproval: { agent: Implementer, tool: tool.workspace.write_file }
    - requiresApproval: { agent: Implementer, tool: tool.workspace.run_tests }
    - requiresApproval: { agent: Reviewer, tool: tool.workspace.write_file }
`,
    );
    const run = await runTerfyn(["test", "--project", "."], dir);
    expect(run.code).toBe(1);
    const more = run.stdout.split("\n").filter((l) => l.includes(" more: "));
    expect(more.map((l) => l.slice(0, 4))).toEqual([
      "FAIL",
      "PASS",
      "FAIL",
      "FAIL",
      "FAIL",
      "PASS",
      "FAIL",
      "FAIL",
    ]);
    expect(more[0]).toContain(
      "reaches workspace.write only gated (through tool.workspace.write_file), not autonomous",
    );
    expect(more[2]).toContain("Agent/Reviewer holds no grant that reaches network.egress");
    expect(more[3]).toContain(
      "may run up to 3 iterations (its largest loop has limit 3) at main.agent:",
    );
    expect(more[4]).toContain(
      "not expected: workspace.write; expected but unreachable: network.egress",
    );
    expect(more[6]).toContain("grant tool.workspace.run_tests is autonomous");
    expect(more[7]).toContain("Agent/Reviewer holds no grant tool.workspace.write_file");
  });

  it("an assertion naming an agent that does not exist is an error (TF3011), not a failure", async () => {
    const dir = copyExample();
    write(
      dir,
      "tests/more.yaml",
      "apiVersion: terfyn.dev/v1\nkind: CapabilityTest\nmetadata: { name: more }\nspec:\n  assertions:\n    - forbidEffect: { agent: Ghost, effect: workspace.write }\n",
    );
    const run = await runTerfyn(["test", "--project", "."], dir);
    expect(run.code).toBe(1);
    expect(`${run.stdout}${run.stderr}`).toMatch(
      /TF3011[\s\S]*CapabilityTest\/more names agent `Ghost`, which is not declared/,
    );
    // The project does not validate: a renamed or misspelt agent cannot slip past a guard.
    const validate = await runTerfyn(["validate", "--project", "."], dir);
    expect(validate.code).toBe(1);
    expect(`${validate.stdout}${validate.stderr}`).toMatch(/error.*TF3011|TF3011.*error/i);
  });

  it("says so when a project has no capability tests", async () => {
    const dir = copyExample();
    write(dir, "tests/capabilities.yaml", "# none yet\n");
    const run = await runTerfyn(["test", "--project", "."], dir);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      ".: no capability tests (add a CapabilityTest document, e.g. tests/capabilities.yaml)\n0 passed, 0 failed\n",
    );
  });
});
