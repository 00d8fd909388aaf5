/**
 * The outcome of one project on a pull request (or a merge queue entry, or a push): what a
 * reviewer must know first, and whether CI fails. A pure function of the plan, the capability
 * tests, what could not be planned, `fail-on` and the approval; every front door (the Action's
 * comment, check run, commit status and exit) reads this and decides nothing itself.
 *
 * The verdicts, strongest first:
 * - `blocked`: the project does not validate, cannot be planned (a merge conflict), a capability
 *   test fails, or a policy forbids an effect. No approval changes this.
 * - `needs-approval`: authority WIDENED (in any mode) or a guard relaxed (a policy rule or an
 *   `approve` gate gone, a workflow's reach or loop bound raised), or with `fail-on: any-change` anything
 *   changed, and no valid approval names this plan's hash.
 * - `approved`: the same, with a valid approval of exactly this hash.
 * - `no-authority-change`: nothing needs a person (there may be changes that widen nothing).
 */
import type { Diagnostic } from "../diagnostics.ts";
import type { Plan } from "../plan/plan.ts";
import type { CapabilityTestReport } from "../testing/capability-tests.ts";
import { plural } from "../words.ts";

export type FailOn = "forbidden" | "widening" | "any-change";

export type Verdict = "blocked" | "needs-approval" | "approved" | "no-authority-change";

/** A valid approval: who gave it and with which repository role. */
export interface Approval {
  hash: string;
  login: string;
  role: string;
}

export interface OutcomeInput {
  plan?: Plan;
  /** Errors that stop planning (the project at the merge result does not validate). */
  blocking: readonly Diagnostic[];
  tests: CapabilityTestReport;
  /** Files of this project that conflict when the head is merged into the base. */
  conflicts?: readonly string[];
}

export interface ProjectOutcomeVerdict {
  verdict: Verdict;
  /** True when `fail-on` makes CI fail. */
  failing: boolean;
  /** Why it is blocked or failing, one sentence each, most important first. */
  reasons: string[];
  /** True when a valid approval would change the verdict (so the comment shows the command). */
  approvable: boolean;
  approval?: Approval;
  counts: {
    widened: number;
    forbidden: number;
    failedTests: number;
    changes: number;
    errors: number;
  };
}

/**
 * Every effect-bound line a change added, autonomous or gated, plus gated → autonomous moves,
 * plus every guard it relaxed.
 */
export function widenedCount(plan: Plan): number {
  let n = 0;
  for (const d of plan.effect_bounds) n += d.added.length;
  for (const c of plan.capability_delta)
    n += c.mode_changes.filter((m) => m.to === "autonomous").length;
  return n + plan.guards_relaxed.length;
}

export function decideOutcome(
  input: OutcomeInput,
  failOn: FailOn,
  approvals: readonly Approval[] = [],
): ProjectOutcomeVerdict {
  const { plan, tests } = input;
  const counts = {
    widened: plan ? widenedCount(plan) : 0,
    forbidden: plan ? plan.policy_violations.length : 0,
    failedTests: tests.failed,
    changes: plan ? plan.changes.length : 0,
    errors: input.blocking.length,
  };
  const blocked: string[] = [];
  if (input.conflicts && input.conflicts.length > 0)
    blocked.push(
      `the head conflicts with the base in ${plural(input.conflicts.length, "project file")}; resolve the conflict to get a plan`,
    );
  if (!plan && blocked.length === 0)
    blocked.push(
      `the project does not validate (${plural(input.blocking.length, "error")}) at the merge result`,
    );
  if (tests.failed > 0) blocked.push(`${plural(tests.failed, "capability test")} failed`);
  if (plan?.summary.forbidden) {
    const v = plan.policy_violations[0];
    blocked.push(
      `${plural(plan.policy_violations.length, "policy violation")}${v ? `: ${v.message.replace(/`/g, "")}` : ""}`,
    );
  }
  if (blocked.length > 0 || !plan)
    return { verdict: "blocked", failing: true, reasons: blocked, approvable: false, counts };

  const needsApproval =
    plan.summary.widened || (failOn === "any-change" && plan.summary.has_changes);
  if (!needsApproval)
    return {
      verdict: "no-authority-change",
      failing: false,
      reasons: [],
      approvable: false,
      counts,
    };
  const approval = approvals.find((a) => a.hash === plan.hash);
  if (approval)
    return {
      verdict: "approved",
      failing: false,
      reasons: [],
      approvable: false,
      approval,
      counts,
    };
  const reasons: string[] = [];
  let failing = false;
  const guards = plan.guards_relaxed;
  if (guards.length > 0)
    reasons.push(
      `${plural(guards.length, "guard")} relaxed (${guards[0]?.reason.replace(/`/g, "")}${guards.length > 1 ? " …" : ""}) and this plan is not approved`,
    );
  if (plan.authority.autonomous === "WIDENED" || plan.authority.gated === "WIDENED")
    reasons.push("authority WIDENED and this plan is not approved");
  if (reasons.length === 0) reasons.push("the plan has changes and is not approved");
  // A relaxed guard widens what agents may do on their own as surely as an autonomous grant.
  if (failOn === "widening" && (plan.authority.autonomous === "WIDENED" || guards.length > 0))
    failing = true;
  if (failOn === "any-change") failing = true;
  return { verdict: "needs-approval", failing, reasons, approvable: true, counts };
}

/** The one-line headline: the outcome and the counts a reviewer scans first. */
export function outcomeHeadline(o: ProjectOutcomeVerdict): { icon: string; text: string } {
  const c = o.counts;
  const parts: string[] = [];
  if (c.errors > 0) parts.push(plural(c.errors, "error"));
  if (c.forbidden > 0) parts.push(`${c.forbidden} forbidden`);
  if (c.failedTests > 0) parts.push(`${plural(c.failedTests, "failing test")}`);
  if (c.widened > 0) parts.push(`${c.widened} widened`);
  parts.push(plural(c.changes, "resource change"));
  const counts = parts.join(", ");
  switch (o.verdict) {
    case "blocked":
      return { icon: "⛔", text: `blocked (${counts})` };
    case "needs-approval":
      return { icon: "⚠️", text: `needs approval (${counts})` };
    case "approved":
      return {
        icon: "✅",
        text: `approved by @${o.approval?.login} (${o.approval?.role}) (${counts})`,
      };
    default:
      return {
        icon: "✅",
        text: c.changes === 0 ? "no changes" : `no authority change (${counts})`,
      };
  }
}
