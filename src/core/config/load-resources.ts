/**
 * YAML resource loading: text → typed resources with source positions, plus diagnostics.
 *
 * Parses with the `yaml` package (keeping node ranges), types each document by its `kind`,
 * validates it with the zod schemas, and reports every problem at the YAML line and column of
 * the offending field with its path (`spec.operations.read_file.effects.0`). Documents that are
 * not Terfyn resources (no terfyn.dev apiVersion and no Terfyn kind) are ignored, so other YAML
 * may live in a project. Never throws on input.
 */
import {
  type Document,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  type Pair,
  parseAllDocuments,
} from "yaml";
import type { z } from "zod";
import { type Diagnostic, diagnostic, type Span } from "../diagnostics.ts";
import { type Range, SourceText } from "../source.ts";
import { didYouMean } from "../suggest.ts";
import { article } from "../words.ts";
import { API_VERSION, RESOURCE_KINDS, type ResourceKind, resourceSchemas } from "./schemas.ts";
import { type FastNode, fastYamlDocuments, locateFast } from "./yaml-fast.ts";
import { YAML_PARSE_OPTIONS, yamlDocumentValue } from "./yaml-value.ts";

export type PathSegment = string | number;

/** A validated resource document and the means to point at any of its fields. */
export interface LoadedResource<K extends ResourceKind = ResourceKind> {
  kind: K;
  name: string;
  value: z.infer<(typeof resourceSchemas)[K]>;
  file: string;
  /** Span of the document's `metadata.name` (or the document). */
  span: Span;
  /** Span of the value at a path inside the document, or of its closest existing ancestor. */
  spanOf(path: readonly PathSegment[]): Span;
}

/** A document that looked like a resource but failed validation: its name still exists. */
export interface InvalidResource {
  kind: ResourceKind;
  name: string;
}

export interface LoadResourcesResult {
  resources: LoadedResource[];
  /** Resources that failed validation, so references to them are not reported again as unknown. */
  invalid: InvalidResource[];
  diagnostics: Diagnostic[];
}

/** Which element-level unions exist, and the key that selects each option (in schema order). */
const UNION_KEYS: Record<
  string,
  { path: readonly PathSegment[]; keys: readonly string[]; what: string }
> = {
  Policy: {
    path: ["spec", "rules"],
    keys: ["forbid", "requireApproval", "risk", "maxLoopLimit"],
    what: "policy rule",
  },
  CapabilityTest: {
    path: ["spec", "assertions"],
    keys: ["forbidEffect", "allowEffect", "maxIterations", "workflowEffects", "requiresApproval"],
    what: "assertion",
  },
};

