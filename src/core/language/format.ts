/**
 * The `.agent` formatter (`terfyn fmt`, and the language server's formatting): one layout for
 * every file, decided by its tokens, never by its meaning, so it cannot change what a file says.
 *
 * - Indentation is two spaces per open `{` or `(`; a line that starts by closing one is
 *   indented as the line that opened it.
 * - Line breaks stay where the author put them (a grant list stays one per line, a short
 *   block on one line stays on one line); more than one blank line becomes one, and none
 *   are kept at the start of the file, after a `{` or before a `}`.
 * - On a line: one space between tokens, none before `,` `)` `.` `:` or after `(` `.` `!`,
 *   none between a name and the `(` after it, none inside `{}`.
 * - Comments are kept, each where it was: at the end of its line, or on a line of its own at
 *   the indentation of what follows.
 * - A `"""` string moves with its line: every line of it is shifted as its first line is, so
 *   its value (which loses its common indentation) is the same.
 * - A file that does not lex or parse is left as it is (its diagnostics say why), and the
 *   result is checked: the same tokens with the same values and the same comments, or the file
 *   is left as it is.
 * Idempotent: formatting a formatted file gives the same text. Pure.
 */
import type { Diagnostic } from "../diagnostics.ts";
import { SourceText } from "../source.ts";
import { lex } from "./lexer.ts";
import { parseAgentFile } from "./parser.ts";
import type { Token } from "./tokens.ts";

export type FormatResult =
  | { ok: true; text: string; changed: boolean }
  | { ok: false; diagnostics: Diagnostic[] };

const INDENT = "  ";

/** A token or a comment, with the line breaks before it. */
type Item = { nl: number } & ({ tok: Token } | { comment: string });

/** A lexed text's tokens and the comments between them, in order (a comment runs to its line's end). */
function itemsOf(text: string, tokens: readonly Token[]): Item[] {
  const items: Item[] = [];
  let nl = 0;
  let end = 0;
  for (const tok of [...tokens.filter((t) => t.kind !== "eof"), undefined]) {
    const gap = text.slice(end, tok?.start ?? text.length);
    for (let i = 0; i < gap.length; i++) {
      if (gap[i] === "\n") nl++;
      else if (gap[i] === "/" && gap[i + 1] === "/") {
        const lineEnd = gap.indexOf("\n", i);
        const j = lineEnd < 0 ? gap.length : lineEnd;
        items.push({ nl, comment: gap.slice(i, j).replace(/[ \t\r]+$/, "") });
        nl = 0;
        i = j - 1;
      }
    }
    if (tok === undefined) break;
    items.push({ nl, tok });
    nl = 0;
    end = tok.end;
  }
  return items;
}

const OPENS = new Set(["{", "("]);
const CLOSES = new Set(["}", ")"]);

/** Whether two tokens on one line are written with a space between them. */
function spaced(a: Token, b: Token): boolean {
  if (b.kind === "," || b.kind === ")" || b.kind === "." || b.kind === ":") return false;
  if (a.kind === "(" || a.kind === "." || a.kind === "!") return false;
  if (a.kind === "{" && b.kind === "}") return false;
  if (b.kind === "(" && (a.kind === "ident" || a.kind === ")")) return false;
  return true;
}

/** The indentation (spaces and tabs) a line of `text` starts with, for the line holding `at`. */
function indentAt(text: string, at: number): string {
  const start = text.lastIndexOf("\n", at - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))?.[0] ?? "";
}

/**
 * A `"""` string's source, its lines after the first moved from `was` to `now` indentation,
 * when that keeps its value (it does when every such line starts with `was`); else as it was.
 */
function movedString(token: Token, was: string, now: string): string {
  if (!token.text.startsWith('"""') || !token.text.includes("\n") || was === now) return token.text;
  const lines = token.text.split("\n");
  const rest = lines.slice(1);
  if (!rest.every((l) => l.trim() === "" || l.startsWith(was))) return token.text;
  const moved = [
    lines[0],
    ...rest.map((l) => (l.trim() === "" ? "" : `${now}${l.slice(was.length)}`)),
  ].join("\n");
  const again = lex(new SourceText("x.agent", moved)).tokens[0];
  return again?.value === token.value ? moved : token.text;
}

export function formatAgentText(path: string, text: string): FormatResult {
  const source = new SourceText(path, text);
  const lexed = lex(source);
  const parsed = parseAgentFile(source);
  const problems = parsed.diagnostics.filter((d) => d.severity === "error");
  if (problems.length > 0) return { ok: false, diagnostics: problems };
  const src = source.text;
  const eol = text.includes("\r\n") ? "\r\n" : "\n";

  const items = itemsOf(src, lexed.tokens);

  const lines: string[] = [];
  let line: string | undefined;
  let depth = 0;
  let lineDepth = 0;
  /** The depth each open token was at, so a closing line is indented as its opening line. */
  const opened: number[] = [];
  /** Whether the last token was an opening one (a blank line after it is dropped). */
  let afterOpen = false;
  let prev: Token | undefined;
  for (const item of items) {
    const tok = "tok" in item ? item.tok : undefined;
    const closing = tok !== undefined && CLOSES.has(tok.kind);
    if (closing) depth = opened.pop() ?? 0;
    if (line === undefined || item.nl > 0) {
      if (line !== undefined) lines.push(line.replace(/[ \t]+$/, ""));
      if (item.nl >= 2 && lines.length > 0 && !afterOpen && !closing) lines.push("");
      lineDepth = depth;
      line = INDENT.repeat(lineDepth);
      prev = undefined;
    } else if ("comment" in item || (prev !== undefined && spaced(prev, item.tok))) line += " ";
    if ("comment" in item) {
      line += item.comment;
      continue;
    }
    line += movedString(item.tok, indentAt(src, item.tok.start), INDENT.repeat(lineDepth));
    afterOpen = OPENS.has(item.tok.kind);
    if (afterOpen) {
      opened.push(depth);
      depth++;
    }
    prev = item.tok;
  }
  if (line !== undefined) lines.push(line.replace(/[ \t]+$/, ""));
  while (lines.length > 0 && lines.at(-1) === "") lines.pop();
  const out = lines.length === 0 ? "" : `${lines.join(eol)}${eol}`;
  // The guard: the same tokens, values and comments, or the file as it was.
  if (!sameContent(src, out)) return { ok: true, text, changed: false };
  return { ok: true, text: out, changed: out !== text };
}

/** Whether two texts lex to the same tokens (kind and value) and hold the same comments. */
export function sameContent(a: string, b: string): boolean {
  const read = (t: string) => {
    const source = new SourceText("x.agent", t);
    return JSON.stringify(
      itemsOf(source.text, lex(source).tokens).map((i) =>
        "tok" in i ? [i.tok.kind, i.tok.value] : i.comment,
      ),
    );
  };
  return read(a) === read(b);
}
