import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { basename } from "node:path";
import { describe, expect, it } from "vitest";

describe("the tests' temporary directories", () => {
  it("are below one directory of this run, for the tests and the processes they start", () => {
    expect(basename(tmpdir())).toMatch(/^terfyn-tests-/);
    const child = spawnSync(process.execPath, ["-p", "require('node:os').tmpdir()"], {
      encoding: "utf8",
    });
    expect(child.stdout.trim()).toBe(tmpdir());
  });
});
