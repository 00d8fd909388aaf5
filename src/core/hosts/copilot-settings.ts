/**
 * GitHub Copilot (the Copilot CLI and the cloud agent) as the agent `Host/copilot`, read from
 * what a repository holds, with Copilot's own documented semantics:
 *
 * - `.github/copilot/settings.json` and `.github/copilot/settings.local.json` (JSON with
 *   comments; the local file wins): only the repository keys Copilot supports count, each with
 *   its merge rule. `deniedUrls`, `disabledMcpServers`, `disabledSkills` only add (narrowing);
 *   `disableAllHooks` turns hooks off; `hooks`, `enabledPlugins` and `extraKnownMarketplaces`
 *   run or bring programs; the model, effort and display keys are neutral. Copilot silently
 *   ignores every other key there (`permissions`, `allowedUrls`, `sandbox` are user or managed
 *   settings): TF6004 says so, since what the author meant does not apply.
 * - `.github/hooks/*.json`: each hook runs a command on the agent's events.
 * - `.mcp.json` and `.github/mcp.json`: the servers Copilot starts, less `disabledMcpServers`.
 * - the cross-tool subset Copilot reads from `.claude/settings.json` and its local file
 *   (`hooks`, `enabledPlugins`, `extraKnownMarketplaces`, `disableAllHooks`).
 * - managed settings (`managed-settings.json`, listed through `spec.hosts` as `copilot-managed`):
 *   `permissions.allow` / `ask` / `deny` rules (`Shell(…)`, `Bash(…)`, `PowerShell(…)`,
 *   `Read(…)`, `Edit(…)`, `Write(…)`, `Domain(…)`), deny > ask > allow, ordered by containment
 *   as Claude Code's are (a command rule `cmd *` is a prefix at a word boundary, any other is
 *   exact text, so a `*` inside it is literal); `limitTo`, `allowedMcpServers` and
 *   `strictKnownMarketplaces` are boundaries (unset admits everything); `deniedMcpServers`
 *   only narrows; `disableBypassPermissionsMode` and `sandbox` by their order.
 *
 * Without a rule, Copilot reads files in a trusted directory unasked and asks before a shell
 * command, a write or a URL. A change Terfyn cannot order is a widening. Pure.
 */
import type { Node } from "jsonc-parser";
import type { EffectBoundEntry } from "../analysis/effect-bound.ts";
import { type Diagnostic, diagnostic, type Span } from "../diagnostics.ts";
import type { GrantMode } from "../model/project.ts";
import { byCodeUnit } from "../order.ts";
import { type ClaudeRule, firstContaining, type RuleList, ruleContains } from "./claude-rules.ts";
import {
  type HostChange,
  type LocatedRule,
  locatedRuleChanges,
  readRuleLists,
  shadowed,
  widerThanItLooks,
} from "./claude-settings.ts";
import type { HostAgent, UseMode } from "./host-agents.ts";
import {
  CLAUDE_SETTINGS_PATHS,
  COPILOT_MANAGED_ROLE,
  COPILOT_MCP_JSON,
  COPILOT_SETTINGS_PATHS,
  isCopilotHooksPath,
  MCP_JSON,
  roleOf,
} from "./host-paths.ts";
import {
  child,
  type HostFile,
  type Located,
  leaves,
  lineSpan,
  own,
  parseStrictJson,
  spanOf,
} from "./json-nodes.ts";
import { type McpConfig, mcpChanges, readMcpJson } from "./mcp-json.ts";

export const COPILOT_AGENT = "Host/copilot";

/** Whether a file is Copilot's own (the agent exists only when one is present). */
export function isCopilotOwnPath(path: string): boolean {
  return (
    COPILOT_SETTINGS_PATHS.includes(path) ||
    path === COPILOT_MCP_JSON ||
    path === COPILOT_MANAGED_ROLE ||
    isCopilotHooksPath(path)
  );
}

