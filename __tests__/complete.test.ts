/**
 * Completion (src/core/language/complete.ts) on the example project: what may be written at
 * the cursor, from the text before it.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readProjectDirectory } from "../src/adapters/fs/read-project.ts";
import { completionsAt } from "../src/core/language/complete.ts";
import { validateProject } from "../src/core/validate.ts";

const EXAMPLE = join(import.meta.dirname, "..", "examples", "implement-review-loop");

describe("completion", async () => {
  const { project } = validateProject((await readProjectDirectory(EXAMPLE)).files);
  /** Labels offered where `|` stands in `text`. */
  const at = (text: string, file = "main.agent") =>
    completionsAt(project, file, text.replace("|", ""), text.indexOf("|")).map((c) => c.label);

  it("in an .agent file: declarations, items, grants, operations, schemas, effects, calls", () => {
    expect(at("agent A {}\n|")).toEqual(["defaults", "provider", "tool", "agent", "workflow"]);
    expect(at("agent A {\n  inp|")).toContain("input");
    expect(at("agent A {\n  grants {\n    |")).toContain("tool.workspace.write_file");
    expect(at("agent A {\n  grants {\n    tool.|")).toEqual(["workspace"]);
    expect(at("agent A {\n  grants {\n    tool.workspace.|")).toEqual(
      expect.arrayContaining(["read_file", "write_file", "run_tests"]),
    );
    expect(at("agent A {\n  input |")).toEqual(["CodingState"]);
    expect(at("workflow W(input: CodingState) -> |")).toEqual(["CodingState"]);
    expect(
      at("workflow W(input: CodingState) -> CodingState\neffects { workspace.read, |"),
    ).toEqual(expect.arrayContaining(["workspace.read", "workspace.write", "process.exec"]));
    const body = at(
      "workflow W(input: CodingState) -> CodingState\neffects { workspace.read }\n{\n  x = |",
    );
    expect(body).toEqual(expect.arrayContaining(["Implementer", "Reviewer", "ImplementAndReview"]));
    expect(body).not.toContain("while");
    expect(
      at("workflow W(input: CodingState) -> CodingState\neffects { workspace.read }\n{\n  |"),
    ).toContain("while");
    // A brace in a string or a comment does not open a block.
    expect(at('agent A {\n  instructions "{"\n  // {\n}\n|')).toContain("agent");
    // Nothing inside a field access.
    expect(at("workflow W(input: CodingState) -> CodingState\n{\n  x = state.|")).toEqual([]);
  });

  it("in a YAML resource: kinds, effects, agents, grants", () => {
    expect(at("kind: |", "p.yaml")).toEqual([
      "Project",
      "Tool",
      "Schema",
      "Policy",
      "CapabilityTest",
    ]);
    expect(at("    - forbid: { agent: Reviewer, effect: |", "p.yaml")).toContain("workspace.write");
    expect(at("    - forbid: { agent: |", "p.yaml")).toEqual(["Implementer", "Reviewer"]);
    expect(at("    - forbid: { holding: |", "p.yaml")).toContain("tool.workspace.run_tests");
  });
});
