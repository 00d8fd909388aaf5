/**
 * The plan: what applying the current configuration would change, and above all what authority
 * it gives or takes away. Pure data with a versioned JSON form (`format_version`); every
 * renderer (text, JSON, Markdown, annotations, SARIF) reads this object and nothing else.
 */
import type { HostChangeJson } from "../hosts/host-plan.ts";
import type {
  BoundEntry,
  JsonValue,
  ResourceKind,
  ResourceLocations,
  Severity,
  SourceLocation,
} from "./resources.ts";

export const PLAN_FORMAT_VERSION = "1";

export type ChangeAction = "create" | "update" | "delete";

/** One attribute that differs: `spec.tools.2`, with `before`/`after` absent when missing. */
export interface AttributeChange {
  path: string;
  before?: JsonValue;
  after?: JsonValue;
}

export interface ResourceChange {
  address: string;
  kind: ResourceKind;
  action: ChangeAction;
  attributes: AttributeChange[];
}

/** The bound lines a change added to (or took from) one agent. */
export interface EffectBoundDelta {
  address: string;
  action: ChangeAction;
  added: BoundEntry[];
  removed: BoundEntry[];
}

export interface CapabilityDelta {
  address: string;
  added: { tool: string; mode: "autonomous" | "gated" }[];
  removed: { tool: string; mode: "autonomous" | "gated" }[];
  mode_changes: { tool: string; from: "autonomous" | "gated"; to: "autonomous" | "gated" }[];
}

export type AuthorityChange = "WIDENED" | "NARROWED" | "UNCHANGED";

export interface AgentAuthority {
  address: string;
  autonomous: AuthorityChange;
  gated: AuthorityChange;
}

export interface RiskItem {
  severity: Severity;
  kind: string;
  message: string;
  /** The resource the item is about, when it is about one. */
  address?: string;
}

/**
 * A guard the change relaxed: a policy rule gone (or changed: a rule not kept exactly is taken
 * as loosened), an `approve` gate gone, a workflow that may now reach more effects, run more
 * iterations or make more model calls, a project removed (deleted, or moved where input
 * `project` does not select it: every guard it declared is gone). Each one widens what agents
 * may do as surely as a new grant, so each counts as WIDENED.
 */
export interface GuardChange {
  address: string;
  kind: GuardKind;
  /** Why it is a widening, one sentence. */
  reason: string;
}

export type GuardKind =
  | "policy_relaxed"
  | "risk_lowered"
  | "approval_removed"
  | "workflow_effects_widened"
  | "loop_bound_raised"
  | "model_calls_raised"
  | "model_tokens_raised"
  | "reach_changed"
  | "test_relaxed"
  | "project_removed"
  | "model_changed"
  | "provider_changed"
  | "calls_added";

export interface WorkflowSummary {
  address: string;
  action: ChangeAction | "unchanged";
  effects: string[];
  loop_limits: number[];
  max_iterations: number;
  hitl: string[];
  model_call_bound: number;
}

/** A policy rule the configuration breaks (forbidden effect, missing approval). */
export interface PolicyViolation {
  code: string;
  policy: string;
  rule: "forbid" | "requireApproval";
  agent: string;
  effect: string;
  tool: string;
  message: string;
}

/** A host agent's changes in a plan (core/hosts): `Host/claude-code`, its files, each change. */
export interface HostPlanSection {
  /** The host agent's address, `Host/claude-code`. */
  agent: string;
  files: string[];
  changes: HostChangeJson[];
}

export interface Plan {
  format_version: string;
  project: string;
  /**
   * Where the project is: its directory relative to the repository's root (`/`-separated, "."
   * for the root). Hashed, so an approval of one project never covers another with the same
   * `metadata.name`.
   */
  path: string;
  /**
   * The repository the project lives in, as `host/owner/name` in lower case
   * (`github.com/acme/agents`), or null when it is not known (a checkout without a hosted
   * origin). Hashed, so an approval given in one repository never covers another's project.
   */
  repository: string | null;
  /** What the plan compares against. Not part of the hash. */
  prior: { source: "none" | "state" | "git"; ref?: string; commit?: string };
  changes: ResourceChange[];
  effect_bounds: EffectBoundDelta[];
  capability_delta: CapabilityDelta[];
  authority: { autonomous: AuthorityChange; gated: AuthorityChange; agents: AgentAuthority[] };
  /** Every guard the change relaxed; any one makes `summary.widened` true. */
  guards_relaxed: GuardChange[];
  risk_delta: RiskItem[];
  workflows: WorkflowSummary[];
  policy_violations: PolicyViolation[];
  /**
   * Each host agent whose configuration changed (present only when the project has one on
   * either side): every change of a rule or key with its direction, decided by containment.
   */
  hosts?: HostPlanSection[];
  summary: {
    add: number;
    change: number;
    destroy: number;
    /** An agent's authority WIDENED in any mode, or a guard was relaxed. */
    widened: boolean;
    forbidden: boolean;
    has_changes: boolean;
  };
  /** sha256 of the canonical JSON of the configuration both sides resolve to. */
  digests: { prior: string; current: string };
  /** `sha256:` over the canonical JSON of everything above except `prior`. */
  hash: string;
  /** Where the current resources and grants are declared. Not part of the hash. */
  locations: ResourceLocations;
}

export type { BoundEntry, SourceLocation };

/** Where a plan's project is: what its hash binds besides the content. */
export interface PlanIdentity {
  /** The project's directory relative to the repository root ("." for the root). */
  path: string;
  /** `host/owner/name` in lower case; absent or null when not known. */
  repository?: string | null;
}
