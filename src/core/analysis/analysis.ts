/**
 * What a project's authority analysis computes, once per project, and hands on explicitly:
 * each agent's effect bound, each workflow's reachable effects and static bounds, and the
 * policy violations. validateProject computes it and returns it on its result; the checks, the
 * capability tests and the plan's resource records read it from there (no module-level cache
 * holds it). Pure.
 */
import type { ResolvedProject } from "../model/project.ts";
import {
  boundLookup,
  computeEffectBound,
  computeWorkflowEffects,
  type EffectBoundEntry,
  type EffectWitness,
} from "./effect-bound.ts";
import { findPolicyViolations, type PolicyViolationRecord } from "./policy-violations.ts";
import { computeWorkflowBounds, type WorkflowBounds } from "./workflow-bounds.ts";

export interface ProjectAnalysis {
  /** Each agent's effect bound, by agent name, sorted by effect, operation and mode. */
  bounds: ReadonlyMap<string, readonly EffectBoundEntry[]>;
  /** Each workflow's reachable effects, transitively, with a witness per effect. */
  workflowEffects: ReadonlyMap<string, ReadonlyMap<string, EffectWitness>>;
  /** Each workflow's static bounds (effects, loops, approvals, model calls). */
  workflowBounds: ReadonlyMap<string, WorkflowBounds>;
  violations: readonly PolicyViolationRecord[];
}

/** A project with its analysis: what validateProject returns and what the plan reads. */
export interface AnalysedProject {
  project: ResolvedProject;
  analysis: ProjectAnalysis;
}

export function analyseProject(project: ResolvedProject): ProjectAnalysis {
  const bounds = new Map<string, readonly EffectBoundEntry[]>();
  for (const [name, agent] of project.agents) bounds.set(name, computeEffectBound(agent));
  for (const [name, host] of project.hostAgents ?? []) bounds.set(name, host.bound);
  const boundOf = boundLookup(bounds);
  const workflowEffects = computeWorkflowEffects(project, boundOf);
  return {
    bounds,
    workflowEffects,
    workflowBounds: computeWorkflowBounds(project, workflowEffects),
    violations: findPolicyViolations(project, boundOf),
  };
}
