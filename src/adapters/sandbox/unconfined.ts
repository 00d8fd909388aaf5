/**
 * No sandbox: the command runs with Terfyn's own powers, in its own process group, with the
 * environment it is given. Only the CLI's explicit `--unconfined` reaches this; the App and the
 * Action never do, and every report of a run that used it says so first.
 */
import { runProcess } from "./process-run.ts";
import type { Sandbox, SandboxCommand, SandboxExit } from "./sandbox.ts";

export class UnconfinedSandbox implements Sandbox {
  readonly confined = false;
  readonly description =
    "UNCONFINED (--unconfined): commands ran with this process's own powers, files and network";

  run(command: SandboxCommand): Promise<SandboxExit> {
    const [program, ...args] = command.argv;
    if (program === undefined) return Promise.reject(new Error("an empty command"));
    return runProcess({
      file: program,
      args,
      ...(command.argv0 !== undefined ? { argv0: command.argv0 } : {}),
      cwd: command.cwd ?? command.writable,
      env: command.env,
      ...(command.stdin !== undefined ? { stdin: command.stdin } : {}),
      timeoutMs: command.timeoutMs,
      ...(command.signal ? { signal: command.signal } : {}),
      onStdout: command.onStdout,
      onStderr: command.onStderr,
    });
  }
}
