/**
 * Positions in a host configuration's JSON parse tree (jsonc-parser's nodes): a node's span as a
 * diagnostic gives it, and an object's property by key. Pure.
 */
import type { Node } from "jsonc-parser";
import type { Span } from "../diagnostics.ts";

/** A host configuration file: its repository-relative path and its text. */
export interface HostFile {
  path: string;
  text: string;
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset && i < text.length; i++)
    if (text.charCodeAt(i) === 10) {
      line++;
      start = i + 1;
    }
  return { line, column: offset - start + 1 };
}

export function spanOf(file: HostFile, offset: number, length: number): Span {
  const a = lineAndColumn(file.text, offset);
  const b = lineAndColumn(file.text, offset + Math.max(1, length));
  return { file: file.path, line: a.line, column: a.column, endLine: b.line, endColumn: b.column };
}

export function child(node: Node | undefined, key: string): Node | undefined {
  if (node?.type !== "object") return undefined;
  for (const p of node.children ?? []) {
    const [k, v] = p.children ?? [];
    if (k?.value === key) return v;
  }
  return undefined;
}