/** `source`, when given, is `new SourceText(path, rawText)` already made by the caller. */
export function loadResources(
  path: string,
  rawText: string,
  source: SourceText = new SourceText(path, rawText),
): LoadResourcesResult {
  const text = source.text;
  const diagnostics: Diagnostic[] = [];
  const resources: LoadedResource[] = [];
  const invalid: InvalidResource[] = [];
  // The plain shapes resource files are made of are read straight to values; anything else
  // (and every file with a problem) goes the full way below, so diagnostics do not change.
  const fast = fastYamlDocuments(text);
  if (fast !== undefined) {
    for (const { value, root } of fast)
      addResource(value, spanIn(source, root), () => identifyValue(value));
    return { resources, invalid, diagnostics };
  }
  let docs: Document.Parsed[];
  try {
    docs = parseAllDocuments(text, {
      lineCounter: new LineCounter(),
      ...YAML_PARSE_OPTIONS,
    }) as Document.Parsed[];
  } catch (e) {
    diagnostics.push(
      diagnostic(
        "TF2001",
        source.span({ start: 0, end: 0 }),
        `cannot parse YAML: ${(e as Error).message}`,
      ),
    );
    return { resources, invalid, diagnostics };
  }
  if (!Array.isArray(docs)) docs = [docs as unknown as Document.Parsed];

  for (const doc of docs) {
    if (doc.errors.length > 0) {
      const partial = identify(doc);
      if (partial) invalid.push(partial);
      for (const err of doc.errors) {
        const [start, end] = err.pos;
        diagnostics.push(
          diagnostic("TF2001", source.span({ start, end }), `YAML: ${firstLine(err.message)}`, {
            hint: "fix the YAML syntax; other documents in this file are still checked",
          }),
        );
      }
      continue;
    }
    const root = doc.contents as Node | null;
    if (root === null || root === undefined) continue;
    const read = yamlDocumentValue(doc);
    if (!read.ok) {
      const { message, range, hint } = read.problem;
      diagnostics.push(
        diagnostic(
          "TF2001",
          source.span(range),
          `YAML: ${message}`,
          hint === undefined ? {} : { hint },
        ),
      );
      const partial = identify(doc);
      if (partial) invalid.push(partial);
      continue;
    }
    const spanOf = (p: readonly PathSegment[], atKey = false) => source.span(locate(doc, p, atKey));
    addResource(read.value, spanOf, () => identify(doc));
  }
  return { resources, invalid, diagnostics };

  /** One document's value: typed by its kind, validated, and kept or reported. */
  function addResource(
    value: unknown,
    spanOf: (p: readonly PathSegment[], atKey?: boolean) => Span,
    identifyDoc: () => InvalidResource | undefined,
  ): void {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return;
    const obj = value as Record<string, unknown>;
    const apiVersion = obj.apiVersion;
    const kind = obj.kind;
    const looksTerfyn =
      (typeof apiVersion === "string" && apiVersion.startsWith("terfyn.dev/")) ||
      (typeof kind === "string" && (RESOURCE_KINDS as string[]).includes(kind));
    if (!looksTerfyn) return;

    if (typeof apiVersion === "string" && apiVersion !== API_VERSION) {
      diagnostics.push(
        diagnostic("TF2004", spanOf(["apiVersion"]), `unsupported apiVersion \`${apiVersion}\``, {
          hint: `use \`apiVersion: ${API_VERSION}\``,
        }),
      );
      const partial = identifyDoc();
      if (partial) invalid.push(partial);
      return;
    }
    if (typeof kind !== "string" || !(RESOURCE_KINDS as string[]).includes(kind)) {
      const hint = typeof kind === "string" ? didYouMean(kind, RESOURCE_KINDS) : undefined;
      diagnostics.push(
        diagnostic(
          "TF2003",
          spanOf(["kind"]),
          typeof kind === "string"
            ? `unknown kind \`${kind}\`; expected one of: ${RESOURCE_KINDS.join(", ")}`
            : `missing \`kind\`; expected one of: ${RESOURCE_KINDS.join(", ")}`,
          hint === undefined ? {} : { hint },
        ),
      );
      return;
    }
    const k = kind as ResourceKind;
    const parsed = resourceSchemas[k].safeParse(value);
    const docName =
      typeof (obj.metadata as { name?: unknown } | undefined)?.name === "string"
        ? (obj.metadata as { name: string }).name
        : "?";
    if (!parsed.success) {
      for (const issue of flattenIssues(parsed.error.issues, obj, k)) {
        const field = issue.path.length > 0 ? issue.path.join(".") : "(document)";
        diagnostics.push(
          diagnostic(
            "TF2002",
            spanOf(issue.path, issue.atKey === true),
            `${k}/${docName}: ${field}: ${issue.message}`,
            issue.hint === undefined ? {} : { hint: issue.hint },
          ),
        );
      }
      if (docName !== "?") invalid.push({ kind: k, name: docName });
      return;
    }
    resources.push({
      kind: k,
      name: parsed.data.metadata.name,
      value: parsed.data,
      file: path,
      span: spanOf(["metadata", "name"]),
      spanOf,
    } as LoadedResource);
  }
}

/** `spanOf` over a position tree; a function of its own, so the closure holds the tree only. */
function spanIn(
  source: SourceText,
  root: FastNode,
): (p: readonly PathSegment[], atKey?: boolean) => Span {
  return (p, atKey = false) => source.span(locateFast(root, p, atKey));
}

