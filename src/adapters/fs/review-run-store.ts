/**
 * A review run's directory on disk: named artifacts (written atomically), `state.json` with
 * the phase cursor (atomic), and the append-only `approvals.jsonl`. Artifact writes refuse the
 * reserved names, so no phase, and no agent behind one, can write an approval or the cursor.
 * `TERFYN_TEST_KILL_AFTER_ARTIFACT=NAME` makes the process SIGKILL itself right after writing
 * NAME: the crash tests stop a real run between phases with it.
 */

import { mkdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import writeFileAtomic from "write-file-atomic";
import {
  type ApprovalEntry,
  approvalEntryProblems,
  RESERVED_NAMES,
} from "../../core/review/gates.ts";
import type { ReviewRunState, RunFiles } from "../../core/review/orchestrator.ts";
import { appendJsonLine, readJsonLineEntries } from "./json-lines.ts";
import { RunDirectoryError } from "./run-directory-error.ts";

/** A run directory that cannot be used as it is: shown as a user error, never an internal one. */
export class ReviewRunDirectoryError extends RunDirectoryError {}

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export class ReviewRunStore implements RunFiles {
  /** Checked before every write: throws when this process no longer holds the run's lock. */
  guard: () => void = () => {};

  private constructor(
    readonly dir: string,
    /** Crash tests: SIGKILL this process right after this artifact is durable. */
    private readonly killAfter?: string,
  ) {}

  static async open(
    dir: string,
    env: Record<string, string | undefined> = {},
  ): Promise<ReviewRunStore> {
    await mkdir(dir, { recursive: true });
    return new ReviewRunStore(dir, env.TERFYN_TEST_KILL_AFTER_ARTIFACT);
  }

  private path(name: string): string {
    if (!SAFE_NAME.test(name))
      throw new ReviewRunDirectoryError(
        `artifact name ${JSON.stringify(name)} is not a plain file name`,
      );
    return join(this.dir, name);
  }

  async read(name: string): Promise<string | undefined> {
    try {
      return await readFile(this.path(name), "utf8");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw e;
    }
  }

  async write(name: string, text: string): Promise<void> {
    if ((RESERVED_NAMES as readonly string[]).includes(name)) {
      throw new ReviewRunDirectoryError(
        `${name} is written only by the orchestrator's own adapters, never as an artifact`,
      );
    }
    this.guard();
    await writeFileAtomic(this.path(name), text, { fsync: true });
    if (this.killAfter === name) process.kill(process.pid, "SIGKILL");
  }

  async size(name: string): Promise<number | undefined> {
    try {
      return (await stat(this.path(name))).size;
    } catch {
      return undefined;
    }
  }

  async readState(): Promise<ReviewRunState | undefined> {
    const text = await this.readReserved("state.json");
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text) as ReviewRunState;
    } catch {
      throw new ReviewRunDirectoryError(`${join(this.dir, "state.json")} is not valid JSON`);
    }
  }

  async writeState(state: ReviewRunState): Promise<void> {
    this.guard();
    await writeFileAtomic(join(this.dir, "state.json"), `${JSON.stringify(state, null, 2)}\n`, {
      fsync: true,
    });
  }

  /**
   * The recorded approvals and refusals, each line validated: a line that is JSON but not an
   * approval entry is refused, naming the file, the line and what is wrong with it.
   */
  async approvals(): Promise<ApprovalEntry[]> {
    const path = join(this.dir, "approvals.jsonl");
    const entries: ApprovalEntry[] = [];
    for (const { line, value } of await readJsonLineEntries(path)) {
      const problems = approvalEntryProblems(value);
      if (problems.length > 0)
        throw new ReviewRunDirectoryError(
          `${path}:${line} is not an approval record (${problems.join("; ")}); the log is damaged: restore it from a copy, or remove that line and approve again with terfyn approve`,
        );
      entries.push(value as ApprovalEntry);
    }
    return entries;
  }

  /** Appends an approval (the approve command's adapter is the only caller). */
  async appendApproval(entry: ApprovalEntry): Promise<void> {
    this.guard();
    appendJsonLine(join(this.dir, "approvals.jsonl"), entry);
  }

  private async readReserved(name: string): Promise<string | undefined> {
    try {
      return await readFile(join(this.dir, name), "utf8");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw e;
    }
  }
}
