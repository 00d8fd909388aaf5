/**
 * YAML text → plain values in one pass over the `yaml` library's own parse (its CST), for the
 * plain shapes resource files are made of: block mappings with plain or quoted keys, block
 * sequences, scalars of every style, and the empty `[]` and `{}`. It skips what
 * `parseAllDocuments` and `toJS` build on the way (a Document of Scalar, Pair and YAMLMap
 * nodes, each with its range array, kept alive by every resource's `spanOf`, then a walk
 * turning them into values): `terfyn validate` on 2,000 agents went from 860 to 724 ms CPU.
 *
 * The values are the ones `parseAllDocuments(text, YAML_PARSE_OPTIONS)` then `toJS` give:
 * scalars are read by the library (`CST.resolveAsScalar`, the function its document
 * composition uses) and typed by the same schema's tags. Anything else (anchors, aliases,
 * tags, directives, flow collections with content, keys that are not strings, a duplicate key,
 * a tab, a carriage return, an empty value, deep nesting, and whatever composing the document
 * would report as an error) answers `undefined`, and the caller parses the file the full way,
 * so every diagnostic comes from where it always did. Positions are kept as a small tree with
 * the ranges composing would give each node, so a field can still be located (`locateFast`).
 */
import { CST, isScalar, Parser, parseDocument } from "yaml";
import type { Range } from "../source.ts";
import { YAML_PARSE_OPTIONS } from "./yaml-value.ts";

export type PathSegment = string | number;

/** A scalar: its range is the composed node's `[start, valueEnd]`. */
interface FastScalar {
  t: 0;
  start: number;
  end: number;
}
interface FastPair {
  key: string;
  keyStart: number;
  keyEnd: number;
  value: FastNode;
}
interface FastMap {
  t: 1;
  start: number;
  items: FastPair[];
}
interface FastSeq {
  t: 2;
  start: number;
  items: FastNode[];
}
export type FastNode = FastScalar | FastMap | FastSeq;

export interface FastDocument {
  value: Record<string, unknown>;
  root: FastNode;
}

/** Deep enough for any resource; deeper documents take the full path (and its depth check). */
const MAX_FAST_DEPTH = 64;
/** yaml's strict limit from a key's start to its `:`. */
const MAX_KEY_SPAN = 1024;

class Bail {}
const BAIL = new Bail();
const bail = (): never => {
  throw BAIL;
};

type Token = CST.Token;
type SourceToken = CST.SourceToken;

let schemaTags:
  | {
      tags: readonly {
        default?: boolean | "key";
        test?: RegExp;
        resolve: (...a: never[]) => unknown;
      }[];
      options: unknown;
    }
  | undefined;

/** The tags and options a document parsed with YAML_PARSE_OPTIONS gets (read once). */
function schema() {
  if (schemaTags === undefined) {
    const doc = parseDocument("", YAML_PARSE_OPTIONS);
    schemaTags = {
      tags: doc.schema.tags as unknown as NonNullable<typeof schemaTags>["tags"],
      options: doc.options,
    };
  }
  return schemaTags;
}

/** The value and composed ranges of a scalar token, or a bail on any error the library reports. */
function scalar(token: Token): { value: unknown; range: [number, number, number] } {
  const r = CST.resolveAsScalar(token, true, bail);
  if (r === null) return bail();
  if (token.type !== "scalar") return { value: r.value, range: r.range };
  if (token.source === "") bail();
  let value = plainValues.get(r.value);
  if (value === undefined && !plainValues.has(r.value)) {
    value = plainValue(r.value);
    plainValues.set(r.value, value);
  }
  return { value, range: r.range };
}

/**
 * Plain scalars already typed in this file: resource files repeat the same few (`type: object`,
 * effect names, keys), and typing one tries up to nine patterns. Values are primitives.
 */
let plainValues = new Map<string, unknown>();

