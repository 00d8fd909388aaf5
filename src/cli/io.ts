/**
 * The CLI's window on the process: output streams, working directory, environment, TTY-ness.
 * Passed in so commands run in-process in tests exactly as they do from the shell.
 */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
  env: Record<string, string | undefined>;
  /** Whether stdout is a terminal (colour only then, and never with NO_COLOR). */
  isTTY: boolean;
  /** Asks a question on the terminal; absent when there is no terminal to ask on. */
  prompt?: (question: string) => Promise<string>;
  /** Standard input as text, for a file argument given as `-`; absent when there is none. */
  readStdin?: () => Promise<string>;
  /** The clock (tests fix it). */
  now?: () => Date;
}

export function useColor(io: CliIo): boolean {
  return io.isTTY && io.env.NO_COLOR === undefined && io.env.TERM !== "dumb";
}

/** A usage problem: printed with the command's usage line, exit 1, never a stack trace. */
export class UsageError extends Error {}

/** A user-facing failure (missing file, bad directory): printed as one line, exit 1. */
export class UserError extends Error {}
