/**
 * Lexer for `.agent` files: text → tokens plus diagnostics.
 *
 * Never throws on input. Unknown characters and broken strings become diagnostics and the lexer
 * carries on, so the parser still sees the rest of the file. `"""` strings lose their common
 * indentation (and the line breaks right after the opening and before the closing quotes).
 */
import { type Diagnostic, diagnostic } from "../diagnostics.ts";
import type { SourceText } from "../source.ts";
import type { Token, TokenKind } from "./tokens.ts";

export interface LexResult {
  tokens: Token[];
  diagnostics: Diagnostic[];
}

function isIdentStart(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}
function isIdentPart(c: number): boolean {
  return isIdentStart(c) || (c >= 48 && c <= 57);
}
function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

export function lex(source: SourceText): LexResult {
  const text = source.text;
  const tokens: Token[] = [];
  const diagnostics: Diagnostic[] = [];
  let i = 0;
  let newlineBefore = true;
  const n = text.length;

  const push = (kind: TokenKind, start: number, end: number, value?: string) => {
    const raw = text.slice(start, end);
    tokens.push({ kind, text: raw, value: value ?? raw, start, end, newlineBefore });
    newlineBefore = false;
  };

  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 10) {
      newlineBefore = true;
      i++;
      continue;
    }
    if (c === 32 || c === 9 || c === 13 || c === 0xfeff) {
      i++;
      continue;
    }
    if (c === 47 && text.charCodeAt(i + 1) === 47) {
      while (i < n && text.charCodeAt(i) !== 10) i++;
      continue;
    }
    if (isIdentStart(c)) {
      const start = i;
      i++;
      while (i < n && isIdentPart(text.charCodeAt(i))) i++;
      push("ident", start, i);
      continue;
    }
    if (isDigit(c)) {
      const start = i;
      while (i < n && isDigit(text.charCodeAt(i))) i++;
      // A fraction (`0.2`): digits, a dot, digits. Only settings take one (temperature).
      let kind: "int" | "decimal" = "int";
      if (text.charCodeAt(i) === 46 && i + 1 < n && isDigit(text.charCodeAt(i + 1))) {
        kind = "decimal";
        i++;
        while (i < n && isDigit(text.charCodeAt(i))) i++;
      }
      // An identifier glued to digits (`3x`) is one bad token, not two good ones.
      if (i < n && isIdentPart(text.charCodeAt(i))) {
        while (i < n && isIdentPart(text.charCodeAt(i))) i++;
        diagnostics.push(
          diagnostic(
            "TF1001",
            source.span({ start, end: i }),
            `\`${text.slice(start, i)}\` is neither a number nor a name`,
            {
              hint: "names start with a letter or `_`; numbers contain only digits",
            },
          ),
        );
        push("int", start, i, "0");
        continue;
      }
      push(kind, start, i);
      continue;
    }
    if (c === 34) {
      if (text.startsWith('"""', i)) {
        i = lexTripleString(source, i, push, diagnostics);
      } else {
        i = lexString(source, i, push, diagnostics);
      }
      continue;
    }
    if (c === 39) {
      // A single-quoted string on one line: one diagnostic, and a string token so the parser
      // goes on as if the quotes were right.
      const close = text.indexOf("'", i + 1);
      const eol = text.indexOf("\n", i + 1);
      if (close > i && (eol < 0 || close < eol)) {
        diagnostics.push(
          diagnostic(
            "TF1001",
            source.span({ start: i, end: close + 1 }),
            "strings use double quotes, not single quotes",
            {
              hint: `write "${text.slice(i + 1, close)}"`,
            },
          ),
        );
        push("string", i, close + 1, text.slice(i + 1, close));
        i = close + 1;
        continue;
      }
    }
    const two = text.slice(i, i + 2);
    if (two === "->" || two === "&&" || two === "||" || two === "==" || two === "!=") {
      push(two, i, i + 2);
      i += 2;
      continue;
    }
    const single = "{}(),.:=!".indexOf(text[i] as string);
    if (single >= 0) {
      push(text[i] as TokenKind, i, i + 1);
      i++;
      continue;
    }
    // Unknown character: report a run of them once.
    const start = i;
    const cp = text.codePointAt(i) ?? c;
    i += cp > 0xffff ? 2 : 1;
    diagnostics.push(
      diagnostic(
        "TF1001",
        source.span({ start, end: i }),
        `unexpected character ${describeChar(cp)}`,
        c === 39 ? { hint: 'strings use double quotes: "…"' } : {},
      ),
    );
  }
  tokens.push({ kind: "eof", text: "", value: "", start: n, end: n, newlineBefore: true });
  return { tokens, diagnostics };
}

