/**
 * Untrusted text made safe to print on a terminal.
 *
 * Source lines, names and paths come from files the user may not have written (a pull request,
 * a downloaded example). Echoed raw, an ESC or OSC sequence in them retitles, recolours or
 * clears the terminal, and a bidi override reorders what the reader sees. Every such character
 * is shown as a visible escape (`\x1b`, `\u202E`) instead. Our own colour codes are added after
 * escaping, so they are never touched. Pure.
 */

import { INVISIBLE_CHARACTER, visibleCodePoint } from "./escape.ts";

/**
 * Every character a reader cannot see (escape.ts): C0 and C1 controls, DEL, the bidi
 * embedding, override, isolate and mark characters, zero-width and other format characters.
 * Tab and line feed are the callers' to decide about.
 */
const UNSAFE_OR_BREAK = new RegExp(INVISIBLE_CHARACTER, "gu");
const UNSAFE = new RegExp(`(?![\\t\\n])${INVISIBLE_CHARACTER}`, "gu");

function visible(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  if (ch === "\n") return "\\n";
  if (ch === "\t") return "\\t";
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : visibleCodePoint(ch);
}

/**
 * `text` with every terminal control character shown as an escape. With `multiline`, line
 * feeds and tabs are kept (a message that is meant to span lines); otherwise they are escaped
 * too, so one value cannot forge a second output line.
 */
export function escapeTerminalText(text: string, options: { multiline?: boolean } = {}): string {
  return text.replace(options.multiline ? UNSAFE : UNSAFE_OR_BREAK, visible);
}
