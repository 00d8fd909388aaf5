/**
 * Diagnostics as text: `path:line:col: error TF1234: message`, the source line, a caret under
 * the span, then the hint and related locations. Also the JSON form (`--format json`).
 */
import type { Diagnostic } from "../diagnostics.ts";
import type { SourceText } from "../source.ts";

export interface DiagnosticRenderOptions {
  sources: ReadonlyMap<string, SourceText>;
  /** Maps a project-relative file to the path shown to the user. */
  displayPath: (file: string) => string;
  color?: boolean;
}

const STYLE = {
  error: "\u001b[1;31m",
  warning: "\u001b[1;33m",
  info: "\u001b[1;36m",
  bold: "\u001b[1m",
  dim: "\u001b[2m",
  reset: "\u001b[0m",
};

export function renderDiagnosticText(d: Diagnostic, options: DiagnosticRenderOptions): string {
  const paint = (style: keyof typeof STYLE, s: string) =>
    options.color ? `${STYLE[style]}${s}${STYLE.reset}` : s;
  const where = `${options.displayPath(d.span.file)}:${d.span.line}:${d.span.column}`;
  const lines = [
    `${paint("bold", `${where}:`)} ${paint(d.severity, `${d.severity} ${d.code}`)}: ${d.message}`,
  ];
  const source = options.sources.get(d.span.file);
  if (source && d.span.line >= 1) {
    const text = source.lineText(d.span.line).replace(/\t/g, " ");
    if (text.trim() !== "") {
      const gutter = String(d.span.line);
      const pad = " ".repeat(gutter.length);
      const endCol = d.span.endLine === d.span.line ? d.span.endColumn : text.length + 1;
      const width = Math.max(1, Math.min(endCol, text.length + 1) - d.span.column);
      lines.push(paint("dim", ` ${gutter} | `) + text);
      lines.push(
        `${paint("dim", ` ${pad} | `)}${" ".repeat(Math.max(0, d.span.column - 1))}${paint(d.severity, "^".repeat(width))}`,
      );
    }
  }
  if (d.hint) lines.push(`  = hint: ${d.hint}`);
  for (const r of d.related ?? []) {
    lines.push(
      `  = note: ${r.message} at ${options.displayPath(r.span.file)}:${r.span.line}:${r.span.column}`,
    );
  }
  return lines.join("\n");
}

export function renderDiagnosticsText(
  diagnostics: readonly Diagnostic[],
  options: DiagnosticRenderOptions,
): string {
  return diagnostics.map((d) => renderDiagnosticText(d, options)).join("\n\n");
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
