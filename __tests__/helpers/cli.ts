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
    isTTY: false,
  });
  return { code, stdout, stderr };
}