/** Every file Copilot reads: its own, and those it shares with Claude Code. */
export function isCopilotPath(path: string): boolean {
  return isCopilotOwnPath(path) || CLAUDE_SETTINGS_PATHS.includes(path) || path === MCP_JSON;
}

/** How a change of one key goes. */
type Kind =
  | "neutral"
  /** Items added narrow, removed widen. */
  | "narrowing-list"
  /** `true` narrows (turns something off). */
  | "narrowing-switch"
  /** `true` widens. */
  | "widening-switch"
  /** Added or changed widens (it runs or brings a program), removed narrows. */
  | "command"
  /** `true` enables a plugin (widens), `false` or removed narrows. */
  | "plugin"
  /** Unset admits everything; set, each item admits more. */
  | "boundary"
  /** `false` narrows; unset or `true` (the default) lets more through. */
  | "loosen"
  /** `disableBypassPermissionsMode`: `disable` < `allow-auto-only` < unset. */
  | "bypass"
  /** Every change widens: it cannot be ordered. */
  | "any";

/** The keys Copilot reads from repository settings, with their merge rule's direction. */
const REPO_KEYS: Readonly<Record<string, Kind>> = {
  companyAnnouncements: "neutral",
  contextTier: "neutral",
  effortLevel: "neutral",
  includeCoAuthoredBy: "neutral",
  mergeStrategy: "neutral",
  model: "neutral",
  respectGitignore: "neutral",
  deniedUrls: "narrowing-list",
  disabledMcpServers: "narrowing-list",
  disabledSkills: "narrowing-list",
  disableAllHooks: "narrowing-switch",
  hooks: "command",
  enabledPlugins: "plugin",
  extraKnownMarketplaces: "command",
};

/** The repository keys lists merge as a union (the local file adds to the shared one). */
const UNION_KEYS = new Set(["deniedUrls", "disabledMcpServers", "disabledSkills"]);

/** Keys of user or managed settings that repository settings cannot set (Copilot ignores them there). */
const NOT_REPO_KEYS = new Set([
  "allowedUrls",
  "askUser",
  "autoTier",
  "autoUpdate",
  "bashEnv",
  "enabledMcpServers",
  "permissions",
  "sandbox",
  "skillDirectories",
  "statusLine",
  "trusted_folders",
  "trustedFolders",
  "allowedMcpServers",
  "deniedMcpServers",
  "strictKnownMarketplaces",
  "policyHelper",
  "telemetry",
  "remoteControl",
  "shellShortcut",
  "proxyUrl",
  "customAgents",
  "subagents",
  "experimental",
]);

/** The subset of Claude Code's settings Copilot also reads. */
const CLAUDE_SHARED_KEYS: Readonly<Record<string, Kind>> = {
  companyAnnouncements: "neutral",
  disableAllHooks: "narrowing-switch",
  hooks: "command",
  enabledPlugins: "plugin",
  extraKnownMarketplaces: "command",
};

/** Managed settings' keys other than the rule lists. */
const MANAGED_KEYS: Readonly<Record<string, Kind>> = {
  "permissions.limitTo": "boundary",
  allowedMcpServers: "boundary",
  strictKnownMarketplaces: "boundary",
  deniedMcpServers: "narrowing-list",
  enabledPlugins: "plugin",
  extraKnownMarketplaces: "command",
  policyHelper: "command",
  model: "neutral",
  autoTier: "neutral",
  effortLevel: "neutral",
  contextTier: "neutral",
  forceLoginOrgs: "neutral",
  forceRemoteSettingsRefresh: "neutral",
  telemetry: "any",
  remoteControl: "any",
  shellShortcut: "any",
};

/** Sandbox keys that tighten when true, and those that loosen (their default, unset, is true). */
const SANDBOX_TIGHTEN = new Set([
  "enabled",
  "failIfUnavailable",
  "sandboxMcpServers",
  "sandboxLspServers",
]);
const SANDBOX_LOOSEN = new Set(["allowBypass", "auth.git", "auth.gh", "allowDevToolAccess"]);

