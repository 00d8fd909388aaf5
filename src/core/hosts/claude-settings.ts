/**
 * Claude Code's settings files as a repository holds them (`.claude/settings.json`, shared, and
 * `.claude/settings.local.json`, personal), read as the host reads them: strict JSON; the
 * `permissions.allow`, `ask` and `deny` arrays of every scope concatenated (the host merges
 * them, it does not override them); `defaultMode` from the most specific scope that sets it.
 * Every rule keeps its file, line and column and its text exactly as written. A file the host
 * would refuse, a key of the wrong type, a rule it cannot read, and the rules that are read but
 * do not do what they look like are diagnostics at their line, never a crash or a silent skip.
 * Pure.
 */
import {
  getNodeValue,
  type Node,
  type ParseError,
  parseTree,
  printParseErrorCode,
} from "jsonc-parser";
import { type Diagnostic, diagnostic, type Span } from "../diagnostics.ts";
import {
  type ClaudeRule,
  parseClaudeRule,
  type RuleList,
  ruleChanges,
  ruleContains,
} from "./claude-rules.ts";

/** A host configuration file: its repository-relative path and its text. */
export interface HostFile {
  path: string;
  text: string;
}

/** A rule as found: the list it is in, and where. */
export interface LocatedRule extends ClaudeRule {
  list: RuleList;
  span: Span;
}

export interface ClaudeSettings {
  /** Each list, every scope's rules in the order read. */
  rules: Record<RuleList, LocatedRule[]>;
  /** The permission mode a session starts in, from the most specific scope that sets it. */
  defaultMode?: { value: string; span: Span };
  diagnostics: Diagnostic[];
}

/** The modes the host documents, from the most restrictive. */
export const CLAUDE_MODES = [
  "plan",
  "default",
  "acceptEdits",
  "auto",
  "dontAsk",
  "bypassPermissions",
] as const;

const LISTS: readonly RuleList[] = ["allow", "ask", "deny"];

/** Path rules the host consults only for these tools; `Write(…)` and `Glob(…)` are never read. */
const UNCONSULTED_PATH_TOOLS = new Set(["Write", "Glob", "MultiEdit", "NotebookEdit"]);

/**
 * Bash rules whose allowed prefix runs any other command (a package runner, a container, a
 * shell, xargs), or an action beyond its name (`gh pr review` approves as well as comments).
 */
const WIDER_THAN_IT_LOOKS: readonly [RegExp, string][] = [
  [/^(npx|pnpx|bunx|uvx|pipx run)\b/, "runs any package's program, fetched from the registry"],
  [/^docker (exec|run)\b/, "runs any command in a container"],
  [/^(ba|z|da|k)?sh -c\b/, "runs any shell command"],
  // Not timeout, nice or nohup: the host strips those wrappers before it matches a command.
  [/^(xargs|env|eval|exec|sudo|watch)\b/, "runs whatever command follows it"],
  [/^gh pr review\b/, "also approves a pull request (--approve)"],
  [/^(python3?|node|ruby|perl) -(c|e)\b/, "runs any program given inline"],
];

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

function spanOf(file: HostFile, offset: number, length: number): Span {
  const a = lineAndColumn(file.text, offset);
  const b = lineAndColumn(file.text, offset + Math.max(1, length));
  return { file: file.path, line: a.line, column: a.column, endLine: b.line, endColumn: b.column };
}

function child(node: Node | undefined, key: string): Node | undefined {
  if (node?.type !== "object") return undefined;
  for (const p of node.children ?? []) {
    const [k, v] = p.children ?? [];
    if (k?.value === key) return v;
  }
  return undefined;
}

/** Reads the settings files of one repository, least specific first (shared, then local). */
export function readClaudeSettings(files: readonly HostFile[]): ClaudeSettings {
  const out: ClaudeSettings = { rules: { allow: [], ask: [], deny: [] }, diagnostics: [] };
  for (const file of files) readOne(file, out);
  shadowed(out);
  return out;
}

