/**
 * A review run's copy of its validated agents (`agents-project.json` in the run directory):
 * the runtime part of the review-response project (core/engine/runtime-project.ts), under a key
 * that is the sha256 of every file the project was read from (each path and its text) and of
 * the build that validated them. `terfyn review --resume` and `--stop` read the project's
 * files, compute the key and use the copy when the key matches, instead of validating the
 * project again (the cold parse, name binding and checks were most of the CPU a resume spent
 * before its first child process). A key that differs, a file that is missing, too large, a
 * link, a FIFO, not JSON or not exactly the expected shape: the project is validated from its
 * files as before, and the copy written again. The copy is run-directory data, so it is
 * decoded as hostile input. Its key is no signature: whoever can write the run directory
 * can write a copy under the right key, as they can write the run's approvals and state.
 */
import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import writeFileAtomic from "write-file-atomic";
import {
  decodeRuntimeProject,
  encodeRuntimeProject,
  type RuntimeProject,
} from "../../core/engine/runtime-project.ts";
import type { ProjectFile } from "../../core/model/resolve-project.ts";

export const AGENTS_CACHE_FILE = "agents-project.json";

/** Bumped whenever what is kept, or how it is derived from the files, changes. */
const FORMAT = 1;

/** Larger than any copy of the shipped agents; a larger file is not read. */
const MAX_BYTES = 4 * 1024 * 1024;

/**
 * The key of a project's copy: every file's path and text (length-prefixed, so no two file
 * lists share a key), and `build`, what identifies the code that validates them.
 */
export function agentsCacheKey(files: readonly ProjectFile[], build: string): string {
  const h = createHash("sha256");
  const part = (s: string) => h.update(`${Buffer.byteLength(s)}:`).update(s);
  part(`terfyn-agents-cache/${FORMAT}`);
  part(build);
  part(String(files.length));
  for (const f of files) {
    part(f.path);
    part(f.text);
  }
  return `sha256:${h.digest("hex")}`;
}

/** The run's copy when it is there, well-formed and under `key`; otherwise undefined. */
export async function readAgentsCache(
  runDir: string,
  key: string,
): Promise<RuntimeProject | undefined> {
  let text: string;
  try {
    // Never through a link, and never waiting on a FIFO (which reads as empty here).
    const fh = await open(
      join(runDir, AGENTS_CACHE_FILE),
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
    try {
      if ((await fh.stat()).size > MAX_BYTES) return undefined;
      text = await fh.readFile("utf8");
    } finally {
      await fh.close();
    }
  } catch {
    return undefined;
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined;
  const { format, key: saved, project, ...rest } = data as Record<string, unknown>;
  if (format !== FORMAT || saved !== key || Object.keys(rest).length > 0) return undefined;
  return decodeRuntimeProject(project);
}

/**
 * Writes the copy atomically (a reader sees the old file or the new one). Not fsynced: a copy
 * lost in a crash is only validated again.
 */
export async function writeAgentsCache(
  runDir: string,
  key: string,
  project: RuntimeProject,
): Promise<void> {
  const text = `${JSON.stringify({ format: FORMAT, key, project: encodeRuntimeProject(project) })}\n`;
  // Best effort: without a copy, the next resume validates the agents from their files.
  await writeFileAtomic(join(runDir, AGENTS_CACHE_FILE), text, { fsync: false }).catch(() => {});
}
