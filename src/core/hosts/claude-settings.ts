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
import { getNodeValue, type Node } from "jsonc-parser";
import { type Diagnostic, diagnostic, type Span } from "../diagnostics.ts";
import { readClaudeMarkdown } from "./claude-markdown.ts";
import {
  type ClaudeRule,
  firstContaining,
  parseClaudeRule,
  type RuleList,
  ruleChanges,
} from "./claude-rules.ts";
import { isClaudeMarkdownPath, roleOf } from "./host-paths.ts";
import { child, type HostFile, own, parseStrictJson, spanOf, stringList } from "./json-nodes.ts";

export type { HostFile } from "./json-nodes.ts";

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
  /** Each subagent's `permissionMode` as written, by key (`subagents.<name>.permissionMode`). */
  subagentModes: Map<string, { value: unknown; span: Span }>;
  /**
   * The other settings that bear on authority, by key (`hooks.PreToolUse`,
   * `enabledMcpjsonServers`, …): list keys as the items of every scope, other keys as the most
   * specific scope's JSON.
   */
  settings: Map<string, { items?: string[]; json?: string; span: Span }>;
  /**
   * Files whose `permissions` Claude Code's schema rejects (an entry that is not a rule, a key
   * of the wrong type): the host ignores that whole object (older versions: the whole file).
   * Read widest by default: its allow rules and what widens kept, its deny and ask rules and
   * what narrows dropped; `narrowest` in readClaudeSettings reads a file the other way.
   */
  rejected: {
    path: string;
    span: Span;
    /** How many deny and ask rules (read narrowest: allow rules) were dropped. */
    lost: number;
  }[];
  diagnostics: Diagnostic[];
}

/**
 * Settings outside the rule lists that change what the agent may do, and which way a change
 * goes: a list whose added items widen (or narrow), a switch whose `true` widens, and keys whose
 * every change widens (a hook runs a command; a sandbox setting changed cannot be ordered).
 */
const TRACKED: readonly {
  key: string;
  path: readonly string[];
  /** `command`: it runs something (added or changed widens, removed narrows); `any`: every change widens. */
  kind:
    | "widening-list"
    | "narrowing-list"
    | "widening-switch"
    | "narrowing-value"
    | "command"
    | "any";
  what: string;
}[] = [
  {
    key: "permissions.additionalDirectories",
    path: ["permissions", "additionalDirectories"],
    kind: "widening-list",
    what: "a directory outside the project the agent may work in",
  },
  {
    key: "enabledMcpjsonServers",
    path: ["enabledMcpjsonServers"],
    kind: "widening-list",
    what: "an .mcp.json server that runs without anyone approving it",
  },
  {
    key: "disabledMcpjsonServers",
    path: ["disabledMcpjsonServers"],
    kind: "narrowing-list",
    what: "an .mcp.json server that never runs",
  },
  {
    key: "enableAllProjectMcpServers",
    path: ["enableAllProjectMcpServers"],
    kind: "widening-switch",
    what: "every .mcp.json server runs without anyone approving it",
  },
  {
    key: "permissions.disableBypassPermissionsMode",
    path: ["permissions", "disableBypassPermissionsMode"],
    kind: "narrowing-value",
    what: "bypassPermissions mode cannot be used",
  },
  {
    key: "hooks",
    path: ["hooks"],
    kind: "command",
    what: "hooks run commands on the agent's events",
  },
  // Plugins bring their own hooks, MCP servers, agents and commands; a marketplace brings plugins.
  {
    key: "enabledPlugins",
    path: ["enabledPlugins"],
    kind: "command",
    what: "enabled plugins bring their own hooks, MCP servers and commands",
  },
  {
    key: "extraKnownMarketplaces",
    path: ["extraKnownMarketplaces"],
    kind: "command",
    what: "a plugin marketplace the project trusts",
  },
  // Settings whose value is a shell command the host runs.
  ...[
    "apiKeyHelper",
    "awsAuthRefresh",
    "awsCredentialExport",
    "otelHeadersHelper",
    "statusLine",
  ].map((key) => ({
    key,
    path: [key],
    kind: "command" as const,
    what: `\`${key}\` runs a shell command`,
  })),
  { key: "sandbox", path: ["sandbox"], kind: "any", what: "the sandbox Bash commands run in" },
  // Read from `.claude/agents/<name>.md` (claude-markdown.ts), never from a settings file: a
  // subagent's hooks and MCP servers run programs (its permissionMode is ordered apart).
  {
    key: "subagents",
    path: ["\u0000subagents"],
    kind: "command",
    what: "a subagent's hooks or MCP servers run programs",
  },
  // Where prompts go (ANTHROPIC_BASE_URL), a proxy, a prefix run before every command.
  {
    key: "env",
    path: ["env"],
    kind: "any",
    what: "the environment the host and its commands run with",
  },
];

