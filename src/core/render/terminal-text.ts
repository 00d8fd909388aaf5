/**
 * Untrusted text made safe to print on a terminal.
 *
 * Source lines, names and paths come from files the user may not have written (a pull request,
 * a downloaded example). Echoed raw, an ESC or OSC sequence in them retitles, recolours or
 * clears the terminal, and a bidi override reorders what the reader sees. Every such character
 * is shown as a visible escape (`\x1b`, `\u202e`) instead. Our own colour codes are added after
 * escaping, so they are never touched. Pure.
 */

import { UNSAFE_CHARACTER } from "../source.ts";

/**
 * C0 controls (but tab and line feed, which callers decide about), DEL, C1 controls, and the
 * bidi embedding, override and isolate characters.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_OR_BREAK = new RegExp(UNSAFE_CHARACTER, "g");

function visible(ch: string): string {
  const code = ch.charCodeAt(0);
  if (ch === "\n") return "\\n";
  if (ch === "\t") return "\\t";
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
}

/**
 * `text` with every terminal control character shown as an escape. With `multiline`, line
 * feeds and tabs are kept (a message that is meant to span lines); otherwise they are escaped
 * too, so one value cannot forge a second output line.
 */
export function escapeTerminalText(text: string, options: { multiline?: boolean } = {}): string {
  return text.replace(options.multiline ? UNSAFE : UNSAFE_OR_BREAK, visible);
}
