/**
 * A run's lock held on another host: its holder beats a heartbeat on it (the lock file's mtime,
 * refreshed at each verify and on a timer), and the App takes it over only once that heartbeat
 * is older than TERFYN_LOCK_STALE_SECONDS (default 600), so a dead App on another machine does
 * not block a run forever. A live process on this host is never taken over, however old its
 * heartbeat; the CLI (no stale age given) never takes another host's lock. Hosts, pids and
 * clocks are injected.
 */
import { mkdirSync, mkdtempSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  FileRunLock,
  LOCK_NAME,
  RunLockHeldError,
  RunLockLostError,
} from "../src/adapters/fs/run-lock.ts";
import { inProcessRunner } from "../src/adapters/review/review-runner.ts";
import {
  DEFAULT_OTHER_HOST_STALE_MS,
  type HostFacts,
  isStaleLock,
  type LockOwner,
} from "../src/core/runs/run-lock.ts";
import { agents } from "./helpers/app-runner.ts";
import { testSandbox } from "./helpers/sandbox.ts";

const T0 = new Date("2026-12-01T10:00:00Z");
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const alive: (host: string) => HostFacts = (host) => ({ host, pidAlive: () => true });
const owner = (host: string): LockOwner => ({
  pid: 4242,
  host,
  since: T0.toISOString(),
  command: "terfyn app r",
  nonce: "n1",
});

/** A clock a test moves. */
function clock(start = T0) {
  let t = start;
  return { now: () => t, set: (d: Date) => (t = d) };
}

const tempDir = () => mkdtempSync(join(tmpdir(), "terfyn-lock-hosts-"));
const mtime = (dir: string) => statSync(join(dir, LOCK_NAME)).mtime.getTime();

describe("isStaleLock with a heartbeat", () => {
  const fresh = (ageSeconds: number, otherHostStaleMs?: number) => ({
    heartbeat: T0,
    now: at(ageSeconds),
    ...(otherHostStaleMs !== undefined ? { otherHostStaleMs } : {}),
  });

  it("another host's lock is stale only past the stale age, and never without one", () => {
    const here = alive("host-b");
    expect(isStaleLock(owner("host-a"), here, fresh(601, 600_000))).toBe(true);
    expect(isStaleLock(owner("host-a"), here, fresh(600, 600_000))).toBe(false);
    expect(isStaleLock(owner("host-a"), here, fresh(10 * 86_400))).toBe(false);
    expect(isStaleLock(owner("host-a"), here)).toBe(false);
    expect(DEFAULT_OTHER_HOST_STALE_MS).toBe(600_000);
  });

  it("this host's lock is judged by its pid alone: a live one is never stale, however old", () => {
    expect(isStaleLock(owner("host-b"), alive("host-b"), fresh(10 * 86_400, 60_000))).toBe(false);
    const dead = { host: "host-b", pidAlive: () => false };
    expect(isStaleLock(owner("host-b"), dead, fresh(0, 600_000))).toBe(true);
  });
});

