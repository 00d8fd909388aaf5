/**
 * Runs the CLI in-process with captured output, exactly as the binary does.
 */
import { runCli } from "../../src/cli/main.ts";

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runTerfyn(
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
  /** Standard input's text; absent, the CLI has none (as when stdin is not readable). */
  stdin?: string,
  isTTY = false,
): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, {
    stdout: (s) => {
      stdout += s;
    },
    stderr: (s) => {
      stderr += s;
    },
    cwd,
    env,
    isTTY,
    ...(stdin !== undefined ? { readStdin: async () => stdin } : {}),
  });
  return { code, stdout, stderr };
}
