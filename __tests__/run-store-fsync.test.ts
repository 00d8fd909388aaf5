/**
 * Durability of directory entries: creating journal.jsonl and renaming state.json (and a plan
 * state file) into place are durable only once the directory is fsync'd, not just the file.
 * These tests fail when any of those directory fsyncs is removed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { directorySync } from "../src/adapters/fs/fsync-dir.ts";
import { RunStore } from "../src/adapters/fs/run-store.ts";
import { writeStateFile } from "../src/adapters/fs/state-file.ts";
import type { JournalEvent } from "../src/core/engine/journal.ts";
import type { StateFile } from "../src/core/plan/state.ts";
import type { RunState } from "../src/core/runs/run-state.ts";

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "terfyn-fsync-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  vi.restoreAllMocks();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const EVENT = { type: "run_started", seq: 1 } as unknown as JournalEvent;

describe("directory fsync", () => {
  it("fsyncs the run directory once when journal.jsonl is created, not on every append", async () => {
    const dir = join(tempDir(), "run");
    const store = await RunStore.create(dir);
    const spy = vi.spyOn(directorySync, "fsync");
    await store.append(EVENT);
    expect(spy).toHaveBeenCalledWith(dir);
    expect(spy).toHaveBeenCalledTimes(1);
    await store.append(EVENT);
    expect(spy).toHaveBeenCalledTimes(1);
    store.close();
    // Reopening an existing journal creates no directory entry.
    const again = new RunStore(dir);
    await again.append(EVENT);
    again.close();
    expect(spy).toHaveBeenCalledTimes(1);
  });

  it("fsyncs the run directory after a durable state.json rename, and not after a checkpoint", async () => {
    const dir = tempDir();
    const store = new RunStore(dir);
    const spy = vi.spyOn(directorySync, "fsync");
    const state = { status: "running" } as unknown as RunState;
    await store.writeState(state, { durable: false });
    expect(spy).not.toHaveBeenCalled();
    await store.writeState(state);
    expect(spy).toHaveBeenCalledWith(dir);
    spy.mockClear();
    await store.writeInput({ a: 1 });
    expect(spy).toHaveBeenCalledWith(dir);
  });

  it("fsyncs the directory of the plan state file after renaming it into place", async () => {
    const dir = tempDir();
    const spy = vi.spyOn(directorySync, "fsync");
    await writeStateFile(join(dir, "sub", "state.json"), {} as StateFile);
    expect(spy).toHaveBeenCalledWith(join(dir, "sub"));
  });

  it("really fsyncs a directory here, and throws for one that does not exist", () => {
    expect(directorySync.fsync(tempDir())).toBe(
      process.platform === "win32" ? "unsupported" : "synced",
    );
    expect(() => directorySync.fsync(join(tempDir(), "missing"))).toThrow(/ENOENT/);
  });
});
