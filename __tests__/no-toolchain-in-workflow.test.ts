/**
 * Seed 003, principle 19: "The workflow knows the procedure; the repository knows itself."
 * Nothing language- or toolchain-specific is written into Terfyn's code (src/) or its shipped
 * agents (agents/): test runners, package managers and build tools are the repository's facts
 * (its AGENTS.md), never the workflow's. Every hit is a portability bug, except the few lines
 * named below, each with its reason.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..");

/** Test runners, package managers, build tools and their entry points. */
const TOOLCHAIN_TOKENS =
  /\b(pytest|unittest|nose2|npm|npx|yarn|pnpm|pip3?|pipenv|poetry|cargo|jest|mocha|vitest|rspec|gradle|mvn|tox|bundler|composer|dotnet|gofmt|eslint|prettier|ruff|mypy|tsc)\b|\bgo (test|build|vet|run)\b|node --test|python3? -m/i;

/**
 * Lines allowed to name a toolchain token: `file:line text` must match exactly.
 * - src/core/config/schemas.ts: a note for Terfyn's own developers on how the JSON Schemas
 *   are regenerated; it is never a command a run executes (and that module is owned elsewhere).
 * - src/core/hosts/: the host-configuration readers quote the rules people write in Claude
 *   Code's settings (`Bash(npm run:*)`) and name the package runners whose allow rules run any
 *   program; they are data about other tools' rules, never a command Terfyn runs.
 */
const ALLOWED = new Set([
  "src/core/config/schemas.ts: * `npm run schemas` generates the published JSON Schemas under `schemas/` from them. Field names",
]);

/** Directories whose lines may name a toolchain (see above). */
const ALLOWED_DIRS = ["src/core/hosts/"];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
  );
}

function hits(): string[] {
  const out: string[] = [];
  for (const file of [...files(join(ROOT, "src")), ...files(join(ROOT, "agents"))]) {
    const rel = relative(ROOT, file);
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line) => {
        if (
          TOOLCHAIN_TOKENS.test(line) &&
          !ALLOWED.has(`${rel}:${line}`) &&
          !ALLOWED_DIRS.some((d) => rel.startsWith(d))
        )
          out.push(`${rel}: ${line.trim()}`);
      });
  }
  return out;
}

describe("no toolchain in the workflow", () => {
  it("src/ and agents/ name no test runner, package manager or build tool", () => {
    expect(hits()).toEqual([]);
  });

  it("the check finds what it looks for", () => {
    for (const s of [
      "run `pytest -k name`",
      "python3 -m unittest",
      "npm test",
      "go test ./...",
      "cargo test",
      "node --test",
      "npx jest",
    ])
      expect(TOOLCHAIN_TOKENS.test(s), s).toBe(true);
    for (const s of ['import { spawn } from "node:child_process";', "the test command", "gone"])
      expect(TOOLCHAIN_TOKENS.test(s), s).toBe(false);
  });

  it("every allowed line still exists (a stale exception is removed, not kept)", () => {
    for (const entry of ALLOWED) {
      const [file, ...rest] = entry.split(":");
      const line = rest.join(":");
      expect(readFileSync(join(ROOT, file as string), "utf8").split("\n")).toContain(line);
    }
  });
});
