/**
 * Plan computation: prior resources (from the state file, a git revision, or nothing) and the
 * current resources → a `Plan`. Compares specs attribute by attribute and, for agents, effect
 * bounds entry by entry, so a one-line grant change surfaces as the authority change it is.
 * Pure and deterministic: the same inputs give the same plan and hash.
 */
import { byCodeUnit } from "../order.ts";
import { sha256 } from "./canonical-hash.ts";
import {
  type AgentAuthority,
  type AttributeChange,
  type AuthorityChange,
  type CapabilityDelta,
  type EffectBoundDelta,
  type GuardChange,
  type GuardKind,
  PLAN_FORMAT_VERSION,
  type Plan,
  type PolicyViolation,
  type ResourceChange,
  type RiskItem,
  type WorkflowSummary,
} from "./plan.ts";
import {
  type BoundEntry,
  type JsonValue,
  type ResourceLocations,
  type ResourceRecord,
  SEVERITY_ORDER,
  type Severity,
} from "./resources.ts";

export interface PlanInput {
  project: string;
  prior: readonly ResourceRecord[];
  priorSource: Plan["prior"];
  current: readonly ResourceRecord[];
  locations: ResourceLocations;
  violations: readonly PolicyViolation[];
  /** Guards gone that no resource shows: a project removed from the head (plan-project.ts). */
  removedGuards?: readonly RiskItem[];
}

type Mode = "autonomous" | "gated";

/** The risk items that are a guard relaxed: each counts as a widening. */
const GUARD_KINDS: ReadonlySet<GuardKind> = new Set<GuardKind>([
  "policy_relaxed",
  "approval_removed",
  "workflow_effects_widened",
  "loop_bound_raised",
  "model_calls_raised",
  "project_removed",
]);

