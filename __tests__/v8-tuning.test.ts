import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generateSyntheticProject } from "../bench/synthetic-project.ts";
import { SHORT_RUN_V8_FLAGS, shortRunTuning, tuneV8ForShortRuns } from "../src/cli/v8-tuning.ts";

const ROOT = join(import.meta.dirname, "..");
const work = mkdtempSync(join(tmpdir(), "terfyn-v8-tuning-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("the CLI's V8 settings for short runs", () => {
  it("apply on the V8 versions they were measured on (Node 20 to 24)", () => {
    for (const v of ["11.3.244.8-node.33", "12.4.254.21-node.33", "13.6.233.10-node.18"]) {
      const set: string[] = [];
      expect(tuneV8ForShortRuns(v, {}, (f) => set.push(f))).toBe(true);
      expect(set).toEqual([SHORT_RUN_V8_FLAGS]);
    }
  });

  it("leave other V8 versions alone: an unknown flag would print an error on stderr", () => {
    for (const v of ["10.2.154.26-node.26", "14.1.0", "", "x.y"]) {
      const set: string[] = [];
      expect(tuneV8ForShortRuns(v, {}, (f) => set.push(f))).toBe(false);
      expect(set).toEqual([]);
    }
  });

  it("are left off with TERFYN_V8_DEFAULTS=1", () => {
    expect(shortRunTuning("11.3.244.8", { TERFYN_V8_DEFAULTS: "1" })).toBe(false);
    expect(shortRunTuning("11.3.244.8", { TERFYN_V8_DEFAULTS: "0" })).toBe(true);
  });

  it("are a flag this Node's V8 knows: the bundled CLI writes nothing on stderr", () => {
    const r = spawnSync(process.execPath, [join(ROOT, "dist", "cli.js"), "--version"], {
      encoding: "utf8",
    });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe("");
    // The flag itself, set the same way in a bare process, is accepted silently.
    const bare = spawnSync(
      process.execPath,
      ["-e", `require("node:v8").setFlagsFromString(${JSON.stringify(SHORT_RUN_V8_FLAGS)})`],
      { encoding: "utf8" },
    );
    expect(bare.stderr).toBe("");
  });

  it("are in force in the bundled CLI: TurboFan inlines nothing there, and does with the defaults", () => {
    const { files } = generateSyntheticProject({
      seed: 7,
      agents: 400,
      tools: 20,
      operationsPerTool: 10,
      grantsPerAgent: 5,
      workflows: 40,
      agentFiles: 4,
      toolFiles: 2,
    });
    const dir = join(work, "p");
    for (const f of files) {
      mkdirSync(dirname(join(dir, f.path)), { recursive: true });
      writeFileSync(join(dir, f.path), f.text);
    }
    const inlined = (env: Record<string, string>) => {
      const r = spawnSync(
        process.execPath,
        ["--trace-turbo-inlining", join(ROOT, "dist", "cli.js"), "validate", "--project", dir],
        { encoding: "utf8", env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 },
      );
      expect(r.status).toBe(0);
      return r.stdout.split("\n").filter((l) => l.startsWith("Inlining ")).length;
    };
    expect(inlined({ TERFYN_V8_DEFAULTS: "1" })).toBeGreaterThan(0);
    expect(inlined({ TERFYN_V8_DEFAULTS: "0" })).toBe(0);
  });
});
