/**
 * Vitest's global setup: every temporary directory the tests make goes below one directory of
 * this run, removed when the run ends. The tests make hundreds (repositories, run directories,
 * runners' files) and many were never removed: gigabytes under /tmp after a few runs. TMPDIR is
 * set before the workers start, so `os.tmpdir()` in the tests, and every process they start
 * (the CLI, git, the Action), use it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export default function setup(): () => void {
  const previous = process.env.TMPDIR;
  const root = mkdtempSync(join(tmpdir(), "terfyn-tests-"));
  process.env.TMPDIR = root;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    // `TERFYN_KEEP_TEST_TMP=1` keeps them, to look at what a failing test left.
    if (process.env.TERFYN_KEEP_TEST_TMP === "1") console.log(`test files kept in ${root}`);
    else rmSync(root, { recursive: true, force: true, maxRetries: 3 });
  };
}
