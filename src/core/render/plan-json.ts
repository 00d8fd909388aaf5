/**
 * The plan's JSON form (`terfyn plan --json`): the plan object itself, versioned by
 * `format_version` and documented in docs/plan-json.md. Key order is fixed for readable diffs.
 */
import type { Plan } from "../plan/plan.ts";

export function planToJson(plan: Plan): Plan {
  return {
    format_version: plan.format_version,
    project: plan.project,
    path: plan.path,
    repository: plan.repository,
    hash: plan.hash,
    summary: plan.summary,
    prior: plan.prior,
    changes: plan.changes,
    effect_bounds: plan.effect_bounds,
    capability_delta: plan.capability_delta,
    authority: plan.authority,
    guards_relaxed: plan.guards_relaxed,
    risk_delta: plan.risk_delta,
    workflows: plan.workflows,
    policy_violations: plan.policy_violations,
    ...(plan.hosts !== undefined ? { hosts: plan.hosts } : {}),
    digests: plan.digests,
    locations: plan.locations,
  };
}
