/**
 * Claude Code's permission rules (`permissions.allow`, `ask`, `deny` in `.claude/settings.json`
 * and its other scopes), read with the host's own documented semantics, and ordered by
 * containment, never by text. Pure.
 *
 * A rule is `Tool` or `Tool(specifier)`; `Tool(*)` is `Tool`. For `Bash` the specifier is a
 * pattern over the whole command string: `*` matches any characters (spaces included); a single
 * trailing ` *` is optional, so `Bash(ls *)` matches `ls` and `ls -la` but not `lsof` (a word
 * boundary), while `Bash(ls*)` matches all three; the legacy `Bash(npm run:*)` is a prefix at a
 * word boundary, the same as `Bash(npm run *)`. `mcp__server` covers every tool of that server.
 *
 * Containment is decided conservatively: `contains(a, b)` is true only when every use `b` matches
 * is provably matched by `a`. What cannot be proven is not contained, so a change the order
 * cannot place is a widening (fail closed).
 */

export interface ClaudeRule {
  /** The rule exactly as written. */
  text: string;
  tool: string;
  /** The text inside the parentheses; absent (or `*`) for the whole tool. */
  specifier?: string;
}

/** A rule, or why the host would not read it as one. */
export function parseClaudeRule(text: string): ClaudeRule | { problem: string } {
  const t = text.trim();
  // An MCP rule may end in `*` after its server (`mcp__server__*`).
  const m = /^([A-Za-z_][A-Za-z0-9_-]*(?:\*)?)(?:\((.*)\))?$/s.exec(t);
  if (!m || m[1] === undefined || (m[1].endsWith("*") && !/^mcp__[^_].*__\*$/.test(m[1])))
    return {
      problem: `${JSON.stringify(text)} is not a rule: write Tool or Tool(specifier)`,
    };
  const spec = m[2];
  if (spec === undefined || spec.trim() === "*") return { text, tool: m[1] };
  if (spec.trim() === "")
    return {
      problem: `${JSON.stringify(text)} has an empty specifier: write ${m[1]} for every use`,
    };
  return { text, tool: m[1], specifier: spec };
}

/** A glob over a string: literal text and `*` (any characters). */
type Glob = readonly ("*" | string)[];

function glob(pattern: string): Glob {
  const out: ("*" | string)[] = [];
  for (const ch of pattern) {
    if (ch === "*") {
      if (out.at(-1) !== "*") out.push("*");
    } else out.push(ch);
  }
  return out;
}

/**
 * The command globs a Bash specifier matches, as alternatives: `prefix:*` and a single trailing
 * ` *` both mean the prefix alone or the prefix, a space and anything.
 */
export function bashGlobs(specifier: string): Glob[] {
  const legacy = /^(.*):\*$/s.exec(specifier);
  const prefix = legacy
    ? legacy[1]
    : specifier.endsWith(" *") && specifier.indexOf("*") === specifier.length - 1
      ? specifier.slice(0, -2)
      : undefined;
  if (prefix !== undefined) return [glob(prefix), glob(`${prefix} *`)];
  return [glob(specifier)];
}

/**
 * Whether every string `b` matches is matched by `a`. Sound, not complete: `b`'s `*` is opaque
 * (only a `*` of `a` may consume it), so a true answer is a proof.
 */
export function globContains(a: Glob, b: Glob): boolean {
  // Bottom-up over suffixes (no recursion, so no rule is too long for the stack); a pair too
  // large to decide quickly is not proven contained (what cannot be proven is not).
  const n = a.length;
  const m = b.length;
  // a's leading literal text must begin b, character for character: most pairs part here.
  let k = 0;
  while (k < n && a[k] !== "*" && a[k] !== SEGMENT) {
    if (k >= m || a[k] !== b[k]) return false;
    k++;
  }
  if (k === n) return k === m;
  if ((n + 1) * (m + 1) > MAX_GLOB_CELLS) return false;
  const w = m + 1;
  // at[i * w + j]: a[i..] contains b[j..]
  const at = new Uint8Array((n + 1) * w);
  at[n * w + m] = 1;
  for (let i = n - 1; i >= 0; i--) {
    const t = a[i];
    for (let j = m; j >= 0; j--) {
      let r = false;
      if (t === "*") r = at[(i + 1) * w + j] === 1 || (j < m && at[i * w + j + 1] === 1);
      else if (t === SEGMENT)
        // Within one path segment: it may take b's characters other than `/`, and b's own
        // within-segment wildcards, never b's `*` (which may cross a `/`).
        r =
          at[(i + 1) * w + j] === 1 ||
          (j < m && b[j] !== "/" && b[j] !== "*" && at[i * w + j + 1] === 1);
      else
        r =
          j < m && b[j] !== "*" && b[j] !== SEGMENT && t === b[j] && at[(i + 1) * w + j + 1] === 1;
      at[i * w + j] = r ? 1 : 0;
    }
  }
  return at[0] === 1;
}

