/**
 * Go to definition and find references (src/core/language/navigate.ts) on the example
 * project: a call to its agent, a grant's tool and operation (declared in tools.yaml), a
 * schema (schemas.yaml), and a field that names nothing.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readProjectDirectory } from "../src/adapters/fs/read-project.ts";
import type { Span } from "../src/core/diagnostics.ts";
import { definitionOf, referencesOf, symbolAt } from "../src/core/language/navigate.ts";
import { validateProject } from "../src/core/validate.ts";

const EXAMPLE = join(import.meta.dirname, "..", "examples", "implement-review-loop");

describe("go to definition and references", async () => {
  const { project } = validateProject((await readProjectDirectory(EXAMPLE)).files);
  const text = readFileSync(join(EXAMPLE, "main.agent"), "utf8");
  /** The symbol at the `nth` occurrence of `needle`, `into` characters into it. */
  const symbol = (needle: string, into = 0, nth = 1) => {
    let i = -1;
    for (let k = 0; k < nth; k++) i = text.indexOf(needle, i + 1);
    if (i < 0) throw new Error(`${needle} not found`);
    const before = text.slice(0, i + into).split("\n");
    return symbolAt(project, "main.agent", before.length, (before.at(-1)?.length ?? 0) + 1);
  };
  const where = (s: Span | undefined) => (s ? `${s.file}:${s.line}:${s.column}` : "none");
  const lineOf = (file: string, needle: string) =>
    readFileSync(join(EXAMPLE, file), "utf8")
      .split("\n")
      .findIndex((l) => l.includes(needle)) + 1;

  it("a call goes to the agent's declaration; a parameter's type to its schema", () => {
    const call = symbol("Implementer(state)", 3);
    expect(call).toEqual({ kind: "agent", name: "Implementer" });
    expect(where(call && definitionOf(project, call))).toBe(
      `main.agent:${lineOf("main.agent", "agent Implementer")}:7`,
    );
    const type = symbol("input CodingState", 8);
    expect(type).toEqual({ kind: "schema", name: "CodingState" });
    expect(definitionOf(project, type ?? { kind: "schema", name: "" })?.file).toBe("schemas.yaml");
  });

  it("a grant's tool and operation go to their YAML declaration", () => {
    const tool = symbol("tool.workspace.read_file", 6);
    expect(tool).toEqual({ kind: "tool", name: "workspace" });
    expect(definitionOf(project, tool ?? { kind: "tool", name: "" })?.file).toBe("tools.yaml");
    const op = symbol("tool.workspace.read_file", 17);
    expect(op).toEqual({ kind: "operation", tool: "workspace", name: "read_file" });
    const opAt = definitionOf(project, op ?? { kind: "tool", name: "" });
    expect(opAt?.file).toBe("tools.yaml");
    expect(opAt?.line).toBe(lineOf("tools.yaml", "read_file"));
  });

  it("references: the declaration apart, then every use; a field or a keyword names nothing", () => {
    const reviewer = symbol("agent Reviewer", 7);
    const refs = referencesOf(project, reviewer ?? { kind: "agent", name: "" });
    expect(where(refs.definition)).toBe(`main.agent:${lineOf("main.agent", "agent Reviewer")}:7`);
    expect(refs.uses.map(where)).toEqual([
      `main.agent:${lineOf("main.agent", "state = Reviewer(")}:13`,
      "policies.yaml:9:24",
      "tests/capabilities.yaml:8:30",
    ]);
    const grants = referencesOf(project, {
      kind: "operation",
      tool: "workspace",
      name: "run_tests",
    });
    expect(grants.uses).toHaveLength(2);
    expect(symbol("state.approved", 7)).toBeUndefined();
    expect(symbol("while", 1)).toBeUndefined();
  });

  it("from a YAML resource: a policy's agent, a test's workflow and grant go to the .agent file and tools.yaml", () => {
    const yamlSymbol = (file: string, needle: string, into: number) => {
      const lines = readFileSync(join(EXAMPLE, file), "utf8").split("\n");
      const line = lines.findIndex((l) => l.includes(needle));
      return symbolAt(project, file, line + 1, (lines[line]?.indexOf(needle) ?? 0) + into + 1);
    };
    const agent = yamlSymbol("policies.yaml", "agent: Reviewer", 8);
    expect(agent).toEqual({ kind: "agent", name: "Reviewer" });
    expect(where(agent && definitionOf(project, agent))).toBe(
      `main.agent:${lineOf("main.agent", "agent Reviewer")}:7`,
    );
    expect(yamlSymbol("tests/capabilities.yaml", "workflow: ImplementAndReview", 12)).toEqual({
      kind: "workflow",
      name: "ImplementAndReview",
    });
    expect(yamlSymbol("policies.yaml", "effect: workspace.write", 9)).toBeUndefined();
  });
});
