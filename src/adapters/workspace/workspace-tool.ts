/**
 * The native workspace tool: `read_file`, `write_file` and `run_tests`, confined to a sandbox.
 *
 * Containment is decided on real paths, by whole path components, at the time of use:
 * - a path must be relative, without NUL, backslashes or `..` components;
 * - reads open the file, then check the *opened* file's real path (via /proc/self/fd, or a
 *   realpath + inode comparison where /proc is absent) is inside the root;
 * - writes never follow a symlink at the final component (O_NOFOLLOW), never block on a FIFO,
 *   walk and create parents through directory descriptors (no symlink followed at any step, so
 *   a component swapped mid-walk cannot redirect a mkdir), check the opened file before truncating or writing a
 *   byte, refuse a file with other hard links (its inode may be shared with a file outside),
 *   and remove a file they created outside the root if a swap got one there;
 * - no path may have a `.git` component, in any case (`.git/config`, `.GIT/hooks/x`,
 *   `sub/.git`), for reading or writing: git's own files decide what git executes;
 * - when `writable` is given, write_file may change only those paths (a review run's agent may
 *   write only the files its plan names), and every write made is recorded (`written`);
 * - `run_tests` runs only the configured command, in the root, inside the sandbox (only the
 *   root writable, no network, nothing survives it), with a timeout, an output cap and a
 *   stripped environment.
 */
import { constants, existsSync } from "node:fs";
import { lstat, mkdir, open, readlink, realpath, rmdir, stat, unlink } from "node:fs/promises";
import { isAbsolute, join, sep } from "node:path";
import type { Sandbox } from "../sandbox/sandbox.ts";
import { spawnTimer } from "../spawn-log.ts";

export interface WorkspaceConfig {
  root: string;
  /**
   * Where run_tests runs (src/adapters/sandbox): only the root writable, no network. Without
   * one, run_tests refuses to run (read_file and write_file need none).
   */
  sandbox?: Sandbox;
  /** Paths below the root that run_tests must not see (a run directory, a state file). */
  hide?: readonly string[];
  /** Whether run_tests may use the network. Default false. */
  testNetwork?: boolean;
  testCommand?: string;
  /** Default 10 minutes. */
  testTimeoutMs?: number;
  /** Bytes of stdout and of stderr kept from run_tests (head and tail). Default 64 KiB. */
  outputCapBytes?: number;
  /** Largest file read_file returns. Default 1 MiB. */
  maxReadBytes?: number;
  /**
   * The only paths write_file may write (relative, `/`-separated); any other write is denied
   * before anything is opened. Absent: any path inside the root.
   */
  writable?: readonly string[];
  /** Variables passed to run_tests besides PATH, HOME, LANG and TMPDIR (names; values from `env`). */
  passEnv?: readonly string[];
  /** Where passEnv values come from. Default: none. */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Aborted when the run is interrupted: a running test command's process group gets SIGTERM,
   * then SIGKILL after a grace period; no new command starts.
   */
  signal?: AbortSignal;
  /** Test seam: runs after the checks and before the open, to swap paths underneath. */
  beforeOpen?: (absolutePath: string) => Promise<void> | void;
}

export class SandboxViolation extends Error {}

/** Whether directories can be used by descriptor (`/proc/self/fd/N/name`, Linux). */
const HAS_PROC_FD = existsSync("/proc/self/fd");
/** Symlinked parents (inside the root) resolved in one write before it is refused. */
const MAX_SYMLINK_HOPS = 8;

export class WorkspaceTool {
  readonly #written = new Set<string>();

  private constructor(
    private readonly rootReal: string,
    private readonly config: WorkspaceConfig,
  ) {}

  /** Opens the sandbox; the root must exist and be a directory (its own real path is the boundary). */
  static async open(config: WorkspaceConfig): Promise<WorkspaceTool> {
    let real: string;
    try {
      real = await realpath(config.root);
    } catch {
      throw new Error(`the workspace root ${config.root} does not exist`);
    }
    if (!(await stat(real)).isDirectory())
      throw new Error(`the workspace root ${config.root} is not a directory`);
    return new WorkspaceTool(real, config);
  }

