/**
 * Escaping for GitHub-flavoured Markdown. Every value that came from a repository (agent and
 * resource names, paths, capability-test text, diagnostics, instructions) goes through one of
 * these before it reaches a comment, a check run or a job summary, so no heading, mention,
 * image, link, table cell or `</details>` can be injected through it. Pure.
 */

// Line breaks and every other control or bidi-override character: shown as a visible escape.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u2028\u2029]/gu;

function visibleControls(s: string): string {
  return s.replace(CONTROL, (c) =>
    c === "\n" ? "⏎" : `\\u${c.codePointAt(0)?.toString(16).padStart(4, "0")}`,
  );
}

/**
 * An inline code span holding `value` literally: the fence is one backtick longer than the
 * longest run inside, control characters are made visible, and in a table cell `|` is escaped
 * (GFM splits cells before it sees code spans).
 */
export function mdCode(value: string, options: { inTable?: boolean } = {}): string {
  let v = visibleControls(value);
  if (v === "") return "(empty)";
  if (options.inTable) v = v.replace(/\|/g, "\\|");
  const longest = Math.max(0, ...[...v.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  const pad = v.startsWith("`") || v.endsWith("`") || v.startsWith(" ") ? " " : "";
  return `${fence}${pad}${v}${pad}${fence}`;
}

/**
 * Prose from outside, escaped: every ASCII punctuation character is backslash-escaped (no
 * emphasis, link, image, heading, list, table or HTML can start), `@` is followed by a word
 * joiner (no mention), `://` and `www.` are broken (no autolink), line breaks are shown.
 */
/** `|` is escaped too, so the result is safe in a table cell as well. */
export function mdText(value: string): string {
  let v = visibleControls(value).replace(/[\\`*_{}[\]()#+\-.!|~<>&]/g, (c) => `\\${c}`);
  v = v.replace(/@/g, "@\u2060").replace(/:\/\//g, ":\u2060//");
  v = v.replace(/(w)(ww\\\.)/gi, "$1\u2060$2");
  return v;
}

/** A fenced code block holding `text` literally (the fence outgrows any run of backticks). */
export function mdFence(text: string, info = "text"): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  const clean = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, (c) =>
    c === "\t" ? c : `\\u${c.codePointAt(0)?.toString(16).padStart(4, "0")}`,
  );
  const longest = Math.max(
    0,
    ...[...clean.matchAll(/^[ \t]*(`{3,}|~{3,})/gm)].map((m) => m[1]!.length),
  );
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}${info}\n${clean.endsWith("\n") ? clean : `${clean}\n`}${fence}`;
}