describe("the lock file's heartbeat", () => {
  it("a lock from another host is taken over once its heartbeat is older than the stale age; a verify keeps it fresh", () => {
    const dir = tempDir();
    const a = clock();
    const b = clock();
    const holder = new FileRunLock(alive("host-a"), a.now).acquire(dir, "terfyn app on host-a");
    expect(mtime(dir)).toBe(T0.getTime());
    const app = new FileRunLock(alive("host-b"), b.now, undefined, { otherHostStaleMs: 600_000 });

    b.set(at(599));
    expect(() => app.acquire(dir, "terfyn app on host-b")).toThrow(RunLockHeldError);
    expect(() => app.acquire(dir, "terfyn app on host-b")).toThrow(
      /taken over from here only once its holder has not refreshed it for 600 s/,
    );
    expect(app.holder(dir)).toMatchObject({ owner: { host: "host-a" }, stale: false });

    // The holder works on: each verify (before every durable write) refreshes the heartbeat.
    a.set(at(500));
    holder.verify();
    expect(mtime(dir)).toBe(at(500).getTime());
    b.set(at(900));
    expect(() => app.acquire(dir, "terfyn app on host-b")).toThrow(RunLockHeldError);

    // The holder's host died: no heartbeat for more than 600 s.
    b.set(at(1101));
    expect(app.holder(dir)).toMatchObject({ stale: true });
    const taken = app.acquire(dir, "terfyn app on host-b");
    expect(taken.tookOver).toMatchObject({ host: "host-a", command: "terfyn app on host-a" });
    // Had the holder only been slow, it finds its lock gone and stops; it removes nothing.
    expect(() => holder.verify()).toThrow(RunLockLostError);
    holder.release();
    expect(app.holder(dir)).toMatchObject({ owner: { host: "host-b" }, stale: false });
    taken.release();
    expect(app.holder(dir)).toBeUndefined();
  });

  it("without a stale age (the CLI) another host's lock is never taken over, however old", () => {
    const dir = tempDir();
    new FileRunLock(alive("host-a"), () => T0).acquire(dir, "terfyn app on host-a");
    const cli = new FileRunLock(alive("host-b"), () => at(30 * 86_400));
    expect(() => cli.acquire(dir, "terfyn review --resume")).toThrow(
      /taken on another host, so it is never taken over from here/,
    );
  });

  it("a live process on this host keeps its lock, however old its heartbeat", () => {
    const dir = tempDir();
    const here = alive("host-b");
    new FileRunLock(here, () => T0).acquire(dir, "terfyn app on host-b");
    utimesSync(join(dir, LOCK_NAME), new Date(0), new Date(0));
    const other = new FileRunLock(here, () => at(30 * 86_400), undefined, {
      otherHostStaleMs: 60_000,
    });
    expect(() => other.acquire(dir, "another terfyn app")).toThrow(RunLockHeldError);
    expect(other.holder(dir)).toMatchObject({ stale: false });
  });

  it("a held lock refreshes its heartbeat on a timer while the run works without writing", async () => {
    const dir = tempDir();
    const a = clock();
    const held = new FileRunLock(alive("host-a"), a.now, undefined, { heartbeatMs: 10 }).acquire(
      dir,
      "terfyn app on host-a",
    );
    a.set(at(400));
    const end = Date.now() + 5_000;
    while (mtime(dir) !== at(400).getTime() && Date.now() < end)
      await new Promise((r) => setTimeout(r, 10));
    expect(mtime(dir)).toBe(at(400).getTime());
    held.release();
  });
});

describe("the App runner and another host's lock", () => {
  /** A run left `running` whose lock a process on host-a took at T0 and has not refreshed. */
  function leftRunning(runsDir: string, run: string) {
    const base = join(runsDir, run);
    mkdirSync(join(base, "run"), { recursive: true });
    writeFileSync(
      join(base, "job.json"),
      JSON.stringify({
        repo: { owner: "octo-org", repo: "agents" },
        pullRequest: 7,
        head: "a".repeat(40),
        run,
        triggerAt: T0.toISOString(),
        branch: "fix-add",
        installation: 1,
      }),
    );
    writeFileSync(
      join(base, "run", "state.json"),
      JSON.stringify({ run_id: run, status: "running", phase: "plan" }),
    );
    new FileRunLock(alive("host-a"), () => T0).acquire(join(base, "run"), "terfyn app on host-a");
  }

  const runner = async (runsDir: string, now: Date, lockStaleSeconds?: number) =>
    inProcessRunner({
      appSlug: "terfyn-test",
      runsDir,
      agents: await agents(),
      sandbox: await testSandbox(),
      model: () => ({
        turn: () => Promise.reject(new Error("no model in this test")),
      }),
      now: () => now,
      log: () => {},
      lockFacts: alive("host-b"),
      ...(lockStaleSeconds !== undefined ? { lockStaleSeconds } : {}),
    });

  it("a run whose lock another host has not refreshed for 600 s is interrupted (resumable); a fresher one is left alone", async () => {
    const runsDir = tempDir();
    leftRunning(runsDir, "pr7-run");
    expect(await (await runner(runsDir, at(300))).interrupted()).toEqual([]);
    expect(await (await runner(runsDir, at(600))).interrupted()).toEqual([]);
    expect((await (await runner(runsDir, at(601))).interrupted()).map((j) => j.run)).toEqual([
      "pr7-run",
    ]);
    // TERFYN_LOCK_STALE_SECONDS=60: stale after a minute.
    expect((await (await runner(runsDir, at(61), 60)).interrupted()).map((j) => j.run)).toEqual([
      "pr7-run",
    ]);
  });
});
