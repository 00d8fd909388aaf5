/**
 * A parsed YAML document turned into a plain JSON-like value, or the one problem that stops it.
 *
 * `doc.toJS()` throws on an unknown alias and on an alias bomb, overflows the stack on deep
 * nesting, builds a value that contains itself from a recursive alias (which later breaks
 * JSON.stringify far from the file), and for a mapping key that is itself a mapping or list
 * prints a Node warning to stderr and stringifies the key. Every caller that reads YAML written
 * by users (resource files, model scripts) goes through here, so each of those is a located
 * message instead. Pure: no I/O; the caller turns the problem into its own diagnostic or error.
 */
import { type Document, isAlias, isCollection, isPair, type Node, visit } from "yaml";
import { nestingProblem } from "../nesting.ts";
import type { Range } from "../source.ts";

export interface YamlValueProblem {
  message: string;
  /** Offsets into the document's text. */
  range: Range;
  hint?: string;
}

export type YamlValueResult =
  | { ok: true; value: unknown }
  | { ok: false; problem: YamlValueProblem };

/** More expansion than any script or resource has reason for; yaml's own default is 100 too. */
const MAX_ALIAS_COUNT = 100;
/** Deeper than any resource or model turn has reason to be, and well inside the stack. */
export const MAX_YAML_DEPTH = 200;

/** Parse options every user-YAML reader passes: no warnings printed behind the caller's back. */
export const QUIET_YAML = { logLevel: "error" } as const;

/** How every resource file is parsed (with a LineCounter added per file); the bench floor uses it too. */
export const YAML_PARSE_OPTIONS = { uniqueKeys: true, prettyErrors: false, ...QUIET_YAML } as const;

export function yamlDocumentValue(doc: Document.Parsed): YamlValueResult {
  const root = doc.contents as Node | null;
  const whole = rangeOf(root);
  const top = { start: whole.start, end: whole.start };
  try {
    const key = collectionKey(doc);
    if (key) {
      return problem(
        "a mapping key is itself a mapping or a list",
        rangeOf(key),
        "keys are plain names or strings; quote the key if it is meant as text",
      );
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      if (/^Unresolved alias/.test(message)) {
        const alias = unresolvedAlias(doc);
        return problem(
          `unknown alias \`*${alias?.source ?? message.replace(/^.*: /, "")}\``,
          alias ? rangeOf(alias) : top,
          "an alias (*name) refers to an anchor (&name) set earlier in the same document",
        );
      }
      if (/Excessive alias count/.test(message)) {
        return problem(
          `anchors and aliases expand this document too far (more than ${MAX_ALIAS_COUNT} alias uses of a collection)`,
          top,
          "repeat the values instead of nesting aliases of aliases",
        );
      }
      throw e;
    }
    const shape = nestingProblem(value, MAX_YAML_DEPTH);
    if (shape === "cycle") {
      return problem(
        "anchors and aliases make this document contain itself",
        top,
        "an alias (*name) may repeat an anchored value, not refer to the value it is inside",
      );
    }
    if (shape === "too-deep") {
      return problem(`the document is nested too deeply (more than ${MAX_YAML_DEPTH} levels)`, top);
    }
    return { ok: true, value };
  } catch (e) {
    if (e instanceof RangeError) {
      return problem(`the document is nested too deeply (more than ${MAX_YAML_DEPTH} levels)`, top);
    }
    throw e;
  }
}

function problem(message: string, range: Range, hint?: string): YamlValueResult {
  return { ok: false, problem: hint === undefined ? { message, range } : { message, range, hint } };
}

/**
 * The first mapping key that is a collection, or an alias of one, in the order yaml's `visit`
 * would meet it (depth first, a pair's key before its value). A plain walk: `visit` builds and
 * freezes a path array per node, which was ~14 ms of `terfyn validate` on 2,000 agents.
 */
function collectionKey(doc: Document.Parsed): Node | undefined {
  const walk = (node: unknown): Node | undefined => {
    if (isCollection(node)) {
      for (const item of node.items) {
        const found = walk(item);
        if (found) return found;
      }
    } else if (isPair(node)) {
      const key = node.key as Node | null;
      if (key) {
        const resolved = isAlias(key) ? key.resolve(doc) : key;
        if (isCollection(resolved) || isPair(resolved)) return key;
        const inKey = walk(key);
        if (inKey) return inKey;
      }
      return walk(node.value);
    }
    return undefined;
  };
  return walk(doc.contents);
}

function unresolvedAlias(doc: Document.Parsed): (Node & { source: string }) | undefined {
  let found: (Node & { source: string }) | undefined;
  visit(doc, {
    Alias(_, alias) {
      if (alias.resolve(doc) === undefined) {
        found = alias as Node & { source: string };
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return found;
}

function rangeOf(node: { range?: [number, number, number?] | null } | null | undefined): Range {
  const r = node?.range;
  return r ? { start: r[0], end: r[1] } : { start: 0, end: 0 };
}
