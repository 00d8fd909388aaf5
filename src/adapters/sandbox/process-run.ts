/**
 * Starts one process for a Sandbox and sees it through: its own process group (so a timeout,
 * an interruption or its own end takes everything it started in that group), output handed to
 * the caller's sinks, stdin written and closed, a timeout, and SIGTERM then SIGKILL when the
 * run is interrupted. Both sandboxes start their process here; nothing else in the project
 * starts a command on behalf of an agent or a repository.
 */
import { spawn } from "node:child_process";
import { trackProcessGroup } from "../tools/process-groups.ts";
import type { SandboxExit } from "./sandbox.ts";

export interface ProcessSpec {
  file: string;
  args: readonly string[];
  argv0?: string;
  cwd: string;
  env: Readonly<Record<string, string>>;
  stdin?: string | Buffer;
  timeoutMs: number;
  signal?: AbortSignal;
  onStdout: (chunk: Buffer) => void;
  onStderr: (chunk: Buffer) => void;
}

/** After SIGTERM on interruption, how long a command's group has before SIGKILL. */
export const ABORT_GRACE_MS = 2000;

export function runProcess(spec: ProcessSpec): Promise<SandboxExit> {
  if (spec.signal?.aborted)
    return Promise.reject(new Error("the run is being interrupted; the command was not started"));
  return new Promise((resolve, reject) => {
    const child = spawn(spec.file, [...spec.args], {
      cwd: spec.cwd,
      // Its own process group: the timeout and the interruption kill everything in it.
      detached: true,
      shell: false,
      stdio: ["pipe", "pipe", "pipe"],
      // Exactly what the caller gives: a fresh object, never a copy of process.env.
      env: { ...spec.env },
      ...(spec.argv0 !== undefined ? { argv0: spec.argv0 } : {}),
    });
    const untrack = trackProcessGroup(child.pid);
    child.stdout.on("data", spec.onStdout);
    child.stderr.on("data", spec.onStderr);
    // A process that does not read its stdin must not fail the call.
    child.stdin.on("error", () => {});
    child.stdin.end(spec.stdin ?? "");
    let timedOut = false;
    const killGroup = (sig: NodeJS.Signals) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, sig);
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup("SIGKILL");
    }, spec.timeoutMs);
    let grace: NodeJS.Timeout | undefined;
    const onAbort = () => {
      killGroup("SIGTERM");
      grace = setTimeout(() => killGroup("SIGKILL"), ABORT_GRACE_MS);
    };
    spec.signal?.addEventListener("abort", onAbort, { once: true });
    const settle = () => {
      clearTimeout(timer);
      clearTimeout(grace);
      spec.signal?.removeEventListener("abort", onAbort);
      untrack();
    };
    // When the leader exits, whatever it left in its group goes with it, even while a leftover
    // still holds the output pipes open.
    child.on("exit", () => killGroup("SIGKILL"));
    child.on("error", (e) => {
      settle();
      reject(e);
    });
    child.on("close", (code, signal) => {
      settle();
      killGroup("SIGKILL");
      resolve({ code, signal, timedOut });
    });
  });
}
