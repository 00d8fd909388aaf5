/**
 * Plan computation: prior resources (from the state file, a git revision, or nothing) and the
 * current resources → a `Plan`. Compares specs attribute by attribute and, for agents, effect
 * bounds entry by entry, so a one-line grant change surfaces as the authority change it is.
 * Pure and deterministic: the same inputs give the same plan and hash.
 */

import { type HostChangeJson, hostChangeJson, hostChangeMode } from "../hosts/host-plan.ts";
import { planHost } from "../hosts/hosts.ts";
import { DEFAULT_MAX_TOKENS } from "../model/resolve-project.ts";
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
  type HostPlanSection,
  PLAN_FORMAT_VERSION,
  type Plan,
  type PolicyViolation,
  type ResourceChange,
  type RiskItem,
  type WorkflowSummary,
} from "./plan.ts";
import {
  type BoundEntry,
  defaultSeverity,
  type JsonValue,
  type ResourceLocations,
  type ResourceRecord,
  SEVERITY_ORDER,
  type Severity,
} from "./resources.ts";

export interface PlanInput {
  project: string;
  /** The project's directory relative to the repository root ("." for the root). */
  path: string;
  /** `host/owner/name`, or null when not known. */
  repository?: string | null;
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
  "risk_lowered",
  "approval_removed",
  "workflow_effects_widened",
  "loop_bound_raised",
  "model_calls_raised",
  "model_tokens_raised",
  "reach_changed",
  "test_relaxed",
  "project_removed",
  "model_changed",
  "provider_changed",
  "calls_added",
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
  const hosts: HostPlanSection[] = [];
  let hasHost = false;
  const widenedSeverity: Record<Mode, Severity | undefined> = {
    autonomous: undefined,
    gated: undefined,
  };
  /** An agent's authority joins the plan's; a widened mode raises that mode's severity. */
  const noteAuthority = (a: AgentAuthority, severity: (mode: Mode) => Severity) => {
    if (a.autonomous !== "UNCHANGED" || a.gated !== "UNCHANGED") agentAuthority.push(a);
    for (const mode of ["autonomous", "gated"] as const) {
      if (a[mode] !== "WIDENED") continue;
      const sev = severity(mode);
      const cur = widenedSeverity[mode];
      if (cur === undefined || SEVERITY_ORDER.indexOf(sev) < SEVERITY_ORDER.indexOf(cur))
        widenedSeverity[mode] = sev;
    }
  };

  // The severity of the change's own lines comes from the base's risk rules when there is a
  // base: a pull request cannot grade its own widening low by adding a `risk` rule.
  const judge = input.priorSource.source === "none" ? undefined : riskLevels(input.prior);
  // The operations some agent of the head may reach: a change to one of them changes authority.
  const reached = new Set<string>();
  for (const r of input.current) for (const e of r.effect_bound ?? []) reached.add(e.tool);