/** Each scope Copilot reads, as dotted keys to the value that applies and where it is written. */
export interface CopilotConfig {
  /** `.github/copilot/settings.json` with its local file merged (local wins, lists unioned). */
  repo: Map<string, Located>;
  /** The cross-tool keys of `.claude/settings.json` and its local file. */
  claude: Map<string, Located>;
  /** Each hooks file's keys, by file. */
  hooks: Map<string, Map<string, Located>>;
  managed: Map<string, Located>;
  rules: Record<RuleList, LocatedRule[]>;
  mcp: McpConfig;
  diagnostics: Diagnostic[];
}

const at = lineSpan;

function objectRoot(
  file: HostFile,
  consequence: string,
  diagnostics: Diagnostic[],
  jsonc: boolean,
): Node | undefined {
  const root = parseStrictJson(file, consequence, diagnostics, undefined, jsonc);
  if (root && root.type !== "object") {
    diagnostics.push(
      diagnostic(
        "TF6002",
        spanOf(file, root.offset, root.length),
        `${file.path} must be a JSON object`,
      ),
    );
    return undefined;
  }
  return root;
}

/** A rule family Copilot matches, as the rule machinery reads it (see the module's note). */
function copilotRule(text: string, list: RuleList, span: Span, diagnostics: Diagnostic[]) {
  const m = /^\s*([A-Za-z]+)\((.*)\)\s*$/s.exec(text);
  if (!m) {
    diagnostics.push(
      diagnostic(
        "TF6003",
        span,
        `${JSON.stringify(text)} is not a rule: write Family(pattern), e.g. Shell(git push *) or Domain(*.example.com); Copilot never consults it`,
      ),
    );
    return undefined;
  }
  const family = m[1] as string;
  const pattern = (m[2] as string).trim();
  const located = (tool: string, specifier: string | undefined): LocatedRule => ({
    text,
    tool,
    ...(specifier === undefined ? {} : { specifier }),
    list,
    span,
  });
  if (family === "Shell" || family === "Bash" || family === "PowerShell") {
    const mark = family === "PowerShell" ? "\u0002ps" : "\u0002sh";
    // `cmd *` is a prefix at a word boundary; anything else is the exact text (a `*` in it is
    // literal, so it is kept out of the glob's reach).
    const prefix =
      pattern === "*" || (pattern.endsWith(" *") && pattern.indexOf("*") === pattern.length - 1);
    if (list !== "deny") widerThanItLooks(text, pattern, span, diagnostics);
    return located(
      "Bash",
      prefix
        ? pattern === "*"
          ? `${mark} *`
          : `${mark} ${pattern}`
        : `${mark} ${pattern.replaceAll("*", "\uE000")}`,
    );
  }
  if (family === "Read" || family === "Edit" || family === "Write")
    return located(family === "Read" ? "Read" : "Edit", pattern === "*" ? undefined : pattern);
  if (family === "Domain")
    return located("Domain", pattern === "*" ? undefined : pattern.toLowerCase());
  diagnostics.push(
    diagnostic(
      "TF6004",
      span,
      `${JSON.stringify(text)} is never consulted: Copilot's managed rules are Shell, Bash, PowerShell, Read, Edit, Write and Domain`,
    ),
  );
  return undefined;
}

const EFFECT_OF: Readonly<Record<string, string>> = {
  Bash: "process.exec",
  Read: "workspace.read",
  Edit: "workspace.write",
  Domain: "network.egress",
};

function readManaged(file: HostFile, out: CopilotConfig): void {
  const root = objectRoot(
    file,
    "Copilot refuses the managed settings, so none of its rules apply",
    out.diagnostics,
    false,
  );
  if (!root) return;
  for (const [k, v] of leaves(file, root)) {
    if (/^permissions\.(allow|ask|deny)$/.test(k)) continue;
    out.managed.set(k, v);
  }
  readRuleLists(file, child(root, "permissions"), out.diagnostics, out.rules, (text, list, span) =>
    copilotRule(text, list, span, out.diagnostics),
  );
}

