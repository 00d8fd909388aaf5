/**
 * Per-agent model overrides for the shipped review agents (or any project's): `Name=provider/model`
 * entries, separated by commas or line breaks, as `terfyn review --agent-model`, the App's
 * TERFYN_APP_AGENT_MODELS and the Action's `agent-models` input give them. A run or a
 * repository's workflow picks each agent's model without editing the agents. Pure.
 */

export type AgentModels = Readonly<Record<string, string>>;

const ENTRY = /^([A-Za-z_][A-Za-z0-9_]*)=([a-z][a-z0-9-]*\/[A-Za-z0-9._:@-]+)$/;

/**
 * The overrides in `text` (empty: none), checked against the agents there are (`agents`):
 * every entry well-formed, every agent known, none given twice. `where` names the source in
 * the problem (a flag, a variable, an input).
 */
export function parseAgentModels(
  text: string,
  agents: readonly string[],
  where: string,
): { models: AgentModels } | { problem: string } {
  const models: Record<string, string> = {};
  for (const raw of text.split(/[,\n]/)) {
    const entry = raw.trim();
    if (entry === "") continue;
    const m = ENTRY.exec(entry);
    if (!m)
      return {
        problem: `${where}: \`${entry}\` is not NAME=provider/model (for example Builder=anthropic/claude-sonnet-5-5)`,
      };
    const [, name, model] = m as unknown as [string, string, string];
    if (!agents.includes(name))
      return {
        problem: `${where}: there is no agent ${name} (the agents: ${[...agents].sort().join(", ")})`,
      };
    if (Object.hasOwn(models, name)) return { problem: `${where}: agent ${name} is given twice` };
    models[name] = model;
  }
  return { models };
}
