/**
 * From a validated project and a prior resource set to a plan. The one place that decides
 * whether a project can be planned: structural errors stop it; policy violations do not (the
 * plan shows them and fails), so reviewers see what the forbidden change would do.
 */
import type { Diagnostic } from "../diagnostics.ts";
import type { ValidationResult } from "../validate.ts";
import { computePlan } from "./compute-plan.ts";
import type { Plan, PlanIdentity } from "./plan.ts";
import type { ProgramDigests } from "./programs.ts";
import { projectResources, type ResourceRecord } from "./resources.ts";

/** Diagnostics a plan is shown with (the plan's own violations) rather than stopped by. */
const PLANNABLE_CODES = new Set(["TF5006", "TF5007"]);

export type PlanProjectResult =
  | { ok: true; plan: Plan; resources: ResourceRecord[]; blocking: [] }
  | { ok: false; blocking: Diagnostic[] };

export function planProject(
  current: ValidationResult,
  prior: { resources: readonly ResourceRecord[]; source: Plan["prior"] },
  /** Where the project is (its path, and its repository when known): hashed. */
  identity: PlanIdentity,
  /** The digests of the repository files its command tools run (programs.ts). */
  programs?: ProgramDigests,
): PlanProjectResult {
  const blocking = current.diagnostics.filter(
    (d) => d.severity === "error" && !PLANNABLE_CODES.has(d.code),
  );
  if (blocking.length > 0) return { ok: false, blocking };
  const { resources, locations } = projectResources(current, programs);
  const violations = current.analysis.violations.map((v) => ({
    code: v.code,
    policy: v.policy,
    rule: v.rule,
    agent: v.agent,
    effect: v.effect,
    tool: v.tool,
    message: v.message,
  }));
  const plan = computePlan({
    project: current.project.settings.name,
    path: identity.path,
    repository: identity.repository ?? null,
    prior: prior.resources,
    priorSource: prior.source,
    current: resources,
    locations,
    violations,
  });
  return { ok: true, plan, resources, blocking: [] };
}

/**
 * The plan of a project the head no longer has where input `project` selects it (deleted, or
 * moved out of the selection): every resource of the base deleted, and the project's removal a
 * relaxed guard (`project_removed`), so it counts as WIDENED: the guards it declared no longer
 * bound anything. An approval of this plan's hash approves the removal.
 */
export function planRemovedProject(
  prior: { name: string; resources: readonly ResourceRecord[]; source: Plan["prior"] },
  reason: string,
  /** Where the project was. */
  identity: PlanIdentity,
): Plan {
  return computePlan({
    project: prior.name,
    path: identity.path,
    repository: identity.repository ?? null,
    prior: prior.resources,
    priorSource: prior.source,
    current: [],
    locations: { resources: {}, grants: {} },
    violations: [],
    removedGuards: [
      {
        severity: "high",
        kind: "project_removed",
        message: reason,
        address: `Project/${prior.name}`,
      },
    ],
  });
}