/** The largest table globContains fills: beyond it a rule pair is not proven contained. */
const MAX_GLOB_CELLS = 4_000_000;

/** A wildcard within one path segment (gitignore's `*`): any characters but `/`. */
const SEGMENT = "*/";

/** The tools whose specifier is a gitignore-style path. */
const PATH_TOOLS = new Set(["Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "Glob", "Grep"]);

/**
 * A path rule's glob, read as the host reads it: `//p` from the filesystem root, `~/p` from the
 * home directory, `/p` from the project (where the settings live), `./p` and `p/q` from the
 * working directory, and a `p` without any `/` at any depth below it; `**` crosses
 * directories, `*` stays within one; a trailing `/` holds everything below.
 *
 * Each base is its own space: the working directory may be any directory of the project, so a
 * pattern from it never contains one from the project root, nor the other way round (what
 * cannot be proven is not contained). A `?` or `[…]` is a literal in the rule that contains and
 * a wildcard in the rule contained, for the same reason.
 */
function pathGlob(specifier: string, role: "container" | "contained"): Glob {
  let rest = specifier;
  let base = "\u0001cwd";
  let anyDepth = false;
  if (rest.startsWith("//")) {
    base = "\u0001fs";
    rest = rest.slice(1);
  } else if (rest.startsWith("~/")) {
    base = "\u0001home";
    rest = rest.slice(1);
  } else if (rest.startsWith("/")) {
    base = "\u0001project";
  } else {
    const bare = rest.replace(/^\.\//, "");
    anyDepth = !rest.startsWith("./") && !bare.replace(/\/$/, "").includes("/");
    rest = `/${bare}`;
  }
  if (rest.endsWith("/")) rest = `${rest}**`;
  const out: string[] = [...base];
  if (anyDepth) out.push("*");
  for (let i = 0; i < rest.length; i++) {
    const ch = rest[i] as string;
    if (ch === "*" && rest[i + 1] === "*") {
      if (out.at(-1) !== "*") out.push("*");
      i++;
    } else if (ch === "*" || (role === "contained" && (ch === "?" || ch === "["))) {
      if (ch === "[") i = Math.max(i, rest.indexOf("]", i));
      if (out.at(-1) !== SEGMENT && out.at(-1) !== "*") out.push(SEGMENT);
    } else out.push(ch);
  }
  return out;
}

/** Each rule's globs, by role, computed once: a large settings file compares every pair. */
const GLOBS = new WeakMap<ClaudeRule, Partial<Record<"container" | "contained", Glob[]>>>();

/** The globs a rule's specifier matches, by the tool's own reading of it. */
function specifierGlobs(
  rule: ClaudeRule & { specifier: string },
  role: "container" | "contained",
): Glob[] {
  const known = GLOBS.get(rule)?.[role];
  if (known) return known;
  const globs =
    rule.tool === "Bash"
      ? bashGlobs(rule.specifier)
      : PATH_TOOLS.has(rule.tool)
        ? [pathGlob(rule.specifier, role)]
        : [glob(rule.specifier)];
  GLOBS.set(rule, { ...GLOBS.get(rule), [role]: globs });
  return globs;
}

/** An MCP rule: its server, and its tool when it names one (`mcp__server__tool`). */
function mcpParts(tool: string): { server: string; tool?: string } | undefined {
  const m = /^mcp__([^_]+(?:_[^_]+)*?)(?:__(.+))?$/.exec(tool);
  if (!m || m[1] === undefined) return undefined;
  return m[2] === undefined ? { server: m[1] } : { server: m[1], tool: m[2] };
}

/** Whether every use `b` matches is matched by `a` (see the module's note: a proof, or false). */
export function ruleContains(a: ClaudeRule, b: ClaudeRule): boolean {
  if (a.tool !== b.tool) {
    const ma = mcpParts(a.tool);
    const mb = mcpParts(b.tool);
    // `mcp__server` covers each of its tools; `mcp__server__*` is the same.
    return (
      ma !== undefined &&
      mb !== undefined &&
      ma.server === mb.server &&
      a.specifier === undefined &&
      (ma.tool === undefined || ma.tool === "*")
    );
  }
  if (a.specifier === undefined) return true;
  if (b.specifier === undefined) return false;
  const as = specifierGlobs(a as ClaudeRule & { specifier: string }, "container");
  const bs = specifierGlobs(b as ClaudeRule & { specifier: string }, "contained");
  return bs.every((g) => as.some((f) => globContains(f, g)));
}

export type RuleList = "allow" | "ask" | "deny";

export interface RuleChange {
  list: RuleList;
  /** The rule exactly as written in the file. */
  rule: string;
  change: "added" | "removed";
  direction: "widened" | "narrowed" | "neutral";
  /** Why, in one sentence. */
  reason: string;
}

/** A glob's literal opening: its elements before the first wildcard, as one string. */
export function literalPrefix(g: Glob): string {
  let out = "";
  for (const e of g) {
    if (e === "*" || e === SEGMENT) break;
    out += e;
  }
  return out;
}

/**
 * A list of rules indexed for "which of them may contain this rule": a rule with a specifier
 * can contain another only when its glob's literal opening begins the other's (ruleContains
 * compares those character by character first), so only rules filed under an opening of the
 * other rule's are tried. Whole-tool and MCP-server rules are tried for every rule of their tool
 * or server. The answer is ruleContains' own, in the list's order: only the work is less (a
 * settings file of thousands of rules was quadratic).
 */
class RuleIndex {
  private readonly wide = new Map<string, number[]>();
  private readonly byOpening = new Map<string, Map<string, number[]>>();
  private readonly lengths = new Map<string, number[]>();
  constructor(readonly rules: readonly ClaudeRule[]) {
    const file = <K>(map: Map<K, number[]>, key: K, i: number) => {
      const list = map.get(key);
      if (list) list.push(i);
      else map.set(key, [i]);
    };
    rules.forEach((r, i) => {
      const mcp = mcpParts(r.tool);
      if (r.specifier === undefined) {
        const key =
          mcp && (mcp.tool === undefined || mcp.tool === "*") ? `mcp:${mcp.server}` : r.tool;
        file(this.wide, key, i);
        if (key !== r.tool) file(this.wide, r.tool, i);
        return;
      }
      const globs = specifierGlobs(r as ClaudeRule & { specifier: string }, "container");
      const opening = globs.map(literalPrefix).reduce((a, b) => (b.length < a.length ? b : a));
      const tool = this.byOpening.get(r.tool) ?? new Map<string, number[]>();
      this.byOpening.set(r.tool, tool);
      file(tool, opening, i);
    });
    for (const [tool, openings] of this.byOpening)
      this.lengths.set(
        tool,
        [...new Set([...openings.keys()].map((k) => k.length))].sort((a, b) => a - b),
      );
  }

  /** The rules that may contain `b`, in the list's order (each still to be proven). */
  candidates(b: ClaudeRule): ClaudeRule[] {
    const found: number[] = [...(this.wide.get(b.tool) ?? [])];
    const mcp = mcpParts(b.tool);
    if (mcp) found.push(...(this.wide.get(`mcp:${mcp.server}`) ?? []));
    const openings = this.byOpening.get(b.tool);
    if (openings && b.specifier !== undefined) {
      const g = specifierGlobs(b as ClaudeRule & { specifier: string }, "contained")[0];
      const own = g ? literalPrefix(g) : "";
      for (const n of this.lengths.get(b.tool) ?? []) {
        if (n > own.length) break;
        found.push(...(openings.get(own.slice(0, n)) ?? []));
      }
    }
    return [...new Set(found)].sort((x, y) => x - y).map((i) => this.rules[i] as ClaudeRule);
  }
}

const INDEXES = new WeakMap<readonly ClaudeRule[], RuleIndex>();

/** The first of `rules` that contains `r` (and passes `where`), or undefined. */
export function firstContaining<T extends ClaudeRule>(
  rules: readonly T[],
  r: ClaudeRule,
  where: (x: T) => boolean = () => true,
): T | undefined {
  let index = INDEXES.get(rules);
  // A list read further since it was indexed is indexed again.
  if (index?.rules.length !== rules.length) {
    index = new RuleIndex([...rules]);
    INDEXES.set(rules, index);
  }
  return (index.candidates(r) as T[]).find((x) => where(x) && ruleContains(x, r));
}

const covering = (rules: readonly ClaudeRule[], r: ClaudeRule) =>
  firstContaining(rules, r, (x) => x.text !== r.text) ?? rules.find((x) => x.text === r.text);

/**
 * Each rule added to or removed from a list between two sets of rules (the lists concatenated
 * across the scopes the host reads), with its direction. Deny wins over ask over allow, whatever
 * the order or specificity, so: an allow covered by an existing allow is neutral, and one a
 * deny covers gives nothing; a removed deny or ask is a widening unless another still covers
 * what it held; an added deny or ask narrows. A rule the order cannot place widens.
 */
export function ruleChanges(
  base: Readonly<Record<RuleList, readonly ClaudeRule[]>>,
  head: Readonly<Record<RuleList, readonly ClaudeRule[]>>,
): RuleChange[] {
  const out: RuleChange[] = [];
  const texts = (rs: readonly ClaudeRule[]) => new Set(rs.map((r) => r.text.trim()));
  for (const list of ["deny", "ask", "allow"] as const) {
    const before = texts(base[list]);
    const after = texts(head[list]);
    for (const r of head[list]) {
      if (before.has(r.text.trim())) continue;
      out.push({ list, rule: r.text, change: "added", ...addedDirection(list, r, base, head) });
    }
    for (const r of base[list]) {
      if (after.has(r.text.trim())) continue;
      out.push({ list, rule: r.text, change: "removed", ...removedDirection(list, r, head) });
    }
  }
  return out;
}

function addedDirection(
  list: RuleList,
  r: ClaudeRule,
  base: Readonly<Record<RuleList, readonly ClaudeRule[]>>,
  head: Readonly<Record<RuleList, readonly ClaudeRule[]>>,
): Pick<RuleChange, "direction" | "reason"> {
  if (list === "deny")
    return { direction: "narrowed", reason: "a deny removes what it matches, whatever allows it" };
  if (list === "ask") {
    const by = covering(base.ask, r) ?? covering(base.deny, r);
    return by
      ? {
          direction: "neutral",
          reason: `already ${base.deny.includes(by) ? "denied" : "asked"} by ${by.text}`,
        }
      : { direction: "narrowed", reason: "an ask rule gates what it matches, whatever allows it" };
  }
  const denied = covering(head.deny, r);
  if (denied) return { direction: "neutral", reason: `${denied.text} denies everything it allows` };
  const asked = covering(head.ask, r);
  if (asked)
    return { direction: "neutral", reason: `${asked.text} still asks for everything it allows` };
  const allowed = covering(base.allow, r);
  if (allowed) return { direction: "neutral", reason: `already allowed by ${allowed.text}` };
  return { direction: "widened", reason: "allows what no rule allowed before, without asking" };
}

function removedDirection(
  list: RuleList,
  r: ClaudeRule,
  head: Readonly<Record<RuleList, readonly ClaudeRule[]>>,
): Pick<RuleChange, "direction" | "reason"> {
  if (list === "allow") {
    const still = covering(head.allow, r);
    return still
      ? { direction: "neutral", reason: `still allowed by ${still.text}` }
      : { direction: "narrowed", reason: "what it allowed is asked again" };
  }
  const still = covering(head.deny, r) ?? (list === "ask" ? covering(head.ask, r) : undefined);
  if (still) return { direction: "neutral", reason: `still held by ${still.text}` };
  return {
    direction: "widened",
    reason:
      list === "deny"
        ? "a removed deny lets through what it stopped"
        : "a removed ask lets what it gated run without asking where an allow or the mode permits",
  };
}

/**
 * A tool list as Claude Code reads `--allowedTools`: split on commas and on spaces, except
 * inside parentheses (`Bash(git log *)` stays one rule).
 */
export function splitToolList(value: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let word = "";
  for (const ch of value) {
    if (ch === "(") depth++;
    else if (ch === ")") depth = Math.max(0, depth - 1);
    if (depth === 0 && (ch === "," || /\s/.test(ch))) {
      if (word.trim() !== "") out.push(word.trim());
      word = "";
    } else word += ch;
  }
  if (word.trim() !== "") out.push(word.trim());
  return out;
}