/** Two scopes' values of one key, both kept (the shared file's first). */
const merged = (earlier: string | undefined, json: string) =>
  earlier === undefined ? json : `${earlier}\u0000${json}`;

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

/** Each tool's primary field (the one its specifier is a pattern over), by the names it goes by. */
const PRIMARY_FIELDS: Readonly<Record<string, readonly string[]>> = {
  Bash: ["command", "cmd"],
  Read: ["file_path", "path", "file"],
  Edit: ["file_path", "path", "file"],
  WebFetch: ["url"],
};

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

/** TF6005 for a command rule whose prefix runs more than its name says (WIDER_THAN_IT_LOOKS). */
export function widerThanItLooks(
  text: string,
  command: string,
  span: Span,
  diagnostics: Diagnostic[],
): void {
  for (const [pattern, what] of WIDER_THAN_IT_LOOKS)
    if (pattern.test(command))
      diagnostics.push(
        diagnostic(
          "TF6005",
          span,
          `${JSON.stringify(text)} allows more than it looks: \`${command.split(/\s+/).slice(0, 2).join(" ")}\` ${what}`,
        ),
      );
}

/** Reads the settings files of one repository, least specific first (shared, then local). */
export function readClaudeSettings(
  files: readonly HostFile[],
  /** Files whose rejected `permissions` are read narrowest: deny and ask kept, allow dropped. */
  narrowest: ReadonlySet<string> = new Set(),
): ClaudeSettings {
  const out: ClaudeSettings = {
    rules: { allow: [], ask: [], deny: [] },
    settings: new Map(),
    subagentModes: new Map(),
    rejected: [],
    diagnostics: [],
  };
  for (const file of files) readOne(file, out, narrowest.has(file.path));
  shadowed(out);
  return out;
}

function readOne(file: HostFile, out: ClaudeSettings, narrowest: boolean): void {
  if (isClaudeMarkdownPath(roleOf(file))) {
    // A command's or skill's pre-approved tools are allow rules; a subagent's mode, hooks and
    // servers are settings of their own.
    const md = readClaudeMarkdown(file, roleOf(file));
    out.diagnostics.push(...md.diagnostics);
    for (const a of md.allow) {
      const rule = readRule(a.text, "allow", a.span, out.diagnostics);
      if (rule) out.rules.allow.push(rule);
    }
    if (md.mode) out.subagentModes.set(md.mode.key, md.mode);
    for (const x of md.settings) out.settings.set(x.key, { json: x.json, span: x.span });
    return;
  }
  const root = parseStrictJson(
    file,
    "the host ignores the whole file, so none of its rules apply",
    out.diagnostics,
    "fix the JSON (no comments, no trailing commas)",
  );
  if (!root) return;
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
  misplaced(file, root, out.diagnostics);
  const permissions = child(root, "permissions");
  const rules: Record<RuleList, LocatedRule[]> = { allow: [], ask: [], deny: [] };
  let mode: { value: string; span: Span } | undefined;
  const first = out.diagnostics.length;
  if (permissions !== undefined && permissions.type !== "object")
    out.diagnostics.push(
      diagnostic(
        "TF6002",
        spanOf(file, permissions.offset, permissions.length),
        "`permissions` must be an object with allow, ask and deny lists",
      ),
    );
  else if (permissions !== undefined) {
    readRuleLists(file, permissions, out.diagnostics, rules, (text, list, span) =>
      readRule(text, list, span, out.diagnostics),
    );
    const m = child(permissions, "defaultMode");
    if (m !== undefined) {
      const span = spanOf(file, m.offset, m.length);
      const value = m.type === "string" ? String(getNodeValue(m)) : undefined;
      if (value === undefined || !(CLAUDE_MODES as readonly string[]).includes(value))
        out.diagnostics.push(
          diagnostic(
            "TF6002",
            span,
            `\`permissions.defaultMode\` must be one of ${CLAUDE_MODES.join(", ")}, not ${m.type === "string" ? JSON.stringify(value) : `a ${m.type}`}`,
          ),
        );
      else mode = { value, span };
    }
  }
  // The host validates the file against its schema; an entry that fails it (not a rule, the
  // wrong type) makes it ignore the whole `permissions` object.
  const failed = out.diagnostics
    .slice(first)
    .find((d) => d.code === "TF6002" || d.code === "TF6003");
  if (failed === undefined) {
    readTracked(file, root, out);
    for (const list of ["allow", "ask", "deny"] as const) out.rules[list].push(...rules[list]);
    if (mode) out.defaultMode = mode;
    return;
  }
  // Which way that goes depends on what the object held, so Terfyn reads it the way that
  // hides no widening: a head keeps what widens (allow rules, a wider mode, more directories)
  // and loses what narrows (deny and ask rules, a narrower mode); a base the other way.
  const lost = narrowest ? rules.allow.length : rules.deny.length + rules.ask.length;
  out.rejected.push({ path: file.path, span: failed.span, lost });
  out.diagnostics.push(
    diagnostic(
      "TF6008",
      failed.span,
      `Claude Code's schema rejects this, and the host then ignores the whole \`permissions\` of ${file.path} (its allow, ask and deny rules and defaultMode; older versions ignore the whole file)`,
      { hint: "fix or remove the entry; a comment cannot go inside a rule list" },
    ),
  );
  readTracked(
    file,
    root,
    out,
    (t) =>
      t.path[0] !== "permissions" ||
      (narrowest ? t.kind === "narrowing-value" : t.kind === "widening-list"),
  );
  if (narrowest) {
    out.rules.ask.push(...rules.ask);
    out.rules.deny.push(...rules.deny);
  } else out.rules.allow.push(...rules.allow);
  const rank = (v: string | undefined) =>
    own(MODE_RANK, v ?? "default") ?? Number.POSITIVE_INFINITY;
  const now = out.defaultMode?.value;
  if (mode && (narrowest ? rank(mode.value) < rank(now) : rank(mode.value) > rank(now)))
    out.defaultMode = mode;
}