  get root(): string {
    return this.rootReal;
  }

  /** The paths write_file has written (relative, `/`-separated), in the order first written. */
  get written(): string[] {
    return [...this.#written];
  }

  async execute(operation: string, input: unknown): Promise<{ ok: boolean; result: unknown }> {
    const { ok, result } = await this.executeWithSummary(operation, input);
    return { ok, result };
  }

  /**
   * `execute`, plus one line on how the call ended for the run's progress output: what was
   * read or written, `refused by the sandbox: …`, or whether the tests passed.
   */
  async executeWithSummary(
    operation: string,
    input: unknown,
  ): Promise<{ ok: boolean; result: unknown; summary: string }> {
    const args = (input ?? {}) as Record<string, unknown>;
    try {
      switch (operation) {
        case "read_file": {
          const content = await this.readFile(args.path);
          return {
            ok: true,
            result: { content },
            summary: `read ${String(args.path)} (${Buffer.byteLength(content)} bytes)`,
          };
        }
        case "write_file": {
          if (typeof args.content !== "string")
            throw new SandboxViolation("content must be a string");
          const written = await this.writeFile(args.path, args.content);
          const bytes = Buffer.byteLength(args.content);
          return {
            ok: true,
            result: { written, bytes },
            summary: `wrote ${written} (${bytes} bytes)`,
          };
        }
        case "run_tests": {
          const r = await this.runTests();
          const summary = r.timed_out
            ? "tests timed out (the process group was killed)"
            : r.passed
              ? "tests passed (exit 0)"
              : `tests failed (exit ${r.exit_code ?? "by signal"})`;
          return { ok: true, result: r, summary };
        }
        default:
          return {
            ok: false,
            result: { error: `the workspace tool has no operation ${operation}` },
            summary: `failed: no operation ${operation}`,
          };
      }
    } catch (e) {
      const message = (e as Error).message;
      return {
        ok: false,
        result: { error: message },
        summary:
          e instanceof SandboxViolation
            ? `refused by the sandbox: ${message}`
            : `failed: ${message}`,
      };
    }
  }

  /** Splits a user path into safe components, or refuses it. */
  components(path: unknown): string[] {
    if (typeof path !== "string" || path === "")
      throw new SandboxViolation("path must be a non-empty string");
    if (path.includes("\0")) throw new SandboxViolation("path contains a NUL byte");
    if (path.includes("\\"))
      throw new SandboxViolation("path contains a backslash; use / between components");
    if (isAbsolute(path) || /^[A-Za-z]:/.test(path))
      throw new SandboxViolation(
        `absolute path ${path} is outside the sandbox; use a path relative to the workspace root`,
      );
    const parts = path.split("/").filter((p) => p !== "" && p !== ".");
    if (parts.includes(".."))
      throw new SandboxViolation(`path ${path} contains ..; paths stay inside the workspace root`);
    if (parts.length === 0)
      throw new SandboxViolation(`path ${path} names the workspace root itself, not a file`);
    if (parts.some((p) => p.toLowerCase() === ".git"))
      throw new SandboxViolation(
        `path ${path} is inside .git; git's own files are never read or written through the workspace`,
      );
    return parts;
  }

  private inside(real: string): boolean {
    return (
      real === this.rootReal ||
      real.startsWith(this.rootReal.endsWith(sep) ? this.rootReal : this.rootReal + sep)
    );
  }

  /** The real path of what `handle` has open, or undefined if it cannot be proven. */
  private async openedPath(
    handle: import("node:fs/promises").FileHandle,
    abs: string,
  ): Promise<string | undefined> {
    try {
      return await readlink(`/proc/self/fd/${handle.fd}`);
    } catch {
      try {
        const real = await realpath(abs);
        const [a, b] = [await handle.stat(), await stat(real)];
        return a.ino === b.ino && a.dev === b.dev ? real : undefined;
      } catch {
        return undefined;
      }
    }
  }

  async readFile(path: unknown): Promise<string> {
    const parts = this.components(path);
    const abs = join(this.rootReal, ...parts);
    // Check the name before opening too: opening a FIFO or device outside the root can itself
    // have effects there. The check after opening still decides (it catches swaps).
    const before = await realpath(abs).catch(() => undefined);
    if (before !== undefined && !this.inside(before))
      throw new SandboxViolation(`${parts.join("/")} resolves outside the workspace root`);
    await this.config.beforeOpen?.(abs);
    let handle: import("node:fs/promises").FileHandle;
    try {
      handle = await open(abs, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new SandboxViolation(
        code === "ENOENT"
          ? `${parts.join("/")} does not exist`
          : `cannot open ${parts.join("/")}: ${code}`,
      );
    }
    try {
      const real = await this.openedPath(handle, abs);
      if (real === undefined || !this.inside(real))
        throw new SandboxViolation(`${parts.join("/")} resolves outside the workspace root`);
      const st = await handle.stat();
      if (!st.isFile()) throw new SandboxViolation(`${parts.join("/")} is not a regular file`);
      const max = this.config.maxReadBytes ?? 1024 * 1024;
      if (st.size > max)
        throw new SandboxViolation(
          `${parts.join("/")} is ${st.size} bytes; read_file returns at most ${max}`,
        );
      return await handle.readFile({ encoding: "utf8" });
    } finally {
      await handle.close();
    }
  }

  async writeFile(path: unknown, content: string): Promise<string> {
    const parts = this.components(path);
    const { writable } = this.config;
    if (writable !== undefined && !writable.includes(parts.join("/")))
      throw new SandboxViolation(
        `writing ${parts.join("/")} is denied: this step may write only ${writable.length > 0 ? writable.join(", ") : "nothing"}`,
      );
    // Parents are walked and created through directory descriptors, never by path: a component
    // swapped for a symlink between our check and our use cannot redirect a mkdir or the open.
    const parents = await this.openParents(parts);
    const abs = join(parents.path, parts[parts.length - 1] as string);
    try {
      return await this.writeIn(abs, parts, content);
    } finally {
      await parents.close();
    }
  }

  /**
   * Opens (creating what is missing) the directory that will hold `parts`' last component.
   *
   * Where /proc/self/fd exists, each component is opened with O_DIRECTORY | O_NOFOLLOW relative
   * to the descriptor of the one before (`/proc/self/fd/N/part` is resolved from the open
   * directory itself, like openat), and created with mkdir through the same descriptor, so no
   * symlink is followed at any step and a swap can only make the step fail. After each step the
   * descriptor's real path must still be inside the root. A component that already is a symlink
   * is resolved once: when its target is inside the root, the walk restarts from the root along
   * the target's real components (themselves opened without following), else it is refused.
   *
   * Without /proc each component is created by path and then re-verified (lstat: a directory,
   * not a symlink; real path inside the root); a directory a swap got created outside is removed.
   */
  private async openParents(
    parts: string[],
  ): Promise<{ path: string; close: () => Promise<void> }> {
    const shown = parts.join("/");
    const notDir = (part: string) =>
      new SandboxViolation(`${shown}: ${part} is not a directory inside the workspace root`);
    if (!HAS_PROC_FD) return { path: await this.verifiedParents(parts), close: async () => {} };
    const dirFlags = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
    let todo = parts.slice(0, -1);
    let hops = 0;
    let dir = await open(this.rootReal, dirFlags);
    try {
      while (todo.length > 0) {
        const part = todo[0] as string;
        const at = `/proc/self/fd/${dir.fd}/${part}`;
        let next: import("node:fs/promises").FileHandle | undefined;
        try {
          next = await open(at, dirFlags);
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          if (code === "ENOENT") {
            try {
              await mkdir(at);
            } catch (e2) {
              if ((e2 as NodeJS.ErrnoException).code !== "EEXIST")
                throw new SandboxViolation(
                  `cannot create ${part} for ${shown}: ${(e2 as NodeJS.ErrnoException).code}`,
                );
            }
            // Opened again without following: if a symlink took the new name, this fails.
            try {
              next = await open(at, dirFlags);
            } catch {
              throw notDir(part);
            }
          } else if (
            (code === "ELOOP" || code === "ENOTDIR") &&
            (await lstat(at).catch(() => undefined))?.isSymbolicLink()
          ) {
            // An existing symlink: allowed only when it resolves to a directory inside the root,
            // and then never followed: the walk starts again at the root along its real path.
            const real = await realpath(at).catch(() => undefined);
            if (real === undefined || !this.inside(real) || ++hops > MAX_SYMLINK_HOPS)
              throw notDir(part);
            const rel =
              real === this.rootReal ? [] : real.slice(this.rootReal.length + 1).split(sep);
            if (rel.some((p) => p.toLowerCase() === ".git"))
              throw new SandboxViolation(
                `${shown}: ${part} leads into .git; git's own files are never written through the workspace`,
              );
            await dir.close();
            dir = await open(this.rootReal, dirFlags);
            todo = [...rel, ...todo.slice(1)];
            continue;
          } else {
            throw notDir(part);
          }
        }
        await dir.close();
        dir = next;
        const real = await readlink(`/proc/self/fd/${dir.fd}`).catch(() => undefined);
        if (real === undefined || !this.inside(real))
          throw new SandboxViolation(`${shown} resolves outside the workspace root`);
        todo = todo.slice(1);
      }
    } catch (e) {
      await dir.close();
      throw e;
    }
    const held = dir;
    return { path: `/proc/self/fd/${held.fd}`, close: () => held.close() };
  }

  /** The fallback without /proc: create each parent by path, then re-verify it. */
  private async verifiedParents(parts: string[]): Promise<string> {
    const shown = parts.join("/");
    let dir = this.rootReal;
    for (const part of parts.slice(0, -1)) {
      const next = join(dir, part);
      let made = false;
      try {
        await mkdir(next);
        made = true;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST")
          throw new SandboxViolation(
            `cannot create ${part} for ${shown}: ${(e as NodeJS.ErrnoException).code}`,
          );
      }
      const st = await lstat(next).catch(() => undefined);
      const real = await realpath(next).catch(() => undefined);
      if (real !== undefined && made && !this.inside(real)) await rmdir(real).catch(() => {});
      if (st === undefined || real === undefined || !this.inside(real))
        throw new SandboxViolation(
          `${shown}: ${part} is not a directory inside the workspace root`,
        );
      if (!st.isDirectory() && !(st.isSymbolicLink() && (await stat(real)).isDirectory()))
        throw new SandboxViolation(
          `${shown}: ${part} is not a directory inside the workspace root`,
        );
      dir = real;
    }
    return dir;
  }

  private async writeIn(abs: string, parts: string[], content: string): Promise<string> {
    await this.config.beforeOpen?.(abs);
    let handle: import("node:fs/promises").FileHandle;
    let created = true;
    try {
      handle = await open(
        abs,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o644,
      );
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== "EEXIST") throw new SandboxViolation(`cannot write ${parts.join("/")}: ${code}`);
      created = false;
      try {
        // O_NONBLOCK: a FIFO with no reader fails at once (ENXIO) instead of hanging the run.
        handle = await open(abs, constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      } catch (e2) {
        const c2 = (e2 as NodeJS.ErrnoException).code;
        throw new SandboxViolation(
          c2 === "ELOOP"
            ? `${parts.join("/")} is a symbolic link; write_file never follows one`
            : `cannot write ${parts.join("/")}: ${c2}`,
        );
      }
    }
    try {
      const real = await this.openedPath(handle, abs);
      if (real === undefined || !this.inside(real)) {
        if (created && real !== undefined) await unlink(real).catch(() => {});
        throw new SandboxViolation(`${parts.join("/")} resolves outside the workspace root`);
      }
      const st = await handle.stat();
      if (!st.isFile()) throw new SandboxViolation(`${parts.join("/")} is not a regular file`);
      // A hard link shares its inode with a name that may live outside the root: writing
      // through it would change that file too.
      if (st.nlink > 1)
        throw new SandboxViolation(
          `${parts.join("/")} has other hard links; write_file will not change a file shared with other paths`,
        );
      this.#written.add(parts.join("/"));
      await handle.truncate(0);
      await handle.write(content, 0, "utf8");
      await handle.sync();
      return parts.join("/");
    } finally {
      await handle.close();
    }
  }

  async runTests(): Promise<{
    exit_code: number | null;
    passed: boolean;
    timed_out: boolean;
    stdout: string;
    stderr: string;
    truncated: boolean;
  }> {
    const command = this.config.testCommand;
    if (!command)
      throw new SandboxViolation("no test command is configured for the workspace tool");
    const cap = this.config.outputCapBytes ?? 64 * 1024;
    const timeout = this.config.testTimeoutMs ?? 10 * 60 * 1000;
    const signal = this.config.signal;
    if (signal?.aborted)
      throw new Error("the run is being interrupted; the test command was not started");
    const timed = spawnTimer("agent-test", command);
    const out = new CappedBuffer(cap);
    const err = new CappedBuffer(cap);
    const sandbox = this.config.sandbox;
    if (!sandbox)
      throw new SandboxViolation("no sandbox was given to this workspace: run_tests cannot run");
    let exit: Awaited<ReturnType<Sandbox["run"]>>;
    try {
      exit = await sandbox.run({
        argv: ["/bin/sh", "-c", command],
        writable: this.rootReal,
        ...(this.config.hide ? { hide: this.config.hide } : {}),
        ...(this.config.testNetwork ? { network: true } : {}),
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          LANG: process.env.LANG ?? "C.UTF-8",
          ...passedEnv(this.config),
          CI: "true",
        },
        timeoutMs: timeout,
        ...(signal ? { signal } : {}),
        onStdout: (c) => out.push(c),
        onStderr: (c) => err.push(c),
      });
    } catch (e) {
      throw new Error(`cannot run the test command: ${(e as Error).message}`);
    }
    timed?.();
    return {
      exit_code: exit.code,
      passed: exit.code === 0 && !exit.timedOut,
      timed_out: exit.timedOut,
      stdout: out.text(),
      stderr: err.text(),
      truncated: out.truncated || err.truncated,
    };
  }
}

function passedEnv(config: WorkspaceConfig): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of config.passEnv ?? []) {
    const v = config.env?.[name];
    if (v !== undefined) out[name] = v;
  }
  return out;
}

/** Keeps the first and last halves of a stream within a byte budget. */
class CappedBuffer {
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail = Buffer.alloc(0);
  truncated = false;
  constructor(private readonly cap: number) {}
  push(chunk: Buffer): void {
    const half = Math.floor(this.cap / 2);
    if (this.headBytes < half) {
      const take = chunk.subarray(0, half - this.headBytes);
      this.head.push(take);
      this.headBytes += take.length;
      chunk = chunk.subarray(take.length);
    }
    if (chunk.length === 0) return;
    const joined = Buffer.concat([this.tail, chunk]);
    if (joined.length > this.cap - half) this.truncated = true;
    this.tail = joined.subarray(Math.max(0, joined.length - (this.cap - half)));
  }
  text(): string {
    const head = Buffer.concat(this.head).toString("utf8");
    return this.truncated
      ? `${head}\n… (output truncated) …\n${this.tail.toString("utf8")}`
      : head + this.tail.toString("utf8");
  }
}
