/**
 * V8 settings for the CLI's short processes.
 *
 * A `terfyn validate` or `test` is over in well under a second, and with V8's defaults a sixth
 * of its CPU at 2,000 agents went to TurboFan: it compiles the parser's and the YAML reader's
 * hot functions, with everything they call inlined, on a background thread, for a process that
 * ends before the faster code pays back. So the CLI turns TurboFan's inlining off and, where the
 * V8 has the setting, lets a function run longer before TurboFan takes it. Measured at 2,000
 * agents (100 per file), CPU of `validate` with the settings against V8's defaults:
 *
 * - Node 20 (V8 11): 580 ms against 740; the tier-up budget is 4x V8's 66 KiB.
 * - Node 22 (V8 12): 530 ms against 600; TurboFan after 6,000 calls instead of 3,000.
 * - Node 24 (V8 13): its defaults did as well as any setting tried (570 ms), so none is set.
 *
 * At 8,000 agents, where optimised code runs longest, they cost nothing (1,390 ms against 1,470
 * on Node 20, 1,280 against 1,330 on Node 22), and wall time went down with the CPU. The
 * benchmark prints `validate` with V8's defaults beside the judged figure (docs/performance.md).
 *
 * Only the V8 versions above get settings: a flag V8 does not know makes it print
 * "unrecognized flag" on stderr. `TERFYN_V8_DEFAULTS=1` keeps V8's defaults.
 */
import { setFlagsFromString } from "node:v8";

/** The settings by V8 major version. */
export const SHORT_RUN_V8_FLAGS: Readonly<Record<number, string>> = {
  11: "--no-turbo-inlining --interrupt-budget=270336",
  12: "--no-turbo-inlining --invocation-count-for-turbofan=6000",
};

/** The settings for this V8 and environment, if any. */
export function shortRunFlags(
  v8Version: string,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  if (env.TERFYN_V8_DEFAULTS === "1") return undefined;
  const major = Number(v8Version.split(".")[0]);
  return Object.hasOwn(SHORT_RUN_V8_FLAGS, major) ? SHORT_RUN_V8_FLAGS[major] : undefined;
}

/** Applies the settings when there are any; returns them. */
export function tuneV8ForShortRuns(
  v8Version: string = process.versions.v8,
  env: Readonly<Record<string, string | undefined>> = process.env,
  set: (flags: string) => void = setFlagsFromString,
): string | undefined {
  const flags = shortRunFlags(v8Version, env);
  if (flags !== undefined) for (const flag of flags.split(" ")) set(flag);
  return flags;
}
