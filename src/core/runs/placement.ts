/**
 * Where a run directory may be: never inside a directory an agent can write (the workspace root
 * of `terfyn run`, the repository under review of `terfyn review`), or an agent could write its
 * own approvals, cursor or journal. Pure: it compares real paths (symlinks resolved) that the fs
 * adapter (src/adapters/fs/real-path.ts) supplies; POSIX-style absolute paths.
 */

/** A directory the run directory must stay out of, and how to name it in a message. */
export interface GuardedDirectory {
  /** What it is, e.g. `the workspace root of tool workspace`. */
  label: string;
  /** Its real path. */
  real: string;
}

/** Whether `path` is `dir` or inside it; both absolute and normalized. */
export function isInsideDirectory(path: string, dir: string): boolean {
  const d = dir.endsWith("/") ? dir : `${dir}/`;
  return path === dir || path.startsWith(d);
}

/** Why the run directory (its real path) may not be used, or undefined when it may. */
export function placementProblem(
  shownRunDir: string,
  runDirReal: string,
  guarded: GuardedDirectory[],
  flag: string,
): string | undefined {
  for (const g of guarded) {
    if (isInsideDirectory(runDirReal, g.real)) {
      const same = runDirReal === g.real ? "is" : "is inside";
      return `the run directory ${shownDir(shownRunDir, runDirReal)} ${same} ${g.label} (${g.real}): an agent working there could write the run's own approvals, state or journal. Choose a ${flag} outside it`;
    }
  }
  return undefined;
}

function shownDir(shown: string, real: string): string {
  return shown === real ? shown : `${shown} (${real})`;
}