/**
 * The `allow`, `ask` and `deny` lists of one file's `permissions`, each string entry read as a
 * rule by the host's own reader (`read`), added to `into`; anything else is TF6002.
 */
export function readRuleLists(
  file: HostFile,
  permissions: Node | undefined,
  diagnostics: Diagnostic[],
  into: Record<RuleList, LocatedRule[]>,
  read: (text: string, list: RuleList, span: Span) => LocatedRule | undefined,
): void {
  for (const list of LISTS) {
    const node = child(permissions, list);
    if (node === undefined) continue;
    if (node.type !== "array") {
      diagnostics.push(
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
        diagnostics.push(
          diagnostic(
            "TF6002",
            span,
            `an entry of \`permissions.${list}\` must be a rule written as a string`,
          ),
        );
        continue;
      }
      const text = String(getNodeValue(entry));
      const rule = read(text, list, span);
      if (rule) into[list].push(rule);
    }
  }
}

/** Keys a permission setting can hold, which the host reads only under `permissions`. */
const PERMISSION_KEYS = ["allow", "ask", "deny", "defaultMode", "additionalDirectories"];

/**
 * Keys the host ignores where they are written: a permission key at the top level, or a known
 * key in another case (`Hooks`). What their author meant does not apply, so it is said.
 */
function misplaced(file: HostFile, root: Node, diagnostics: Diagnostic[]): void {
  const known = ["permissions", ...new Set(TRACKED.map((t) => t.path[0] ?? ""))];
  for (const p of root.children ?? []) {
    const k = p.children?.[0];
    if (k?.type !== "string") continue;
    const key = String(k.value);
    const span = spanOf(file, k.offset, k.length);
    if (PERMISSION_KEYS.includes(key))
      diagnostics.push(
        diagnostic(
          "TF6004",
          span,
          `a top-level \`${key}\` is never consulted: it belongs under \`permissions\``,
        ),
      );
    else {
      const meant = known.find((x) => x !== key && x.toLowerCase() === key.toLowerCase());
      if (meant)
        diagnostics.push(
          diagnostic(
            "TF6004",
            span,
            `\`${key}\` is never consulted: the host reads \`${meant}\` (keys are case-sensitive)`,
          ),
        );
    }
  }
}

