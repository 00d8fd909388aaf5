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
import { parseClaudeRule } from "./claude-rules.ts";
import {
  type ClaudeSettings,
  claudeSettingsChanges,
  type HostChange,
  type HostFile,
  readClaudeSettings,
} from "./claude-settings.ts";
import { effectOfTool } from "./host-agents.ts";
import { MCP_JSON, roleOf } from "./host-paths.ts";
import { type McpConfig, mcpChanges, readMcpJson } from "./mcp-json.ts";

export { CLAUDE_SETTINGS_PATHS, HOST_PATHS, MCP_JSON } from "./host-paths.ts";

const mcpOf = (files: readonly HostFile[]): McpConfig => {
  const f = files.find((x) => roleOf(x) === MCP_JSON);
  return f ? readMcpJson(f) : { servers: [], diagnostics: [] };
};

export interface HostPlan {
  /** `Host/claude-code`, `Host/codex`. */
  agent: string;
  /** The head's files that were read. */
  files: string[];
  changes: HostChange[];
  /** The head's files' diagnostics (the base's are not the change's). */
  diagnostics: Diagnostic[];
}

/** The plan of Claude Code's settings from `base` (empty: everything new) to `head`. */
export function planClaudeCode(base: readonly HostFile[], head: readonly HostFile[]): HostPlan {
  const settings = (files: readonly HostFile[]) => files.filter((f) => roleOf(f) !== MCP_JSON);
  const after: ClaudeSettings = readClaudeSettings(settings(head));
  // A file whose permissions the host rejects is read widest at the head; at the base, read
  // narrowest unless the head's is rejected too (then alike, so an unchanged file is no change).
  const rejectedNow = new Set(after.rejected.map((r) => r.path));
  const was = readClaudeSettings(settings(base));
  const rejectedThen = new Set(was.rejected.map((r) => r.path));
  const narrowest = new Set([...rejectedThen].filter((p) => !rejectedNow.has(p)));
  const before = narrowest.size > 0 ? readClaudeSettings(settings(base), narrowest) : was;
  const mcp = mcpOf(head);
  return {
    agent: "Host/claude-code",
    files: head.map((f) => f.path),
    changes: [
      ...after.rejected
        .filter((r) => !rejectedThen.has(r.path) && r.lost > 0)
        .map(
          (r): HostChange => ({
            direction: "widened",
            key: "permissions",
            change: "changed",
            file: r.path,
            line: r.span.line,
            reason: `Claude Code's schema rejects the entry at line ${r.span.line}, so the host ignores this file's whole \`permissions\`: its ${r.lost} deny and ask rule(s) no longer hold`,
          }),
        ),
      ...claudeSettingsChanges(before, after).map((c) => {
        const r = after.rejected.find((x) => x.path === c.file);
        return r && c.change === "removed" && (c.list === "deny" || c.list === "ask")
          ? {
              ...c,
              reason: `no longer holds: the host ignores this file's \`permissions\` (line ${r.span.line})`,
            }
          : c;
      }),
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
      changes: p.changes.map(hostChangeJson),
    })),
  };
}

/** A host change as the plan JSON has it: the rule or key exactly as written, its file and line. */
export function hostChangeJson(c: HostChange) {
  return {
    direction: c.direction,
    change: c.change,
    ...(c.rule !== undefined ? { rule: c.rule, list: c.list } : {}),
    ...(c.key !== undefined ? { key: c.key } : {}),
    file: c.file,
    line: c.line,
    reason: c.reason,
  };
}

export type HostChangeJson = ReturnType<typeof hostChangeJson>;

/** The rule (with its list) or key a change is about, as written. */
export function hostChangeSubject(c: Pick<HostChange, "rule" | "list" | "key">): string {
  return c.rule !== undefined ? `${c.list} ${c.rule}` : `${c.key}`;
}

/** A change as one line: direction, what changed, where, why; text escaped by `esc`. */
export function hostChangeLine(
  c: Pick<
    HostChange,
    "direction" | "change" | "rule" | "list" | "key" | "file" | "line" | "reason"
  >,
  esc: (s: string) => string,
): string {
  return `${LABEL[c.direction]} ${c.change} ${esc(hostChangeSubject(c))}  ${esc(c.file)}:${c.line}  (${esc(c.reason)})`;
}

/** Widenings first, then narrowings, then neutral changes. */
export function byDirection<T extends { direction: HostChange["direction"] }>(
  changes: readonly T[],
): T[] {
  const order = { widened: 0, narrowed: 1, neutral: 2 } as const;
  return [...changes].sort((a, b) => order[a.direction] - order[b.direction]);
}

/** The effect a change is about: its rule's tool's, or what its key reaches. */
export function hostChangeEffect(c: Pick<HostChange, "rule" | "key">): string {
  if (c.rule !== undefined) {
    const r = parseClaudeRule(c.rule);
    return "problem" in r
      ? "(unreadable rule)"
      : (effectOfTool(r.tool) ?? "(no effect of its own)");
  }
  const key = c.key ?? "";
  if (
    /^(mcpServers\.|enabledMcpjsonServers|enableAllProjectMcpServers|disabledMcpjsonServers)/.test(
      key,
    )
  )
    return "process.exec or network.egress";
  if (key === "permissions.defaultMode" || key.startsWith("permissions.disable"))
    return "(permission mode)";
  if (key === "permissions.additionalDirectories") return "workspace.read";
  if (key === "sandbox" || key.startsWith("sandbox.")) return "(sandbox)";
  return "process.exec";
}

/**
 * Which mode of the host's authority a change is about: an added `ask` rule's is gated (what it
 * names may now be asked for); every other change is about what runs unasked (a removed `ask`
 * lets an allow or the mode run what it gated).
 */
export function hostChangeMode(c: Pick<HostChange, "list" | "change">): "autonomous" | "gated" {
  return c.list === "ask" && c.change === "added" ? "gated" : "autonomous";
}

const LABEL: Record<HostChange["direction"], string> = {
  widened: "WIDENED ",
  narrowed: "NARROWED",
  neutral: "neutral ",
};

/** The text plan: a line per change, widenings first, then a summary line. */
export function hostPlanText(plans: readonly HostPlan[], against: string | null): string {
  const lines: string[] = [];
  for (const p of plans) {
    lines.push(
      `${escapeTerminalText(p.agent)} (${p.files.length === 0 ? "every file deleted" : p.files.map((f) => escapeTerminalText(f)).join(", ")})`,
    );
    const changes = byDirection(p.changes);
    if (changes.length === 0) lines.push("  no change of authority");
    for (const c of changes) lines.push(`  ${hostChangeLine(c, escapeTerminalText)}`);
  }
  const s = hostPlanSummary(plans);
  lines.push(
    "",
    `Host authority${against ? ` against ${escapeTerminalText(against)}` : ""}: ${s.widened} widened, ${s.narrowed} narrowed, ${plural(s.neutral, "neutral change")}.`,
  );
  return `${lines.join("\n")}\n`;
}
