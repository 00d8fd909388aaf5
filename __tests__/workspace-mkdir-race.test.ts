/**
 * No sandbox escape by race: write_file into a new nested path creates its parents without
 * following a symlink at any step. A separate process swaps the path's directory components
 * (a, a/b, a/b/c) for symlinks to an outside directory as fast as it can while 1,000 writes
 * run; every write either lands inside the root or is refused, and the outside directory stays
 * empty throughout.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WorkspaceTool } from "../src/adapters/workspace/workspace-tool.ts";

const SWAPPER = `
const fs = require("node:fs");
const [root, out] = process.argv.slice(1);
const comps = ["a", "a/b", "a/b/c"];
let n = 0;
fs.writeFileSync(root + "/../swapper-ready", "");
for (;;) {
  const c = root + "/" + comps[n % 3];
  try { fs.renameSync(c, root + "/trash/" + n); } catch {}
  try { fs.symlinkSync(out, c); } catch {}
  for (let i = 0; i < 300; i++);
  try { if (fs.lstatSync(c).isSymbolicLink()) fs.unlinkSync(c); } catch {}
  n++;
}
`;

let swapper: ChildProcess | undefined;
let base: string | undefined;
afterEach(() => {
  swapper?.kill("SIGKILL");
  swapper = undefined;
  if (base) rmSync(base, { recursive: true, force: true });
  base = undefined;
});

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    out.push(join(dir, e.name));
    if (e.isDirectory()) out.push(...walk(join(dir, e.name)));
  }
  return out;
}

describe("write_file's parent directories under a symlink-swapping race", () => {
  it("1,000 nested writes never create anything outside the root", async () => {
    base = mkdtempSync(join(tmpdir(), "terfyn-race-"));
    const root = join(base, "root");
    const outside = join(base, "outside");
    mkdirSync(join(root, "trash"), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(base, "marker"), "");
    const ws = await WorkspaceTool.open({ root });
    swapper = spawn(process.execPath, ["-e", SWAPPER, root, outside], { stdio: "ignore" });
    const started = Date.now();
    while (!readdirSync(base).includes("swapper-ready")) {
      if (Date.now() - started > 10_000) throw new Error("the swapper did not start");
      await new Promise((r) => setTimeout(r, 10));
    }
    let written = 0;
    let refused = 0;
    for (let i = 0; i < 1000; i++) {
      const r = await ws.execute("write_file", { path: `a/b/c/d/f${i}.txt`, content: "x" });
      if (r.ok) written++;
      else refused++;
      // Checked during the race too, not only at the end.
      if (i % 100 === 0) expect(walk(outside)).toEqual([]);
    }
    swapper.kill("SIGKILL");
    expect(walk(outside)).toEqual([]);
    expect(written + refused).toBe(1000);
    // The race was real: some writes met a swapped component and were refused.
    expect(refused).toBeGreaterThan(0);
    // What was written is inside the root (under a/ or moved to trash/ by the swapper).
    expect(walk(root).filter((p) => p.endsWith(".txt")).length).toBe(written);
  }, 30_000);
});
