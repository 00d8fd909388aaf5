/**
 * V8 settings for the CLI's short processes.
 *
 * A `terfyn validate` or `test` is over in well under a second, and at 2,000 agents TurboFan's
 * inlining was a sixth of its CPU: V8 compiles the parser's and the YAML reader's hot functions
 * with everything they call inlined, on a background thread, for a process that ends before the
 * faster code pays back. Without inlining the CLI used 640 ms of CPU instead of 750 on Node 20,
 * and no more at 8,000 agents (1,410 ms against 1,420), where the optimised code runs longest
 * (measured by the benchmark, which also prints the figures with V8's defaults; docs/performance.md).
 *
 * Only V8 11 to 13 (Node 20 to 24) get it: that is where it was measured, and V8 prints
 * "unrecognized flag" on stderr for a flag it does not know. `TERFYN_V8_DEFAULTS=1` keeps V8's
 * defaults.
 */
import { setFlagsFromString } from "node:v8";

export const SHORT_RUN_V8_FLAGS = "--no-turbo-inlining";

/** Whether the settings apply to this V8 and environment. */
export function shortRunTuning(
  v8Version: string,
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  if (env.TERFYN_V8_DEFAULTS === "1") return false;
  const major = Number(v8Version.split(".")[0]);
  return Number.isInteger(major) && major >= 11 && major <= 13;
}

/** Applies the settings when they apply; returns whether it did. */
export function tuneV8ForShortRuns(
  v8Version: string = process.versions.v8,
  env: Readonly<Record<string, string | undefined>> = process.env,
  set: (flags: string) => void = setFlagsFromString,
): boolean {
  if (!shortRunTuning(v8Version, env)) return false;
  set(SHORT_RUN_V8_FLAGS);
  return true;
}
