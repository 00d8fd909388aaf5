import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generateSyntheticProject, writeGeneratedFiles } from "../bench/synthetic-project.ts";
import { SHORT_RUN_V8_FLAGS, shortRunFlags, tuneV8ForShortRuns } from "../src/cli/v8-tuning.ts";

const ROOT = join(import.meta.dirname, "..");
const work = mkdtempSync(join(tmpdir(), "terfyn-v8-tuning-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const here = shortRunFlags(process.versions.v8, {});

describe("the CLI's V8 settings for short runs", () => {
  it("are set on the V8 versions they were measured on (Node 20 and 22), one flag at a time", () => {
    for (const [v, major] of [
      ["11.3.244.8-node.38", 11],
      ["12.4.254.21-node.57", 12],
    ] as const) {
      const set: string[] = [];
      expect(tuneV8ForShortRuns(v, {}, (f) => set.push(f))).toBe(SHORT_RUN_V8_FLAGS[major]);
      expect(set.length).toBeGreaterThan(1);
      expect(set.join(" ")).toBe(SHORT_RUN_V8_FLAGS[major]);
      expect(set.every((f) => /^--[a-z0-9-]+(=\d+)?$/.test(f))).toBe(true);
    }
  });

  it("leave other V8 versions alone: an unknown flag would print an error on stderr", () => {
    for (const v of [
      "13.6.233.17-node.63",
      "10.2.154.26-node.26",
      "14.1.0",
      "",
      "x.y",
      "constructor",
    ]) {
      const set: string[] = [];
      expect(tuneV8ForShortRuns(v, {}, (f) => set.push(f))).toBeUndefined();
      expect(set).toEqual([]);
    }
  });

  it("are left off with TERFYN_V8_DEFAULTS=1", () => {
    expect(shortRunFlags("11.3.244.8", { TERFYN_V8_DEFAULTS: "1" })).toBeUndefined();
    expect(shortRunFlags("11.3.244.8", { TERFYN_V8_DEFAULTS: "0" })).toBe(SHORT_RUN_V8_FLAGS[11]);
  });

  it("are flags this Node's V8 knows: the bundled CLI writes nothing on stderr", () => {
    const r = spawnSync(process.execPath, [join(ROOT, "dist", "cli.js"), "--version"], {
      encoding: "utf8",
    });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe("");
    // Each flag, set the same way in a bare process, is accepted silently (an unknown one is not).
    const setting = (flag: string) =>
      spawnSync(
        process.execPath,
        ["-e", `require("node:v8").setFlagsFromString(${JSON.stringify(flag)})`],
        { encoding: "utf8" },
      ).stderr;
    expect(setting("--no-such-v8-flag")).toContain("unrecognized flag");
    for (const flag of (here ?? "").split(" ").filter(Boolean)) expect(setting(flag)).toBe("");
  });

  it.skipIf(here === undefined)(
    "are in force in the bundled CLI: TurboFan inlines nothing there, and does with the defaults",
    () => {
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
      writeGeneratedFiles(dir, files);
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
    },
  );
});
