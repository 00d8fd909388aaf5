/**
 * Hover on an agent or a grant (the language server's, from src/core/language/hover.ts): the
 * agent's effect bound and each policy rule that bears on it, escaped as Markdown.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readProjectDirectory } from "../src/adapters/fs/read-project.ts";
import { hoverAt } from "../src/core/language/hover.ts";
import { validateProject } from "../src/core/validate.ts";

const EXAMPLE = join(import.meta.dirname, "..", "examples", "implement-review-loop");

/** The 1-based line and column of the first `needle` in the example's main.agent. */
function at(text: string, needle: string, from = 0): [number, number] {
  const i = text.indexOf(needle, from);
  if (i < 0) throw new Error(`${needle} not found`);
  const before = text.slice(0, i).split("\n");
  return [before.length, (before.at(-1)?.length ?? 0) + 1];
}

describe("hover", async () => {
  const read = await readProjectDirectory(EXAMPLE);
  const result = validateProject(read.files);
  const text = readFileSync(join(EXAMPLE, "main.agent"), "utf8");

  it("on an agent's name: its bound, and the policies that bear on it (a forbid naming it, whatever it reaches)", () => {
    const [line, column] = at(text, "Reviewer {");
    const md = hoverAt(result, "main.agent", line, column + 2) ?? "";
    expect(md).toContain("`Agent/Reviewer` · model `mock/gpt-4`");
    expect(md).toContain("| `process.exec` | autonomous | `tool.workspace.run_tests` |");
    expect(md).not.toContain("workspace.write` |");
    expect(md).toContain(
      '`Policy/no-reviewer-writes`: `{"forbid":{"agent":"Reviewer","effect":"workspace.write"}}` at `policies.yaml:9`',
    );
    expect(md).toContain(
      '`Policy/bounded-autonomy`: `{"risk":{"effect":"process.exec","level":"high"}}`',
    );
    expect(md).not.toContain("requireApproval");
  });

  it("on a grant: its mode, what it reaches, and the rules its effects meet", () => {
    const [line, column] = at(text, "tool.workspace.write_file");
    const md = hoverAt(result, "main.agent", line, column + 5) ?? "";
    expect(md).toContain("`tool.workspace.write_file` · autonomous · held by `Agent/Implementer`");
    expect(md).toContain("| `workspace.write` | autonomous | `tool.workspace.write_file` |");
    expect(md).not.toContain("process.exec");
    expect(md).not.toContain("Policy/");
  });

  it("nothing inside an agent's body that is not a grant, nor outside any agent", () => {
    const [line] = at(text, "input CodingState");
    expect(hoverAt(result, "main.agent", line, 3)).toBeUndefined();
    expect(hoverAt(result, "main.agent", 1, 1)).toBeUndefined();
    expect(hoverAt(result, "other.agent", 1, 1)).toBeUndefined();
  });
});