export function computePlan(input: PlanInput): Plan {
  const prior = new Map(input.prior.map((r) => [r.address, r]));
  const current = new Map(input.current.map((r) => [r.address, r]));
  const addresses = [...new Set([...prior.keys(), ...current.keys()])].sort();

  const changes: ResourceChange[] = [];
  const effectBounds: EffectBoundDelta[] = [];
  const capabilityDelta: CapabilityDelta[] = [];
  const agentAuthority: AgentAuthority[] = [];
  const workflows: WorkflowSummary[] = [];
  const risk: RiskItem[] = [];
  const widenedSeverity: Record<Mode, Severity | undefined> = {
    autonomous: undefined,
    gated: undefined,
  };

  for (const address of addresses) {
    const before = prior.get(address);
    const after = current.get(address);
    const kind = (after ?? before)?.kind ?? "Agent";
    const action = before === undefined ? "create" : after === undefined ? "delete" : undefined;
    const attributes: AttributeChange[] = [];
    diffValue("spec", before?.spec, after?.spec, attributes);
    const resourceAction = action ?? (attributes.length > 0 ? "update" : undefined);
    if (resourceAction) changes.push({ address, kind, action: resourceAction, attributes });

    if (kind === "Agent") {
      const delta = agentDelta(address, before, after);
      if (resourceAction && (delta.bound.added.length > 0 || delta.bound.removed.length > 0)) {
        effectBounds.push({ ...delta.bound, action: resourceAction });
      } else if (delta.bound.added.length > 0 || delta.bound.removed.length > 0) {
        // The agent's own spec is unchanged but a tool or policy changed what it reaches.
        effectBounds.push({ ...delta.bound, action: "update" });
      }
      const cap = delta.capability;
      if (cap.added.length + cap.removed.length + cap.mode_changes.length > 0)
        capabilityDelta.push(cap);
      if (delta.authority.autonomous !== "UNCHANGED" || delta.authority.gated !== "UNCHANGED") {
        agentAuthority.push(delta.authority);
      }
      for (const mode of ["autonomous", "gated"] as const) {
        if (delta.authority[mode] !== "WIDENED") continue;
        const sev = delta.widenedSeverity[mode];
        const cur = widenedSeverity[mode];
        if (cur === undefined || SEVERITY_ORDER.indexOf(sev) < SEVERITY_ORDER.indexOf(cur))
          widenedSeverity[mode] = sev;
      }
    }

    if (kind === "Workflow") {
      const b = after?.bounds;
      if (b) {
        workflows.push({
          address,
          action: resourceAction ?? (sameBounds(before?.bounds, b) ? "unchanged" : "update"),
          effects: b.effects,
          loop_limits: b.loop_limits,
          max_iterations: b.max_iterations,
          hitl: b.hitl,
          model_call_bound: b.model_call_bound,
        });
      }
      if (before?.bounds && b) risk.push(...workflowRisk(address, before.bounds, b));
    }

    if (kind === "Policy" && before) risk.push(...policyRisk(address, before, after));
  }

  const overall = (mode: Mode): AuthorityChange =>
    agentAuthority.some((a) => a[mode] === "WIDENED")
      ? "WIDENED"
      : agentAuthority.some((a) => a[mode] === "NARROWED")
        ? "NARROWED"
        : "UNCHANGED";
  const authority = {
    autonomous: overall("autonomous"),
    gated: overall("gated"),
    agents: agentAuthority,
  };
  for (const mode of ["autonomous", "gated"] as const) {
    if (authority[mode] === "WIDENED") {
      risk.push({
        severity: widenedSeverity[mode] ?? (mode === "autonomous" ? "high" : "medium"),
        kind: "authority_widening",
        message: `${mode.toUpperCase()} authority WIDENED.`,
      });
    } else if (authority[mode] === "NARROWED") {
      risk.push({
        severity: "low",
        kind: "authority_narrowing",
        message: `${mode.toUpperCase()} authority NARROWED.`,
      });
    }
  }
  risk.push(...(input.removedGuards ?? []));
  risk.sort((a, b) => SEVERITY_ORDER.indexOf(a.severity) - SEVERITY_ORDER.indexOf(b.severity));
  const guards: GuardChange[] = risk
    .filter((r) => GUARD_KINDS.has(r.kind as GuardKind))
    .map((r) => ({ address: r.address ?? "", kind: r.kind as GuardKind, reason: r.message }))
    .sort((a, b) => byCodeUnit(a.address, b.address));

  const violations = [...input.violations].sort((a, b) =>
    `${a.agent} ${a.tool} ${a.effect} ${a.policy}` < `${b.agent} ${b.tool} ${b.effect} ${b.policy}`
      ? -1
      : 1,
  );
  const summary = {
    add: changes.filter((c) => c.action === "create").length,
    change: changes.filter((c) => c.action === "update").length,
    destroy: changes.filter((c) => c.action === "delete").length,
    widened:
      authority.autonomous === "WIDENED" || authority.gated === "WIDENED" || guards.length > 0,
    forbidden: violations.length > 0,
    has_changes: changes.length > 0 || effectBounds.length > 0,
  };
  const digests = { prior: sha256(input.prior), current: sha256(input.current) };
  const hashed = {
    format_version: PLAN_FORMAT_VERSION,
    project: input.project,
    changes,
    effect_bounds: effectBounds,
    capability_delta: capabilityDelta,
    authority,
    guards_relaxed: guards,
    risk_delta: risk,
    workflows,
    policy_violations: violations,
    summary,
    digests,
  };
  return { ...hashed, prior: input.priorSource, hash: sha256(hashed), locations: input.locations };
}

// ── attribute diff ──────────────────────────────────────────────────────────

function isObject(v: unknown): v is Record<string, JsonValue> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => k in b && sameJson(a[k], b[k]));
  }
  return false;
}