function readTracked(
  file: HostFile,
  root: Node,
  out: ClaudeSettings,
  keep: (t: (typeof TRACKED)[number]) => boolean = () => true,
): void {
  for (const t of TRACKED) {
    if (!keep(t)) continue;
    let node: Node | undefined = root;
    for (const k of t.path) node = child(node, k);
    if (node === undefined) continue;
    const span = spanOf(file, node.offset, node.length);
    if (t.kind === "widening-list" || t.kind === "narrowing-list") {
      const items = stringList(node);
      if (items === undefined) {
        out.diagnostics.push(diagnostic("TF6002", span, `\`${t.key}\` must be a list of strings`));
        continue;
      }
      const earlier = out.settings.get(t.key)?.items ?? [];
      out.settings.set(t.key, { items: [...earlier, ...items], span });
      continue;
    }
    if (t.kind === "widening-switch" && node.type !== "boolean") {
      out.diagnostics.push(diagnostic("TF6002", span, `\`${t.key}\` must be true or false`));
      continue;
    }
    if ((t.key === "hooks" || t.key === "enabledPlugins") && node.type === "object") {
      // Each event's hooks (each plugin) apart: a change to one is one row.
      for (const p of node.children ?? []) {
        const [k, v] = p.children ?? [];
        if (!k || !v) continue;
        const key = `${t.key}.${String(k.value)}`;
        out.settings.set(key, {
          json: merged(out.settings.get(key)?.json, JSON.stringify(getNodeValue(v))),
          span: spanOf(file, k.offset, k.length),
        });
      }
      continue;
    }
    // The host merges what every scope says of a hook, a sandbox, a marketplace: each scope's
    // value is kept, so a change in either is seen (a switch is the most specific scope's).
    const json = JSON.stringify(getNodeValue(node));
    out.settings.set(t.key, {
      json: t.kind === "widening-switch" ? json : merged(out.settings.get(t.key)?.json, json),
      span,
    });
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
    diagnostics.push(
      diagnostic("TF6003", span, `${parsed.problem}; the host does not read it as a rule`),
    );
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
  // `Tool(param:value)` naming the tool's own primary field: the host reads the whole specifier
  // as that field's pattern, so the rule matches only a value that starts with `param:`.
  const primary = own(PRIMARY_FIELDS, parsed.tool);
  const named = /^([A-Za-z_]+):/.exec(parsed.specifier ?? "")?.[1];
  if (primary !== undefined && named !== undefined && primary.includes(named))
    diagnostics.push(
      diagnostic(
        "TF6004",
        span,
        `${JSON.stringify(text)} is never consulted as meant: the host takes everything in the parentheses as the ${primary[0]}, so it matches only a ${primary[0]} that starts with \`${named}:\``,
        {
          hint: `write ${parsed.tool}(${(parsed.specifier ?? "").slice(named.length + 1)})${parsed.tool === "WebFetch" ? " or WebFetch(domain:…)" : ""}`,
        },
      ),
    );
  if (parsed.tool === "Bash" && parsed.specifier !== undefined) {
    const spec = parsed.specifier.trim();
    if (list !== "deny") widerThanItLooks(text, spec, span, diagnostics);
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
export function shadowed(out: {
  rules: Record<RuleList, LocatedRule[]>;
  diagnostics: Diagnostic[];
}): void {
  for (const list of ["allow", "ask"] as const)
    for (const r of out.rules[list]) {
      const by = firstContaining(out.rules.deny, r);
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
export const MODE_RANK: Readonly<Record<(typeof CLAUDE_MODES)[number], number>> = {
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
  const out = locatedRuleChanges(base, head);
  const mode = (m: { value: string } | undefined) => m?.value ?? "default";
  if (mode(base.defaultMode) !== mode(head.defaultMode))
    out.push(
      modeChange(
        "permissions.defaultMode",
        base.defaultMode,
        head.defaultMode,
        mode,
        (a, b) => `a session starts in ${a} instead of ${b}`,
      ),
    );
  // A subagent's mode as written (an empty one is the default mode).
  const written = (m: { value: unknown } | undefined) =>
    m === undefined || m.value === null ? "default" : String(m.value);
  for (const key of [
    ...new Set([...base.subagentModes.keys(), ...head.subagentModes.keys()]),
  ].sort()) {
    const was = base.subagentModes.get(key);
    const now = head.subagentModes.get(key);
    if (JSON.stringify(was?.value) !== JSON.stringify(now?.value))
      out.push(
        modeChange(
          key,
          was,
          now,
          written,
          (a, b) =>
            `the subagent's tool uses run in ${JSON.stringify(a)} instead of ${JSON.stringify(b)}`,
        ),
      );
  }
  out.push(...settingChanges(base, head));
  return out;
}

/**
 * A change of a permission mode, by the modes' order: the same mode is no change in effect, a
 * mode the host does not document cannot be ordered (it widens), and neither can two of one
 * rank (`auto`, `dontAsk`).
 */
function modeChange<M extends { span: Span }>(
  key: string,
  before: M | undefined,
  after: M | undefined,
  mode: (m: M | undefined) => string,
  says: (after: string, before: string) => string,
): HostChange {
  const was = mode(before);
  const now = mode(after);
  const rise = (own(MODE_RANK, now) ?? Number.NaN) - (own(MODE_RANK, was) ?? Number.NaN);
  const span = after?.span ?? before?.span;
  return {
    direction: now === was ? "neutral" : rise < 0 ? "narrowed" : "widened",
    key,
    change: after === undefined ? "removed" : before === undefined ? "added" : "changed",
    file: span?.file ?? "",
    line: span?.line ?? 0,
    reason: `${says(now, was)}${rise === 0 ? " (the two are not ordered)" : ""}`,
  };
}

/**
 * Each rule added to or removed from the lists (ruleChanges' direction), where the side that
 * has it writes it: the plan's rows for a host whose rules are located rules.
 */
export function locatedRuleChanges(
  base: { rules: Record<RuleList, LocatedRule[]> },
  head: { rules: Record<RuleList, LocatedRule[]> },
): HostChange[] {
  return ruleChanges(base.rules, head.rules).map((c) => {
    const from = c.change === "added" ? head : base;
    const span = from.rules[c.list].find((r) => r.text === c.rule)?.span;
    return {
      direction: c.direction,
      rule: c.rule,
      list: c.list,
      change: c.change,
      file: span?.file ?? "",
      line: span?.line ?? 1,
      reason: c.reason,
    };
  });
}

/** The tracked settings' changes (TRACKED says which way each goes). */
function settingChanges(base: ClaudeSettings, head: ClaudeSettings): HostChange[] {
  const out: HostChange[] = [];
  const keys = [...new Set([...base.settings.keys(), ...head.settings.keys()])].sort();
  for (const key of keys) {
    const t = TRACKED.find((x) => x.key === key || key.startsWith(`${x.key}.`));
    if (!t) continue;
    const was = base.settings.get(key);
    const now = head.settings.get(key);
    const at = (now ?? was)?.span;
    const row = (
      direction: HostChange["direction"],
      change: HostChange["change"],
      reason: string,
      item?: string,
    ) =>
      out.push({
        direction,
        key: item === undefined ? key : `${key}[${JSON.stringify(item)}]`,
        change,
        file: at?.file ?? "",
        line: at?.line ?? 0,
        reason,
      });
    if (t.kind === "widening-list" || t.kind === "narrowing-list") {
      const before = new Set(was?.items ?? []);
      const after = new Set(now?.items ?? []);
      const widens = t.kind === "widening-list";
      for (const item of after)
        if (!before.has(item))
          row(widens ? "widened" : "narrowed", "added", `added: ${t.what}`, item);
      for (const item of before)
        if (!after.has(item))
          row(widens ? "narrowed" : "widened", "removed", `removed: ${t.what}`, item);
      continue;
    }
    if (was?.json === now?.json) continue;
    const change = now === undefined ? "removed" : was === undefined ? "added" : "changed";
    if (t.kind === "widening-switch") {
      const on = now?.json === "true";
      const wasOn = was?.json === "true";
      if (on !== wasOn)
        row(on ? "widened" : "narrowed", change, `${on ? "now" : "no longer"}: ${t.what}`);
      continue;
    }
    if (t.kind === "narrowing-value") {
      const on = now?.json === JSON.stringify("disable");
      const wasOn = was?.json === JSON.stringify("disable");
      if (on !== wasOn)
        row(on ? "narrowed" : "widened", change, `${on ? "now" : "no longer"}: ${t.what}`);
      continue;
    }
    // A hook runs a command: one removed narrows; one added or changed runs something new.
    row(
      change === "removed" && t.kind === "command" ? "narrowed" : "widened",
      change,
      `${t.what}; ${change === "removed" ? "removed" : "a change here cannot be shown to reach less"}`,
    );
  }
  return out;
}
