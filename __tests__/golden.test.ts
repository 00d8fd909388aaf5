/**
 * Golden tests: each directory under __tests__/golden/ holds `command.json` ({ "args": [...] },
 * run with the repository root as the working directory), `expected.txt` (stdout, then a line
 * `--- stderr ---` and stderr when there is any) and `exit` (the exit code).
 * Refresh with `UPDATE_GOLDEN=1 npm test` and review the diff.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runTerfyn } from "./helpers/cli.ts";

const repo = join(import.meta.dirname, "..");
const goldenDir = join(import.meta.dirname, "golden");
const update = process.env.UPDATE_GOLDEN === "1";

const cases = readdirSync(goldenDir, { withFileTypes: true })
  .filter((e) => e.isDirectory() && existsSync(join(goldenDir, e.name, "command.json")))
  .map((e) => e.name)
  .sort();

describe("golden output", () => {
  it("has cases", () => {
    expect(cases.length).toBeGreaterThan(0);
  });
  for (const name of cases) {
    it(name, async () => {
      const dir = join(goldenDir, name);
      const { args } = JSON.parse(readFileSync(join(dir, "command.json"), "utf8")) as {
        args: string[];
      };
      const run = await runTerfyn(args, repo);
      const actual = run.stderr === "" ? run.stdout : `${run.stdout}--- stderr ---\n${run.stderr}`;
      if (update) {
        writeFileSync(join(dir, "expected.txt"), actual);
        writeFileSync(join(dir, "exit"), `${run.code}\n`);
      }
      expect(actual).toBe(readFileSync(join(dir, "expected.txt"), "utf8"));
      expect(run.code).toBe(Number(readFileSync(join(dir, "exit"), "utf8").trim()));
    });
  }
});
