/**
 * A budget given as text (a flag, an Action input): a positive whole number of up to twelve
 * digits, so a limit is never zero, negative, fractional, or beyond what a count can reach. Pure.
 */

/** The number `text` says, or undefined when it is not a positive whole number (12 digits at most). */
export function positiveWholeNumber(text: string): number | undefined {
  const t = text.trim();
  return /^[1-9][0-9]{0,11}$/.test(t) ? Number(t) : undefined;
}

/** What a refused budget's message says of it. */
export const POSITIVE_WHOLE = "a positive whole number";
