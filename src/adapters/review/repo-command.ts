/**
 * Runs one of the repository's own commands (AGENTS.md: test, single test, …) for a review
 * run: through the shell, in the run's worktree, in its own process group (the whole group is
 * killed on timeout, so a test that forks a server cannot outlive the run), with an environment
 * stripped to PATH, HOME, LANG and TMPDIR plus the variables the run configuration names. The
 * model's API key, the GitHub token and everything else the parent holds never reach it.
 * Never interprets the command: what it is comes from the repository.
 */
import { spawn } from "node:child_process";
import { spawnTimer } from "../spawn-log.ts";

/** The only variables of the parent's environment a repository command sees, unless named. */
export const BASE_COMMAND_ENV = ["PATH", "HOME", "LANG", "TMPDIR"] as const;

export interface RepoCommandOptions {
  cwd: string;
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

export function runRepoCommand(
  command: string,
  options: RepoCommandOptions,
): Promise<RepoCommandResult> {
  const max = options.maxOutput ?? 200_000;
  const timed = spawnTimer("repo-command", command);
  return new Promise((resolve) => {
    const child = spawn("/bin/sh", ["-c", command], {
      cwd: options.cwd,
      env: repoCommandEnv(options),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const add = (c: Buffer) => {
      if (output.length < max) output += c.toString();
    };
    child.stdout.on("data", add);
    child.stderr.on("data", add);
    let timedOut = false;
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    };
    const timer = setTimeout(
      () => {
        timedOut = true;
        killGroup();
      },
      options.timeoutMs ?? 10 * 60_000,
    );
    child.on("error", (e) => {
      clearTimeout(timer);
      resolve({ code: 127, output: e.message, timedOut: false });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      timed?.();
      // The shell is gone; anything it left running in its group goes with it.
      killGroup();
      resolve({
        code: timedOut ? 124 : (code ?? 1),
        output: timedOut
          ? `${output}\n(the command was stopped after ${options.timeoutMs ?? 600_000} ms)`
          : output,
        timedOut,
      });
    });
  });
}
