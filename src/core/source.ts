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
  private starts: number[] | undefined;
  /** The line of the last offset looked up (see `lineIndex`). */
  private lastLine = 0;

  constructor(path: string, text: string) {
    this.path = path;
    // A byte-order mark is not content: dropping it keeps line-1 columns what editors show.
    this.text = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }

  /**
   * Offsets where lines start, found on the first position asked for (a file nothing points
   * into never needs them) with `indexOf`, which scans far faster than a loop over each
   * character: the loop was ~18 ms of `terfyn validate` at 2,000 agents, run for every file.
   */
  private get lineStarts(): number[] {
    if (this.starts === undefined) {
      const text = this.text;
      const starts = [0];
      for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
      this.starts = starts;
    }
    return this.starts;
  }

  /** 1-based line and column of an offset. */
  position(offset: number): { line: number; column: number } {
    const o = Math.max(0, Math.min(offset, this.text.length));
    const line = this.lineIndex(o);
    return { line: line + 1, column: o - (this.lineStarts[line] as number) + 1 };
  }

  /** The offset of a 1-based line and column (the inverse of `position`), clamped to the text. */
  offset(line: number, column: number): number {
    const start = this.lineStarts[Math.max(0, line - 1)];
    if (start === undefined) return this.text.length;
    return Math.max(0, Math.min(start + column - 1, this.text.length));
  }

  /**
   * The 0-based line holding an (in-range) offset. Spans are asked for mostly in file order, so
   * the line of the previous answer (or the next one) is tried before a binary search.
   */
  private lineIndex(o: number): number {
    const starts = this.lineStarts;
    const last = this.lastLine;
    if ((starts[last] as number) <= o) {
      const next = starts[last + 1];
      if (next === undefined || o < next) return last;
      const after = starts[last + 2];
      if (after === undefined || o < after) {
        this.lastLine = last + 1;
        return last + 1;
      }
    }
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] as number) <= o) lo = mid;
      else hi = mid - 1;
    }
    this.lastLine = lo;
    return lo;
  }

  span(range: Range): Span {
    const n = this.text.length;
    const start = Math.max(0, Math.min(range.start, n));
    const end = Math.max(0, Math.min(Math.max(range.start, range.end), n));
    const starts = this.lineStarts;
    const line = this.lineIndex(start);
    // The end is most often on the same line, or a few lines further.
    let endLine = line;
    for (
      let i = 0;
      i < 4 && endLine + 1 < starts.length && (starts[endLine + 1] as number) <= end;
      i++
    )
      endLine++;
    if (endLine + 1 < starts.length && (starts[endLine + 1] as number) <= end)
      endLine = this.lineIndex(end);
    return {
      file: this.path,
      line: line + 1,
      column: start - (starts[line] as number) + 1,
      endLine: endLine + 1,
      endColumn: end - (starts[endLine] as number) + 1,
    };
  }

  /** The text of a 1-based line, without its line break. */
  lineText(line: number): string {
    const starts = this.lineStarts;
    const start = starts[line - 1];
    if (start === undefined) return "";
    const next = starts[line];
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

/** Whether a 1-based line and column lies within `span` (its end excluded). */
export function inSpan(span: Span, line: number, column: number): boolean {
  return (
    (line > span.line || (line === span.line && column >= span.column)) &&
    (line < span.endLine || (line === span.endLine && column < span.endColumn))
  );
}
