/**
 * Effect bounds: which (effect, mode, tool operation) each agent may reach, and which effects
 * each workflow may reach through the agents and sub-workflows it calls.
 *
 * A workflow's effect set is a union over its body, independent of loop counts: effects are
 * never multiplied by iterations (docs/language.md, "The effect bound"). Pure.
 */
import type { Span } from "../diagnostics.ts";
import type { GrantMode, ResolvedAgent, ResolvedProject } from "../model/project.ts";
import { byCodeUnit } from "../order.ts";

/** One reachable (effect, mode, operation) of an agent. */
export interface EffectBoundEntry {
  agent: string;
  effect: string;
  mode: GrantMode;
  /** `tool.<tool>.<operation>` */
  tool: string;
  span: Span;
}

/**
 * An agent's bound, sorted by effect, operation and mode. Computed once per project by
 * analyseProject (analysis.ts), which every consumer reads: there is no cache here.
 */
export function computeEffectBound(agent: ResolvedAgent): EffectBoundEntry[] {
  const out: EffectBoundEntry[] = [];
  for (const g of agent.grants) {
    for (const effect of g.effects) {
      out.push({ agent: agent.name, effect, mode: g.mode, tool: g.ref, span: g.span });
    }
  }
  return out.sort(
    (a, b) =>
      byCodeUnit(a.effect, b.effect) || byCodeUnit(a.tool, b.tool) || byCodeUnit(a.mode, b.mode),
  );
}

/** Why a workflow reaches an effect: the first agent grant found, and the call chain to it. */
export interface EffectWitness {
  effect: string;
  agent: string;
  tool: string;
  mode: GrantMode;
  grantSpan: Span;
  /** Workflows from the one analysed down to the one calling the agent. */
  via: string[];
}

/** Each agent's effect bound by name, from bounds already computed ([] for an unknown name). */
export type BoundLookup = (agent: string) => readonly EffectBoundEntry[];

export function boundLookup(bounds: ReadonlyMap<string, readonly EffectBoundEntry[]>): BoundLookup {
  return (name) => bounds.get(name) ?? [];
}

/**
 * Effects reachable from each workflow, transitively, with a witness per effect. Each workflow
 * is explored on its own (breadth-first over the workflows it can reach), so a call cycle can
 * never leave a partial answer behind for another workflow.
 */
export function computeWorkflowEffects(
  project: ResolvedProject,
  boundOf: BoundLookup,
): Map<string, Map<string, EffectWitness>> {
  const out = new Map<string, Map<string, EffectWitness>>();
  for (const name of project.workflows.keys()) {
    const effects = new Map<string, EffectWitness>();
    const chain = new Map<string, string[]>([[name, [name]]]);
    const queue = [name];
    // An agent met again adds nothing: its entries were all offered the first time, and an
    // effect, once found, keeps its first witness. Skipping it was ~10 ms at 2,000 agents.
    const agentsSeen = new Set<string>();
    for (let i = 0; i < queue.length; i++) {
      const current = queue[i] as string;
      const via = chain.get(current) as string[];
      for (const call of project.workflows.get(current)?.calls ?? []) {
        if (call.kind === "agent") {
          if (agentsSeen.has(call.callee)) continue;
          agentsSeen.add(call.callee);
          for (const e of boundOf(call.callee)) {
            if (!effects.has(e.effect)) {
              effects.set(e.effect, {
                effect: e.effect,
                agent: e.agent,
                tool: e.tool,
                mode: e.mode,
                grantSpan: e.span,
                via,
              });
            }
          }
        } else if (project.workflows.has(call.callee) && !chain.has(call.callee)) {
          chain.set(call.callee, [...via, call.callee]);
          queue.push(call.callee);
        }
      }
    }
    out.set(name, effects);
  }
  return out;
}

/** Cycles in the workflow call graph, each reported once at the call that closes it. */
export function findWorkflowCycles(project: ResolvedProject): { cycle: string[]; span: Span }[] {
  const state = new Map<string, "active" | "done">();
  const stack: string[] = [];
  const cycles: { cycle: string[]; span: Span }[] = [];
  const dfs = (name: string) => {
    state.set(name, "active");
    stack.push(name);
    const wf = project.workflows.get(name);
    for (const call of wf?.calls ?? []) {
      if (call.kind !== "workflow" || !project.workflows.has(call.callee)) continue;
      const s = state.get(call.callee);
      if (s === "active") {
        const from = stack.indexOf(call.callee);
        cycles.push({ cycle: [...stack.slice(from), call.callee], span: call.span });
      } else if (s === undefined) dfs(call.callee);
    }
    stack.pop();
    state.set(name, "done");
  };
  for (const name of [...project.workflows.keys()].sort()) if (!state.has(name)) dfs(name);
  return cycles;
}
