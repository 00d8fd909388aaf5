/**
 * Runs one of the repository's own commands (AGENTS.md: test, single test, …) for a review
 * run: through the shell, in the run's worktree, inside the sandbox (src/adapters/sandbox:
 * only the worktree writable, no network unless AGENTS.md declares it, nothing survives the
 * command), with an environment stripped to PATH, LANG and the sandbox's own HOME and TMPDIR
 * plus the variables the run configuration names. The model's API key, the GitHub token and
 * everything else the parent holds never reach it. Never interprets the command: what it is
 * comes from the repository.
 */
import { constants as osConstants } from "node:os";
import type { Sandbox } from "../sandbox/sandbox.ts";
import { spawnTimer } from "../spawn-log.ts";

/** The only variables of the parent's environment a repository command sees, unless named. */
export const BASE_COMMAND_ENV = ["PATH", "HOME", "LANG", "TMPDIR"] as const;

export interface RepoCommandOptions {
  /** The worktree: the command's working directory and the only directory it may write. */
  cwd: string;
  /** Where the command runs (src/adapters/sandbox). */
  sandbox: Sandbox;
  /** Paths below the worktree the command must not see (masked by the sandbox). */
  hide?: readonly string[];
  /** Whether the command may use the network (AGENTS.md `network:`). Default false. */
  network?: boolean;
  /** The parent's environment, read for BASE_COMMAND_ENV and passEnv only. */
  parentEnv: Readonly<Record<string, string | undefined>>;
  /** Further variables to pass through by name (run configuration). */
  passEnv?: readonly string[];
  /** Variables set by the run itself (e.g. TERFYN_TEST_NAME). */
  env?: Record<string, string>;
  /** Default 10 minutes. */
  timeoutMs?: number;
  /** Characters of output kept. Default 200 000. */
  maxOutput?: number;
  /** Aborted: the command gets SIGTERM, then SIGKILL (the sandbox's own grace period). */
  signal?: AbortSignal;
}

export interface RepoCommandResult {
  code: number;
  output: string;
  timedOut: boolean;
}

/** The environment a repository command runs with. */
export function repoCommandEnv(
  options: Pick<RepoCommandOptions, "parentEnv" | "passEnv" | "env">,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of [...BASE_COMMAND_ENV, ...(options.passEnv ?? [])]) {
    const v = options.parentEnv[name];
    if (v !== undefined) env[name] = v;
  }
  return { ...env, ...options.env };
}

export async function runRepoCommand(
  command: string,
  options: RepoCommandOptions,
): Promise<RepoCommandResult> {
  const max = options.maxOutput ?? 200_000;
  const timeoutMs = options.timeoutMs ?? 10 * 60_000;
  const timed = spawnTimer("repo-command", command);
  let output = "";
  const add = (c: Buffer) => {
    if (output.length < max) output += c.toString();
  };
  try {
    const exit = await options.sandbox.run({
      argv: ["/bin/sh", "-c", command],
      writable: options.cwd,
      ...(options.hide ? { hide: options.hide } : {}),
      env: repoCommandEnv(options),
      ...(options.network ? { network: true } : {}),
      timeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
      onStdout: add,
      onStderr: add,
    });
    timed?.();
    return {
      code: exit.timedOut ? 124 : (exit.code ?? 128 + signalNumber(exit.signal)),
      output: exit.timedOut ? `${output}\n(the command was stopped after ${timeoutMs} ms)` : output,
      timedOut: exit.timedOut,
    };
  } catch (e) {
    return { code: 127, output: (e as Error).message, timedOut: false };
  }
}

function signalNumber(signal: NodeJS.Signals | null): number {
  return signal ? (osConstants.signals[signal] ?? 0) : 1;
}
