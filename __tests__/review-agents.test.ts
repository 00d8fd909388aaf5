/**
 * The review-response agents shipped with Terfyn (agents/review-response): the deciding and
 * planning agents cannot write, and no agent holds a publishing operation; granting one fails
 * validate and test at the grant's line.
 */
import { cpSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runTerfyn } from "./helpers/cli.ts";
import { grant } from "./helpers/example-project.ts";

const PROJECT = join(import.meta.dirname, "..", "agents", "review-response");

describe("review-response agents", () => {
  it("validate and pass their capability tests", async () => {
    expect((await runTerfyn(["validate", "--project", PROJECT], PROJECT)).code).toBe(0);
    const t = await runTerfyn(["test", "--project", PROJECT], PROJECT);
    expect(t.code).toBe(0);
    expect(t.stdout.trimEnd().split("\n").at(-1)).toBe("12 passed, 0 failed");
  });

  it("a publishing grant to any agent fails validate (policy) and test (capability) at its line", async () => {
    const dir = mkdtempSync(join(tmpdir(), "terfyn-review-agents-"));
    cpSync(PROJECT, dir, { recursive: true });
    grant(dir, "Builder", "tool.publisher.push");
    const v = await runTerfyn(["validate", "--project", "."], dir);
    expect(v.code).toBe(1);
    expect(v.stdout).toMatch(
      /main\.agent:\d+:5: error TF5006: Policy\/publishing-is-not-an-agent-decision forbids `repo\.push` for every agent/,
    );
    const t = await runTerfyn(["test", "--project", "."], dir);
    expect(t.code).toBe(1);
    expect(t.stdout).toContain(
      "FAIL review-response: forbidEffect { agent: Builder, effect: repo.push }: Agent/Builder reaches repo.push through tool.publisher.push (autonomous) at main.agent:",
    );
  });

  it("a write grant to the Decider fails too", async () => {
    const dir = mkdtempSync(join(tmpdir(), "terfyn-review-agents-"));
    cpSync(PROJECT, dir, { recursive: true });
    grant(dir, "Decider", "tool.workspace.write_file");
    expect((await runTerfyn(["test", "--project", "."], dir)).stdout).toContain(
      "FAIL review-response: forbidEffect { agent: Decider, effect: workspace.write }",
    );
  });

  it("the standards reviewer judges and cannot change what it judges: a write grant fails validate (policy) and test", async () => {
    const dir = mkdtempSync(join(tmpdir(), "terfyn-review-agents-"));
    cpSync(PROJECT, dir, { recursive: true });
    grant(dir, "StandardsReviewer", "tool.workspace.write_file");
    const v = await runTerfyn(["validate", "--project", "."], dir);
    expect(v.code).toBe(1);
    expect(v.stdout).toMatch(
      /main\.agent:\d+:5: error TF5006: Policy\/judges-do-not-write forbids `workspace\.write` for Agent\/StandardsReviewer/,
    );
    expect((await runTerfyn(["test", "--project", "."], dir)).stdout).toContain(
      "FAIL review-response: forbidEffect { agent: StandardsReviewer, effect: workspace.write }",
    );
  });
});
