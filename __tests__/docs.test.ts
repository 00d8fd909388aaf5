import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DIAGNOSTIC_CODES } from "../src/core/diagnostics.ts";

const repo = join(import.meta.dirname, "..");

describe("documentation", () => {
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
