/**
 * A run directory on disk: `journal.jsonl` (append-only, fsync'd after every event),
 * `state.json` (written atomically), `approvals.jsonl` (append-only), `input.json`, and
 * `model-script.yaml` when the model script came from standard input.
 * `TERFYN_TEST_KILL_AFTER_EVENT=N` makes the process SIGKILL itself right after the N-th event
 * of this session is durable: the crash tests use it to stop a real run at every journal point.
 */
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readSync,
  writeSync,
} from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import writeFileAtomic from "write-file-atomic";
import { type JournalEvent, journalEventProblem } from "../../core/engine/journal.ts";
import type { RunState } from "../../core/runs/run-state.ts";
import { directorySync } from "./fsync-dir.ts";
import { appendJsonLine, readJsonLineEntries } from "./json-lines.ts";
import { RunDirectoryError } from "./run-directory-error.ts";

export type { RunState, RunStatus } from "../../core/runs/run-state.ts";
export { RunDirectoryError };

/** Where a run keeps the model script it was given on standard input (`--model-script -`). */
export const MODEL_SCRIPT_COPY = "model-script.yaml";

export interface ApprovalRecord {
  hash: string;
  approved_at: string;
  by: string;
}

export class RunStore {
  private fd: number | undefined;
  private written = 0;
  private readonly killAfter: number | undefined;

  /** Checked before every durable write: throws when this process no longer holds the run. */
  guard: () => void = () => {};

  constructor(
    readonly dir: string,
    env: Record<string, string | undefined> = {},
  ) {
    const k = env.TERFYN_TEST_KILL_AFTER_EVENT;
    this.killAfter = k !== undefined && /^\d+$/.test(k) ? Number(k) : undefined;
  }

  static async create(
    dir: string,
    env: Record<string, string | undefined> = {},
  ): Promise<RunStore> {
    try {
      await mkdir(dir, { recursive: true });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new RunDirectoryError(
        code === "EEXIST" || code === "ENOTDIR"
          ? `${dir} is a file, or inside one: a run directory is a directory (created when missing); choose another --run-dir`
          : `cannot create the run directory ${dir}: ${code ?? (e as Error).message}; choose another --run-dir`,
      );
    }
    return new RunStore(dir, env);
  }

  get journalPath(): string {
    return join(this.dir, "journal.jsonl");
  }

  async append(event: JournalEvent): Promise<void> {
    this.guard();
    if (this.fd === undefined) this.fd = this.openForAppend();
    writeSync(this.fd, `${JSON.stringify(event)}\n`);
    fsyncSync(this.fd);
    this.written++;
    if (this.killAfter !== undefined && this.written >= this.killAfter)
      process.kill(process.pid, "SIGKILL");
  }

  /**
   * Opens the journal for appending. A crash mid-write can leave a torn last line; it is cut
   * back to the last complete event first, so the next event starts on a line of its own
   * (reading already ignores a torn *last* line; appending after it would bury it mid-file).
   */
  private openForAppend(): number {
    const existed = existsSync(this.journalPath);
    const fd = openSync(this.journalPath, "a+");
    // A new journal's directory entry is durable only once the directory is fsync'd.
    if (!existed) directorySync.fsync(this.dir);
    const size = fstatSync(fd).size;
    if (size > 0) {
      const chunk = Buffer.alloc(Math.min(size, 64 * 1024));
      let end = size;
      let keep = -1;
      while (end > 0 && keep < 0) {
        const start = Math.max(0, end - chunk.length);
        const n = readSync(fd, chunk, 0, end - start, start);
        const i = chunk.subarray(0, n).lastIndexOf(10);
        if (i >= 0) keep = start + i + 1;
        end = start;
      }
      if (keep < 0) keep = 0;
      if (keep < size) {
        ftruncateSync(fd, keep);
        fsyncSync(fd);
      }
    }
    return fd;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /** Every complete event; a torn last line (a crash mid-write) is ignored. */
  async readJournal(): Promise<JournalEvent[]> {
    let text: string;
    try {
      text = await readFile(this.journalPath, "utf8");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw e;
    }
    const events: JournalEvent[] = [];
    const lines = text.split("\n");
    const damaged = (line: number, what: string) =>
      new RunDirectoryError(
        `${this.journalPath}:${line} ${what}; the journal is damaged, so the run cannot be resumed safely: restore journal.jsonl from a copy, or start a new run`,
      );
    for (const [i, line] of lines.entries()) {
      if (line.trim() === "") continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        if (i === lines.length - 1) break;
        throw damaged(i + 1, "is not JSON");
      }
      // Replay trusts every field it reads: `null` or a bare number here would otherwise
      // surface as a TypeError deep in the interpreter and mark the run failed.
      const problem = journalEventProblem(value);
      if (problem !== undefined) throw damaged(i + 1, problem);
      events.push(value as JournalEvent);
    }
    return events;
  }

