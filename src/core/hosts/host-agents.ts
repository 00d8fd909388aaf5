/**
 * Host configurations as agents of the authority model: Claude Code's settings and the
 * project's `.mcp.json` become `Host/claude-code`, whose effect bound is every (effect, mode,
 * rule) the host lets its agent reach, so the same policies (`forbid {agent: Host/claude-code,
 * effect: network.egress}`), capability tests and plan apply to it as to a declared agent.
 *
 * How a rule maps (the host's own semantics, fail closed):
 * - `Bash(…)` is `process.exec`; `Read`/`Grep`/`Glob`/`LS` are `workspace.read`;
 *   `Edit`/`Write`/`MultiEdit`/`NotebookEdit` are `workspace.write`; `WebFetch`/`WebSearch` are
 *   `network.egress`; `mcp__server__tool` is `mcp.server.tool` (`mcp.server.*` for a whole
 *   server); a tool Terfyn does not know is `claude-code.<Tool>`, so it can still be forbidden;
 * - `allow` is autonomous, `ask` is gated, and a `deny` that contains a rule removes it;
 * - what the permission mode does without a rule: read-only tools run unasked; in `default` (and
 *   when no mode is set) Bash, edits and web access ask (gated); `acceptEdits` makes edits
 *   autonomous; `auto` and `bypassPermissions` (and a mode the host does not document) make
 *   everything autonomous; `dontAsk` refuses what no rule allows; `plan` neither edits nor runs.
 *   A bare `deny` of a tool (`Bash`) removes its mode entry;
 * - every hook and every setting whose value is a command runs without asking
 *   (`process.exec`, autonomous); an `.mcp.json` server starts a program (`process.exec`) or
 *   calls a URL (`network.egress`), autonomous when the settings enable it, gated otherwise
 *   (the host asks before it starts one), and its tools ask unless a rule allows them.
 * Pure.
 */
import type { EffectBoundEntry } from "../analysis/effect-bound.ts";
import type { Diagnostic, Span } from "../diagnostics.ts";
import { effectReaches } from "../model/agent-names.ts";
import type { GrantMode } from "../model/project.ts";
import { byCodeUnit } from "../order.ts";
import { type ClaudeRule, firstContaining, parseClaudeRule, ruleContains } from "./claude-rules.ts";
import { type ClaudeSettings, type HostFile, readClaudeSettings } from "./claude-settings.ts";
import { CLAUDE_SETTINGS_PATHS, isClaudeMarkdownPath, MCP_JSON, roleOf } from "./host-paths.ts";
import { lineSpan } from "./json-nodes.ts";
import { type McpConfig, readMcpJson } from "./mcp-json.ts";

export {
  CLAUDE_SETTINGS_PATHS,
  HOST_PATHS,
  isHostPath,
  MCP_JSON,
} from "./host-paths.ts";

export const CLAUDE_CODE_AGENT = "Host/claude-code";

/** A host as an agent: its name, the files it was read from, its bound, its files' problems. */
export interface HostAgent {
  name: string;
  files: HostFile[];
  bound: EffectBoundEntry[];
  diagnostics: Diagnostic[];
  /** How a use the rule `text` names would be decided (see useMode), for hosts with rules. */
  modeOf?(text: string): UseMode;
}

/** How the host decides a use: refused, asked, run unasked (`because`: the rule or mode). */
export type UseMode =
  | { mode: "denied" | "gated" | "autonomous"; because: string; span: Span }
  | { mode: "unreadable"; because: string };

const READ_TOOLS = new Set(["Read", "Grep", "Glob", "LS", "NotebookRead"]);
const WRITE_TOOLS = new Set(["Edit", "Write", "MultiEdit", "NotebookEdit"]);
const WEB_TOOLS = new Set(["WebFetch", "WebSearch"]);
/** Tools that reach nothing of their own: a subagent has the session's permissions. */
const NO_EFFECT_TOOLS = new Set(["Agent", "Task", "TodoWrite", "ExitPlanMode", "Skill"]);

/** The effect a rule's tool reaches, or undefined for one that reaches nothing by itself. */
export function effectOfTool(tool: string): string | undefined {
  if (tool === "Bash") return "process.exec";
  if (READ_TOOLS.has(tool)) return "workspace.read";
  if (WRITE_TOOLS.has(tool)) return "workspace.write";
  if (WEB_TOOLS.has(tool)) return "network.egress";
  if (NO_EFFECT_TOOLS.has(tool)) return undefined;
  const mcp = /^mcp__(.+?)(?:__(.+))?$/.exec(tool);
  if (mcp) return `mcp.${mcp[1]}.${mcp[2] ?? "*"}`;
  return `claude-code.${tool}`;
}

