/**
 * The one escaper for every surface Terfyn writes to: the pull-request comment, the check run's
 * summary and text, the job summary (Markdown, with HTML blocks in it), check annotations, SARIF
 * and JUnit (plain text; their libraries escape JSON and XML). Every value that came from a
 * repository or a run (agent, resource and file names, Schema property keys, instructions,
 * capability-test text, diagnostics, review text) goes through the function for the context it
 * lands in, so no heading, mention, image, link, table cell, HTML element or `</details>` can be
 * injected through it.
 *
 * In every context the characters a reader cannot see are shown as visible escapes instead of
 * raw: C0 and C1 controls (a line feed only where a line break is legal), the bidi embedding,
 * override, isolate and mark characters (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C),
 * zero-width and every other format character (Unicode category Cf: U+200B–U+200D, U+2060,
 * U+FEFF, the tag characters, …), the line and paragraph separators and the Hangul fillers.
 * The form is `\u` and four uppercase hex digits (`\u202E`), or `\u{E0041}` past the BMP, so a
 * reviewer sees that the text holds something, and what. Pure.
 */

/**
 * Controls (Cc), format characters (Cf: bidi, zero-width, tags, …), line and paragraph
 * separators, and the Hangul fillers that render as nothing: one class for every surface.
 */
export const INVISIBLE_CHARACTER = "[\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}\\u115f\\u1160\\u3164\\uffa0]";
const INVISIBLE = new RegExp(INVISIBLE_CHARACTER, "gu");

/** A line break where none is legal: shown, not kept. */
const SHOWN_NEWLINE = "⏎";

/** `\u202E`, or `\u{E0041}` for a code point past the BMP. */
export function visibleCodePoint(ch: string): string {
  const cp = ch.codePointAt(0) ?? 0;
  const hex = cp.toString(16).toUpperCase();
  return cp > 0xffff ? `\\u{${hex}}` : `\\u${hex.padStart(4, "0")}`;
}

/**
 * `value` with every invisible character shown as a visible escape. Characters in `keep` stay
 * raw (a line feed where a line break is legal, a tab in a code block); a line feed that is not
 * kept is shown as `⏎`.
 */
export function showInvisible(value: string, keep = ""): string {
  return value.replace(INVISIBLE, (c) =>
    keep.includes(c) ? c : c === "\n" ? SHOWN_NEWLINE : visibleCodePoint(c),
  );
}

/** The longest run of `ch` in `s` (0 when there is none). */
function longestRun(s: string, ch: "`" | "~", atLineStart = false): number {
  const re = atLineStart ? new RegExp(`^[ \\t]*(${ch}+)`, "gm") : new RegExp(`(${ch}+)`, "g");
  let longest = 0;
  for (const m of s.matchAll(re)) longest = Math.max(longest, m[1]?.length ?? 0);
  return longest;
}

/**
 * Inline code (a value inside backticks): the fence is one backtick longer than the longest run
 * inside, padded with a space when the value starts or ends with a backtick or a space (which
 * CommonMark would otherwise take as part of the fence or strip). Line breaks are shown. In a
 * table cell (`inTable`) `|` is escaped as well: GFM splits cells before it sees code spans.
 */
export function inlineCode(value: string, options: { inTable?: boolean } = {}): string {
  let v = showInvisible(value);
  if (v === "") return "(empty)";
  if (options.inTable) v = v.replace(/\|/g, "\\|");
  const fence = "`".repeat(longestRun(v, "`") + 1);
  const pad =
    v.trim() !== "" && (v.startsWith("`") || v.endsWith("`") || v.startsWith(" ")) ? " " : "";
  return `${fence}${pad}${v}${pad}${fence}`;
}

/**
 * Markdown prose from outside: every ASCII punctuation character that can start markup is
 * backslash-escaped (no emphasis, link, image, heading, list, table, HTML or entity can start),
 * `@` is followed by a word joiner (no mention), `://` and `www.` are broken (no autolink), line
 * breaks are shown. `|` is escaped too, so the result is safe in a table cell as well.
 */
export function markdownText(value: string): string {
  let v = showInvisible(value).replace(/[\\`*_{}[\]()#+\-.!|~<>&]/g, (c) => `\\${c}`);
  // The joiners are ours, added after the invisible characters of the value were shown.
  v = v.replace(/@/g, "@\u2060").replace(/:\/\//g, ":\u2060//");
  v = v.replace(/(w)(ww\\\.)/gi, "$1\u2060$2");
  return v;
}

/**
 * A table cell of prose: `|` escaped (GFM splits cells on it, even inside code), line breaks
 * shown (a row is one line), and every Markdown special escaped as in markdownText.
 */
export function tableCell(value: string): string {
  return markdownText(value);
}

/**
 * Text inside an HTML element of the Markdown (`<summary>`, `<details>`, `<code>`): GitHub takes
 * a line that starts with such a tag as an HTML block, where Markdown escapes do not apply and a
 * code span is not one, so `& < > " '` become entities. Line breaks are shown (a blank line
 * would end the block and start Markdown again).
 */
export function htmlText(value: string): string {
  return showInvisible(value).replace(/[&<>"']/g, (c) => HTML_ENTITY[c] ?? c);
}

/** An HTML attribute's value (inside double quotes): the same escaping as htmlText. */
export function htmlAttribute(value: string): string {
  return htmlText(value);
}

/**
 * A value shown as code inside an HTML block: `<code>` (which also keeps GitHub from turning
 * `@team`, `#1` or `:emoji:` in it into mentions, links or pictures) around htmlText.
 */
export function htmlCode(value: string): string {
  return value === "" ? "(empty)" : `<code>${htmlText(value)}</code>`;
}

const HTML_ENTITY: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/**
 * A fenced code block holding `text` literally: the fence is longer than any run of backticks
 * or tildes that starts a line inside (so none can close it), at least `minFence` long. Line
 * feeds and tabs are kept; every other invisible character is shown (a carriage return would be
 * a line ending to CommonMark).
 */
export function codeBlock(
  text: string,
  info = "text",
  options: { minFence?: number } = {},
): string {
  const clean = showInvisible(text, "\n\t");
  const longest = Math.max(longestRun(clean, "`", true), longestRun(clean, "~", true));
  const fence = "`".repeat(Math.max(options.minFence ?? 3, longest + 1));
  return `${fence}${showInvisible(info)}\n${clean.endsWith("\n") ? clean : `${clean}\n`}${fence}`;
}

/**
 * Plain text (annotation titles and messages, the text plan, SARIF and JUnit, whose libraries
 * escape JSON and XML themselves): only the invisible characters are shown. With `multiline`,
 * line feeds are kept; otherwise they are shown too, so one value cannot forge a second line.
 */
export function plainText(value: string, options: { multiline?: boolean } = {}): string {
  return showInvisible(value, options.multiline ? "\n" : "");
}
