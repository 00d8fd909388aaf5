/**
 * The plan of a repository's host configurations (today Claude Code's settings files and the
 * project's .mcp.json) when it
 * has no terfyn.yaml: each host as an agent (`Host/claude-code`), the files read, every change of
 * its authority with its direction, and the diagnostics of the head's files. Rendered as text and
 * as JSON (`"direction"`, the rule or key exactly as written, its file and line). Pure.
 */
import type { Diagnostic } from "../diagnostics.ts";
import { escapeTerminalText } from "../render/terminal-text.ts";
import { plural } from "../words.ts";
import {
  type ClaudeSettings,
  claudeSettingsChanges,
  type HostChange,
  type HostFile,
  readClaudeSettings,
} from "./claude-settings.ts";
import { type McpConfig, mcpChanges, readMcpJson } from "./mcp-json.ts";

/** Where Claude Code's settings live in a repository, least specific first. */
export const CLAUDE_SETTINGS_PATHS = [".claude/settings.json", ".claude/settings.local.json"];

/** The project's MCP servers, which Claude Code offers its agent. */
export const MCP_JSON = ".mcp.json";

/** Every host configuration file a plan looks for, by its conventional path. */
export const HOST_PATHS = [...CLAUDE_SETTINGS_PATHS, MCP_JSON];

const mcpOf = (files: readonly HostFile[]): McpConfig => {
  const f = files.find((x) => x.path === MCP_JSON);
  return f ? readMcpJson(f) : { servers: [], diagnostics: [] };
};

export interface HostPlan {
  agent: "Host/claude-code";
  /** The head's files that were read. */
  files: string[];
  changes: HostChange[];
  /** The head's files' diagnostics (the base's are not the change's). */
  diagnostics: Diagnostic[];
}

/** The plan of Claude Code's settings from `base` (empty: everything new) to `head`. */
export function planClaudeCode(base: readonly HostFile[], head: readonly HostFile[]): HostPlan {
  const settings = (files: readonly HostFile[]) => files.filter((f) => f.path !== MCP_JSON);
  const after: ClaudeSettings = readClaudeSettings(settings(head));
  const mcp = mcpOf(head);
  return {
    agent: "Host/claude-code",
    files: head.map((f) => f.path),
    changes: [
      ...claudeSettingsChanges(readClaudeSettings(settings(base)), after),
      ...mcpChanges(mcpOf(base), mcp),
    ],
    diagnostics: [...after.diagnostics, ...mcp.diagnostics],
  };
}

export function hostPlanSummary(plans: readonly HostPlan[]) {
  const all = plans.flatMap((p) => p.changes);
  const count = (d: HostChange["direction"]) => all.filter((c) => c.direction === d).length;
  return {
    widened: count("widened"),
    narrowed: count("narrowed"),
    neutral: count("neutral"),
    has_changes: all.length > 0,
  };
}

/** The `--format json` document of a host plan. */
export function hostPlanJson(plans: readonly HostPlan[], against: string | null) {
  return {
    format_version: "1",
    kind: "host-plan",
    against,
    summary: hostPlanSummary(plans),
    hosts: plans.map((p) => ({
      agent: p.agent,
      files: p.files,
      changes: p.changes.map((c) => ({
        direction: c.direction,
        change: c.change,
        ...(c.rule !== undefined ? { rule: c.rule, list: c.list } : {}),
        ...(c.key !== undefined ? { key: c.key } : {}),
        file: c.file,
        line: c.line,
        reason: c.reason,
      })),
    })),
  };
}

const LABEL: Record<HostChange["direction"], string> = {
  widened: "WIDENED ",
  narrowed: "NARROWED",
  neutral: "neutral ",
};

/** The text plan: a line per change, widenings first, then a summary line. */
export function hostPlanText(plans: readonly HostPlan[], against: string | null): string {
  const lines: string[] = [];
  const order = { widened: 0, narrowed: 1, neutral: 2 } as const;
  for (const p of plans) {
    lines.push(`${p.agent} (${p.files.map((f) => escapeTerminalText(f)).join(", ")})`);
    const changes = [...p.changes].sort((a, b) => order[a.direction] - order[b.direction]);
    if (changes.length === 0) lines.push("  no change of authority");
    for (const c of changes) {
      const what = c.rule !== undefined ? `${c.list} ${c.rule}` : `${c.key}`;
      lines.push(
        `  ${LABEL[c.direction]} ${c.change} ${escapeTerminalText(what)}  ${escapeTerminalText(c.file)}:${c.line}  (${escapeTerminalText(c.reason)})`,
      );
    }
  }
  const s = hostPlanSummary(plans);
  lines.push(
    "",
    `Host authority${against ? ` against ${escapeTerminalText(against)}` : ""}: ${s.widened} widened, ${s.narrowed} narrowed, ${plural(s.neutral, "neutral change")}.`,
  );
  return `${lines.join("\n")}\n`;
}
