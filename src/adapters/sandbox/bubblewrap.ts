/**
 * The bubblewrap sandbox (Linux): every command in its own user, mount, PID, IPC, UTS and
 * network namespaces, built by bubblewrap-args.ts. Before the first command it proves the
 * sandbox can be made here (the same namespaces around `true`); where it cannot (no bwrap,
 * user namespaces refused, not Linux), it refuses with what to install or enable.
 *
 * When the command ends, bwrap ends, the sandbox's PID 1 goes with it and the kernel kills
 * every process left in the namespace, setsid or not; a timeout or interruption kills bwrap's
 * process group, and --die-with-parent takes the rest.
 */
import { lstatSync, mkdtempSync, readlinkSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveProgram } from "../fs/find-executable.ts";
import {
  bubblewrapArgs,
  type HostView,
  type PathKind,
  SANDBOX_HOME,
  SANDBOX_TMP,
} from "./bubblewrap-args.ts";
import { runProcess } from "./process-run.ts";
import {
  type Sandbox,
  type SandboxCommand,
  type SandboxExit,
  SandboxUnavailable,
} from "./sandbox.ts";

export interface BubblewrapOptions {
  /** The bwrap program: an absolute path, or found on `searchPath`. Default "bwrap". */
  bwrap?: string;
  /** Where to look for bwrap (the operator's PATH). */
  searchPath?: string;
  /** Directories bound read-only besides the system's: toolchains outside /usr and /opt. */
  extraReadOnly?: readonly string[];
  /**
   * Paths hidden from every command, besides each command's own `hide`: the operator's secrets
   * that live as files (the App's private key, its `.env`) where the system is bound.
   */
  alwaysHidden?: readonly string[];
  /** The platform (default process.platform). */
  platform?: NodeJS.Platform;
}

/** Where to read about making a sandbox on this host. */
export const SANDBOX_DOCS = "docs/sandbox.md";

export class BubblewrapSandbox implements Sandbox {
  readonly confined = true;
  readonly description: string;

  private constructor(
    private readonly bwrap: string,
    private readonly host: HostView,
    private readonly alwaysHidden: readonly string[],
  ) {
    this.description = `bubblewrap (${bwrap}): no network unless declared, only the worktree writable`;
  }

  /**
   * A sandbox proven to work on this host, or SandboxUnavailable saying what to install or
   * enable. The proof runs `true` in the same namespaces a command gets.
   */
  static async open(options: BubblewrapOptions = {}): Promise<BubblewrapSandbox> {
    const platform = options.platform ?? process.platform;
    if (platform !== "linux")
      throw new SandboxUnavailable(
        `Terfyn runs the commands of agents and repositories only inside a sandbox, and the one it has (bubblewrap) needs Linux; this is ${platform}. Run on Linux (a container or VM will do), or, with the CLI only and at your own risk, pass --unconfined. See ${SANDBOX_DOCS}.`,
      );
    const bwrap = await resolveProgram(options.bwrap ?? "bwrap", "/", options.searchPath).catch(
      () => undefined,
    );
    if (bwrap === undefined)
      throw new SandboxUnavailable(
        `bubblewrap (bwrap) is not installed, and Terfyn runs the commands of agents and repositories only inside it. Install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap) and try again. See ${SANDBOX_DOCS}.`,
      );
    const sandbox = new BubblewrapSandbox(
      bwrap,
      hostView(options.extraReadOnly ?? []),
      options.alwaysHidden ?? [],
    );
    await sandbox.prove();
    return sandbox;
  }

  private async prove(): Promise<void> {
    let stderr = "";
    let exit: SandboxExit;
    const dir = mkdtempSync(join(tmpdir(), "terfyn-sandbox-proof-"));
    try {
      exit = await this.run({
        argv: ["true"],
        writable: dir,
        env: { PATH: "/usr/bin:/bin" },
        timeoutMs: 30_000,
        onStdout: () => {},
        onStderr: (c) => {
          stderr += c.toString();
        },
      });
    } catch (e) {
      throw new SandboxUnavailable(
        `cannot start bubblewrap (${this.bwrap}): ${(e as Error).message}. See ${SANDBOX_DOCS}.`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    if (exit.code !== 0) {
      const said = stderr.trim().split("\n")[0] ?? "";
      throw new SandboxUnavailable(
        `bubblewrap is installed but cannot make a sandbox here (${said || `exit ${exit.code ?? exit.signal}`}). It needs unprivileged user namespaces: on Ubuntu 24.04 (and GitHub's ubuntu-24.04 runners) load an AppArmor profile that lets /usr/bin/bwrap create them, or set kernel.apparmor_restrict_unprivileged_userns=0; elsewhere set kernel.unprivileged_userns_clone=1 and a non-zero user.max_user_namespaces. In a container, allow user namespaces (for Docker: a seccomp profile that permits unshare/clone with CLONE_NEWUSER). See ${SANDBOX_DOCS}.`,
      );
    }
  }

  run(command: SandboxCommand): Promise<SandboxExit> {
    // The binds are made on real paths: a symlinked worktree or hidden path is resolved here,
    // once, by Terfyn, and what is bound is what was resolved.
    const writable = realpathSync(command.writable);
    const cwd = realpathSync(command.cwd ?? command.writable);
    const hide = [...this.alwaysHidden, ...(command.hide ?? [])].map((h) => realOrSelf(h));
    return this.spawn({ ...command, writable, cwd, hide });
  }

  private spawn(command: SandboxCommand): Promise<SandboxExit> {
    const args = bubblewrapArgs(command, this.host);
    return runProcess({
      file: this.bwrap,
      args,
      cwd: "/",
      env: { ...command.env, HOME: SANDBOX_HOME, TMPDIR: SANDBOX_TMP },
      ...(command.stdin !== undefined ? { stdin: command.stdin } : {}),
      timeoutMs: command.timeoutMs,
      ...(command.signal ? { signal: command.signal } : {}),
      onStdout: command.onStdout,
      onStderr: command.onStderr,
    });
  }
}

/** The host as bubblewrap-args.ts needs to see it: lstat, read at the time of each command. */
function hostView(extraReadOnly: readonly string[]): HostView {
  return {
    extraReadOnly,
    kindOf(path: string): PathKind {
      try {
        const st = lstatSync(path);
        if (st.isSymbolicLink()) return { kind: "symlink", target: readlinkSync(path) };
        return st.isDirectory() ? { kind: "dir" } : { kind: "file" };
      } catch {
        return undefined;
      }
    },
  };
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
