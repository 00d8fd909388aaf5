/**
 * Every host Terfyn reads, in one table: its agent's name, the paths of its files, how its
 * files become an agent of the authority model, and how a change of them is planned. A project
 * (validate.ts), its plan (compute-plan.ts) and `terfyn plan` without terfyn.yaml all go through
 * this table, so a host added here is read everywhere at once. Pure.
 */
import type { HostFile } from "./claude-settings.ts";
import { CODEX_AGENT, codexAgent, codexChanges, readCodexConfig } from "./codex-config.ts";
import { CLAUDE_CODE_AGENT, claudeCodeAgent, type HostAgent } from "./host-agents.ts";
import { CLAUDE_SETTINGS_PATHS, CODEX_CONFIG, MCP_JSON } from "./host-paths.ts";
import { type HostPlan, planClaudeCode } from "./host-plan.ts";

export interface HostKind {
  agent: string;
  /** The host's own name, as stderr names the files read: "Claude Code". */
  label: string;
  paths: readonly string[];
  agentOf(files: readonly HostFile[]): HostAgent | undefined;
  plan(base: readonly HostFile[], head: readonly HostFile[]): HostPlan;
}

const codexOf = (files: readonly HostFile[]) => {
  const f = files.find((x) => x.path === CODEX_CONFIG);
  return f ? readCodexConfig(f) : undefined;
};

export const HOST_KINDS: readonly HostKind[] = [
  {
    agent: CLAUDE_CODE_AGENT,
    label: "Claude Code",
    paths: [...CLAUDE_SETTINGS_PATHS, MCP_JSON],
    agentOf: claudeCodeAgent,
    plan: planClaudeCode,
  },
  {
    agent: CODEX_AGENT,
    label: "Codex",
    paths: [CODEX_CONFIG],
    agentOf: codexAgent,
    plan: (base, head) => {
      const after = codexOf(head);
      return {
        agent: CODEX_AGENT,
        files: head.map((f) => f.path),
        changes: codexChanges(codexOf(base), after),
        diagnostics: after?.diagnostics ?? [],
      };
    },
  },
];

const mine = (kind: HostKind, files: readonly HostFile[]) =>
  files.filter((f) => kind.paths.includes(f.path));

/** The host agents a project's files hold (each host with a file among them). */
export function hostAgentsOf(files: readonly HostFile[]): HostAgent[] {
  return HOST_KINDS.flatMap((k) => k.agentOf(mine(k, files)) ?? []);
}

/** The plan of every host with a file on either side. */
export function planHosts(base: readonly HostFile[], head: readonly HostFile[]): HostPlan[] {
  return HOST_KINDS.filter((k) => mine(k, base).length + mine(k, head).length > 0).map((k) =>
    k.plan(mine(k, base), mine(k, head)),
  );
}

/** One host agent's plan, by its name (a name no host has: no change). */
export function planHost(
  agent: string,
  base: readonly HostFile[],
  head: readonly HostFile[],
): HostPlan | undefined {
  const k = HOST_KINDS.find((x) => x.agent === agent);
  return k?.plan(mine(k, base), mine(k, head));
}
