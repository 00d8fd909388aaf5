/**
 * Source text and position mapping.
 *
 * Owns the conversion from character offsets (what the lexer and YAML parser produce) to the
 * 1-based line/column spans that diagnostics carry. Columns count UTF-16 code units, as editors
 * and GitHub annotations do.
 */
import type { Span } from "./diagnostics.ts";

/** An offset range within one source text; `end` is exclusive. */
export interface Range {
  start: number;
  end: number;
}

export class SourceText {
  readonly path: string;
  readonly text: string;
  private readonly lineStarts: number[];

  constructor(path: string, text: string) {
    this.path = path;
    // A byte-order mark is not content: dropping it keeps line-1 columns what editors show.
    this.text = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    text = this.text;
    const starts = [0];
    for (let i = 0; i < text.length; i++) {
      if (text.charCodeAt(i) === 10) starts.push(i + 1);
    }
    this.lineStarts = starts;
  }

  /** 1-based line and column of an offset. */
  position(offset: number): { line: number; column: number } {
    const o = Math.max(0, Math.min(offset, this.text.length));
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.lineStarts[mid] as number) <= o) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: o - (this.lineStarts[lo] as number) + 1 };
  }

  span(range: Range): Span {
    const s = this.position(range.start);
    const e = this.position(Math.max(range.start, range.end));
    return {
      file: this.path,
      line: s.line,
      column: s.column,
      endLine: e.line,
      endColumn: e.column,
    };
  }

  /** The text of a 1-based line, without its line break. */
  lineText(line: number): string {
    const start = this.lineStarts[line - 1];
    if (start === undefined) return "";
    const next = this.lineStarts[line];
    let end = next === undefined ? this.text.length : next - 1;
    if (end > start && this.text.charCodeAt(end - 1) === 13) end--;
    return this.text.slice(start, end);
  }
}

/** A span for a whole file, used when there is no better place to point. */
export function fileSpan(path: string): Span {
  return { file: path, line: 1, column: 1, endLine: 1, endColumn: 1 };
}

/**
 * Every character that must never reach a reader raw: C0 controls (line breaks and tabs
 * included), DEL, C1 controls and the bidi embedding, override and isolate characters. One
 * class for file names and terminal output alike.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
export const UNSAFE_CHARACTER = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.source;
