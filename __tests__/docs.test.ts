import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { DIAGNOSTIC_CODES } from "../src/core/diagnostics.ts";

const repo = join(import.meta.dirname, "..");

/** The YAML blocks of a Markdown file that start with `first` (a comment line). */
function yamlBlocks(file: string, first: string): unknown[] {
  const text = readFileSync(join(repo, file), "utf8");
  return [...text.matchAll(/```yaml\n([\s\S]*?)```/g)]
    .map((m) => m[1] ?? "")
    .filter((b) => b.startsWith(first))
    .map((b) => parse(b));
}

describe("documentation", () => {
  it("README and docs/github-action.md tell one story: the same workflow and judge", () => {
    const readme = yamlBlocks("README.md", "# .github/workflows/terfyn.yml");
    const docs = yamlBlocks("docs/github-action.md", "# .github/workflows/terfyn.yml");
    expect(readme).toHaveLength(1);
    expect(docs).toHaveLength(1);
    expect(readme[0]).toEqual(docs[0]);
    // biome-ignore lint/suspicious/noExplicitAny: a parsed workflow
    const wf = docs[0] as any;
    expect(wf.on.pull_request.types).toContain("edited");
    expect(wf.on.issue_comment.types).toEqual(["created"]);
    expect(wf.permissions).toEqual({});
    expect(wf.concurrency.group).toBeTruthy();
    const judge = (f: string) =>
      yamlBlocks(f, "# .github/terfyn.yml on the base branch: who may approve, and what fails");
    expect(judge("README.md")).toHaveLength(1);
    expect(judge("README.md")).toEqual(judge("docs/github-action.md"));
    for (const file of ["README.md", "docs/github-action.md", "docs/github-app-placement.md"]) {
      const text = readFileSync(join(repo, file), "utf8");
      for (const m of text.matchAll(/actions\/checkout@(v\d+)/g)) expect(m[1], file).toBe("v6");
      expect(text, file).not.toMatch(/fetch-depth: 0 *\}?\n/);
    }
  });

  it("documents every diagnostic code with its severity", () => {
    const doc = readFileSync(join(repo, "docs", "diagnostics.md"), "utf8");
    for (const [code, { severity }] of Object.entries(DIAGNOSTIC_CODES)) {
      expect(doc, code).toMatch(new RegExp(`\\| ${code} \\| ${severity} \\|`));
    }
  });

  it("README has exactly two set-up commands, and CI runs the same test command", () => {
    const readme = readFileSync(join(repo, "README.md"), "utf8");
    const setup = readme.slice(
      readme.indexOf("## Set up"),
      readme.indexOf("\n## ", readme.indexOf("## Set up") + 1),
    );
    const blocks = [...setup.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]?.trim());
    expect(blocks).toEqual([
      "npm ci && npx terfyn plan --project examples/implement-review-loop",
      "npm test",
    ]);
    const ci = readFileSync(join(repo, ".ci", "run"), "utf8");
    expect(ci).toMatch(/^npm ci\b/m);
    expect(ci).toMatch(/^npm test$/m);
  });

  it("shipped text never points to files outside the repository (seeds, shared design notes)", () => {
    // git grep exits 1 when nothing matches, which is the pass.
    const r = spawnSync(
      "git",
      [
        "grep",
        "-n",
        "-I",
        "-E",
        "seed 00[0-9]|DESIGN\\.md|\\.\\./shared",
        "--",
        "README.md",
        "docs",
        "src",
        "agents",
        "examples",
        "bench",
        "scripts",
        "action.yml",
        "app.yml",
      ],
      { cwd: repo, encoding: "utf8" },
    );
    expect(r.stdout).toBe("");
    expect(r.status).toBe(1);
  });
});
