/**
 * SourceText's line and column lookups (which remember the last line found) against a plain
 * scan of the text, for offsets in any order, in range or not, and spans over several lines.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SourceText } from "../src/core/source.ts";

/** Line and column by counting line breaks before the (clamped) offset. */
function naive(text: string, offset: number): { line: number; column: number } {
  const o = Math.max(0, Math.min(offset, text.length));
  const before = text.slice(0, o);
  const line = before.split("\n").length;
  return { line, column: o - (before.lastIndexOf("\n") + 1) + 1 };
}

describe("SourceText positions", () => {
  it("match a plain scan for any text, offsets and ranges", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("a", "b", " ", "\n", "\r\n", "\n\n"), { maxLength: 60 }),
        fc.array(fc.tuple(fc.integer({ min: -3, max: 90 }), fc.integer({ min: -3, max: 90 })), {
          maxLength: 30,
        }),
        (parts, ranges) => {
          const text = parts.join("");
          const source = new SourceText("f.agent", text);
          for (const [start, end] of ranges) {
            const s = naive(text, start);
            const e = naive(text, Math.max(start, end));
            expect(source.span({ start, end })).toEqual({
              file: "f.agent",
              line: s.line,
              column: s.column,
              endLine: e.line,
              endColumn: e.column,
            });
            expect(source.position(end)).toEqual(naive(text, end));
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