/** Kind and name, as `identify` reads them, from a document's value. */
function identifyValue(value: Record<string, unknown>): InvalidResource | undefined {
  const kind = value.kind;
  const metadata = value.metadata;
  const name =
    metadata !== null && typeof metadata === "object" && !Array.isArray(metadata)
      ? (metadata as Record<string, unknown>).name
      : undefined;
  if (
    typeof kind === "string" &&
    (RESOURCE_KINDS as string[]).includes(kind) &&
    typeof name === "string"
  )
    return { kind: kind as ResourceKind, name };
  return undefined;
}

/** Kind and name of a document that will not load, when they can still be read from it. */
function identify(doc: Document.Parsed): InvalidResource | undefined {
  try {
    const kind = doc.get("kind");
    const metadata = doc.get("metadata");
    const name = isMap(metadata) ? metadata.get("name") : undefined;
    if (
      typeof kind === "string" &&
      (RESOURCE_KINDS as string[]).includes(kind) &&
      typeof name === "string"
    ) {
      return { kind: kind as ResourceKind, name };
    }
  } catch {
    // A document too broken to read has no name to protect from cascades.
  }
  return undefined;
}

function firstLine(message: string): string {
  return message.split("\n")[0] ?? message;
}

interface FlatIssue {
  path: PathSegment[];
  message: string;
  hint?: string;
  /** Point at the key itself (an unknown field), not at its value. */
  atKey?: boolean;
}

interface ZodIssueLike {
  code: string;
  path: PropertyKey[];
  message: string;
  keys?: string[];
  errors?: ZodIssueLike[][];
}

/** Turns zod issues into one message per field; unions are resolved by their selecting key. */
function flattenIssues(
  issues: readonly ZodIssueLike[],
  root: Record<string, unknown>,
  kind: ResourceKind,
): FlatIssue[] {
  const out: FlatIssue[] = [];
  // Unknown keys by parent path: a missing `operations` next to an unknown `operation` is one
  // mistake, reported once (at the misspelt key, with the suggestion).
  const unknownKeys = new Map<string, string[]>();
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys" && issue.keys) {
      unknownKeys.set(issue.path.map(String).join("."), issue.keys);
    }
  }
  for (const issue of issues) {
    const path = issue.path.filter((p): p is string | number => typeof p !== "symbol");
    const last = path[path.length - 1];
    if (
      issue.code === "invalid_type" &&
      typeof last === "string" &&
      getAt(root, path) === undefined
    ) {
      const siblings = unknownKeys.get(path.slice(0, -1).map(String).join(".")) ?? [];
      if (siblings.some((k) => didYouMean(k, [last]) !== undefined)) continue;
    }
    if (issue.code === "unrecognized_keys" && issue.keys) {
      const known = knownKeysAt(path, kind);
      for (const key of issue.keys) {
        const hint = known ? didYouMean(key, known) : undefined;
        const f: FlatIssue = {
          path: [...path, key],
          atKey: true,
          message: `unknown field \`${key}\`${known ? `; expected one of: ${known.join(", ")}` : ""}`,
        };
        if (hint !== undefined) f.hint = hint;
        out.push(f);
      }
      continue;
    }
    if (issue.code === "invalid_union" && issue.errors) {
      const union = UNION_KEYS[kind];
      const element = getAt(root, path);
      if (union && element !== null && typeof element === "object" && !Array.isArray(element)) {
        const keys = Object.keys(element);
        const selected = keys.length === 1 ? union.keys.indexOf(keys[0] as string) : -1;
        if (selected >= 0 && issue.errors[selected]) {
          const nested = issue.errors[selected].map((e) => ({ ...e, path: [...path, ...e.path] }));
          out.push(...flattenIssues(nested, root, kind));
          continue;
        }
        const unknownKey = keys.find((k) => !union.keys.includes(k));
        const f: FlatIssue = {
          path: unknownKey === undefined ? path : [...path, unknownKey],
          atKey: unknownKey !== undefined,
          message:
            keys.length === 1 || unknownKey !== undefined
              ? `unknown ${union.what} \`${unknownKey ?? keys[0]}\`; expected one of: ${union.keys.join(", ")}`
              : `${article(union.what)} ${union.what} has exactly one of: ${union.keys.join(", ")}`,
        };
        const hint = unknownKey === undefined ? undefined : didYouMean(unknownKey, union.keys);
        if (hint !== undefined) f.hint = hint;
        out.push(f);
        continue;
      }
      if (union) {
        out.push({
          path,
          message: `expected ${article(union.what)} ${union.what}: a mapping with one of ${union.keys.join(", ")}`,
        });
        continue;
      }
    }
    out.push({ path, message: issue.message.replace(/^Invalid input: /, "") });
  }
  return out;
}