/** findScalarTagByTest: the first default tag whose test matches; otherwise a string. */
function plainValue(text: string): unknown {
  const s = schema();
  for (const tag of s.tags) {
    if (tag.default === true && tag.test?.test(text)) {
      const res = (tag.resolve as (v: string, e: () => never, o: unknown) => unknown)(
        text,
        bail,
        s.options,
      );
      return isScalar(res) ? res.value : res;
    }
  }
  return text;
}

/** resolveProps for the tokens this path accepts: spaces, line breaks, comments, one indicator. */
function props(
  tokens: readonly SourceToken[],
  indicator: SourceToken["type"],
  startOnNewline: boolean,
  offset: number,
): { found: SourceToken | undefined; hasNewline: boolean; end: number } {
  let hasSpace = startOnNewline;
  let hasNewline = false;
  let found: SourceToken | undefined;
  for (const token of tokens) {
    switch (token.type) {
      case "space":
        hasSpace = true;
        break;
      case "comment":
        if (!hasSpace) bail();
        break;
      case "newline":
        hasNewline = true;
        hasSpace = true;
        break;
      default:
        if (token.type !== indicator || found !== undefined) bail();
        found = token;
        hasSpace = false;
    }
  }
  const last = tokens[tokens.length - 1];
  return { found, hasNewline, end: last ? last.offset + last.source.length : offset };
}

/** resolveEnd with `reqSpace`: the offset after trailing spaces, comments and line breaks. */
function endOffset(tokens: readonly SourceToken[], offset: number): number {
  let hasSpace = false;
  for (const token of tokens) {
    if (token.type === "space" || token.type === "newline") hasSpace = true;
    else if (token.type !== "comment" || !hasSpace) bail();
    offset += token.source.length;
  }
  return offset;
}

/** A value node: its value, its position tree and the composed node's `range[2]` (where it ends). */
interface Converted {
  value: unknown;
  node: FastNode;
  nodeEnd: number;
}

function convert(token: Token, depth: number): Converted {
  if (depth > MAX_FAST_DEPTH) bail();
  switch (token.type) {
    case "scalar":
    case "single-quoted-scalar":
    case "double-quoted-scalar":
    case "block-scalar": {
      const { value, range } = scalar(token);
      return { value, node: { t: 0, start: range[0], end: range[1] }, nodeEnd: range[2] };
    }
    case "block-map":
      return blockMap(token, depth);
    case "block-seq":
      return blockSeq(token, depth);
    case "flow-collection": {
      if (token.items.length > 0) bail();
      const isMap = token.start.source === "{";
      const [close, ...rest] = token.end;
      if (close?.source !== (isMap ? "}" : "]")) bail();
      const cePos = (close as SourceToken).offset + 1;
      const nodeEnd = rest.length > 0 ? endOffset(rest, cePos) : cePos;
      return isMap
        ? { value: {}, node: { t: 1, start: token.offset, items: [] }, nodeEnd }
        : { value: [], node: { t: 2, start: token.offset, items: [] }, nodeEnd };
    }
    default:
      return bail();
  }
}

function blockMap(bm: CST.BlockMap, depth: number): Converted {
  const value: Record<string, unknown> = {};
  const items: FastPair[] = [];
  let offset = bm.offset;
  let commentEnd: number | undefined;
  for (const item of bm.items) {
    const { start, key, sep, value: v } = item;
    const keyProps = props(start, "explicit-key-ind", true, offset);
    const keyStart = keyProps.end;
    if (keyProps.found) bail();
    if (!sep) {
      // An item of comments only.
      if (key) bail();
      commentEnd = keyProps.end;
      continue;
    }
    if (!key || !("indent" in key) || key.indent !== bm.indent) return bail();
    if (
      key.type !== "scalar" &&
      key.type !== "single-quoted-scalar" &&
      key.type !== "double-quoted-scalar"
    )
      return bail();
    // containsNewline: an implicit key is on one line.
    if (key.source.includes("\n") || key.end?.some((t) => t.type === "newline")) bail();
    const k = scalar(key);
    if (typeof k.value !== "string" || k.value === "__proto__" || k.value === "<<") return bail();
    if (Object.hasOwn(value, k.value)) bail();
    const valueProps = props(sep, "map-value-ind", false, k.range[2]);
    const found = valueProps.found;
    if (!found || !v) return bail();
    if (v.type === "block-map" && !valueProps.hasNewline) bail();
    if (keyStart < found.offset - MAX_KEY_SPAN) bail();
    const c = convert(v, depth + 1);
    offset = c.nodeEnd;
    value[k.value] = c.value;
    items.push({ key: k.value, keyStart: k.range[0], keyEnd: k.range[1], value: c.node });
  }
  if (commentEnd && commentEnd < offset) bail();
  return { value, node: { t: 1, start: bm.offset, items }, nodeEnd: commentEnd ?? offset };
}