/** Leaf-level differences; arrays diff by index (`spec.tools.2`), objects by key. */
export function diffValue(
  path: string,
  before: JsonValue | undefined,
  after: JsonValue | undefined,
  out: AttributeChange[],
): void {
  if (sameJson(before, after)) return;
  const container = (v: unknown) => Array.isArray(v) || isObject(v);
  const bothArrays = Array.isArray(before) && Array.isArray(after);
  const bothObjects = isObject(before) && isObject(after);
  const oneSided =
    (before === undefined && container(after)) || (after === undefined && container(before));
  const nonEmpty = (v: unknown) =>
    Array.isArray(v) ? v.length > 0 : isObject(v) ? Object.keys(v).length > 0 : false;
  if (bothArrays || bothObjects || (oneSided && nonEmpty(before ?? after))) {
    if (Array.isArray(before ?? after)) {
      const a = (before ?? []) as JsonValue[];
      const b = (after ?? []) as JsonValue[];
      for (let i = 0; i < Math.max(a.length, b.length); i++)
        diffValue(`${path}.${i}`, a[i], b[i], out);
    } else {
      const a = (before ?? {}) as Record<string, JsonValue>;
      const b = (after ?? {}) as Record<string, JsonValue>;
      for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
        diffValue(`${path}.${key}`, a[key], b[key], out);
      }
    }
    return;
  }
  const change: AttributeChange = { path };
  if (before !== undefined) change.before = before;
  if (after !== undefined) change.after = after;
  out.push(change);
}

// ── agents: bounds, capabilities, authority ─────────────────────────────────

const entryKey = (e: BoundEntry) => `${e.effect}\u0000${e.mode}\u0000${e.tool}`;

function grantsOf(r: ResourceRecord | undefined): Map<string, Mode> {
  const out = new Map<string, Mode>();
  const spec = r?.spec;
  const tools = isObject(spec) && Array.isArray(spec.tools) ? spec.tools : [];
  for (const t of tools) {
    if (typeof t !== "string") continue;
    const gated = t.endsWith(" requires approval");
    out.set(gated ? t.slice(0, -" requires approval".length) : t, gated ? "gated" : "autonomous");
  }
  return out;
}

function agentDelta(
  address: string,
  before: ResourceRecord | undefined,
  after: ResourceRecord | undefined,
) {
  const oldBound = before?.effect_bound ?? [];
  const newBound = after?.effect_bound ?? [];
  const oldKeys = new Set(oldBound.map(entryKey));
  const newKeys = new Set(newBound.map(entryKey));
  const added = newBound.filter((e) => !oldKeys.has(entryKey(e)));
  const removed = oldBound.filter((e) => !newKeys.has(entryKey(e)));

  const oldGrants = grantsOf(before);
  const newGrants = grantsOf(after);
  const capability: CapabilityDelta = { address, added: [], removed: [], mode_changes: [] };
  for (const [tool, mode] of newGrants) {
    const was = oldGrants.get(tool);
    if (was === undefined) capability.added.push({ tool, mode });
    else if (was !== mode) capability.mode_changes.push({ tool, from: was, to: mode });
  }
  for (const [tool, mode] of oldGrants)
    if (!newGrants.has(tool)) capability.removed.push({ tool, mode });

  // A grant that only moved between modes counts once, in the direction of the stronger mode:
  // gated → autonomous widens autonomous authority; autonomous → gated narrows it.
  const moved = new Set(capability.mode_changes.map((m) => m.tool));
  const widened = (mode: Mode) =>
    added.some((e) => e.mode === mode && !(mode === "gated" && moved.has(e.tool))) ||
    capability.added.some((c) => c.mode === mode) ||
    (mode === "autonomous" && capability.mode_changes.some((m) => m.to === "autonomous"));
  const narrowed = (mode: Mode) =>
    removed.some((e) => e.mode === mode && !(mode === "gated" && moved.has(e.tool))) ||
    capability.removed.some((c) => c.mode === mode) ||
    (mode === "autonomous" && capability.mode_changes.some((m) => m.from === "autonomous"));
  const change = (mode: Mode): AuthorityChange =>
    widened(mode) ? "WIDENED" : narrowed(mode) ? "NARROWED" : "UNCHANGED";
  const authority: AgentAuthority = {
    address,
    autonomous: change("autonomous"),
    gated: change("gated"),
  };
  const worst = (mode: Mode): Severity => {
    let best: Severity = mode === "autonomous" ? "high" : "medium";
    const relevant = added.filter((e) => e.mode === mode);
    if (relevant.length > 0) {
      best = relevant.reduce<Severity>(
        (acc, e) =>
          SEVERITY_ORDER.indexOf(e.severity) < SEVERITY_ORDER.indexOf(acc) ? e.severity : acc,
        "info",
      );
    }
    return best;
  };
  return {
    bound: { address, action: "update" as const, added, removed },
    capability,
    authority,
    widenedSeverity: { autonomous: worst("autonomous"), gated: worst("gated") },
  };
}

