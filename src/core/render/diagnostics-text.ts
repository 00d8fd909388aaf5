/**
 * Diagnostics as text: `path:line:col: error TF1234: message`, the source line, a caret under
 * the span, then the hint and related locations. Also the JSON form (`--format json`).
 *
 * The text goes to a terminal, and every piece of it that comes from the project (the source
 * line, names and paths quoted in messages) is escaped first, so a hostile file cannot drive
 * the terminal. A file with very many problems (a binary file, a file of another format) shows
 * its first few and "and N more", not a screenful per character.
 */
import type { Diagnostic } from "../diagnostics.ts";
import type { SourceText } from "../source.ts";
import { escapeTerminalText } from "./terminal-text.ts";

export interface DiagnosticRenderOptions {
  sources: ReadonlyMap<string, SourceText>;
  /** Maps a project-relative file to the path shown to the user. */
  displayPath: (file: string) => string;
  color?: boolean;
  /** At most this many diagnostics per file are shown, then "and N more" (default 20). */
  maxPerFile?: number;
}

/** Enough to see what is wrong with a file; beyond it, more lines bury the other files. */
export const DEFAULT_MAX_DIAGNOSTICS_PER_FILE = 20;

const STYLE = {
  error: "\u001b[1;31m",
  warning: "\u001b[1;33m",
  info: "\u001b[1;36m",
  bold: "\u001b[1m",
  dim: "\u001b[2m",
  reset: "\u001b[0m",
};

/** Lines up to this many characters are echoed whole; a longer one is cut around the caret. */
export const MAX_ECHOED_LINE = 160;
/** Characters of context kept on each side of the caret in a cut line. */
const CONTEXT = 60;

/** The part of `raw` echoed for a span [start, end): all of it, or a window around the caret. */
function sourceWindow(raw: string, start: number, end: number): { from: number; to: number } {
  if (raw.length <= MAX_ECHOED_LINE) return { from: 0, to: raw.length };
  let from = Math.max(0, start - CONTEXT);
  let to = Math.min(
    raw.length,
    Math.max(end, start + 1) + CONTEXT,
    start + MAX_ECHOED_LINE - CONTEXT,
  );
  to = Math.max(to, Math.min(raw.length, start + 1));
  // Never split a surrogate pair at either edge.
  if (from > 0 && isLowSurrogate(raw.charCodeAt(from))) from--;
  if (to < raw.length && isLowSurrogate(raw.charCodeAt(to))) to++;
  return { from, to };
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

export function renderDiagnosticText(d: Diagnostic, options: DiagnosticRenderOptions): string {
  const paint = (style: keyof typeof STYLE, s: string) =>
    options.color ? `${STYLE[style]}${s}${STYLE.reset}` : s;
  const safe = (s: string) => escapeTerminalText(s);
  const path = (file: string) => safe(options.displayPath(file));
  const where = `${path(d.span.file)}:${d.span.line}:${d.span.column}`;
  const lines = [
    `${paint("bold", `${where}:`)} ${paint(d.severity, `${d.severity} ${d.code}`)}: ${safe(d.message)}`,
  ];
  const source = options.sources.get(d.span.file);
  if (source && d.span.line >= 1) {
    const raw = source.lineText(d.span.line).replace(/\t/g, " ");
    if (raw.trim() !== "") {
      const gutter = String(d.span.line);
      const pad = " ".repeat(gutter.length);
      const endCol = d.span.endLine === d.span.line ? d.span.endColumn : raw.length + 1;
      // Columns index the raw line; an escape is wider than the character it shows, so the
      // caret is placed by the escaped width of what precedes and of what it underlines.
      const start = Math.min(Math.max(0, d.span.column - 1), raw.length);
      const end = Math.min(Math.max(start, endCol - 1), raw.length);
      // A minified file is one very long line: show a window around the caret, marked with
      // ellipses and the column, never the whole line.
      const w = sourceWindow(raw, start, end);
      const shown = `${w.from > 0 ? "…" : ""}${safe(raw.slice(w.from, w.to))}${w.to < raw.length ? "…" : ""}`;
      const indent =
        (w.from > 0 ? 1 : 0) +
        safe(raw.slice(w.from, start)).length +
        Math.max(0, d.span.column - 1 - raw.length);
      const width = Math.max(1, safe(raw.slice(start, Math.min(end, w.to))).length);
      const cut =
        w.from > 0 || w.to < raw.length
          ? paint("dim", ` column ${d.span.column} of a ${raw.length}-character line`)
          : "";
      lines.push(paint("dim", ` ${gutter} | `) + shown);
      lines.push(
        `${paint("dim", ` ${pad} | `)}${" ".repeat(indent)}${paint(d.severity, "^".repeat(width))}${cut}`,
      );
    }
  }
  if (d.hint) lines.push(`  = hint: ${safe(d.hint)}`);
  for (const r of d.related ?? []) {
    lines.push(
      `  = note: ${safe(r.message)} at ${path(r.span.file)}:${r.span.line}:${r.span.column}`,
    );
  }
  return lines.join("\n");
}

export function renderDiagnosticsText(
  diagnostics: readonly Diagnostic[],
  options: DiagnosticRenderOptions,
): string {
  const max = Math.max(1, options.maxPerFile ?? DEFAULT_MAX_DIAGNOSTICS_PER_FILE);
  const total = new Map<string, number>();
  for (const d of diagnostics) total.set(d.span.file, (total.get(d.span.file) ?? 0) + 1);
  const shown = new Map<string, number>();
  const blocks: string[] = [];
  for (const d of diagnostics) {
    const n = (shown.get(d.span.file) ?? 0) + 1;
    shown.set(d.span.file, n);
    if (n > max) continue;
    blocks.push(renderDiagnosticText(d, options));
    const rest = (total.get(d.span.file) ?? 0) - max;
    if (n === max && rest > 0) {
      blocks.push(
        `${escapeTerminalText(options.displayPath(d.span.file))}: and ${rest} more in this file (\`terfyn validate --format json\` lists them all)`,
      );
    }
  }
  return blocks.join("\n\n");
}

export function countBySeverity(diagnostics: readonly Diagnostic[]): {
  errors: number;
  warnings: number;
} {
  let errors = 0;
  let warnings = 0;
  for (const d of diagnostics) {
    if (d.severity === "error") errors++;
    else if (d.severity === "warning") warnings++;
  }
  return { errors, warnings };
}

/** The `--format json` document: versioned, one object per diagnostic with flat positions. */
export function diagnosticsToJson(
  diagnostics: readonly Diagnostic[],
  displayPath: (file: string) => string,
) {
  const { errors, warnings } = countBySeverity(diagnostics);
  return {
    format_version: "1",
    ok: errors === 0,
    summary: { errors, warnings },
    diagnostics: diagnostics.map((d) => ({
      code: d.code,
      severity: d.severity,
      message: d.message,
      file: displayPath(d.span.file),
      line: d.span.line,
      column: d.span.column,
      endLine: d.span.endLine,
      endColumn: d.span.endColumn,
      ...(d.hint ? { hint: d.hint } : {}),
      ...(d.related
        ? {
            related: d.related.map((r) => ({
              message: r.message,
              file: displayPath(r.span.file),
              line: r.span.line,
              column: r.span.column,
            })),
          }
        : {}),
    })),
  };
}
