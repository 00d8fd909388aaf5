/**
 * A host configuration's JSON as the hosts read it (strict: no comments, no trailing commas),
 * as jsonc-parser's tree: a node's span as a diagnostic gives it, an object's property by key,
 * a list of strings. Pure.
 */
import {
  getNodeValue,
  type Node,
  type ParseError,
  parseTree,
  printParseErrorCode,
} from "jsonc-parser";
import { type Diagnostic, diagnostic, type Span } from "../diagnostics.ts";

/** A host configuration file: its repository-relative path and its text. */
export interface HostFile {
  path: string;
  text: string;
  /**
   * The conventional path the file stands for when a project lists it at another one
   * (`spec.hosts`): which host reads it, and as what. Absent: its own path.
   */
  role?: string;
}

/** Each line's first offset, per text: a file of thousands of rules asks for thousands of spans. */
const LINE_STARTS = new Map<string, number[]>();

function lineStarts(text: string): number[] {
  let starts = LINE_STARTS.get(text);
  if (!starts) {
    starts = [0];
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
    // Only the texts being read now are kept.
    if (LINE_STARTS.size >= 16) LINE_STARTS.clear();
    LINE_STARTS.set(text, starts);
  }
  return starts;
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const starts = lineStarts(text);
  const at = Math.max(0, Math.min(offset, text.length));
  // The last line starting at or before the offset.
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= at) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, column: offset - (starts[lo] as number) + 1 };
}

export function spanOf(file: HostFile, offset: number, length: number): Span {
  const a = lineAndColumn(file.text, offset);
  const b = lineAndColumn(file.text, offset + Math.max(1, length));
  return { file: file.path, line: a.line, column: a.column, endLine: b.line, endColumn: b.column };
}

/** A whole line of a file, as a span (for a key found by its line). */
export const lineSpan = (file: string, line: number): Span => ({
  file,
  line,
  column: 1,
  endLine: line,
  endColumn: 1,
});

/** An object's property by key; a key written twice is its last value, as JSON.parse reads it. */
export function child(node: Node | undefined, key: string): Node | undefined {
  if (node?.type !== "object") return undefined;
  let found: Node | undefined;
  for (const p of node.children ?? []) {
    const [k, v] = p.children ?? [];
    if (k?.value === key) found = v;
  }
  return found;
}

/**
 * The file's parse tree, or undefined with a TF6001 at the first error: the host refuses the
 * whole file, and `consequence` says what that means for it.
 */
export function parseStrictJson(
  file: HostFile,
  consequence: string,
  diagnostics: Diagnostic[],
  hint?: string,
  /** The host reads JSON with comments and trailing commas (Copilot's settings files). */
  jsonc = false,
): Node | undefined {
  const errors: ParseError[] = [];
  let root: Node | undefined;
  try {
    root = parseTree(file.text, errors, { disallowComments: !jsonc, allowTrailingComma: jsonc });
  } catch (e) {
    // Nesting deeper than the parser's stack: no host configuration is written that way, and
    // what it says cannot be read here.
    diagnostics.push(
      diagnostic(
        "TF6001",
        spanOf(file, 0, 1),
        `${file.path} is nested too deeply to read (${e instanceof Error ? e.message : String(e)}): ${consequence}`,
        hint ? { hint } : {},
      ),
    );
    return undefined;
  }
  if (errors.length === 0 && root) return root;
  const e = errors[0];
  diagnostics.push(
    diagnostic(
      "TF6001",
      spanOf(file, e?.offset ?? 0, e?.length ?? 1),
      `${file.path} is not the ${jsonc ? "JSON" : "strict JSON"} the host reads${e ? ` (${printParseErrorCode(e.error)})` : ""}: ${consequence}`,
      hint ? { hint } : {},
    ),
  );
  return undefined;
}

/** A list of strings, or undefined when the node is not one. */
export function stringList(n: Node | undefined): string[] | undefined {
  return n?.type === "array" && (n.children ?? []).every((c) => c.type === "string")
    ? (n.children ?? []).map((c) => String(getNodeValue(c)))
    : undefined;
}

/**
 * A table's own entry for a key from a file, never one its prototype has (`constructor`,
 * `toString`, `__proto__` are keys a hostile file may use).
 */
export function own<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

/**
 * The line of a dotted key (`sandbox_workspace_write.network_access`) in a file's key → line
 * map, else of the nearest enclosing key that has one, else 1.
 */
export function keyLine(lines: ReadonlyMap<string, number> | undefined, key: string): number {
  const parts = key.split(".");
  for (let n = parts.length; n > 0; n--) {
    const line = lines?.get(parts.slice(0, n).join("."));
    if (line !== undefined) return line;
  }
  return 1;
}

/** A value found in a host file: where its key is written. */
export interface Located {
  value: unknown;
  file: string;
  line: number;
}

/**
 * An object's leaves by dotted key (`sandbox.auth.git`), each with the line its key is on; a list
 * is one leaf, and so is an empty object. A key written twice is its last value.
 */
export function leaves(file: HostFile, node: Node, prefix = "", out = new Map<string, Located>()) {
  const last = new Map<string, [Node, Node]>();
  for (const p of node.children ?? []) {
    const [k, v] = p.children ?? [];
    if (k && v) last.set(String(k.value), [k, v]);
  }
  for (const [name, [k, v]] of last) {
    const key = prefix ? `${prefix}.${name}` : name;
    if (v.type === "object" && (v.children ?? []).length > 0) leaves(file, v, key, out);
    else
      out.set(key, {
        value: getNodeValue(v),
        file: file.path,
        line: spanOf(file, k.offset, k.length).line,
      });
  }
  return out;
}