function readOne(file: HostFile, out: ClaudeSettings): void {
  const errors: ParseError[] = [];
  const root = parseTree(file.text, errors, {
    disallowComments: true,
    allowTrailingComma: false,
  });
  if (errors.length > 0 || !root) {
    const e = errors[0];
    out.diagnostics.push(
      diagnostic(
        "TF6001",
        spanOf(file, e?.offset ?? 0, e?.length ?? 1),
        `${file.path} is not the strict JSON Claude Code reads${e ? ` (${printParseErrorCode(e.error)})` : ""}: the host ignores the whole file, so none of its rules apply`,
        { hint: "fix the JSON (no comments, no trailing commas)" },
      ),
    );
    return;
  }
  if (root.type !== "object") {
    out.diagnostics.push(
      diagnostic(
        "TF6002",
        spanOf(file, root.offset, root.length),
        `${file.path} must be a JSON object`,
      ),
    );
    return;
  }
  const permissions = child(root, "permissions");
  if (permissions === undefined) return;
  if (permissions.type !== "object") {
    out.diagnostics.push(
      diagnostic(
        "TF6002",
        spanOf(file, permissions.offset, permissions.length),
        "`permissions` must be an object with allow, ask and deny lists",
      ),
    );
    return;
  }
  for (const list of LISTS) {
    const node = child(permissions, list);
    if (node === undefined) continue;
    if (node.type !== "array") {
      out.diagnostics.push(
        diagnostic(
          "TF6002",
          spanOf(file, node.offset, node.length),
          `\`permissions.${list}\` must be a list of rules`,
        ),
      );
      continue;
    }
    for (const entry of node.children ?? []) {
      const span = spanOf(file, entry.offset, entry.length);
      if (entry.type !== "string") {
        out.diagnostics.push(
          diagnostic(
            "TF6002",
            span,
            `an entry of \`permissions.${list}\` must be a rule written as a string`,
          ),
        );
        continue;
      }
      const text = String(getNodeValue(entry));
      const rule = readRule(text, list, span, out.diagnostics);
      if (rule) out.rules[list].push(rule);
    }
  }
  const mode = child(permissions, "defaultMode");
  if (mode !== undefined) {
    const span = spanOf(file, mode.offset, mode.length);
    const value = mode.type === "string" ? String(getNodeValue(mode)) : undefined;
    if (value === undefined || !(CLAUDE_MODES as readonly string[]).includes(value))
      out.diagnostics.push(
        diagnostic(
          "TF6002",
          span,
          `\`permissions.defaultMode\` must be one of ${CLAUDE_MODES.join(", ")}, not ${mode.type === "string" ? JSON.stringify(value) : `a ${mode.type}`}`,
        ),
      );
    else out.defaultMode = { value, span };
  }
}

function readRule(
  text: string,
  list: RuleList,
  span: Span,
  diagnostics: Diagnostic[],
): LocatedRule | undefined {
  // A glob not anchored at a server (`mcp__*`, `Bash*`) is accepted by the host and never matched.
  if (/^[^()]*\*$/.test(text.trim()) && !/^mcp__[^_*]+(?:_[^_*]+)*__\*$/.test(text.trim())) {
    diagnostics.push(
      diagnostic(
        "TF6004",
        span,
        `${JSON.stringify(text)} is never consulted: a tool name takes no wildcard (only mcp__<server>__* does)`,
        { hint: "name the tool, or the MCP server as mcp__<server>" },
      ),
    );
    return undefined;
  }
  const parsed = parseClaudeRule(text);
  if ("problem" in parsed) {
    diagnostics.push(diagnostic("TF6003", span, parsed.problem));
    return undefined;
  }
  const rule: LocatedRule = { ...parsed, list, span };
  if (parsed.specifier !== undefined && UNCONSULTED_PATH_TOOLS.has(parsed.tool))
    diagnostics.push(
      diagnostic(
        "TF6004",
        span,
        `${JSON.stringify(text)} is never consulted: the host matches paths only in Read(…) and Edit(…) rules`,
        { hint: `write Edit(${parsed.specifier}) to cover writes to those paths` },
      ),
    );
  if (parsed.tool === "Bash" && parsed.specifier !== undefined) {
    const spec = parsed.specifier.trim();
    if (list !== "deny")
      for (const [pattern, what] of WIDER_THAN_IT_LOOKS)
        if (pattern.test(spec))
          diagnostics.push(
            diagnostic(
              "TF6005",
              span,
              `${JSON.stringify(text)} allows more than it looks: \`${spec.split(/\s+/).slice(0, 2).join(" ")}\` ${what}`,
            ),
          );
    // `:*` is the legacy prefix form only at the very end; anywhere else the colon is literal.
    if (/:\*./.test(spec))
      diagnostics.push(
        diagnostic(
          "TF6006",
          span,
          `${JSON.stringify(text)} has a \`:\` the host takes literally: \`prefix:*\` is a prefix only at the end of the rule`,
          { hint: "write the command with a space where the colon is, e.g. Bash(git commit *)" },
        ),
      );
  }
  return rule;
}

