/**
 * The `command` tool adapter: runs an operation's fixed argv, never through a shell.
 *
 * - argv[0] is resolved once, when the run starts: a name without `/` is looked up in PATH,
 *   one with `/` against the project root; the process runs in the project root.
 * - The input reaches the process as one JSON document on stdin (`inputAs: stdin`), or as
 *   `--key value` pairs (`inputAs: args`, see `argsFromInput`); never as shell text.
 * - The environment is exactly the declared allowlist (values from Terfyn's environment);
 *   nothing else is passed, not even PATH.
 * - It runs inside the sandbox (src/adapters/sandbox): the project root is the only writable
 *   directory, the run directory and state are hidden, no network unless the operation declares
 *   the `network.egress` effect; at the timeout the whole sandbox is killed.
 * - stdout is kept up to the cap (the result: parsed when it is JSON), stderr's tail is kept.
 */
import type { CommandReach } from "../../core/model/project.ts";
import type { Sandbox } from "../sandbox/sandbox.ts";

export interface CommandOperation extends CommandReach {
  /** argv[0], resolved to an absolute path. */
  program: string;
  /** The operation declares network.egress: its sandbox has the network. Default: none. */
  network?: boolean;
}

export interface CommandToolConfig {
  name: string;
  /** The project root: where the command runs, and the only directory it may write. */
  cwd: string;
  /** Where the command runs (src/adapters/sandbox). */
  sandbox: Sandbox;
  /** Paths below the project root the command must not see (the run directory, the state). */
  hide?: readonly string[];
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

  private async spawn(
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
    const out: Buffer[] = [];
    let outBytes = 0;
    let truncated = false;
    let errTail = Buffer.alloc(0);
    let exit: Awaited<ReturnType<Sandbox["run"]>>;
    try {
      exit = await this.config.sandbox.run({
        argv: [op.program, ...args],
        argv0: op.argv[0] as string,
        writable: this.config.cwd,
        ...(this.config.hide ? { hide: this.config.hide } : {}),
        // Exactly the allowlist: a fresh object, never a copy of process.env.
        env: { ...this.config.env },
        ...(op.network ? { network: true } : {}),
        timeoutMs: op.timeoutMs,
        stdin,
        ...(this.config.signal ? { signal: this.config.signal } : {}),
        onStdout: (c: Buffer) => {
          if (outBytes >= cap) {
            truncated = true;
            return;
          }
          const take = c.subarray(0, cap - outBytes);
          if (take.length < c.length) truncated = true;
          out.push(take);
          outBytes += take.length;
        },
        onStderr: (c: Buffer) => {
          const joined = Buffer.concat([errTail, c]);
          errTail = joined.subarray(Math.max(0, joined.length - STDERR_TAIL_BYTES));
        },
      });
    } catch (e) {
      throw new Error(`cannot run ${op.argv[0]}: ${(e as Error).message}`);
    }
    const text = Buffer.concat(out).toString("utf8");
    return {
      exit_code: exit.code,
      signal: exit.signal,
      timed_out: exit.timedOut,
      stdout: truncated ? text : parseJson(text),
      stderr: errTail.toString("utf8"),
      truncated,
    };
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
