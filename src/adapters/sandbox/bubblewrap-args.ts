/**
 * The bubblewrap argument list, built in one place from the command and a view of the host's
 * paths (so it is table-tested without a host). What it grants, in order:
 * - new user, PID, IPC, UTS and cgroup namespaces, and a new network namespace (loopback only)
 *   unless the command may use the network; no capabilities; a new session (no terminal to
 *   inject keystrokes into); the sandbox dies with Terfyn;
 * - the system directories read-only (a symlinked one, as on merged-/usr systems, as the same
 *   symlink), with the system's secret files masked, plus the operator's extra read-only paths;
 * - a fresh /proc (only the sandbox's own processes), a minimal /dev, an empty /tmp holding
 *   the throwaway HOME;
 * - the one writable directory, at its own path;
 * - masked, read-only and empty: `.git` directly below the writable directory (a linked
 *   worktree's `.git` file leads to the user's repository) and every hidden path that a bind
 *   would otherwise show.
 * Nothing else of the host exists inside: not the user's HOME, the run directory, git
 * directories, /work, /var, /srv, /mnt or /media.
 * It never decides whether the command should run; it only says how.
 */
import { posix } from "node:path";
import type { SandboxCommand } from "./sandbox.ts";

/** What a path is on the host: a directory, a file, a symlink (with its target), or absent. */
export type PathKind =
  | { kind: "dir" }
  | { kind: "file" }
  | { kind: "symlink"; target: string }
  | undefined;

/** The host facts the argument list depends on. */
export interface HostView {
  /** What a path is, without following a final symlink (lstat). */
  kindOf(path: string): PathKind;
  /** Directories bound read-only besides the system's (the operator's toolchains). */
  readonly extraReadOnly: readonly string[];
}

/** The system, bound read-only (or recreated as the same symlink). */
export const SYSTEM_PATHS = [
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/etc",
  "/opt",
] as const;

/** System files that hold secrets of the host, masked inside /etc. */
export const MASKED_SYSTEM_FILES = [
  "/etc/shadow",
  "/etc/gshadow",
  "/etc/shadow-",
  "/etc/gshadow-",
  "/etc/ssh",
  "/etc/sudoers",
  "/etc/sudoers.d",
] as const;

/** The sandbox's HOME and TMPDIR: on the sandbox's own empty /tmp. */
export const SANDBOX_HOME = "/tmp/home";
export const SANDBOX_TMP = "/tmp";

/** Where `path` is `dir` or below it (whole components). */
export function isWithin(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith("/") ? dir : `${dir}/`);
}

/** The argument list for `bwrap`: options, `--`, then the command's argv. */
export function bubblewrapArgs(command: SandboxCommand, host: HostView): string[] {
  const writable = checkedAbsolute(command.writable, "the writable directory");
  if (writable === "/") throw new Error("the sandbox cannot make / writable");
  const cwd = checkedAbsolute(command.cwd ?? writable, "the working directory");
  if (!isWithin(cwd, writable))
    throw new Error(`the working directory ${cwd} is not inside ${writable}`);
  const args = [
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    ...(command.network ? [] : ["--unshare-net"]),
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--hostname",
    "terfyn-sandbox",
  ];
  const bound: string[] = [];
  for (const path of SYSTEM_PATHS) {
    const k = host.kindOf(path);
    if (k?.kind === "symlink") args.push("--symlink", k.target, path);
    else if (k?.kind === "dir") {
      args.push("--ro-bind", path, path);
      bound.push(path);
    }
  }
  for (const path of MASKED_SYSTEM_FILES) mask(args, path, host.kindOf(path));
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", SANDBOX_TMP, "--dir", SANDBOX_HOME);
  // After the sandbox's own /tmp: an operator's toolchain under /tmp (a Node fetched into a
  // checkout there) stays visible instead of being covered by the empty tmpfs.
  for (const raw of host.extraReadOnly) {
    const path = checkedAbsolute(raw, "an extra read-only path");
    const k = host.kindOf(path);
    if (k?.kind === "dir" || k?.kind === "file") {
      args.push("--ro-bind", path, path);
      bound.push(path);
    }
  }
  args.push("--bind", writable, writable);
  bound.push(writable);
  const masks = [
    posix.join(writable, ".git"),
    ...(command.hide ?? []).map((h) => posix.normalize(h)),
  ];
  for (const path of masks) {
    if (!posix.isAbsolute(path)) throw new Error(`a hidden path must be absolute: ${path}`);
    // A hidden path that holds the writable directory cannot be masked without masking it.
    if (isWithin(writable, path))
      throw new Error(
        `${path} must stay hidden, and the writable directory ${writable} is inside it`,
      );
    if (bound.some((b) => isWithin(path, b))) mask(args, path, host.kindOf(path));
  }
  args.push("--chdir", cwd, "--", ...command.argv);
  return args;
}

/** A path made present, empty and read-only: a directory as a read-only tmpfs, anything else as /dev/null. */
function mask(args: string[], path: string, k: PathKind): void {
  if (k === undefined) return;
  if (k.kind === "dir") args.push("--tmpfs", path, "--remount-ro", path);
  else args.push("--ro-bind", "/dev/null", path);
}

function checkedAbsolute(path: string, what: string): string {
  if (!posix.isAbsolute(path) || path.includes("\0"))
    throw new Error(`${what} must be an absolute path: ${JSON.stringify(path)}`);
  const n = posix.normalize(path);
  return n.length > 1 && n.endsWith("/") ? n.slice(0, -1) : n;
}
