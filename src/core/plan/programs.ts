/**
 * The repository files a command tool runs: an argv element such as `scripts/fmt.mjs` or
 * `./deploy.sh` names a file whose bytes decide what the operation does as much as the argv
 * itself. The plan binds each one's content hash (`spec.programs` of the Tool), so rewriting
 * the program after an approval is a change of reach, and a widening. Pure: the readers (the
 * file system, git at a revision) supply the digests of the paths asked for.
 */
import { createHash } from "node:crypto";
import { posix } from "node:path";
import type { ResolvedProject } from "../model/project.ts";

/** Project-relative path → `sha256:<hex>` of its bytes (`symlink:<target>` for a link). */
export type ProgramDigests = ReadonlyMap<string, string>;

/**
 * The argv elements of the project's command operations that could name a file inside the
 * project, normalized (`./x` → `x`): not an option, not absolute, not a URL, not leaving the
 * project. Whether each exists is the reader's question; only those that do get a digest.
 */
export function programPaths(project: ResolvedProject): string[] {
  const out = new Set<string>();
  for (const tool of project.tools.values()) {
    if (tool.adapter !== "command") continue;
    for (const op of tool.operations.values()) {
      if (op.reach?.kind !== "command") continue;
      for (const arg of op.reach.argv) {
        const p = programPath(arg);
        if (p !== undefined) out.add(p);
      }
    }
  }
  return [...out].sort();
}

/** The project-relative file an argv element names, if it can name one. */
export function programPath(arg: string): string | undefined {
  if (arg === "" || arg.startsWith("-") || arg.startsWith("/") || arg.includes("\0"))
    return undefined;
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(arg)) return undefined; // a URL or `key:value`
  const p = posix.normalize(arg);
  if (p === "." || p === ".." || p.startsWith("../") || p.endsWith("/")) return undefined;
  return p;
}

/** The digest of a program file's bytes. */
export function programDigest(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/** The digest of a symbolic link: its target, never what it points at. */
export function symlinkDigest(target: string): string {
  return `symlink:${target}`;
}
