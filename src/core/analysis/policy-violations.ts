/**
 * Policy violations as data: every grant that reaches an effect a `forbid` rule forbids for its
 * agent, and every autonomous grant reaching an effect under `requireApproval`. Validation
 * turns these into diagnostics; the plan lists them and fails on them. Pure.
 */
import type { Span } from "../diagnostics.ts";
import { agentAddress, agentNames, effectReaches, hasAgent } from "../model/agent-names.ts";
import type { ResolvedProject } from "../model/project.ts";
import type { BoundLookup, EffectBoundEntry } from "./effect-bound.ts";

export interface PolicyViolationRecord {
  code: "TF5006" | "TF5007";
  policy: string;
  rule: "forbid" | "requireApproval";
  /** The rule's `agent` (`*` for every agent); for requireApproval, `*`. */
  ruleAgent: string;
  agent: string;
  effect: string;
  tool: string;
  mode: EffectBoundEntry["mode"];
  message: string;
  grantSpan: Span;
  ruleSpan: Span;
}

/**
 * The agents a `forbid` rule applies to: every agent holding its grant (`holding`), every
 * agent (`*`), or the one it names.
 */
export function forbidTargets(
  project: ResolvedProject,
  forbid: { agent?: string; holding?: string },
): string[] {
  const { agent: who, holding } = forbid;
  if (holding !== undefined)
    return [...project.agents.values()]
      .filter((a) => a.grants.some((g) => g.ref === holding))
      .map((a) => a.name);
  if (who === "*") return agentNames(project);
  return who !== undefined && hasAgent(project, who) ? [who] : [];
}

/** Computed once per project by analyseProject (analysis.ts), with the agents' bounds. */
export function findPolicyViolations(
  project: ResolvedProject,
  boundOf: BoundLookup,
): PolicyViolationRecord[] {
  const out: PolicyViolationRecord[] = [];
  for (const p of project.policies) {
    const rule = p.rule;
    if ("forbid" in rule) {
      const { effect } = rule.forbid;
      const holding = rule.forbid.holding;
      const who = rule.forbid.agent ?? `holding ${holding}`;
      for (const agent of forbidTargets(project, rule.forbid)) {
        for (const e of boundOf(agent)) {
          if (!effectReaches(e.effect, effect)) continue;
          out.push({
            code: "TF5006",
            policy: p.policy,
            rule: "forbid",
            ruleAgent: who,
            agent,
            effect,
            tool: e.tool,
            mode: e.mode,
            message: `Policy/${p.policy} forbids \`${effect}\` for ${holding !== undefined ? `every agent holding ${holding}` : who === "*" ? "every agent" : agentAddress(who)}, but ${agentAddress(agent)} reaches it through ${e.tool} (${e.mode})`,
            grantSpan: e.span,
            ruleSpan: p.span,
          });
        }
      }
    } else if ("requireApproval" in rule) {
      const effect = rule.requireApproval.effect;
      for (const agent of agentNames(project)) {
        for (const e of boundOf(agent)) {
          if (!effectReaches(e.effect, effect) || e.mode === "gated") continue;
          out.push({
            code: "TF5007",
            policy: p.policy,
            rule: "requireApproval",
            ruleAgent: "*",
            agent,
            effect,
            tool: e.tool,
            mode: e.mode,
            message: `Policy/${p.policy} requires approval for \`${effect}\`, but ${agentAddress(agent)} reaches it autonomously through ${e.tool}`,
            grantSpan: e.span,
            ruleSpan: p.span,
          });
        }
      }
    }
  }
  return out;
}
