/**
 * Real paths for the placement check (src/core/runs/placement.ts): a path that does not exist
 * yet is its nearest existing parent's real path plus the rest, so a symlinked parent cannot
 * hide a run directory inside the workspace. Also finds a repository's git toplevel by walking
 * up to the `.git` entry (a directory, or a file in a worktree), as git does.
 */
import { existsSync, realpathSync } from "node:fs";
import { lstat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";

export function realPathOf(path: string): string {
  const abs = resolve(path);
  const rest: string[] = [];
  let p = abs;
  for (;;) {
    try {
      return join(realpathSync(p), ...rest.reverse());
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") throw e;
      const parent = dirname(p);
      if (parent === p) return abs;
      rest.push(basename(p));
      p = parent;
    }
  }
}

/** The directory holding the `.git` entry at or above `dir`, or undefined outside a repository. */
export function gitToplevel(dir: string): string | undefined {
  let p = realPathOf(dir);
  for (;;) {
    if (existsSync(join(p, ".git"))) return p;
    const parent = dirname(p);
    if (parent === p) return undefined;
    p = parent;
  }
}

/** Whether anything (a file, a directory, a link, even a dangling one) is at `path`. */
export async function entryExists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}