function blockSeq(bs: CST.BlockSequence, depth: number): Converted {
  const value: unknown[] = [];
  const items: FastNode[] = [];
  let offset = bs.offset;
  let commentEnd: number | undefined;
  for (const { start, value: v } of bs.items) {
    const p = props(start, "seq-item-ind", true, offset);
    if (!p.found) {
      if (v) bail();
      commentEnd = p.end;
      continue;
    }
    if (!v) return bail();
    const c = convert(v, depth + 1);
    offset = c.nodeEnd;
    value.push(c.value);
    items.push(c.node);
  }
  return { value, node: { t: 2, start: bs.offset, items }, nodeEnd: commentEnd ?? offset };
}

/**
 * Every document of `text` as a mapping value with its positions, or `undefined` when the text
 * holds anything outside the shapes above (then parse it with `parseAllDocuments`).
 */
export function fastYamlDocuments(text: string): FastDocument[] | undefined {
  if (text.includes("\t") || text.includes("\r")) return undefined;
  const docs: FastDocument[] = [];
  plainValues = new Map();
  try {
    for (const token of new Parser().parse(text)) {
      switch (token.type) {
        case "space":
        case "newline":
        case "comment":
          continue;
        case "document": {
          const v = token.value;
          if (v?.type !== "block-map") return undefined;
          const p = props(token.start, "doc-start", true, token.offset);
          if (p.found && !p.hasNewline) return undefined;
          const c = convert(v, 0);
          if (token.end) endOffset(token.end, c.nodeEnd);
          docs.push({ value: c.value as Record<string, unknown>, root: c.node });
          continue;
        }
        default:
          return undefined;
      }
    }
  } catch (e) {
    if (e === BAIL) return undefined;
    throw e;
  } finally {
    plainValues = new Map();
  }
  return docs;
}

/** `locate` of load-resources.ts over the position tree: the same ranges for the same paths. */
export function locateFast(root: FastNode, path: readonly PathSegment[], atKey: boolean): Range {
  let node: FastNode = root;
  let best: Range = { start: root.start, end: root.start };
  for (let i = 0; i < path.length; i++) {
    const seg = path[i] as PathSegment;
    if (node.t === 1) {
      const wanted = String(seg);
      const pair = node.items.find((p) => p.key === wanted);
      if (!pair) return best;
      const keyRange = { start: pair.keyStart, end: pair.keyEnd };
      if (atKey && i === path.length - 1) return keyRange;
      node = pair.value;
      best = narrow(node, keyRange);
    } else if (node.t === 2 && typeof seg === "number") {
      const item = node.items[seg];
      if (item === undefined) return best;
      node = item;
      best = narrow(item, { start: 0, end: 0 });
    } else {
      return best;
    }
  }
  return best;
}

function narrow(node: FastNode, keyRange: Range): Range {
  if (node.t === 0) return { start: node.start, end: node.end };
  if (keyRange.end > keyRange.start) return keyRange;
  const first = node.t === 1 ? node.items[0] : undefined;
  if (first) return { start: first.keyStart, end: first.keyEnd };
  return { start: node.start, end: node.start };
}
