/**
 * The digests of the files a project's command tools run, as they are at a git revision (see
 * src/core/plan/programs.ts): read from git objects by the ids `ls-tree -z` printed, never by
 * `rev:path` text, with the same digest the file-system reader gives, so a plan of a checkout
 * against a revision compares like with like.
 */
import { type ProgramDigests, programDigest, symlinkDigest } from "../../core/plan/programs.ts";
import { catBlobs, listTree, locateProject, resolveTree } from "./read-revision.ts";

/** `paths` relative to the project at `prefix` ("" or "." for the root) in `revision`. */
export async function revisionProgramDigests(
  repoRoot: string,
  prefix: string,
  revision: string,
  paths: readonly string[],
): Promise<ProgramDigests> {
  const out = new Map<string, string>();
  if (paths.length === 0) return out;
  const clean = prefix === "." ? "" : prefix.replace(/\/+$/, "");
  const strip = clean === "" ? "" : `${clean}/`;
  const { tree } = await resolveTree(repoRoot, revision);
  const wanted = new Set(paths);
  const found = (await listTree(repoRoot, tree, clean === "" ? undefined : clean))
    .map((e) => ({ ...e, rel: e.path.slice(strip.length) }))
    .filter((e) => e.path.startsWith(strip) && wanted.has(e.rel) && e.type === "blob");
  const blobs = await catBlobs(
    repoRoot,
    found.map((e) => e.oid),
  );
  for (const e of found) {
    const bytes = blobs.get(e.oid);
    if (bytes === undefined) continue;
    out.set(
      e.rel,
      e.mode === "120000" ? symlinkDigest(bytes.toString("utf8")) : programDigest(bytes),
    );
  }
  return out;
}

/** The same, for the project directory `projectDir` (the CLI's `--against`). */
export async function projectProgramDigestsAt(
  projectDir: string,
  revision: string,
  paths: readonly string[],
): Promise<ProgramDigests> {
  if (paths.length === 0) return new Map();
  const { top, prefix } = await locateProject(projectDir);
  return revisionProgramDigests(top, prefix, revision, paths);
}
