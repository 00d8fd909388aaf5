/**
 * The agents a project's policies and capability tests may name: its declared agents and the
 * agents of its host configurations (`Host/claude-code`). A declared agent is addressed
 * `Agent/<name>`; a host agent's name is already its address. Pure.
 */
import type { ResolvedProject } from "./project.ts";

export function hasAgent(project: ResolvedProject, name: string): boolean {
  return project.agents.has(name) || (project.hostAgents?.has(name) ?? false);
}

/** Every agent name, declared agents first. */
export function agentNames(project: ResolvedProject): string[] {
  return [...project.agents.keys(), ...(project.hostAgents?.keys() ?? [])];
}

/** The address a message names an agent by: `Agent/Reviewer`, `Host/claude-code`. */
export function agentAddress(name: string): string {
  return name.includes("/") ? name : `Agent/${name}`;
}

/**
 * Whether reaching `reached` reaches what a rule names as `named`. Effects match exactly, except
 * that a server-wide MCP effect (`mcp.github.*`) reaches each of its tools and a rule naming
 * `mcp.github.*` names every one of them.
 */
export function effectReaches(reached: string, named: string): boolean {
  if (reached === named) return true;
  if (reached.endsWith(".*") && named.startsWith(reached.slice(0, -1))) return true;
  return named.endsWith(".*") && reached.startsWith(named.slice(0, -1));
}
