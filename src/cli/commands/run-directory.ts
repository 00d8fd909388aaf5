/**
 * What `terfyn run`, `terfyn review` and `terfyn approve` do to a run directory before working
 * on it: refuse one inside a directory an agent can write, take its lock (printing a takeover),
 * and refuse a fresh run into a directory that already holds something. The decisions are in
 * src/core/runs; the files in src/adapters/fs.
 */
import { readdirSync } from "node:fs";
import { relative } from "node:path";
import { realPathOf } from "../../adapters/fs/real-path.ts";
import { FileRunLock, LOCK_NAME } from "../../adapters/fs/run-lock.ts";
import { placementProblem } from "../../core/runs/placement.ts";
import { type HeldRunLock, takeoverMessage } from "../../core/runs/run-lock.ts";
import { type CliIo, UserError } from "../io.ts";

export const shownPath = (io: CliIo, dir: string) => relative(io.cwd, dir) || dir;

/** Takes the run directory's lock for `command`; a second process gets a RunLockHeldError. */
export function takeRunLock(io: CliIo, dir: string, command: string): HeldRunLock {
  const lock = new FileRunLock(
    undefined,
    () => io.now?.() ?? new Date(),
    (d) => shownPath(io, d),
  ).acquire(dir, command);
  if (lock.tookOver) io.stderr(`terfyn: ${takeoverMessage(shownPath(io, dir), lock.tookOver)}\n`);
  return lock;
}

/** Refuses a run directory that is, or is inside, one of `guarded` (compared as real paths). */
export function refuseMisplacedRunDir(
  io: CliIo,
  dir: string,
  guarded: { label: string; path: string }[],
  flag: string,
): void {
  const problem = placementProblem(
    shownPath(io, dir),
    realPathOf(dir),
    guarded.map((g) => ({ label: g.label, real: realPathOf(g.path) })),
    flag,
  );
  if (problem !== undefined) throw new UserError(problem);
}

/** Refuses a fresh run into a directory that holds anything but its own lock. */
export function refuseUsedRunDir(io: CliIo, dir: string, resumeHint: string): void {
  const entries = readdirSync(dir).filter((n) => !n.startsWith(LOCK_NAME));
  if (entries.length === 0) return;
  const shown = shownPath(io, dir);
  const listed = entries.sort().slice(0, 3).join(", ") + (entries.length > 3 ? ", …" : "");
  throw new UserError(
    entries.includes("state.json") || entries.includes("journal.jsonl")
      ? `${shown} already holds a run; continue it with ${resumeHint} ${shown}, or choose another --run-dir`
      : `${shown} is not empty (it holds ${listed}); a new run needs a new or empty --run-dir: choose another`,
  );
}