  /**
   * Writes state.json atomically (temp file, rename). `durable: false` skips the fsync: right
   * for progress checkpoints, because the journal, not state.json, is what resume trusts.
   * A durable write also fsyncs the run directory, which makes the rename itself durable.
   */
  async writeState(state: RunState, options: { durable?: boolean } = {}): Promise<void> {
    this.guard();
    const durable = options.durable ?? true;
    await writeFileAtomic(join(this.dir, "state.json"), `${JSON.stringify(state, null, 2)}\n`, {
      fsync: durable,
    });
    if (durable) directorySync.fsync(this.dir);
  }

  async readState(): Promise<RunState> {
    let text: string;
    try {
      text = await readFile(join(this.dir, "state.json"), "utf8");
    } catch {
      throw new RunDirectoryError(`${this.dir} is not a run directory (no state.json)`);
    }
    try {
      return JSON.parse(text) as RunState;
    } catch {
      throw new RunDirectoryError(`${join(this.dir, "state.json")} is not valid JSON`);
    }
  }

  async writeInput(input: unknown): Promise<void> {
    await writeFileAtomic(join(this.dir, "input.json"), `${JSON.stringify(input, null, 2)}\n`, {
      fsync: true,
    });
    directorySync.fsync(this.dir);
  }

  /**
   * A model script that came from standard input, kept as `model-script.yaml` so a resume can
   * read it again; returns the copy's path (what the run records as its model script).
   */
  async writeModelScript(text: string): Promise<string> {
    this.guard();
    const path = join(this.dir, MODEL_SCRIPT_COPY);
    await writeFileAtomic(path, text, { fsync: true });
    directorySync.fsync(this.dir);
    return path;
  }

  async readInput(): Promise<unknown> {
    const path = join(this.dir, "input.json");
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch {
      throw new RunDirectoryError(`${path} is missing; the run cannot be resumed: start a new run`);
    }
    try {
      return JSON.parse(text);
    } catch {
      throw new RunDirectoryError(
        `${path} is not valid JSON; the run cannot be resumed: restore it, or start a new run`,
      );
    }
  }

  async appendApproval(record: ApprovalRecord): Promise<void> {
    this.guard();
    appendJsonLine(join(this.dir, "approvals.jsonl"), record);
  }

  /** The recorded approvals; a line that is JSON but not an approval record is refused. */
  async readApprovals(): Promise<ApprovalRecord[]> {
    const path = join(this.dir, "approvals.jsonl");
    const records: ApprovalRecord[] = [];
    for (const { line, value } of await readJsonLineEntries(path)) {
      if (
        value === null ||
        typeof value !== "object" ||
        typeof (value as { hash?: unknown }).hash !== "string"
      ) {
        throw new RunDirectoryError(
          `${path}:${line} is not an approval record (an object with a \`hash\`); the log is damaged: restore it from a copy, or remove that line and approve again with terfyn approve`,
        );
      }
      records.push(value as ApprovalRecord);
    }
    return records;
  }
}
