/**
 * One writer per run directory: the lock's data and the decisions about it. A process holds an
 * exclusive lock on a run directory while it works on the run; the lock names its owner (pid,
 * host, since when), and its holder beats a heartbeat on it (the fs adapter refreshes the lock
 * file's mtime every HEARTBEAT_MS and at each check). A lock whose pid is gone on this host is
 * stale and may be taken over; a live pid on this host never is, however old its heartbeat. A
 * lock from another host (whose pid means nothing on this machine) is stale only where the
 * caller says how long a heartbeat may be missed (`otherHostStaleMs`: the App's
 * TERFYN_LOCK_STALE_SECONDS) and its last heartbeat is older than that; otherwise never.
 * Pure: the fs adapter (src/adapters/fs/run-lock.ts) creates, checks and removes the file.
 */

/** Who holds a run directory, as written in its lock file. */
export interface LockOwner {
  pid: number;
  host: string;
  /** ISO time the lock was taken. */
  since: string;
  /** The command holding it, for the message a second process prints (`terfyn run --resume`). */
  command: string;
  /** Random per acquisition: tells this lock from a later one with the same pid. */
  nonce: string;
}

/** A lock this process holds. */
export interface HeldRunLock {
  readonly owner: LockOwner;
  /** The stale lock this acquisition replaced, when it took one over. */
  readonly tookOver?: LockOwner;
  /** Throws when the lock file is no longer this process's (removed or replaced by hand). */
  verify(): void;
  /** Removes the lock file if it is still this process's. */
  release(): void;
}

/** The port a front door takes the lock through. */
export interface RunLockPort {
  /** Takes the lock, taking over a stale one; throws a user-facing error when it is held. */
  acquire(dir: string, command: string): HeldRunLock;
}

/** What this host can tell about a lock's owner. */
export interface HostFacts {
  host: string;
  /** Whether a process with this pid exists on this host. */
  pidAlive(pid: number): boolean;
}

/** How often a holder refreshes its lock's heartbeat (besides at each check). */
export const HEARTBEAT_MS = 30_000;

/** The App's default for how long another host's lock lives without a heartbeat: 10 minutes. */
export const DEFAULT_OTHER_HOST_STALE_MS = 600_000;

/** A lock's last sign of life, and how old a heartbeat from another host may be. */
export interface LockFreshness {
  /** When the holder last refreshed the lock (the lock file's mtime). */
  heartbeat: Date;
  now: Date;
  /** Another host's lock with no heartbeat for longer than this is stale; undefined: never. */
  otherHostStaleMs?: number;
}

/**
 * A lock is stale when it was taken on this host by a process that no longer exists, or on
 * another host and its heartbeat is older than `otherHostStaleMs`. A live process on this host
 * is never judged by its heartbeat (its event loop may stall; its pid says it lives).
 */
export function isStaleLock(owner: LockOwner, facts: HostFacts, fresh?: LockFreshness): boolean {
  if (owner.host === facts.host) return !facts.pidAlive(owner.pid);
  if (fresh?.otherHostStaleMs === undefined) return false;
  return fresh.now.getTime() - fresh.heartbeat.getTime() > fresh.otherHostStaleMs;
}

/** Parses a lock file's text; undefined when it is not a lock Terfyn wrote. */
export function parseLockOwner(text: string): LockOwner | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (v === null || typeof v !== "object") return undefined;
  const o = v as Record<string, unknown>;
  if (
    typeof o.pid !== "number" ||
    !Number.isInteger(o.pid) ||
    o.pid <= 0 ||
    typeof o.host !== "string" ||
    typeof o.since !== "string" ||
    typeof o.nonce !== "string"
  )
    return undefined;
  return {
    pid: o.pid,
    host: o.host,
    since: o.since,
    command: typeof o.command === "string" ? o.command : "terfyn",
    nonce: o.nonce,
  };
}

/** One line naming a lock's owner: `pid 123 on host h since 2026-…`. */
export function describeOwner(owner: LockOwner): string {
  return `pid ${owner.pid} on host ${owner.host} since ${owner.since} (${owner.command})`;
}

/** The message a second process exits with: who holds the run, and what to do. */
export function lockHeldMessage(
  shownDir: string,
  lockPath: string,
  owner: LockOwner | undefined,
  facts: HostFacts,
  otherHostStaleMs?: number,
): string {
  if (owner === undefined) {
    return `${shownDir} is locked by another process (${lockPath} cannot be read as a Terfyn lock); wait for it to finish, or, if no terfyn process is working on this run, delete ${lockPath} and try again`;
  }
  const where =
    owner.host === facts.host
      ? `if pid ${owner.pid} is not a terfyn process (its pid was reused), delete ${lockPath} and try again`
      : otherHostStaleMs === undefined
        ? `it was taken on another host, so it is never taken over from here: if nothing on ${owner.host} works on this run, delete ${lockPath} and try again`
        : `it was taken on another host, so it is taken over from here only once its holder has not refreshed it for ${Math.round(otherHostStaleMs / 1000)} s: if nothing on ${owner.host} works on this run, delete ${lockPath} and try again`;
  return `${shownDir} is in use by ${describeOwner(owner)}: one process works on a run at a time. Wait for it to pause or end, then try again; ${where}`;
}

/** The line printed (and journaled) when a stale lock is taken over. */
export function takeoverMessage(shownDir: string, stale: LockOwner): string {
  return `took over the lock on ${shownDir} from ${describeOwner(stale)}, which no longer runs`;
}
