/**
 * `-` on the command line (issue 23, item 6): where a flag names a file the command reads, `-`
 * is standard input; where it names a directory, `-` is refused with what to pass instead.
 * Standard input can be read once, so two flags given `-` in one invocation are refused too.
 */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { type CliIo, UsageError, UserError } from "./io.ts";

/** The file argument that names standard input. */
export const STDIN = "-";

/** How standard input is named where a path would be (error messages, a script's location). */
export const STDIN_LABEL = "standard input";

/**
 * Refuses `-` for each flag that names a directory: `dirs` maps a flag (`--project`) or a
 * positional's name (`DIR`) to its value and what the directory is.
 */
export function refuseStdinDirectories(
  command: string,
  dirs: Record<string, { value: unknown; what: string }>,
): void {
  for (const [name, { value, what }] of Object.entries(dirs)) {
    if (value !== STDIN) continue;
    const flag = name.startsWith("--") ? `${name} -` : `\`-\` as ${name}`;
    throw new UsageError(
      `${command}: ${flag}: ${name} names a directory (${what}), and \`-\` reads standard input, which is no directory; pass the directory's path (\`./-\` for a directory named -)`,
    );
  }
}

/** Refuses two flags that both say `-`: standard input can be read only once. */
export function refuseTwoStdinReaders(command: string, flags: Record<string, unknown>): void {
  const dashes = Object.entries(flags)
    .filter(([, v]) => v === STDIN)
    .map(([flag]) => `${flag} -`);
  if (dashes.length > 1)
    throw new UsageError(
      `${command}: ${dashes.join(" and ")} both read standard input, which can be read only once; give all but one of them as a file`,
    );
}

/** Standard input's text, for `flag -`; a UserError when the command has none to read. */
export async function readStdinFor(io: CliIo, flag: string): Promise<string> {
  if (!io.readStdin) throw new UserError(`${flag} -: there is no standard input to read`);
  return io.readStdin();
}

/** The text a file argument names: the file, relative to the working directory, or standard input for `-`. */
export async function readFileArg(io: CliIo, flag: string, value: string): Promise<string> {
  return value === STDIN ? readStdinFor(io, flag) : readFile(resolve(io.cwd, value), "utf8");
}
