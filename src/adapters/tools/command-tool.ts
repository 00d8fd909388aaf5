/**
 * The `command` tool adapter: runs an operation's fixed argv, never through a shell.
 *
 * - argv[0] is resolved once, when the run starts: a name without `/` is looked up in PATH,
 *   one with `/` against the project root; the process runs in the project root.
 * - The input reaches the process as one JSON document on stdin (`inputAs: stdin`), or as
 *   `--key value` pairs (`inputAs: args`, see `argsFromInput`); never as shell text.
 * - The environment is exactly the declared allowlist (values from Terfyn's environment);
 *   nothing else is passed, not even PATH.
 * - The process leads its own process group; at the timeout the whole group is killed.
 * - stdout is kept up to the cap (the result: parsed when it is JSON), stderr's tail is kept.
 */
import { spawn } from "node:child_process";
import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import type { CommandReach } from "../../core/model/project.ts";
import { trackProcessGroup } from "./process-groups.ts";

export interface CommandOperation extends CommandReach {
  /** argv[0], resolved to an absolute path. */
  program: string;
}

export interface CommandToolConfig {
  name: string;
  cwd: string;
  /** The allowlisted variables with their values, taken from the environment at start. */
  env: Record<string, string>;
  maxOutputBytes: number;
  operations: Map<string, CommandOperation>;
  /** Aborted when the run is interrupted: a running command's group gets SIGTERM, then SIGKILL. */
  signal?: AbortSignal;
}

const STDERR_TAIL_BYTES = 8 * 1024;
const KEY = /^[A-Za-z0-9_][A-Za-z0-9_-]*$/;

/**
 * `inputAs: args`: each top-level field of the input object, in key order sorted by code
 * point, becomes two arguments `--key` and `value`. A string is passed as is; a number or
 * boolean as its JSON text; null, an array or an object as its JSON text. A key must match
 * `[A-Za-z0-9_][A-Za-z0-9_-]*` (so it can never start an option of its own).
 */
export function argsFromInput(input: unknown): string[] {
  if (input === null || typeof input !== "object" || Array.isArray(input))
    throw new Error("inputAs: args needs an object input");
  const out: string[] = [];
  for (const key of Object.keys(input).sort()) {
    if (!KEY.test(key))
      throw new Error(
        `input field \`${key}\` cannot be an argument name ([A-Za-z0-9_][A-Za-z0-9_-]*)`,
      );
    const v = (input as Record<string, unknown>)[key];
    out.push(`--${key}`, typeof v === "string" ? v : JSON.stringify(v));
  }
  return out;
}

/** Resolves argv[0]: PATH for a bare name, the project root for a relative path. */
export async function resolveProgram(
  argv0: string,
  projectRoot: string,
  path: string | undefined,
): Promise<string> {
  const candidates = argv0.includes("/")
    ? [isAbsolute(argv0) ? argv0 : resolve(projectRoot, argv0)]
    : (path ?? "")
        .split(delimiter)
        .filter((d) => d !== "")
        .map((d) => join(d, argv0));
  for (const c of candidates) {
    try {
      if ((await stat(c)).isFile()) {
        await access(c, constants.X_OK);
        return c;
      }
    } catch {
      // Not here, or not executable: try the next.
    }
  }
  throw new Error(
    argv0.includes("/")
      ? `${argv0} (relative to the project root) is not an executable file`
      : `${argv0} is not an executable found in PATH`,
  );
}

export class CommandTool {
  constructor(private readonly config: CommandToolConfig) {}