/** An allow or ask rule a broader deny covers never takes effect (deny wins whatever its order). */
function shadowed(out: ClaudeSettings): void {
  for (const list of ["allow", "ask"] as const)
    for (const r of out.rules[list]) {
      const by = out.rules.deny.find((d) => ruleContains(d, r));
      if (by)
        out.diagnostics.push(
          diagnostic(
            "TF6007",
            r.span,
            `${JSON.stringify(r.text)} never takes effect: ${JSON.stringify(by.text)} denies everything it ${list === "allow" ? "allows" : "asks for"}`,
            { related: [{ span: by.span, message: "the deny rule" }] },
          ),
        );
    }
}

/**
 * The order of the modes, from the most restrictive: `auto` and `dontAsk` share a rank (neither
 * is provably narrower than the other, so a change between them widens).
 */
const MODE_RANK: Readonly<Record<(typeof CLAUDE_MODES)[number], number>> = {
  plan: 0,
  default: 1,
  acceptEdits: 2,
  auto: 3,
  dontAsk: 3,
  bypassPermissions: 4,
};

/** One change of a host's authority, as the plan shows it: the rule or key exactly as written, where. */
export interface HostChange {
  direction: "widened" | "narrowed" | "neutral";
  /** The rule as written (`Bash(git *)`), for a rule change. */
  rule?: string;
  /** The key (`permissions.defaultMode`), for a setting change. */
  key?: string;
  list?: RuleList;
  change: "added" | "removed" | "changed";
  /** Where the head has it (for a removal, where the base had it). */
  file: string;
  line: number;
  reason: string;
}

/**
 * What a change to a repository's Claude Code settings does to the agent's authority: each rule
 * added or removed, with its direction by containment (ruleChanges), and a change of the mode a
 * session starts in by the modes' order.
 */
export function claudeSettingsChanges(base: ClaudeSettings, head: ClaudeSettings): HostChange[] {
  const where = (list: RuleList, text: string, from: ClaudeSettings) =>
    from.rules[list].find((r) => r.text === text)?.span;
  const out: HostChange[] = ruleChanges(base.rules, head.rules).map((c) => {
    const span = where(c.list, c.rule, c.change === "added" ? head : base);
    return {
      direction: c.direction,
      rule: c.rule,
      list: c.list,
      change: c.change,
      file: span?.file ?? "",
      line: span?.line ?? 0,
      reason: c.reason,
    };
  });
  const before = (base.defaultMode?.value ?? "default") as keyof typeof MODE_RANK;
  const after = (head.defaultMode?.value ?? "default") as keyof typeof MODE_RANK;
  if (before !== after) {
    const span = head.defaultMode?.span ?? base.defaultMode?.span;
    const rise = MODE_RANK[after] - MODE_RANK[before];
    out.push({
      direction: rise < 0 ? "narrowed" : "widened",
      key: "permissions.defaultMode",
      change: head.defaultMode === undefined ? "removed" : base.defaultMode ? "changed" : "added",
      file: span?.file ?? "",
      line: span?.line ?? 0,
      reason: `a session starts in ${after} instead of ${before}${rise === 0 ? " (the two are not ordered)" : ""}`,
    });
  }
  return out;
}