/** The host's agent for a project's files (those at HOST_PATHS), or undefined when it has none. */
export function claudeCodeAgent(files: readonly HostFile[]): HostAgent | undefined {
  const settingsFiles = [
    ...CLAUDE_SETTINGS_PATHS.flatMap((p) => files.filter((f) => roleOf(f) === p)),
    ...files.filter((f) => isClaudeMarkdownPath(roleOf(f))),
  ];
  const mcpFile = files.find((f) => roleOf(f) === MCP_JSON);
  if (settingsFiles.length === 0 && mcpFile === undefined) return undefined;
  const settings = readClaudeSettings(settingsFiles);
  const mcp: McpConfig = mcpFile ? readMcpJson(mcpFile) : { servers: [], diagnostics: [] };
  const first = settingsFiles[0] ?? mcpFile;
  const fileSpan: Span = {
    file: first?.path ?? ".claude/settings.json",
    line: 1,
    column: 1,
    endLine: 1,
    endColumn: 1,
  };
  return {
    name: CLAUDE_CODE_AGENT,
    files: [...settingsFiles, ...(mcpFile ? [mcpFile] : [])],
    bound: claudeCodeBound(settings, mcp, fileSpan),
    diagnostics: [...settings.diagnostics, ...mcp.diagnostics],
    modeOf: (text) => useMode(settings, text, fileSpan),
  };
}

/**
 * How Claude Code decides every use the rule `text` names: refused when a deny rule contains
 * it, asked when an ask rule does, run unasked when an allow rule does (deny > ask > allow,
 * whatever the order), else what the permission mode does with its tool. A use only some
 * rule's part covers falls to the next: this answers for all of them at once, so a rule
 * partly allowed is not called gated.
 */
export function useMode(settings: ClaudeSettings, text: string, fileSpan: Span): UseMode {
  const rule = parseClaudeRule(text);
  if ("problem" in rule) return { mode: "unreadable", because: rule.problem };
  for (const [list, mode] of [
    ["deny", "denied"],
    ["ask", "gated"],
    ["allow", "autonomous"],
  ] as const) {
    const r = firstContaining(settings.rules[list], rule);
    if (r) return { mode, because: `${list} ${r.text}`, span: r.span };
  }
  // Some use of it a broader or overlapping allow rule may run unasked: not provably asked.
  const overlapping = settings.rules.allow.find((x) => ruleContains(rule, x));
  if (overlapping)
    return { mode: "autonomous", because: `allow ${overlapping.text}`, span: overlapping.span };
  const mode = settings.defaultMode;
  const byMode = modeEntries(mode?.value).find(([tool]) => tool === rule.tool);
  const because = `${mode ? `defaultMode ${mode.value}` : "default mode"}: ${rule.tool}`;
  const span = mode?.span ?? fileSpan;
  if (byMode) return { mode: byMode[1], because, span };
  // Tools the modes never list: MCP tools and others ask unless the mode asks nothing.
  const asksNothing = !["plan", "default", "acceptEdits", "dontAsk", undefined].includes(
    mode?.value,
  );
  return {
    mode: mode?.value === "dontAsk" ? "denied" : asksNothing ? "autonomous" : "gated",
    because,
    span,
  };
}

/**
 * How a host without per-use rules (Codex, a workflow's agent) decides every use the rule
 * `text` names, read off its bound: run unasked when an autonomous entry reaches the rule's
 * effect, asked when only gated ones do, refused when none does. The bound is an
 * over-approximation (an effect is autonomous when any use of it is), so "asked" and "refused"
 * hold for every use the rule names; a tool Terfyn cannot map to an effect is unreadable,
 * never refused.
 */
export function modeByBound(
  agent: Pick<HostAgent, "name" | "bound" | "files">,
  text: string,
): UseMode {
  const { name, bound } = agent;
  const rule = parseClaudeRule(text);
  if ("problem" in rule) return { mode: "unreadable", because: rule.problem };
  const effect = effectOfTool(rule.tool);
  if (effect === undefined || effect.startsWith("claude-code."))
    return {
      mode: "unreadable",
      because: `${name} decides by effect: name a use as Bash(command), Read(path), Edit(path), WebFetch or mcp__server__tool`,
    };
  const reaching = bound.filter((e) => effectReaches(e.effect, effect));
  const hit = reaching.find((e) => e.mode === "autonomous") ?? reaching[0];
  if (hit) return { mode: hit.mode, because: hit.tool, span: hit.span };
  return {
    mode: "denied",
    because: `${name} reaches no ${effect}`,
    span: lineSpan(agent.files[0]?.path ?? name, 1),
  };
}