function describeChar(cp: number): string {
  const ch = String.fromCodePoint(cp);
  if (cp < 32 || cp === 127 || /\s/.test(ch))
    return `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;
  return `\`${ch}\``;
}

type Push = (kind: TokenKind, start: number, end: number, value?: string) => void;

/** The one-character escapes and what they stand for. */
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  n: "\n",
  t: "\t",
  r: "\r",
  '"': '"',
  "\\": "\\",
  "0": "\0",
};

/**
 * A `"…"` string. Its value is built from slices of the source between escapes, not a
 * character at a time: `value += text[i]` made a rope of one cons string per character past the
 * 13th, which the AST then kept (216,000 of them, 7 MB, at 2,000 agents) and the GC copied.
 */
function lexString(
  source: SourceText,
  startAt: number,
  push: Push,
  diagnostics: Diagnostic[],
): number {
  const text = source.text;
  let i = startAt + 1;
  let value = "";
  let from = i;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      value += text.slice(from, i);
      push("string", startAt, i + 1, value);
      return i + 1;
    }
    if (c === 10) break;
    if (c === 92) {
      value += text.slice(from, i);
      const esc = text[i + 1];
      const simple = esc === undefined ? undefined : SIMPLE_ESCAPES[esc];
      if (simple !== undefined) {
        value += simple;
        i += 2;
        from = i;
        continue;
      }
      if (esc === "u") {
        const m = /^u\{([0-9A-Fa-f]{1,6})\}|^u([0-9A-Fa-f]{4})/.exec(text.slice(i + 1, i + 11));
        const hex = m?.[1] ?? m?.[2];
        const cp = hex === undefined ? Number.NaN : Number.parseInt(hex, 16);
        if (m && cp <= 0x10ffff) {
          value += String.fromCodePoint(cp);
          i += 1 + m[0].length;
          from = i;
          continue;
        }
      }
      diagnostics.push(
        diagnostic(
          "TF1003",
          source.span({ start: i, end: Math.min(i + 2, text.length) }),
          `invalid escape sequence \`\\${esc ?? ""}\``,
          {
            hint: 'valid escapes are \\n \\t \\r \\0 \\" \\\\ \\uXXXX and \\u{X…}',
          },
        ),
      );
      i += esc === undefined || esc === "\n" ? 1 : 2;
      from = i;
      continue;
    }
    i++;
  }
  value += text.slice(from, i);
  diagnostics.push(
    diagnostic("TF1002", source.span({ start: startAt, end: i }), "unterminated string", {
      hint: 'close it with `"` on the same line, or use `"""` for a multi-line string',
    }),
  );
  push("string", startAt, i, value);
  return i;
}

function lexTripleString(
  source: SourceText,
  startAt: number,
  push: Push,
  diagnostics: Diagnostic[],
): number {
  const text = source.text;
  const close = text.indexOf('"""', startAt + 3);
  if (close < 0) {
    diagnostics.push(
      diagnostic(
        "TF1002",
        source.span({ start: startAt, end: startAt + 3 }),
        'unterminated `"""` string',
        {
          hint: 'close it with `"""`',
        },
      ),
    );
    push("string", startAt, text.length, dedent(text.slice(startAt + 3)));
    return text.length;
  }
  push("string", startAt, close + 3, dedent(text.slice(startAt + 3, close)));
  return close + 3;
}

/**
 * Removes the common leading indentation of a `"""` block. A first line that is empty (the
 * break right after the opening quotes) and a last line of only spaces (before the closing
 * quotes) are dropped; blank lines do not count towards the common indentation.
 */
export function dedent(raw: string): string {
  let lines = raw.replace(/\r\n/g, "\n").split("\n");
  if (lines.length > 1 && (lines[0] as string).trim() === "") lines = lines.slice(1);
  if (lines.length > 1 && (lines[lines.length - 1] as string).trim() === "")
    lines = lines.slice(0, -1);
  let common = Number.POSITIVE_INFINITY;
  for (const line of lines) {
    if (line.trim() === "") continue;
    const indent = /^[ \t]*/.exec(line)?.[0].length ?? 0;
    if (indent < common) common = indent;
  }
  if (!Number.isFinite(common)) common = 0;
  return lines.map((line) => (line.trim() === "" ? "" : line.slice(common))).join("\n");
}