// ── workflows and policies ──────────────────────────────────────────────────

function sameBounds(
  a: ResourceRecord["bounds"],
  b: NonNullable<ResourceRecord["bounds"]>,
): boolean {
  return a !== undefined && sameJson(a as unknown as JsonValue, b as unknown as JsonValue);
}

function workflowRisk(
  address: string,
  before: NonNullable<ResourceRecord["bounds"]>,
  after: NonNullable<ResourceRecord["bounds"]>,
): RiskItem[] {
  const out: RiskItem[] = [];
  const gained = after.effects.filter((e) => !before.effects.includes(e));
  if (gained.length > 0) {
    out.push({
      severity: "high",
      kind: "workflow_effects_widened",
      message: `${address} may now reach ${gained.join(", ")}.`,
      address,
    });
  }
  if (after.max_iterations > before.max_iterations) {
    out.push({
      severity: "medium",
      kind: "loop_bound_raised",
      message: `${address} may now run up to ${after.max_iterations} iterations (was ${before.max_iterations}).`,
      address,
    });
  }
  if (after.model_call_bound > before.model_call_bound) {
    out.push({
      severity: "low",
      kind: "model_calls_raised",
      message: `${address} may now make up to ${after.model_call_bound} model calls (was ${before.model_call_bound}).`,
      address,
    });
  }
  const lostGates = before.hitl.filter((h) => !after.hitl.includes(h));
  if (lostGates.length > 0) {
    out.push({
      severity: "high",
      kind: "approval_removed",
      message: `${address} no longer asks a human for: ${lostGates.join("; ")}.`,
      address,
    });
  }
  return out;
}

function policyRisk(
  address: string,
  before: ResourceRecord,
  after: ResourceRecord | undefined,
): RiskItem[] {
  const rules = (r: ResourceRecord | undefined): JsonValue[] => {
    const spec = r?.spec;
    return isObject(spec) && Array.isArray(spec.rules) ? spec.rules : [];
  };
  const now = rules(after);
  // A rule not kept exactly is taken as loosened, unless it is proven tighter: a maxLoopLimit
  // that only went down.
  const limitOf = (r: JsonValue) =>
    isObject(r) && typeof r.maxLoopLimit === "number" ? r.maxLoopLimit : undefined;
  const kept = (r: JsonValue) => {
    const limit = limitOf(r);
    return now.some(
      (n) => sameJson(n, r) || (limit !== undefined && (limitOf(n) ?? Infinity) <= limit),
    );
  };
  const lost = rules(before).filter((r) => !kept(r));
  return lost.map((r) => ({
    severity: "high" as const,
    kind: "policy_relaxed",
    message: `${address} ${after ? "no longer has" : "is removed, with"} the rule ${describeRule(r)}.`,
    address,
  }));
}

function describeRule(rule: JsonValue): string {
  if (!isObject(rule)) return JSON.stringify(rule);
  const [key, value] = Object.entries(rule)[0] ?? ["?", null];
  if (isObject(value))
    return `${key} { ${Object.entries(value)
      .map(([k, v]) => `${k}: ${String(v)}`)
      .join(", ")} }`;
  return `${key}: ${String(value)}`;
}