/** Which tools each mode lets run without a rule: autonomous, gated, or not at all. */
function modeEntries(mode: string | undefined): [tool: string, mode: GrantMode][] {
  const read: [string, GrantMode][] = [["Read", "autonomous"]];
  switch (mode) {
    case "plan":
      return [...read, ["WebFetch", "gated"], ["WebSearch", "gated"]];
    case undefined:
    case "default":
      return [
        ...read,
        ["Bash", "gated"],
        ["Edit", "gated"],
        ["WebFetch", "gated"],
        ["WebSearch", "gated"],
      ];
    case "acceptEdits":
      return [
        ...read,
        ["Bash", "gated"],
        ["Edit", "autonomous"],
        ["WebFetch", "gated"],
        ["WebSearch", "gated"],
      ];
    case "dontAsk":
      return read;
    default:
      // auto, bypassPermissions, and a mode the host does not document: nothing asks.
      return [
        ...read,
        ["Bash", "autonomous"],
        ["Edit", "autonomous"],
        ["WebFetch", "autonomous"],
        ["WebSearch", "autonomous"],
      ];
  }
}

export function claudeCodeBound(
  settings: ClaudeSettings,
  mcp: McpConfig,
  fileSpan: Span,
): EffectBoundEntry[] {
  const out: EffectBoundEntry[] = [];
  const add = (effect: string | undefined, mode: GrantMode, tool: string, span: Span) => {
    if (effect !== undefined)
      out.push({ agent: CLAUDE_CODE_AGENT, effect, mode, tool, span: { ...span } });
  };
  const denies = settings.rules.deny;
  const denied = (rule: ClaudeRule) => firstContaining(denies, rule) !== undefined;
  for (const list of ["allow", "ask"] as const) {
    for (const r of settings.rules[list]) {
      if (denied(r)) continue;
      add(
        effectOfTool(r.tool),
        list === "allow" ? "autonomous" : "gated",
        `${list} ${r.text}`,
        r.span,
      );
    }
  }
  // A subagent's mode decides its tool uses as the session's mode does.
  for (const [key, { value, span }] of settings.subagentModes)
    for (const [tool, m] of modeEntries(String(value))) {
      if (denied({ text: tool, tool })) continue;
      add(effectOfTool(tool), m, `${key} ${String(value)}: ${tool}`, span);
    }
  const mode = settings.defaultMode;
  for (const [tool, m] of modeEntries(mode?.value)) {
    if (denied({ text: tool, tool })) continue;
    add(
      effectOfTool(tool),
      m,
      `${mode ? `defaultMode ${mode.value}` : "default mode"}: ${tool}`,
      mode?.span ?? fileSpan,
    );
  }
  for (const [key, value] of settings.settings) {
    // Hooks and plugins are kept per event and per plugin (`hooks.PreToolUse`); a plugin set
    // false runs nothing (both scopes' values are kept: any `true` enables it).
    const top = key.split(".")[0];
    const runs =
      top === "hooks" ||
      (top === "enabledPlugins" && (value.json ?? "").split("\u0000").includes("true")) ||
      key === "extraKnownMarketplaces" ||
      ["apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "otelHeadersHelper"].includes(
        key,
      ) ||
      key === "statusLine";
    if (runs) add("process.exec", "autonomous", key, value.span);
    // A subagent's hooks and servers run programs.
    if (top === "subagents" && value.json !== "null")
      add("process.exec", "autonomous", key, value.span);
    if (key === "permissions.additionalDirectories")
      for (const dir of value.items ?? [])
        add("workspace.read", "autonomous", `additionalDirectories ${dir}`, value.span);
  }
  const enabledAll = settings.settings.get("enableAllProjectMcpServers")?.json === "true";
  const enabled = new Set(settings.settings.get("enabledMcpjsonServers")?.items ?? []);
  const disabled = new Set(settings.settings.get("disabledMcpjsonServers")?.items ?? []);
  for (const s of mcp.servers) {
    if (disabled.has(s.name)) continue;
    const m: GrantMode = enabledAll || enabled.has(s.name) ? "autonomous" : "gated";
    add(
      s.transport === "stdio" ? "process.exec" : "network.egress",
      m,
      `mcpServers.${s.name}`,
      s.span,
    );
    const tools = `mcp__${s.name}`;
    if (!denied({ text: tools, tool: tools }))
      add(effectOfTool(tools), "gated", `mcpServers.${s.name} tools`, s.span);
  }
  return out.sort(
    (a, b) =>
      byCodeUnit(a.effect, b.effect) || byCodeUnit(a.tool, b.tool) || byCodeUnit(a.mode, b.mode),
  );
}
