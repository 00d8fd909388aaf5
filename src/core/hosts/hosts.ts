/**
 * Every host Terfyn reads, in one table: which files are its, which agents they make (one per
 * host, or one per workflow file), how those files become an agent of the authority model, and
 * how a change of them is planned. A project (validate.ts), its plan (compute-plan.ts) and
 * `terfyn plan` without terfyn.yaml all go through this table, so a host added here is read
 * everywhere at once. Pure.
 */
import {
  actionAgent,
  actionAgentName,
  actionChanges,
  readActionWorkflow,
} from "./claude-code-action.ts";
import type { HostFile } from "./claude-settings.ts";
import { CODEX_AGENT, codexAgent, codexChanges, readCodexConfig } from "./codex-config.ts";
import {
  COPILOT_AGENT,
  copilotAgent,
  copilotChanges,
  isCopilotPath,
  readCopilot,
} from "./copilot-settings.ts";
import { ghAwAgent, ghAwAgentName, ghAwImporters, planGhAw } from "./gh-aw.ts";
import { CLAUDE_CODE_AGENT, claudeCodeAgent, type HostAgent } from "./host-agents.ts";
import {
  CLAUDE_SETTINGS_PATHS,
  CODEX_CONFIG,
  isClaudeMarkdownPath,
  isGhAwPath,
  isGhAwSharedPath,
  isWorkflowPath,
  MCP_JSON,
  roleOf,
} from "./host-paths.ts";
import { type HostPlan, planClaudeCode } from "./host-plan.ts";

export interface HostKind {
  /** The host's own name, as stderr names the files read: "Claude Code". */
  label: string;
  owns(path: string): boolean;
  /**
   * The agents a file of this host belongs to, among the files of one side: its own, or (a
   * file other files import) those that import it.
   */
  agentNames(path: string, files: readonly HostFile[]): string[];
  agentOf(files: readonly HostFile[]): HostAgent | undefined;
  plan(agent: string, base: readonly HostFile[], head: readonly HostFile[]): HostPlan;
}

const fixed = (paths: readonly string[], agent: string) => ({
  owns: (p: string) => paths.includes(p),
  agentNames: () => [agent],
});

/**
 * The plan of a host read from one file per agent: the file read on each side (absent: none),
 * compared by the host's own `changes`; the head's problems are the plan's.
 */
function oneFilePlan<T extends { diagnostics: HostPlan["diagnostics"] }>(
  read: (f: HostFile) => T,
  changes: (base: T | undefined, head: T | undefined) => HostPlan["changes"],
  pick: (files: readonly HostFile[]) => HostFile | undefined = (files) => files[0],
): HostKind["plan"] {
  return (agent, base, head) => {
    const b = pick(base);
    const h = pick(head);
    const after = h ? read(h) : undefined;
    return {
      agent,
      files: head.map((f) => f.path),
      changes: changes(b ? read(b) : undefined, after),
      diagnostics: after?.diagnostics ?? [],
    };
  };
}

export const HOST_KINDS: readonly HostKind[] = [
  {
    label: "Claude Code",
    owns: (p) => [...CLAUDE_SETTINGS_PATHS, MCP_JSON].includes(p) || isClaudeMarkdownPath(p),
    agentNames: () => [CLAUDE_CODE_AGENT],
    agentOf: claudeCodeAgent,
    plan: (_agent, base, head) => planClaudeCode(base, head),
  },
  {
    label: "Codex",
    ...fixed([CODEX_CONFIG], CODEX_AGENT),
    agentOf: codexAgent,
    plan: oneFilePlan(readCodexConfig, codexChanges, (files) =>
      files.find((x) => roleOf(x) === CODEX_CONFIG),
    ),
  },
  {
    label: "GitHub Copilot",
    owns: isCopilotPath,
    agentNames: () => [COPILOT_AGENT],
    agentOf: copilotAgent,
    plan: (agent, base, head) => {
      const after = readCopilot(head);
      return {
        agent,
        files: head.map((f) => f.path),
        changes: copilotChanges(readCopilot(base), after),
        diagnostics: after.diagnostics,
      };
    },
  },
  {
    label: "claude-code-action",
    owns: isWorkflowPath,
    agentNames: (p) => [actionAgentName(p)],
    agentOf: (files) => (files[0] ? actionAgent(files[0]) : undefined),
    plan: oneFilePlan(readActionWorkflow, actionChanges),
  },
  {
    label: "gh-aw",
    owns: (p) => isGhAwPath(p) || isGhAwSharedPath(p),
    agentNames: (p, files) => (isGhAwPath(p) ? [ghAwAgentName(p)] : ghAwImporters(p, files)),
    agentOf: (files) => {
      const main = files.find((f) => isGhAwPath(roleOf(f)));
      return main
        ? ghAwAgent(
            main,
            files.filter((f) => f !== main),
          )
        : undefined;
    },
    plan: planGhAw,
  },
];

/** The files of each agent, by agent name, for every host with a file among `files`. */
function byAgent(files: readonly HostFile[]): Map<string, { kind: HostKind; files: HostFile[] }> {
  const out = new Map<string, { kind: HostKind; files: HostFile[] }>();
  for (const kind of HOST_KINDS)
    for (const f of files) {
      if (!kind.owns(roleOf(f))) continue;
      for (const name of kind.agentNames(roleOf(f), files)) {
        const entry = out.get(name) ?? { kind, files: [] };
        entry.files.push(f);
        out.set(name, entry);
      }
    }
  return out;
}

/** The host agents a project's files hold. */
export function hostAgentsOf(files: readonly HostFile[]): HostAgent[] {
  return [...byAgent(files).values()].flatMap(({ kind, files: mine }) => kind.agentOf(mine) ?? []);
}

/**
 * The plan of every host agent with a file on either side. A workflow file that runs no agent
 * on either side plans nothing (unless it does not parse: then nobody can say it runs none).
 */
export function planHosts(base: readonly HostFile[], head: readonly HostFile[]): HostPlan[] {
  const a = byAgent(base);
  const b = byAgent(head);
  const out: HostPlan[] = [];
  for (const name of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    const kind = (b.get(name) ?? a.get(name))?.kind as HostKind;
    const beforeFiles = a.get(name)?.files ?? [];
    const afterFiles = b.get(name)?.files ?? [];
    const hasAgent =
      kind.agentOf(beforeFiles) !== undefined || kind.agentOf(afterFiles) !== undefined;
    if (hasAgent) out.push(kind.plan(name, beforeFiles, afterFiles));
  }
  return out;
}

/** One host agent's plan, by its name (undefined for a name no host makes). */
export function planHost(
  agent: string,
  base: readonly HostFile[],
  head: readonly HostFile[],
): HostPlan | undefined {
  const kind = HOST_KINDS.find((k) =>
    [base, head].some((side) =>
      side.some((f) => k.owns(roleOf(f)) && k.agentNames(roleOf(f), side).includes(agent)),
    ),
  );
  return kind?.plan(agent, base, head);
}
