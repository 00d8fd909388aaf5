/**
 * Reads and writes the state file. Writes are atomic (write-file-atomic: temp file, fsync,
 * rename), so a crash mid-apply leaves the previous state intact, never half a file.
 */
import { mkdir, readFile } from "node:fs/promises";
import { dirname } from "node:path";
import writeFileAtomic from "write-file-atomic";
import { parseStateFile, type StateFile } from "../../core/plan/state.ts";
import { directorySync } from "./fsync-dir.ts";

export class StateFileError extends Error {}

/** The state at `path`, or undefined when there is none yet. */
export async function readStateFile(path: string): Promise<StateFile | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new StateFileError(`cannot read state file ${path}: ${(e as Error).message}`);
  }
  return stateFromText(text, path);
}

/** A state file's text as the state (`where` names it in the error: a path, or standard input). */
export function stateFromText(text: string, where: string): StateFile {
  const parsed = parseStateFile(text);
  if (!parsed.ok) {
    throw new StateFileError(
      `state file ${where} is ${parsed.error}; restore it from version control, or delete it to plan from scratch`,
    );
  }
  return parsed.state;
}

export async function writeStateFile(path: string, state: StateFile): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFileAtomic(path, `${JSON.stringify(state, null, 2)}\n`, { fsync: true });
  // The rename into place is durable once the directory holding the file is fsync'd.
  directorySync.fsync(dirname(path));
}