  for (const address of addresses) {
    const before = prior.get(address);
    const after = current.get(address);
    const kind = (after ?? before)?.kind ?? "Agent";
    if (kind === "Host") hasHost = true;
    const action = before === undefined ? "create" : after === undefined ? "delete" : undefined;
    const attributes: AttributeChange[] = [];
    diffValue("spec", before?.spec, after?.spec, attributes);
    const resourceAction = action ?? (attributes.length > 0 ? "update" : undefined);
    if (resourceAction) changes.push({ address, kind, action: resourceAction, attributes });

    if (kind === "Agent") {
      const delta = agentDelta(address, before, after, judge);
      if (resourceAction && (delta.bound.added.length > 0 || delta.bound.removed.length > 0)) {
        effectBounds.push({ ...delta.bound, action: resourceAction });
      } else if (delta.bound.added.length > 0 || delta.bound.removed.length > 0) {
        // The agent's own spec is unchanged but a tool or policy changed what it reaches.
        effectBounds.push({ ...delta.bound, action: "update" });
      }
      const cap = delta.capability;
      if (cap.added.length + cap.removed.length + cap.mode_changes.length > 0)
        capabilityDelta.push(cap);
      noteAuthority(delta.authority, (mode) => delta.widenedSeverity[mode]);
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
      if (before && after) risk.push(...callsRisk(address, before, after));
    }

    if (kind === "Host") {
      const section = hostSection(address, before, after);
      if (section.changes.length > 0) hosts.push(section);
      noteAuthority(hostAuthority(address, section.changes), defaultSeverity);
    }

    if (kind === "Agent" && before && after) risk.push(...agentRisk(address, before, after));
    if (kind === "Policy") risk.push(...policyRisk(address, before, after));
    if (kind === "Tool" && before && after) risk.push(...toolRisk(address, before, after, reached));
    if (kind === "CapabilityTest" && before) risk.push(...testRisk(address, before, after));
    if (kind === "Provider" && resourceAction) risk.push(providerRisk(address, before, after));
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
        severity: widenedSeverity[mode] ?? defaultSeverity(mode),
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
    path: input.path,
    repository: input.repository ?? null,
    changes,
    effect_bounds: effectBounds,
    capability_delta: capabilityDelta,
    authority,
    guards_relaxed: guards,
    risk_delta: risk,
    workflows,
    policy_violations: violations,
    // Only for a project with a host configuration on either side: every other plan (and its
    // hash) is as it was before hosts were planned.
    ...(hasHost ? { hosts } : {}),
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
  judge: ReadonlyMap<string, Severity> | undefined,
) {
  const oldBound = before?.effect_bound ?? [];
  const newBound = (after?.effect_bound ?? []).map((e) =>
    judge ? { ...e, severity: judge.get(e.effect) ?? defaultSeverity(e.mode) } : e,
  );
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
    let best: Severity = defaultSeverity(mode);
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

/**
 * Which agents and workflows a workflow calls is a guard: a callee it did not call before runs
 * with that callee's grants inside this workflow's runs, even when the effect set is the same
 * (another operation, host or program reaching the same effect). Only a callee dropped is
 * proven tighter.
 */
function callsRisk(address: string, before: ResourceRecord, after: ResourceRecord): RiskItem[] {
  const calls = (r: ResourceRecord): JsonValue[] =>
    isObject(r.spec) && Array.isArray(r.spec.calls) ? r.spec.calls : [];
  const was = calls(before);
  const added = calls(after).filter((c) => !was.some((w) => sameJson(w, c)));
  if (added.length === 0) return [];
  return [
    {
      severity: "high",
      kind: "calls_added",
      message: `${address} now calls ${added.map((c) => String(c)).join(", ")} (it did not before): each runs with its own grants in this workflow's runs.`,
      address,
    },
  ];
}

/**
 * A provider block created, changed or removed: where the agents on that provider send their
 * prompts, tool results and the repository's text, and which key they use. No change to it is
 * proven tighter (another base URL is another recipient; a block removed falls back to
 * defaults the base did not choose), so every change is a widening, shown in full.
 */
function providerRisk(
  address: string,
  before: ResourceRecord | undefined,
  after: ResourceRecord | undefined,
): RiskItem {
  const settings = (r: ResourceRecord | undefined) =>
    isObject(r?.spec) && isObject(r.spec.settings) ? r.spec.settings : undefined;
  return {
    severity: "high",
    kind: "provider_changed",
    message: `${address} settings: ${showValue(settings(before))} -> ${showValue(settings(after))}: the agents on this provider send their prompts, tool results and the text they read as these settings say.`,
    address,
  };
}

/**
 * An agent's settings that bound it besides its grants: its model (which provider its prompts,
 * tool results and the repository's text go to) and its `maxTurns` (model calls per
 * invocation, wherever it is called). Another model, or more turns, is a widening.
 */
function agentRisk(address: string, before: ResourceRecord, after: ResourceRecord): RiskItem[] {
  const b = isObject(before.spec) ? before.spec : {};
  const a = isObject(after.spec) ? after.spec : {};
  const out: RiskItem[] = [];
  if (!sameJson(b.model, a.model))
    out.push({
      severity: "high",
      kind: "model_changed",
      message: `${address} now runs on ${showValue(a.model)} (was ${showValue(b.model)}): its prompts, tool results and the text it reads go to that provider.`,
      address,
    });
  if (typeof a.maxTurns === "number" && typeof b.maxTurns === "number" && a.maxTurns > b.maxTurns)
    out.push({
      severity: "low",
      kind: "model_calls_raised",
      message: `${address} may now take up to ${a.maxTurns} turns per call (was ${b.maxTurns}).`,
      address,
    });
  // Unsaid is the default: a spec without maxTokens is DEFAULT_MAX_TOKENS.
  const tokens = (s: Record<string, unknown>) =>
    typeof s.maxTokens === "number" ? s.maxTokens : DEFAULT_MAX_TOKENS;
  if (tokens(a) > tokens(b))
    out.push({
      severity: "low",
      kind: "model_tokens_raised",
      message: `${address} may now answer with up to ${tokens(a)} tokens (was ${tokens(b)}).`,
      address,
    });
  return out;
}

/** Effect → the most severe `risk` level the records' policies give it. */
function riskLevels(records: readonly ResourceRecord[]): Map<string, Severity> {
  const out = new Map<string, Severity>();
  for (const r of records) {
    if (r.kind !== "Policy" || !isObject(r.spec) || !Array.isArray(r.spec.rules)) continue;
    for (const rule of r.spec.rules) {
      const risk = isObject(rule) && isObject(rule.risk) ? rule.risk : undefined;
      if (!risk || typeof risk.effect !== "string" || typeof risk.level !== "string") continue;
      const level = risk.level as Severity;
      const cur = out.get(risk.effect);
      if (cur === undefined || SEVERITY_ORDER.indexOf(level) < SEVERITY_ORDER.indexOf(cur))
        out.set(risk.effect, level);
    }
  }
  return out;
}

/**
 * A Tool's change to an operation some agent may reach: anything but fewer effects is taken as
 * a widening of that reach (another host, path, method, argv, environment name, header, input
 * schema, timeout, output cap), and shown before → after in full. Operations nobody reaches
 * change nothing an agent may do; a grant of one later shows in that agent's effect bound.
 */
function toolRisk(
  address: string,
  before: ResourceRecord,
  after: ResourceRecord,
  reached: ReadonlySet<string>,
): RiskItem[] {
  const name = address.slice("Tool/".length);
  const ops = (r: ResourceRecord): Record<string, JsonValue> =>
    isObject(r.spec) && isObject(r.spec.operations) ? r.spec.operations : {};
  const was = ops(before);
  const now = ops(after);
  const reachedOps = Object.keys(now).filter((op) => reached.has(`tool.${name}.${op}`));
  if (reachedOps.length === 0) return [];
  const out: RiskItem[] = [];
  const item = (what: string, b: JsonValue | undefined, a: JsonValue | undefined) =>
    out.push({
      severity: "high",
      kind: "reach_changed",
      message: `${address} ${what}: ${showValue(b)} -> ${showValue(a)}.`,
      address,
    });
  for (const op of reachedOps.sort()) {
    const b = was[op];
    const a = now[op];
    if (!isObject(a)) continue;
    if (!isObject(b)) {
      item(`operation ${op} (reached by a grant)`, undefined, a);
      continue;
    }
    for (const key of [...new Set([...Object.keys(b), ...Object.keys(a)])].sort()) {
      if (sameJson(b[key], a[key])) continue;
      if (key === "effects" && isSubset(a[key], b[key])) continue;
      if ((key === "timeoutMs" || key === "idempotent") && isTighter(key, b[key], a[key])) continue;
      item(`operation ${op} ${key}`, b[key], a[key]);
    }
  }
  const settings = (r: ResourceRecord) => {
    const spec = isObject(r.spec) ? r.spec : {};
    const { operations: _ops, ...rest } = spec;
    return rest as Record<string, JsonValue>;
  };
  const sb = settings(before);
  const sa = settings(after);
  // The environment allowlist is a set: only a name the base did not pass widens it.
  const envOf = (v: Record<string, JsonValue>) =>
    isObject(v.command) && Array.isArray(v.command.env) ? v.command.env : [];
  const newNames = envOf(sa).filter((n) => !envOf(sb).some((m) => sameJson(m, n)));
  if (newNames.length > 0) item("command.env", envOf(sb), envOf(sa));
  const changes: AttributeChange[] = [];
  for (const key of [...new Set([...Object.keys(sb), ...Object.keys(sa)])].sort())
    diffValue(key, sb[key], sa[key], changes);
  for (const c of changes) {
    if (c.path.startsWith("command.env.")) continue;
    // Proven tighter: a header no longer sent, a smaller cap.
    if (c.path.startsWith("http.headers.") && c.after === undefined) continue;
    if (/(maxOutputBytes|maxResponseBytes)$/.test(c.path) && isTighter("cap", c.before, c.after))
      continue;
    item(c.path, c.before, c.after);
  }
  return out;
}

function isSubset(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  return Array.isArray(a) && Array.isArray(b) && a.every((x) => b.some((y) => sameJson(x, y)));
}

/** A smaller timeout or cap, or an operation that became idempotent. */
function isTighter(key: string, before: JsonValue | undefined, after: JsonValue | undefined) {
  if (key === "idempotent") return before === false && after === true;
  return typeof before === "number" && typeof after === "number" && after <= before;
}

/** A value in full, on one line: never shortened, so two different reaches never look alike. */
function showValue(v: JsonValue | undefined): string {
  return v === undefined ? "(none)" : JSON.stringify(v);
}

/**
 * A capability test's assertions are guards: one not kept exactly (deleted, its test deleted
 * or excluded, or changed) is relaxed, unless it is proven tighter: a `maxIterations` limit
 * that only went down.
 */
function testRisk(
  address: string,
  before: ResourceRecord,
  after: ResourceRecord | undefined,
): RiskItem[] {
  const assertions = (r: ResourceRecord | undefined): JsonValue[] =>
    isObject(r?.spec) && Array.isArray(r.spec.assertions) ? r.spec.assertions : [];
  const now = assertions(after);
  const limit = (a: JsonValue) =>
    isObject(a) && isObject(a.maxIterations) && typeof a.maxIterations.limit === "number"
      ? { workflow: a.maxIterations.workflow, limit: a.maxIterations.limit }
      : undefined;
  const kept = (a: JsonValue) => {
    const l = limit(a);
    return now.some((n) => {
      if (sameJson(n, a)) return true;
      const m = limit(n);
      return l !== undefined && m !== undefined && m.workflow === l.workflow && m.limit <= l.limit;
    });
  };
  return assertions(before)
    .filter((a) => !kept(a))
    .map((a) => ({
      severity: "high" as const,
      kind: "test_relaxed",
      message: `${address} ${after ? "no longer asserts" : "is removed, with"} ${describeRule(a)}.`,
      address,
    }));
}

function policyRisk(
  address: string,
  before: ResourceRecord | undefined,
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
  const out: RiskItem[] = lost.map((r) => ({
    severity: "high" as const,
    kind: "policy_relaxed",
    message: `${address} ${after ? "no longer has" : "is removed, with"} the rule ${describeRule(r)}.`,
    address,
  }));
  // A new `risk` rule below the default grades future changes lower: a guard relaxed too.
  const was = rules(before);
  for (const r of now) {
    if (was.some((w) => sameJson(w, r))) continue;
    const risk = isObject(r) && isObject(r.risk) ? r.risk : undefined;
    if (!risk || typeof risk.level !== "string") continue;
    if (SEVERITY_ORDER.indexOf(risk.level as Severity) <= SEVERITY_ORDER.indexOf("high")) continue;
    out.push({
      severity: "high",
      kind: "risk_lowered",
      message: `${address} now grades ${String(risk.effect)} ${risk.level} (the default for autonomous reach is high); this change is still graded by the base's rules.`,
      address,
    });
  }
  return out;
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

// ── host agents ─────────────────────────────────────────────────────────────

/** A host agent's changes, rule by rule, from the files each side recorded. */
function hostSection(
  address: string,
  before: ResourceRecord | undefined,
  after: ResourceRecord | undefined,
): HostPlanSection {
  const plan = planHost(address, before?.host_files ?? [], after?.host_files ?? []);
  return {
    agent: address,
    files: (after ?? before)?.host_files?.map((f) => f.path) ?? [],
    // A host this version does not read (a newer state file's): every change unknown, widened.
    changes: plan
      ? plan.changes.map(hostChangeJson)
      : [
          {
            direction: "widened",
            change: "changed",
            key: address,
            file: "",
            line: 0,
            reason: `${address} is a host this version of Terfyn does not read`,
          },
        ],
  };
}

/** A host agent's authority per mode: widened by any widening change, else narrowed by any. */
function hostAuthority(address: string, changes: readonly HostChangeJson[]): AgentAuthority {
  const of = (mode: Mode): AuthorityChange => {
    const mine = changes.filter((c) => hostChangeMode(c) === mode);
    return mine.some((c) => c.direction === "widened")
      ? "WIDENED"
      : mine.some((c) => c.direction === "narrowed")
        ? "NARROWED"
        : "UNCHANGED";
  };
  return { address, autonomous: of("autonomous"), gated: of("gated") };
}