function getAt(root: unknown, path: readonly PathSegment[]): unknown {
  let cur: unknown = root;
  for (const seg of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string | number, unknown>)[seg];
  }
  return cur;
}

/** Known field names for an object position, from the zod schema's shape where it is simple. */
function knownKeysAt(path: readonly PathSegment[], kind: ResourceKind): string[] | undefined {
  let schema: unknown = resourceSchemas[kind];
  for (const seg of path) {
    schema = unwrap(schema);
    const def = (
      schema as {
        def?: {
          type?: string;
          shape?: Record<string, unknown>;
          valueType?: unknown;
          element?: unknown;
        };
      }
    ).def;
    if (!def) return undefined;
    if (def.type === "object" && def.shape && typeof seg === "string") schema = def.shape[seg];
    else if (def.type === "record") schema = def.valueType;
    else if (def.type === "array" && typeof seg === "number") schema = def.element;
    else return undefined;
  }
  schema = unwrap(schema);
  const def = (schema as { def?: { type?: string; shape?: Record<string, unknown> } }).def;
  return def?.type === "object" && def.shape ? Object.keys(def.shape) : undefined;
}

function unwrap(schema: unknown): unknown {
  let s = schema as
    | { def?: { type?: string; innerType?: unknown; getter?: () => unknown } }
    | undefined;
  for (let i = 0; i < 10 && s?.def; i++) {
    const t = s.def.type;
    if ((t === "optional" || t === "default" || t === "nullable") && s.def.innerType)
      s = s.def.innerType as typeof s;
    else if (t === "lazy" && s.def.getter) s = s.def.getter() as typeof s;
    else break;
  }
  return s;
}

function rangeOf(node: Node | null | undefined): Range {
  const r = node?.range;
  if (!r) return { start: 0, end: 0 };
  return { start: r[0], end: r[1] };
}

/**
 * The offset range of the node at `path`, or of its closest existing ancestor. For a missing or
 * unknown field, this is the key of the nearest mapping entry that does exist.
 */
export function locate(doc: Document.Parsed, path: readonly PathSegment[], atKey: boolean): Range {
  let node: unknown = doc.contents;
  let best: Range = rangeOf(doc.contents as Node);
  // The root range can span the whole document; point at its first line instead.
  best = { start: best.start, end: best.start };
  for (const [i, seg] of path.entries()) {
    if (isMap(node)) {
      const pair = (node.items as Pair[]).find(
        (p) => isScalar(p.key) && String(p.key.value) === String(seg),
      );
      if (!pair) return best;
      const keyRange = rangeOf(pair.key as Node);
      if (atKey && i === path.length - 1) return keyRange;
      node = pair.value;
      best =
        node && (isScalar(node) || isMap(node) || isSeq(node))
          ? narrow(node as Node, keyRange)
          : keyRange;
    } else if (isSeq(node) && typeof seg === "number") {
      const item = node.items[seg];
      if (item === undefined) return best;
      node = item;
      best = narrow(item as Node, { start: 0, end: 0 });
    } else {
      return best;
    }
  }
  return best;
}

/** A scalar points at itself; a collection points at its first line (its key, if it has one). */
function narrow(node: Node, keyRange: Range): Range {
  if (isScalar(node)) return rangeOf(node);
  if (keyRange.end > keyRange.start) return keyRange;
  const firstKey = isMap(node) ? (node.items[0] as Pair | undefined)?.key : undefined;
  if (firstKey && isScalar(firstKey)) return rangeOf(firstKey as Node);
  const r = rangeOf(node);
  return { start: r.start, end: r.start };
}
