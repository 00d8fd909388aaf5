/**
 * The run directory lock on disk: `<run dir>/.terfyn-run.lock`, a JSON file naming its owner
 * (pid, host, since, command, nonce). It appears atomically with its full content (written to a
 * temp file, then hard-linked into place, which fails if a lock exists), so no reader ever sees
 * a half-written lock. A stale lock (its pid gone on this host) is taken over by renaming it to
 * a name of this process's own and checking that what moved is the stale lock that was read;
 * if a live lock was moved by mistake (two takers racing), it is linked back. The holder checks
 * before every durable write that the lock file is still its own (`verify`), so even a lock
 * removed by hand cannot give a run two writers.
 *
 * The holder keeps the lock file's mtime fresh (its heartbeat): at each `verify` and every
 * HEARTBEAT_MS on an unref'd timer, set to its clock's `now`. On this host the heartbeat is never
 * consulted (a pid tells whether the holder lives). A lock from another host is judged by it
 * only when `otherHostStaleMs` is given (the App: TERFYN_LOCK_STALE_SECONDS): older than that,
 * the lock is taken over as a dead pid's is, and the taker checks again after moving it aside
 * that the heartbeat did not move meanwhile (a live holder's lock is put back). A holder that
 * was only slow finds its lock gone at its next `verify` and stops. The hosts' clocks must agree
 * to well within that age.
 *
 * No library: proper-lockfile and lockfile judge staleness by the lock's age alone, so a run
 * killed a moment ago blocks `--resume` until that age passes and a holder whose event loop
 * stalls loses its lock; neither records the pid and host a second process must name. flock(2)
 * needs a native addon (fs-ext).
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeSync,
} from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import {
  HEARTBEAT_MS,
  type HeldRunLock,
  type HostFacts,
  isStaleLock,
  type LockOwner,
  lockHeldMessage,
  parseLockOwner,
  type RunLockPort,
} from "../../core/runs/run-lock.ts";
import { RunDirectoryError } from "./run-directory-error.ts";

export const LOCK_NAME = ".terfyn-run.lock";

/** Another process holds the run directory; the message names it and says what to do. */
export class RunLockHeldError extends RunDirectoryError {}

/** The lock this process took was removed or replaced: stop writing. */
export class RunLockLostError extends RunDirectoryError {}

export const hostFacts: HostFacts = {
  host: hostname(),
  pidAlive(pid: number): boolean {
    try {
      process.kill(pid, 0);
      return true;
    } catch (e) {
      // EPERM: the process exists but belongs to someone else.
      return (e as NodeJS.ErrnoException).code === "EPERM";
    }
  },
};

function readOwner(path: string): { owner?: LockOwner; missing: boolean } {
  try {
    const owner = parseLockOwner(readFileSync(path, "utf8"));
    return owner ? { owner, missing: false } : { missing: false };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { missing: true };
    throw e;
  }
}

