/**
 * The Sandbox port: the one way Terfyn executes code on behalf of an agent or a repository
 * (the repository's AGENTS.md commands, the workspace `run_tests`, `command` tools). What runs
 * through it is the adversary: it sees one writable directory, the system read-only, a
 * throwaway HOME and TMPDIR, exactly the environment given, no network unless asked, and it
 * is gone, with everything it started, when the command ends or times out.
 *
 * Two implementations: bubblewrap (bubblewrap.ts), the default and the only one the App and
 * the Action use; and unconfined.ts, only behind the CLI's explicit `--unconfined`.
 * This module never decides which one a caller gets; open-sandbox.ts does.
 */

/** One command to run confined. */
export interface SandboxCommand {
  /** Program and arguments. A program without `/` is looked up in the command's PATH. */
  readonly argv: readonly string[];
  /** What the program sees as its argv[0] (default: argv[0]). */
  readonly argv0?: string;
  /** The directory bound read-write (a worktree, a workspace root); the command runs in it. */
  readonly writable: string;
  /** Working directory: `writable` or a directory below it. Default: `writable`. */
  readonly cwd?: string;
  /**
   * Paths that must stay out of reach even where they lie below `writable` (a run directory,
   * a state file's directory): masked read-only and empty in the sandbox. Every `.git` directly
   * below `writable` is always masked.
   */
  readonly hide?: readonly string[];
  /** The command's whole environment. HOME and TMPDIR are the sandbox's own when confined. */
  readonly env: Readonly<Record<string, string>>;
  /** Network access (a new network namespace with only loopback when false). Default false. */
  readonly network?: boolean;
  readonly timeoutMs: number;
  /** Written to the command's stdin, which is then closed. Default: nothing. */
  readonly stdin?: string | Buffer;
  /** Aborted: the command gets SIGTERM, then SIGKILL after a grace period. */
  readonly signal?: AbortSignal;
  readonly onStdout: (chunk: Buffer) => void;
  readonly onStderr: (chunk: Buffer) => void;
}

/** How a sandboxed command ended. */
export interface SandboxExit {
  /** The command's exit status; null when it was killed by a signal. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly timedOut: boolean;
}

export interface Sandbox {
  /** False only for the CLI's `--unconfined`: every report of such a run says so first. */
  readonly confined: boolean;
  /** One line for progress and reports: what confines the commands (or that nothing does). */
  readonly description: string;
  /** Runs the command; rejects only when it could not be started at all. */
  run(command: SandboxCommand): Promise<SandboxExit>;
}

/** No sandbox can be made here; the message says what to install or enable. */
export class SandboxUnavailable extends Error {
  override name = "SandboxUnavailable";
}
