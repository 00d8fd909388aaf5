/**
 * What the editor shows on hover over an agent's name or one of its grants: the agent's
 * effect bound (each effect, its mode, the grant that reaches it) and every policy rule that
 * bears on it, so whoever writes a grant sees what it lets the agent reach. Markdown, every
 * name from the project escaped. Pure.
 */
import type { AnalysedProject } from "../analysis/analysis.ts";
import type { EffectBoundEntry } from "../analysis/effect-bound.ts";
import { forbidTargets } from "../analysis/policy-violations.ts";
import { agentAddress, effectReaches } from "../model/agent-names.ts";
import type { ResolvedAgent, ResolvedPolicyRule } from "../model/project.ts";
import { inlineCode as mdCode } from "../render/escape.ts";
import { inSpan } from "../source.ts";

/** The rules of the project's policies that bear on `agent` (for `effects`, when given). */
function bearingRules(
  { project, analysis }: AnalysedProject,
  agent: ResolvedAgent,
  effects?: readonly string[],
): ResolvedPolicyRule[] {
  const reached = effects ?? (analysis.bounds.get(agent.name) ?? []).map((e) => e.effect);
  const touches = (effect: string) => reached.some((e) => effectReaches(e, effect));
  return project.policies.filter(({ rule }) => {
    if ("forbid" in rule) {
      // A forbid that names the agent bears on it whatever it reaches today; on a grant, only
      // where the grant's effects meet it.
      const names = forbidTargets(project, rule.forbid).includes(agent.name);
      return names && (effects === undefined || touches(rule.forbid.effect));
    }
    if ("requireApproval" in rule) return touches(rule.requireApproval.effect);
    if ("risk" in rule) return touches(rule.risk.effect);
    return false;
  });
}

function ruleLine(r: ResolvedPolicyRule): string {
  return `- ${mdCode(`Policy/${r.policy}`)}: ${mdCode(JSON.stringify(r.rule))} at ${mdCode(`${r.span.file}:${r.span.line}`)}`;
}

function boundTable(entries: readonly EffectBoundEntry[]): string[] {
  if (entries.length === 0) return ["Reaches no effect."];
  return [
    "| effect | mode | through |",
    "|---|---|---|",
    ...entries.map(
      (e) =>
        `| ${mdCode(e.effect, { inTable: true })} | ${e.mode} | ${mdCode(e.tool, { inTable: true })} |`,
    ),
  ];
}

/** The hover's Markdown at a 1-based line and column of `file`, or undefined for nothing there. */
export function hoverAt(
  analysed: AnalysedProject,
  file: string,
  line: number,
  column: number,
): string | undefined {
  const source = analysed.project.sources.get(file);
  if (source === undefined) return undefined;
  for (const agent of analysed.project.agents.values()) {
    if (agent.span.file !== file || !inSpan(source.span(agent.decl.range), line, column)) continue;
    const bound = analysed.analysis.bounds.get(agent.name) ?? [];
    const grant = agent.grants.find((g) => inSpan(g.span, line, column));
    if (grant) {
      const mine = bound.filter((e) => e.tool === grant.ref);
      const rules = bearingRules(analysed, agent, grant.effects);
      return [
        `${mdCode(grant.ref)} · ${grant.mode === "gated" ? "requires approval (gated)" : "autonomous"} · held by ${mdCode(agentAddress(agent.name))}`,
        "",
        ...(grant.resolved
          ? boundTable(mine)
          : ["No tool declares this operation: Terfyn cannot tell what it reaches."]),
        ...(rules.length > 0 ? ["", "Policies that bear on it:", ...rules.map(ruleLine)] : []),
      ].join("\n");
    }
    if (!inSpan(source.span(agent.decl.name.range), line, column)) return undefined;
    const rules = bearingRules(analysed, agent);
    return [
      `${mdCode(agentAddress(agent.name))} · model ${mdCode(agent.model)} · at most ${agent.maxTurns} turns`,
      "",
      ...boundTable(bound),
      ...(rules.length > 0
        ? ["", "Policies that bear on it:", ...rules.map(ruleLine)]
        : ["", "No policy bears on it."]),
    ].join("\n");
  }
  return undefined;
}