  async execute(
    operation: string,
    input: unknown,
  ): Promise<{ ok: boolean; result: unknown; summary?: string }> {
    const op = this.config.operations.get(operation);
    if (!op)
      return {
        ok: false,
        result: { error: `tool ${this.config.name} offers no operation ${operation} to this run` },
      };
    let args: string[];
    try {
      args = op.inputAs === "args" ? argsFromInput(input ?? {}) : [];
    } catch (e) {
      return { ok: false, result: { error: (e as Error).message } };
    }
    const stdin = op.inputAs === "stdin" ? `${JSON.stringify(input ?? {})}\n` : "";
    if (this.config.signal?.aborted)
      return {
        ok: false,
        result: { error: "the run is being interrupted; the command was not started" },
      };
    try {
      const r = await this.spawn(op, [...op.argv.slice(1), ...args], stdin);
      const summary = r.timed_out
        ? "timed out (the process group was killed)"
        : r.exit_code === 0
          ? "exit 0"
          : r.exit_code === null
            ? `killed by ${r.signal ?? "a signal"}`
            : `failed (exit ${r.exit_code})`;
      return { ok: r.exit_code === 0 && !r.timed_out, result: r, summary };
    } catch (e) {
      return {
        ok: false,
        result: { error: (e as Error).message },
        summary: `failed: ${(e as Error).message}`,
      };
    }
  }

  private spawn(
    op: CommandOperation,
    args: string[],
    stdin: string,
  ): Promise<{
    exit_code: number | null;
    signal: string | null;
    timed_out: boolean;
    stdout: unknown;
    stderr: string;
    truncated: boolean;
  }> {
    const cap = this.config.maxOutputBytes;
    return new Promise((done, fail) => {
      const child = spawn(op.program, args, {
        cwd: this.config.cwd,
        // Its own process group, so the timeout can kill everything it started.
        detached: true,
        shell: false,
        stdio: ["pipe", "pipe", "pipe"],
        // Exactly the allowlist: a fresh object, never a copy of process.env.
        env: { ...this.config.env },
        argv0: op.argv[0] as string,
      });
      const untrack = trackProcessGroup(child.pid);
      const out: Buffer[] = [];
      let outBytes = 0;
      let truncated = false;
      let errTail = Buffer.alloc(0);
      child.stdout.on("data", (c: Buffer) => {
        if (outBytes >= cap) {
          truncated = true;
          return;
        }
        const take = c.subarray(0, cap - outBytes);
        if (take.length < c.length) truncated = true;
        out.push(take);
        outBytes += take.length;
      });
      child.stderr.on("data", (c: Buffer) => {
        const joined = Buffer.concat([errTail, c]);
        errTail = joined.subarray(Math.max(0, joined.length - STDERR_TAIL_BYTES));
      });
      // A process that does not read its stdin must not fail the call.
      child.stdin.on("error", () => {});
      child.stdin.end(stdin);
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup(child.pid, () => child.kill("SIGKILL"));
      }, op.timeoutMs);
      const abort = this.config.signal;
      let grace: NodeJS.Timeout | undefined;
      const onAbort = () => {
        killGroup(child.pid, () => child.kill("SIGTERM"), "SIGTERM");
        grace = setTimeout(() => killGroup(child.pid, () => {}), ABORT_GRACE_MS);
      };
      abort?.addEventListener("abort", onAbort, { once: true });
      const settle = () => {
        clearTimeout(timer);
        clearTimeout(grace);
        abort?.removeEventListener("abort", onAbort);
      };
      // When the leader exits, whatever it left behind in its group goes with it, even while
      // a leftover still holds the output pipes open.
      child.on("exit", () => killGroup(child.pid, () => {}));
      child.on("error", (e) => {
        settle();
        untrack();
        fail(new Error(`cannot run ${op.argv[0]}: ${e.message}`));
      });
      child.on("close", (code, signal) => {
        settle();
        killGroup(child.pid, () => {});
        untrack();
        const text = Buffer.concat(out).toString("utf8");
        done({
          exit_code: code,
          signal,
          timed_out: timedOut,
          stdout: truncated ? text : parseJson(text),
          stderr: errTail.toString("utf8"),
          truncated,
        });
      });
    });
  }
}

/** After SIGTERM on interruption, how long a command's group has before SIGKILL. */
const ABORT_GRACE_MS = 2000;

function killGroup(
  pid: number | undefined,
  fallback: () => void,
  sig: NodeJS.Signals = "SIGKILL",
): void {
  try {
    if (pid !== undefined) process.kill(-pid, sig);
  } catch {
    fallback();
  }
}

function parseJson(text: string): unknown {
  const t = text.trim();
  if (t === "") return text;
  try {
    return JSON.parse(t);
  } catch {
    return text;
  }
}