/** Reads every Copilot file among `files` (by role); Claude Code's files for its shared keys only. */
export function readCopilot(files: readonly HostFile[]): CopilotConfig {
  const out: CopilotConfig = {
    repo: new Map(),
    claude: new Map(),
    hooks: new Map(),
    managed: new Map(),
    rules: { allow: [], ask: [], deny: [] },
    mcp: { servers: [], diagnostics: [] },
    diagnostics: [],
  };
  const byRole = (role: string) => files.filter((f) => roleOf(f) === role);
  // Repository settings, shared then local: a local value wins, a union list adds up.
  for (const role of COPILOT_SETTINGS_PATHS)
    for (const file of byRole(role)) {
      const root = objectRoot(file, "Copilot ignores the file's values", out.diagnostics, true);
      if (!root) continue;
      for (const p of root.children ?? []) {
        const k = p.children?.[0];
        if (k?.type !== "string") continue;
        const key = String(k.value);
        if (key === "$schema" || own(REPO_KEYS, key) !== undefined) continue;
        out.diagnostics.push(
          diagnostic(
            "TF6004",
            spanOf(file, k.offset, k.length),
            NOT_REPO_KEYS.has(key)
              ? `\`${key}\` is never consulted here: Copilot reads it from user or managed settings, not from a repository's settings`
              : `\`${key}\` is never consulted here: Copilot reads only its repository keys from ${file.path} (${Object.keys(REPO_KEYS).join(", ")})`,
            {
              hint:
                key === "permissions"
                  ? "put permission rules in managed settings (spec.hosts kind copilot-managed)"
                  : "remove it, or move it where Copilot reads it",
            },
          ),
        );
      }
      for (const [key, v] of leaves(file, root)) {
        const top = key.split(".")[0] as string;
        // A key Copilot documents as user or managed only is ignored here; one Terfyn does not
        // know is kept, and its change widens (a newer Copilot may read it).
        if (top === "$schema" || NOT_REPO_KEYS.has(top)) continue;
        const earlier = out.repo.get(key);
        if (
          UNION_KEYS.has(top) &&
          earlier &&
          Array.isArray(earlier.value) &&
          Array.isArray(v.value)
        )
          out.repo.set(key, { ...v, value: [...earlier.value, ...v.value] });
        else out.repo.set(key, v);
      }
    }
  for (const role of CLAUDE_SETTINGS_PATHS)
    for (const file of byRole(role)) {
      // Claude Code's reader reports this file's problems; only its shared keys are read here.
      const root = objectRoot(file, "", [], false);
      if (!root) continue;
      for (const [key, v] of leaves(file, root))
        if (own(CLAUDE_SHARED_KEYS, key.split(".")[0] as string) !== undefined)
          out.claude.set(key, v);
    }
  for (const file of files.filter((f) => isCopilotHooksPath(roleOf(f)))) {
    const root = objectRoot(file, "Copilot does not run its hooks", out.diagnostics, false);
    out.hooks.set(file.path, root ? leaves(file, root) : new Map());
  }
  for (const file of byRole(COPILOT_MANAGED_ROLE)) readManaged(file, out);
  for (const role of [MCP_JSON, COPILOT_MCP_JSON])
    for (const file of byRole(role)) {
      const mcp = readMcpJson(file);
      out.mcp.servers.push(...mcp.servers);
      // `.mcp.json` is Claude Code's too, whose reader reports its problems.
      if (role === COPILOT_MCP_JSON) out.diagnostics.push(...mcp.diagnostics);
    }
  shadowed(out);
  return out;
}

const items = (v: unknown): string[] =>
  Array.isArray(v) ? v.map((x) => (typeof x === "string" ? x : JSON.stringify(x))) : [];