/** Writes `owner` to a temp file next to the lock and links it into place; false if a lock exists. */
function tryCreate(lockPath: string, owner: LockOwner): number | false {
  const temp = `${lockPath}.${owner.pid}.${owner.nonce}.tmp`;
  const fd = openSync(temp, "wx");
  try {
    writeSync(fd, `${JSON.stringify(owner)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temp, lockPath);
    return statSync(lockPath).ino;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  } finally {
    unlinkSync(temp);
  }
}

/** A lock file's last heartbeat (its mtime); undefined when it is gone. */
function heartbeatOf(path: string): Date | undefined {
  try {
    return statSync(path).mtime;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
}

/**
 * Moves the stale lock `stale` out of the way. When the file that moved is not that lock any
 * more (another process took over first), or `stillStale` says it is not stale now (its holder's
 * heartbeat moved since it was read), it is put back.
 */
function removeStale(
  lockPath: string,
  stale: LockOwner,
  nonce: string,
  stillStale: (moved: string) => boolean,
): void {
  const aside = `${lockPath}.${process.pid}.${nonce}.stale`;
  try {
    renameSync(lockPath, aside);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
    throw e;
  }
  const moved = readOwner(aside).owner;
  if (moved?.nonce === stale.nonce && stillStale(aside)) {
    unlinkSync(aside);
    return;
  }
  // Another process took the stale lock over between our read and our rename, or its holder
  // showed it lives: give it back.
  try {
    linkSync(aside, lockPath);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  } finally {
    unlinkSync(aside);
  }
}

export interface FileRunLockOptions {
  /**
   * How long a lock from another host may go without a heartbeat before it is stale. Undefined
   * (the CLI): such a lock is never taken over.
   */
  otherHostStaleMs?: number;
  /** How often a held lock's heartbeat is refreshed on a timer. Default HEARTBEAT_MS. */
  heartbeatMs?: number;
}

export class FileRunLock implements RunLockPort {
  constructor(
    private readonly facts: HostFacts = hostFacts,
    private readonly now: () => Date = () => new Date(),
    /** How the run directory is named in messages. */
    private readonly show: (dir: string) => string = (d) => d,
    private readonly options: FileRunLockOptions = {},
  ) {}

  /** Whether `owner`'s lock at `path` is stale now (its heartbeat read from the file). */
  private stale(owner: LockOwner, path: string): boolean {
    const heartbeat = heartbeatOf(path);
    return isStaleLock(owner, this.facts, {
      heartbeat: heartbeat ?? new Date(0),
      now: this.now(),
      ...(this.options.otherHostStaleMs !== undefined
        ? { otherHostStaleMs: this.options.otherHostStaleMs }
        : {}),
    });
  }

  /**
   * Who holds `dir`'s lock and whether it is stale (as `acquire` would judge it); undefined when
   * there is no lock. An unreadable lock is never stale.
   */
  holder(dir: string): { owner?: LockOwner; stale: boolean } | undefined {
    const lockPath = join(dir, LOCK_NAME);
    const { owner, missing } = readOwner(lockPath);
    if (missing) return undefined;
    return owner ? { owner, stale: this.stale(owner, lockPath) } : { stale: false };
  }

  acquire(dir: string, command: string): HeldRunLock {
    const lockPath = join(dir, LOCK_NAME);
    const owner: LockOwner = {
      pid: process.pid,
      host: this.facts.host,
      since: this.now().toISOString(),
      command,
      nonce: randomBytes(8).toString("hex"),
    };
    let tookOver: LockOwner | undefined;
    // Each round either takes the lock, finds it held, or removes one stale lock; a few rounds
    // cover every interleaving of racing takers.
    for (let round = 0; round < 8; round++) {
      const ino = tryCreate(lockPath, owner);
      if (ino !== false) return this.held(lockPath, owner, ino, tookOver);
      const { owner: holder, missing } = readOwner(lockPath);
      if (missing) continue;
      if (holder === undefined || !this.stale(holder, lockPath))
        throw new RunLockHeldError(this.heldMessage(dir, lockPath, holder));
      removeStale(lockPath, holder, owner.nonce, (moved) => this.stale(holder, moved));
      tookOver = holder;
    }
    const { owner: holder } = readOwner(lockPath);
    throw new RunLockHeldError(this.heldMessage(dir, lockPath, holder));
  }

  private heldMessage(dir: string, lockPath: string, holder: LockOwner | undefined): string {
    return lockHeldMessage(
      this.show(dir),
      lockPath,
      holder,
      this.facts,
      this.options.otherHostStaleMs,
    );
  }

  private held(
    lockPath: string,
    owner: LockOwner,
    ino: number,
    tookOver: LockOwner | undefined,
  ): HeldRunLock {
    let released = false;
    const isOurs = () => {
      try {
        return statSync(lockPath).ino === ino && readOwner(lockPath).owner?.nonce === owner.nonce;
      } catch {
        return false;
      }
    };
    /** Refreshes the heartbeat (the file's mtime) while the lock is ours; false once it is not. */
    const beat = (): boolean => {
      if (released || !isOurs()) return false;
      const t = this.now();
      try {
        utimesSync(lockPath, t, t);
      } catch {
        // A heartbeat that could not be written: the next one, or the next verify, tries again.
      }
      return true;
    };
    beat();
    const timer = setInterval(() => {
      if (!beat()) clearInterval(timer);
    }, this.options.heartbeatMs ?? HEARTBEAT_MS);
    timer.unref();
    return {
      owner,
      ...(tookOver ? { tookOver } : {}),
      verify() {
        if (!beat())
          throw new RunLockLostError(
            `the lock ${lockPath} is no longer this process's (it was removed or replaced while the run worked); stopping without writing more. Check that no other terfyn process works on this run, then resume it`,
          );
      },
      release() {
        if (released) return;
        released = true;
        clearInterval(timer);
        if (isOurs()) unlinkSync(lockPath);
      },
    };
  }
}
