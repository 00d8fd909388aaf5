/**
 * SIGINT and SIGTERM while a run (`terfyn run`, `terfyn review`) executes: the first aborts
 * `interrupt` (a model request in flight is cancelled, a running command's process group gets
 * SIGTERM, the run stops at its next boundary and records where), a second one kills what is
 * still running and exits at once; what the run recorded stays resumable.
 */
import { killLiveProcessGroups } from "../adapters/tools/process-groups.ts";
import type { CliIo } from "./io.ts";

export interface SignalWatch {
  /** The first signal received, if any. */
  readonly received: NodeJS.Signals | undefined;
  dispose(): void;
}

export function watchSignals(io: CliIo, interrupt: AbortController, what: string): SignalWatch {
  let received: NodeJS.Signals | undefined;
  const handlers = new Map<NodeJS.Signals, () => void>();
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    const handler = () => {
      if (received !== undefined) {
        io.stderr(`terfyn: ${sig} again: exiting now; the run can still be resumed\n`);
        killLiveProcessGroups("SIGKILL");
        process.exit(signalExitCode(sig));
      }
      received = sig;
      io.stderr(`terfyn: ${sig}: stopping the run (${what})\n`);
      // An AbortError as every library expects, whose message is the signal's name: what a run
      // records as having stopped it.
      interrupt.abort(new DOMException(sig, "AbortError"));
    };
    handlers.set(sig, handler);
    process.on(sig, handler);
  }
  return {
    get received() {
      return received;
    },
    dispose() {
      for (const [sig, h] of handlers) process.off(sig, h);
    },
  };
}

/** The shell's convention: 128 + the signal number. */
export function signalExitCode(sig: NodeJS.Signals): number {
  return sig === "SIGTERM" ? 143 : 130;
}