/** `disableBypassPermissionsMode`: `disable` < `allow-auto-only` < unset; an unknown value is enforced as `disable`. */
const BYPASS_RANK = (v: unknown) => (v === undefined ? 2 : v === "allow-auto-only" ? 1 : 0);

type Verdict = { direction: HostChange["direction"]; reason: string };

/** Which way one key's change goes, by its kind (the module's note). */
function verdict(
  kind: Kind,
  before: Located | undefined,
  after: Located | undefined,
  what: string,
): Verdict {
  const b = before?.value;
  const a = after?.value;
  switch (kind) {
    case "neutral":
      return { direction: "neutral", reason: `${what}: does not bear on what the agent may reach` };
    case "narrowing-list": {
      const lost = items(b).filter((x) => !items(a).includes(x));
      return lost.length > 0
        ? { direction: "widened", reason: `${what}: no longer held back: ${lost.join(", ")}` }
        : { direction: "narrowed", reason: `${what}: more held back` };
    }
    case "narrowing-switch":
      if ((a === true) === (b === true))
        return { direction: "neutral", reason: `${what}: unchanged in effect` };
      return a === true
        ? { direction: "narrowed", reason: `${what}: now on` }
        : { direction: "widened", reason: `${what}: no longer on` };
    case "widening-switch":
      if ((a === true) === (b === true))
        return { direction: "neutral", reason: `${what}: unchanged in effect` };
      return a === true
        ? { direction: "widened", reason: `${what}: now on` }
        : { direction: "narrowed", reason: `${what}: no longer on` };
    case "plugin":
      return a === true
        ? {
            direction: "widened",
            reason: `${what}: a plugin enabled brings its own hooks, MCP servers and agents`,
          }
        : { direction: "narrowed", reason: `${what}: a plugin no longer enabled` };
    case "command":
      return after === undefined
        ? { direction: "narrowed", reason: `${what}: removed` }
        : {
            direction: "widened",
            reason: `${what}: runs or brings a program; a change here cannot be shown to reach less`,
          };
    case "loosen": {
      const on = (x: unknown) => x !== false;
      if (on(a) === on(b)) return { direction: "neutral", reason: `${what}: the same in effect` };
      return on(a)
        ? { direction: "widened", reason: `${what}: the sandbox lets more through` }
        : { direction: "narrowed", reason: `${what}: the sandbox lets less through` };
    }
    case "bypass": {
      const rise = BYPASS_RANK(a) - BYPASS_RANK(b);
      if (rise === 0) return { direction: "neutral", reason: `${what}: the same in effect` };
      return rise > 0
        ? { direction: "widened", reason: `${what}: allow-all options may be used more` }
        : { direction: "narrowed", reason: `${what}: allow-all options may be used less` };
    }
    case "boundary": {
      if (before === undefined)
        return { direction: "narrowed", reason: `${what}: a boundary where there was none` };
      if (after === undefined)
        return {
          direction: "widened",
          reason: `${what}: the boundary is gone: everything is admitted`,
        };
      const added = items(a).filter((x) => !items(b).includes(x));
      return added.length > 0
        ? { direction: "widened", reason: `${what}: admits more: ${added.join(", ")}` }
        : { direction: "narrowed", reason: `${what}: admits less` };
    }
    default:
      return { direction: "widened", reason: `${what}: changed, and the change cannot be ordered` };
  }
}

/** A managed key's kind: its table entry, the sandbox's order, or "any". */
function managedKind(key: string): Kind {
  const exact = own(MANAGED_KEYS, key) ?? own(MANAGED_KEYS, key.split(".")[0] as string);
  if (exact) return exact;
  if (key === "permissions.disableBypassPermissionsMode") return "bypass";
  const sandbox = /^sandbox\.(.+)$/.exec(key)?.[1];
  if (sandbox !== undefined) {
    if (SANDBOX_TIGHTEN.has(sandbox)) return "narrowing-switch";
    if (SANDBOX_LOOSEN.has(sandbox)) return "loosen";
    if (/userPolicy\.(network\.blockedHosts|filesystem\.deniedPaths)$/.test(sandbox))
      return "narrowing-list";
    if (/userPolicy\.network\.allowedHosts$/.test(sandbox)) return "boundary";
    if (/userPolicy\.network\.allowLocalNetwork$/.test(sandbox)) return "widening-switch";
  }
  return "any";
}

