/**
 * Static bounds of each workflow: its effect set, loop limits, human-approval points and an
 * upper bound on model calls per run (enclosing loop limits × agent calls × the agent's
 * `maxTurns`, through sub-workflows). Effects are a union, never multiplied by iterations.
 * Pure; assumes a project without recursion (validate reports TF5005 first).
 */
import type { ResolvedProject } from "../model/project.ts";
import type { EffectWitness } from "./effect-bound.ts";

export interface HitlPoint {
  /** `approve` statement, or a call to an agent holding a gated grant. */
  kind: "approve" | "gated-grant";
  /** The approve statement's label, or `Agent/X tool.t.op`. */
  detail: string;
  file: string;
  line: number;
}

export interface WorkflowBounds {
  workflow: string;
  effects: string[];
  /** The limits of the workflow's own loops, in source order. */
  loopLimits: number[];
  /** Most times any one loop body can run in one run: nested limits multiply, sub-workflows count. */
  maxIterations: number;
  hitl: HitlPoint[];
  /** Upper bound on model turns in one run, counting sub-workflows. */
  modelCallBound: number;
}

export function computeWorkflowBounds(
  project: ResolvedProject,
  /** Each workflow's reachable effects (computeWorkflowEffects). */
  effects: ReadonlyMap<string, ReadonlyMap<string, EffectWitness>>,
): Map<string, WorkflowBounds> {
  const callBound = new Map<string, number>();
  const visiting = new Set<string>();
  const bound = (name: string): number => {
    const known = callBound.get(name);
    if (known !== undefined) return known;
    const wf = project.workflows.get(name);
    if (!wf || visiting.has(name)) return 0;
    visiting.add(name);
    let total = 0;
    for (const call of wf.calls) {
      const times = product(call.loopLimits);
      if (call.kind === "agent") total += times * (project.agents.get(call.callee)?.maxTurns ?? 0);
      else total += times * bound(call.callee);
    }
    visiting.delete(name);
    callBound.set(name, total);
    return total;
  };

  const iterations = new Map<string, number>();
  const maxIter = (name: string): number => {
    const known = iterations.get(name);
    if (known !== undefined) return known;
    const wf = project.workflows.get(name);
    if (!wf || visiting.has(name)) return 0;
    visiting.add(name);
    let most = 0;
    for (const loop of wf.loops) most = Math.max(most, product(loop.enclosingLimits) * loop.limit);
    for (const call of wf.calls) {
      if (call.kind === "workflow")
        most = Math.max(most, product(call.loopLimits) * maxIter(call.callee));
    }
    visiting.delete(name);
    iterations.set(name, most);
    return most;
  };

  const out = new Map<string, WorkflowBounds>();
  for (const wf of [...project.workflows.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const hitl: HitlPoint[] = [];
    for (const a of wf.approvals) {
      hitl.push({
        kind: "approve",
        detail: a.label ?? "approve",
        file: a.span.file,
        line: a.span.line,
      });
    }
    const seen = new Set<string>();
    for (const call of wf.calls) {
      if (call.kind !== "agent") continue;
      for (const g of project.agents.get(call.callee)?.grants ?? []) {
        const key = `Agent/${call.callee} ${g.ref}`;
        if (g.mode !== "gated" || seen.has(key)) continue;
        seen.add(key);
        hitl.push({ kind: "gated-grant", detail: key, file: g.span.file, line: g.span.line });
      }
    }
    out.set(wf.name, {
      workflow: wf.name,
      effects: [...(effects.get(wf.name)?.keys() ?? [])].sort(),
      loopLimits: wf.loops.map((l) => l.limit),
      maxIterations: maxIter(wf.name),
      hitl,
      modelCallBound: bound(wf.name),
    });
  }
  return out;
}

function product(limits: readonly number[]): number {
  return limits.reduce((a, b) => a * b, 1);
}
