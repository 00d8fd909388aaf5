/**
 * The digests of the files a project's command tools run, read from the project directory (see
 * src/core/plan/programs.ts). A symbolic link is never followed: its digest is its target, as
 * git records it, so a link that moves is a change too.
 */
import { lstat, readFile, readlink } from "node:fs/promises";
import { join } from "node:path";
import { type ProgramDigests, programDigest, symlinkDigest } from "../../core/plan/programs.ts";

export async function projectProgramDigests(
  root: string,
  paths: readonly string[],
): Promise<ProgramDigests> {
  const out = new Map<string, string>();
  for (const rel of paths) {
    const abs = join(root, rel);
    let st: Awaited<ReturnType<typeof lstat>>;
    try {
      st = await lstat(abs);
    } catch {
      continue; // not a file of the project: a program found on PATH, or an argument
    }
    if (st.isSymbolicLink()) out.set(rel, symlinkDigest(await readlink(abs)));
    else if (st.isFile()) out.set(rel, programDigest(await readFile(abs)));
  }
  return out;
}