function keyChanges(
  base: ReadonlyMap<string, Located>,
  head: ReadonlyMap<string, Located>,
  kindOf: (key: string) => Kind | undefined,
  scope: string,
): HostChange[] {
  const out: HostChange[] = [];
  for (const key of [...new Set([...base.keys(), ...head.keys()])].sort(byCodeUnit)) {
    const was = base.get(key);
    const now = head.get(key);
    if (JSON.stringify(was?.value) === JSON.stringify(now?.value)) continue;
    const kind = kindOf(key);
    if (kind === undefined) continue;
    const what = `${scope} \`${key}\``;
    const v = verdict(kind, was, now, what);
    const from = now ?? was;
    out.push({
      direction: v.direction,
      key,
      change: was === undefined ? "added" : now === undefined ? "removed" : "changed",
      file: from?.file ?? "",
      line: from?.line ?? 1,
      reason: v.reason,
    });
  }
  return out;
}

const topKind =
  (table: Readonly<Record<string, Kind>>) =>
  (key: string): Kind | undefined =>
    own(table, key.split(".")[0] as string);

/** What a change of a repository's Copilot files does to the agent's authority. */
export function copilotChanges(base: CopilotConfig, head: CopilotConfig): HostChange[] {
  const out: HostChange[] = [];
  out.push(
    ...keyChanges(
      base.repo,
      head.repo,
      (k) => topKind(REPO_KEYS)(k) ?? "any",
      "repository settings",
    ),
  );
  out.push(
    ...keyChanges(
      base.claude,
      head.claude,
      topKind(CLAUDE_SHARED_KEYS),
      "Claude Code's settings (read by Copilot)",
    ),
  );
  for (const file of [...new Set([...base.hooks.keys(), ...head.hooks.keys()])].sort(byCodeUnit)) {
    const b = base.hooks.get(file) ?? new Map();
    const h = head.hooks.get(file) ?? new Map();
    out.push(
      ...keyChanges(
        b,
        h,
        (k) => (k === "version" ? "neutral" : k.startsWith("hooks.") ? "command" : "any"),
        `hooks file ${file}`,
      ),
    );
  }
  out.push(...keyChanges(base.managed, head.managed, managedKind, "managed settings"));
  out.push(...locatedRuleChanges(base, head));
  out.push(...mcpChanges(base.mcp, head.mcp));
  return out;
}

