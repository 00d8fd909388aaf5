/**
 * Flag parsing for commands: node's `util.parseArgs` with errors turned into `UsageError`s that
 * name the command and the flag.
 */

import { parseArgs } from "node:util";
import { POSITIVE_WHOLE, positiveWholeNumber } from "../core/model/budget-number.ts";
import { didYouMean } from "../core/suggest.ts";
import { UsageError } from "./io.ts";

export type FlagSpec = Record<
  string,
  { type: "string" | "boolean"; short?: string; multiple?: boolean }
>;

export function parseFlags<T extends FlagSpec>(command: string, argv: string[], spec: T) {
  try {
    return parseArgs({
      args: argv,
      options: { ...spec, help: { type: "boolean", short: "h" }, debug: { type: "boolean" } },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    const msg = (e as Error).message.replace(/\. To specify a positional argument.*$/s, "");
    const unknown = /Unknown option '--([^']+)'/.exec(msg)?.[1];
    const hint = unknown === undefined ? undefined : didYouMean(unknown, Object.keys(spec));
    throw new UsageError(`${command}: ${msg}${hint ? ` (${hint.replace("`", "`--")})` : ""}`);
  }
}

/** A flag's positive whole number (up to 12 digits), or undefined when not given. */
export function wholeNumber(
  command: string,
  v: string | boolean | undefined,
  flag: string,
): number | undefined {
  if (v === undefined) return undefined;
  const n = positiveWholeNumber(String(v));
  if (n === undefined)
    throw new UsageError(`${command}: ${flag} must be ${POSITIVE_WHOLE}, not ${JSON.stringify(v)}`);
  return n;
}
