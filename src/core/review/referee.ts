/**
 * The build loop's referee (docs/review-doctrine.md, doctrine 7): a deterministic function from the latest
 * `verdict.json` and the loop's history to exactly one decision. The loop never decides its own
 * termination; this function does, and it enforces what an agent inside the loop would
 * rationalise away: a false green escalates, the same failure twice escalates, iterations and
 * identical retries are capped, and an environmental failure stops and is surfaced, never
 * "fixed" in code.
 */

export type FailureClass = "tactical" | "mechanical" | "strategic" | "environmental";

export type RefereeDecision =
  | "CONTINUE"
  | "RETRY_MECHANICAL"
  | "ESCALATE"
  | "STOP_OK"
  | "STOP_STUCK";

/** One validation pass, as `verdict.json` records it. */
export interface Verdict {
  status: "pass" | "fail";
  failure_class?: FailureClass;
  tests_run: number;
  /** How many of the tests that ran are the plan's new tests. */
  new_tests_run: number;
  reason: string;
  evidence: string;
  /** A stable fingerprint of the failure (failing test ids + error kind), for "same failure twice". */
  failure_signature?: string;
  gates?: {
    gate: string;
    command?: string;
    status: "pass" | "fail" | "not declared";
    code?: number;
  }[];
  new_tests?: { test: string; passed: boolean; ran: boolean; evidence: string }[];
  /** What the failure class was decided from (observed, not said by an agent). */
  failure_evidence?: string;
  /** A content id of the files the pass validated: the same attempt twice has the same id. */
  attempt?: string;
  /** A failing pass: the failing command's output, bounded (what the next pass is shown). */
  output?: string;
}

export interface RefereeLimits {
  /** Build iterations (implement → validate passes) before the loop is stuck. */
  maxIterations: number;
  /** Identical retries allowed for mechanical failures. */
  maxIdenticalRetries: number;
  /** Re-plans (escalations) before the loop is stuck. */
  maxEscalations: number;
}

export const DEFAULT_LIMITS: RefereeLimits = {
  maxIterations: 5,
  maxIdenticalRetries: 2,
  maxEscalations: 2,
};

export interface RefereeState {
  /** Verdicts so far in this build loop, oldest first, not including `verdict`. */
  history: readonly Verdict[];
  /** Mechanical retries already made in a row. */
  identicalRetries: number;
  /** Escalations (re-plans) already made in this run. */
  escalations: number;
}

export interface RefereeRuling {
  decision: RefereeDecision;
  /** Why, in one sentence a human at the gate can check. */
  rule: string;
  /** The class the referee acted on (it may differ from the verdict's, see ENVIRONMENTAL_SIGNS). */
  failure_class?: FailureClass;
}

/**
 * Failures that are about the environment, not the code: an expired credential surfacing as a
 * dead test command is the story doctrine 7 tells. A failure showing these signs is environmental
 * whatever class the validating step gave it, so the loop stops instead of editing code.
 */
export const ENVIRONMENTAL_SIGNS: readonly RegExp[] = [
  /\b(expired|invalid|missing)\s+(credential|token|api key|password|certificate)s?\b/i,
  /\b(credential|token|certificate)s?\s+(has |have )?expired\b/i,
  /\b(401|403)\b.*\b(unauthori[sz]ed|forbidden)\b|\bunauthori[sz]ed\b/i,
  /\bECONNREFUSED\b|\bENOTFOUND\b|\bETIMEDOUT\b|\bEAI_AGAIN\b/,
  /\bno space left on device\b/i,
  /\bcannot connect to the docker daemon\b|\bcontainer name .* is already in use\b/i,
  /\bpermission denied\b.*\b(socket|publickey)\b/i,
];

export function looksEnvironmental(v: Verdict): boolean {
  const text = `${v.reason}\n${v.evidence}`;
  return ENVIRONMENTAL_SIGNS.some((re) => re.test(text));
}

export function referee(
  verdict: Verdict,
  state: RefereeState,
  limits: RefereeLimits = DEFAULT_LIMITS,
): RefereeRuling {
  const iteration = state.history.length + 1;
  if (verdict.status === "pass") {
    if (verdict.new_tests_run <= 0) {
      return state.escalations >= limits.maxEscalations
        ? {
            decision: "STOP_STUCK",
            rule: "false green again: no new test ran, and the re-plan budget is spent",
          }
        : {
            decision: "ESCALATE",
            rule: "false green: the tests passed but none of the plan's new tests ran, so nothing was demonstrated",
          };
    }
    return { decision: "STOP_OK", rule: `green with ${verdict.new_tests_run} new test(s) run` };
  }

  const cls: FailureClass = looksEnvironmental(verdict)
    ? "environmental"
    : (verdict.failure_class ?? "tactical");
  if (cls === "environmental") {
    return {
      decision: "STOP_STUCK",
      rule: "environmental failure: not a defect in the code; stop and surface it to a human instead of changing code",
      failure_class: cls,
    };
  }
  if (iteration >= limits.maxIterations) {
    return {
      decision: "STOP_STUCK",
      rule: `iteration ceiling: ${limits.maxIterations} build iterations without going green`,
      failure_class: cls,
    };
  }
  if (cls === "mechanical") {
    return state.identicalRetries >= limits.maxIdenticalRetries
      ? {
          decision: "STOP_STUCK",
          rule: `identical-retry cap: ${limits.maxIdenticalRetries} mechanical retries already made`,
          failure_class: cls,
        }
      : {
          decision: "RETRY_MECHANICAL",
          rule: "mechanical failure: retry the same attempt unchanged",
          failure_class: cls,
        };
  }
  const previous = state.history.at(-1);
  const sameTwice =
    verdict.failure_signature !== undefined &&
    previous?.status === "fail" &&
    previous.failure_signature === verdict.failure_signature;
  if (sameTwice || cls === "strategic") {
    if (state.escalations >= limits.maxEscalations) {
      return {
        decision: "STOP_STUCK",
        rule: `re-plan budget spent (${limits.maxEscalations} escalations)`,
        failure_class: cls,
      };
    }
    return {
      decision: "ESCALATE",
      rule: sameTwice
        ? "the same failure signature twice: the approach is wrong, not the attempt; re-plan"
        : "strategic failure: the plan is wrong; re-plan and re-approve",
      failure_class: cls,
    };
  }
  return {
    decision: "CONTINUE",
    rule: "tactical failure: the implementation is wrong; try again with a change",
    failure_class: cls,
  };
}