/** Copilot's bound (the module's note). */
export function copilotBound(config: CopilotConfig, fileSpan: Span): EffectBoundEntry[] {
  const out: EffectBoundEntry[] = [];
  const add = (effect: string, mode: GrantMode, tool: string, span: Span) =>
    out.push({ agent: COPILOT_AGENT, effect, mode, tool, span: { ...span } });
  const denied = (rule: ClaudeRule) => firstContaining(config.rules.deny, rule) !== undefined;
  const family = (tool: string, specifier?: string): ClaudeRule => ({
    text: tool,
    tool,
    ...(specifier ? { specifier } : {}),
  });
  const defaults: [string, ClaudeRule, GrantMode, string][] = [
    ["workspace.read", family("Read"), "autonomous", "reads files in a trusted directory"],
    ["process.exec", family("Bash", "\u0002sh *"), "gated", "asks before a shell command"],
    ["workspace.write", family("Edit"), "gated", "asks before a write"],
    ["network.egress", family("Domain"), "gated", "asks before a URL"],
  ];
  for (const [effect, rule, mode, tool] of defaults)
    if (!denied(rule)) add(effect, mode, `Copilot ${tool}`, fileSpan);
  for (const list of ["allow", "ask"] as const)
    for (const r of config.rules[list]) {
      const effect = own(EFFECT_OF, r.tool);
      if (effect && !denied(r))
        add(effect, list === "allow" ? "autonomous" : "gated", `${list} ${r.text}`, r.span);
    }
  const hooksOff = config.repo.get("disableAllHooks")?.value === true;
  const runs = (scope: ReadonlyMap<string, Located>, label: string) => {
    for (const [key, v] of scope) {
      const top = key.split(".")[0];
      if (
        (top === "hooks" && !hooksOff) ||
        (top === "enabledPlugins" && v.value === true) ||
        top === "extraKnownMarketplaces"
      )
        add("process.exec", "autonomous", `${label} ${key}`, at(v.file, v.line));
      if (top === "policyHelper")
        add("process.exec", "autonomous", `${label} ${key}`, at(v.file, v.line));
    }
  };
  runs(config.repo, "repository settings");
  runs(config.claude, "Claude Code settings");
  if (!hooksOff) for (const [file, keys] of config.hooks) runs(keys, `hooks file ${file}`);
  runs(config.managed, "managed settings");
  const disabled = new Set(items(config.repo.get("disabledMcpServers")?.value));
  for (const s of config.mcp.servers) {
    if (disabled.has(s.name)) continue;
    add(
      s.transport === "stdio" ? "process.exec" : "network.egress",
      "autonomous",
      `mcpServers.${s.name}`,
      s.span,
    );
    add(`mcp.${s.name}.*`, "gated", `mcpServers.${s.name} tools`, s.span);
  }
  return out.sort(
    (a, b) =>
      byCodeUnit(a.effect, b.effect) || byCodeUnit(a.tool, b.tool) || byCodeUnit(a.mode, b.mode),
  );
}

/**
 * How Copilot decides every use the rule `text` names (a Copilot rule: `Shell(git push *)`,
 * `Read(src/**)`, `Domain(x.com)`): refused when a managed deny contains it, asked when an ask
 * does, run unasked when an allow does (deny > ask > allow); a use some allow may partly cover is
 * not provably asked; otherwise Copilot reads unasked and asks before anything else.
 */
export function copilotUseMode(config: CopilotConfig, text: string, fileSpan: Span): UseMode {
  const problems: Diagnostic[] = [];
  const rule = copilotRule(text, "allow", fileSpan, problems);
  if (!rule)
    return { mode: "unreadable", because: problems[0]?.message ?? `${text} is not a rule` };
  for (const [list, mode] of [
    ["deny", "denied"],
    ["ask", "gated"],
    ["allow", "autonomous"],
  ] as const) {
    const r = firstContaining(config.rules[list], rule);
    if (r) return { mode, because: `managed ${list} ${r.text}`, span: r.span };
  }
  const overlapping = config.rules.allow.find((x) => ruleContains(rule, x));
  if (overlapping)
    return {
      mode: "autonomous",
      because: `managed allow ${overlapping.text}`,
      span: overlapping.span,
    };
  return rule.tool === "Read"
    ? { mode: "autonomous", because: "Copilot reads files in a trusted directory", span: fileSpan }
    : { mode: "gated", because: "Copilot asks before it", span: fileSpan };
}

/** Copilot as an agent, when the project holds one of Copilot's own files. */
export function copilotAgent(files: readonly HostFile[]): HostAgent | undefined {
  const mine = files.filter((f) => isCopilotPath(roleOf(f)));
  const first = mine.find((f) => isCopilotOwnPath(roleOf(f)));
  if (!first) return undefined;
  const config = readCopilot(mine);
  const fileSpan = at(first.path, 1);
  return {
    name: COPILOT_AGENT,
    files: mine,
    bound: copilotBound(config, fileSpan),
    diagnostics: config.diagnostics,
    modeOf: (text) => copilotUseMode(config, text, fileSpan),
  };
}
