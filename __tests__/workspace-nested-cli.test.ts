/**
 * write_file into new nested directories, through `terfyn run` on real temp directories: the
 * parents are created inside the root, and a parent that is a symlink to outside the root is
 * refused by the sandbox (the progress line says so) with nothing created outside.
 */
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runTerfyn } from "./helpers/cli.ts";
import { exampleRunArgs } from "./helpers/example-project.ts";

const EXAMPLE = join(import.meta.dirname, "..", "examples", "implement-review-loop");
const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

describe("terfyn run: write_file into new nested directories", () => {
  it("creates the parents inside the root and refuses a symlinked parent leading out", async () => {
    const base = mkdtempSync(join(tmpdir(), "terfyn-nested-"));
    made.push(base);
    const dir = join(base, "p");
    cpSync(EXAMPLE, dir, { recursive: true });
    rmSync(join(dir, ".terfyn"), { recursive: true, force: true });
    const ws = join(base, "ws");
    const outside = join(base, "outside");
    mkdirSync(ws);
    mkdirSync(outside);
    symlinkSync(outside, join(ws, "out"));
    writeFileSync(
      join(dir, "fixtures", "model-script.yaml"),
      `agents:
  Implementer:
    - toolCalls:
        - { tool: tool.workspace.write_file, input: { path: src/deep/new/add.go, content: "a + b" } }
        - { tool: tool.workspace.write_file, input: { path: out/new/pwned.txt, content: "x" } }
    - output: { task: t, approved: false, feedback: f }
  Reviewer:
    - output: { task: t, approved: true, feedback: ok }
`,
    );
    const r = await runTerfyn(exampleRunArgs(dir, join(base, "run")), dir, {
      TERFYN_WORKSPACE_ROOT: ws,
      TERFYN_WORKSPACE_TEST_COMMAND: "true",
    });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(ws, "src", "deep", "new", "add.go"), "utf8")).toBe("a + b");
    expect(r.stderr).toContain(
      "Implementer -> tool.workspace.write_file: wrote src/deep/new/add.go (5 bytes)",
    );
    expect(r.stderr).toContain(
      "Implementer -> tool.workspace.write_file: refused by the sandbox: out/new/pwned.txt: out is not a directory inside the workspace root",
    );
    expect(readdirSync(outside)).toEqual([]);
  });
});
