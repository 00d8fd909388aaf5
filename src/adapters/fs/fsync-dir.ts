/**
 * fsync of a directory: what makes a file's creation or a rename into the directory durable.
 * fsync on the file makes its bytes durable, not the directory entry naming it; after a power
 * loss a new journal.jsonl, or a state.json renamed into place, can otherwise be missing or be
 * the old one. Opening a directory read-only and fsyncing it is how POSIX does it; platforms
 * that refuse (Windows: EISDIR or EPERM; some file systems: EINVAL or ENOTSUP) have no such
 * step to take, so those are skipped, and any other error is thrown.
 */
import { closeSync, fsyncSync, openSync } from "node:fs";

const UNSUPPORTED = new Set(["EISDIR", "EPERM", "EINVAL", "ENOTSUP", "EBADF", "EACCES"]);

export type DirectorySyncResult = "synced" | "unsupported";

function fsyncDirectory(dir: string): DirectorySyncResult {
  let fd: number;
  try {
    fd = openSync(dir, "r");
  } catch (e) {
    if (UNSUPPORTED.has((e as NodeJS.ErrnoException).code ?? "")) return "unsupported";
    throw e;
  }
  try {
    fsyncSync(fd);
    return "synced";
  } catch (e) {
    if (UNSUPPORTED.has((e as NodeJS.ErrnoException).code ?? "")) return "unsupported";
    throw e;
  } finally {
    closeSync(fd);
  }
}

/** An object, not a bare function, so tests can spy on every call the stores make. */
export const directorySync = { fsync: fsyncDirectory };
