/**
 * The project as plannable resources: `Agent/…`, `Workflow/…`, `Tool/…`, `Schema/…`,
 * `Policy/…`, each with a JSON spec (what is diffed), and for agents and workflows the derived
 * bounds (what authority is compared on). This is also exactly what the state file records.
 * Pure.
 */
import type { AnalysedProject } from "../analysis/analysis.ts";
import type { GrantMode, OperationReach, ResolvedProject } from "../model/project.ts";
import { DEFAULT_MAX_TOKENS } from "../model/resolve-project.ts";
import { sha256 } from "./canonical-hash.ts";
import { type ProgramDigests, programPath } from "./programs.ts";

export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };

export type ResourceKind =
  | "Agent"
  | "Workflow"
  | "Tool"
  | "Schema"
  | "Policy"
  | "CapabilityTest"
  | "Provider"
  | "Host";

export type Severity = "critical" | "high" | "medium" | "low" | "info";

export const SEVERITY_ORDER: readonly Severity[] = ["critical", "high", "medium", "low", "info"];

/** One reachable (effect, mode, operation) of an agent, with the severity the plan gives it. */
export interface BoundEntry {
  effect: string;
  mode: GrantMode;
  tool: string;
  severity: Severity;
}

export interface WorkflowBoundsRecord {
  effects: string[];
  loop_limits: number[];
  max_iterations: number;
  hitl: string[];
  model_call_bound: number;
}

export interface ResourceRecord {
  address: string;
  kind: ResourceKind;
  name: string;
  spec: JsonValue;
  /** Agents only. */
  effect_bound?: BoundEntry[];
  /** Workflows only. */
  bounds?: WorkflowBoundsRecord;
  /**
   * Host agents only: the configuration files as read, which the plan compares rule by rule
   * (direction by containment: core/hosts), where the spec holds each file's digest.
   */
  host_files?: { path: string; text: string; role?: string }[];
}

/** Where things are in the current sources: for annotations, never part of a hash. */
export interface SourceLocation {
  file: string;
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
}

export interface ResourceLocations {
  /** Address → the declaration. */
  resources: Record<string, SourceLocation>;
  /** `Agent/X tool.t.op` → the grant. */
  grants: Record<string, SourceLocation>;
}

/**
 * What a command or http operation reaches, as one line: `exec node scripts/deploy.mjs` (an
 * argument with spaces or quotes is JSON-quoted), or `POST http://127.0.0.1:8080/issues/{id}`.
 */
export function reachText(reach: OperationReach): string {
  if (reach.kind === "http") return `${reach.method} ${reach.url}`;
  return `exec ${reach.argv.map((a) => (/^[A-Za-z0-9_./:=@%+,-]+$/.test(a) ? a : JSON.stringify(a))).join(" ")}`;
}

/** A grant as written in an agent's `spec.tools`. */
export function grantLabel(ref: string, mode: GrantMode): string {
  return mode === "gated" ? `${ref} requires approval` : ref;
}

/** Severity of reaching an effect in a mode when no `risk` rule names it. */
export function defaultSeverity(mode: GrantMode): Severity {
  return mode === "autonomous" ? "high" : "medium";
}

/** Severity of reaching an effect in a mode: the policy's `risk` for it, else high/medium. */
export function effectSeverity(
  project: ResolvedProject,
  effect: string,
  mode: GrantMode,
): Severity {
  let level: Severity | undefined;
  for (const p of project.policies) {
    if ("risk" in p.rule && p.rule.risk.effect === effect) {
      const l = p.rule.risk.level as Severity;
      if (level === undefined || SEVERITY_ORDER.indexOf(l) < SEVERITY_ORDER.indexOf(level))
        level = l;
    }
  }
  return level ?? defaultSeverity(mode);
}

export function projectResources(
  { project, analysis }: AnalysedProject,
  /** The digests of the repository files its command tools run (programs.ts). */
  programs: ProgramDigests = new Map(),
): {
  resources: ResourceRecord[];
  locations: ResourceLocations;
} {
  const resources: ResourceRecord[] = [];
  const locations: ResourceLocations = { resources: {}, grants: {} };
  const bounds = analysis.workflowBounds;

  for (const agent of project.agents.values()) {
    const address = `Agent/${agent.name}`;
    resources.push({
      address,
      kind: "Agent",
      name: agent.name,
      spec: {
        model: agent.model,
        instructions: agent.instructions,
        input: agent.input ?? null,
        output: agent.output ?? null,
        maxTurns: agent.maxTurns,
        // Only when said, so a plan of a project that says neither is unchanged.
        ...(agent.maxTokens !== DEFAULT_MAX_TOKENS ? { maxTokens: agent.maxTokens } : {}),
        ...(agent.temperature !== undefined ? { temperature: agent.temperature } : {}),
        tools: agent.grants.map((g) => grantLabel(g.ref, g.mode)),
      },
      effect_bound: (analysis.bounds.get(agent.name) ?? []).map((e) => ({
        effect: e.effect,
        mode: e.mode,
        tool: e.tool,
        severity: effectSeverity(project, e.effect, e.mode),
      })),
    });
    locations.resources[address] = agent.span;
    for (const g of agent.grants) locations.grants[`${address} ${g.ref}`] = g.span;
  }

  for (const wf of project.workflows.values()) {
    const address = `Workflow/${wf.name}`;
    const b = bounds.get(wf.name);
    resources.push({
      address,
      kind: "Workflow",
      name: wf.name,
      spec: {
        params: wf.params.map((p) => ({ name: p.name, type: p.type })),
        returns: wf.returns,
        effects: wf.declaredEffects.map((e) => e.name),
        loops: wf.loops.map((l) => l.limit),
        calls: [
          ...new Set(
            wf.calls.map((c) => `${c.kind === "agent" ? "Agent" : "Workflow"}/${c.callee}`),
          ),
        ].sort(),
        approvals: wf.approvals.map((a) => a.label ?? "approve"),
      },
      bounds: {
        effects: b?.effects ?? [],
        loop_limits: b?.loopLimits ?? [],
        max_iterations: b?.maxIterations ?? 0,
        hitl: (b?.hitl ?? []).map((h) =>
          h.kind === "approve" ? `approve "${h.detail}"` : `${h.detail} requires approval`,
        ),
        model_call_bound: b?.modelCallBound ?? 0,
      },
    });
    locations.resources[address] = wf.span;
  }

  for (const tool of project.tools.values()) {
    const address = `Tool/${tool.name}`;
    const operations: Record<string, JsonValue> = {};
    for (const op of [...tool.operations.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const entry: Record<string, JsonValue> = {
        effects: [...op.effects].sort(),
        idempotent: op.idempotent,
      };
      // What the operation may reach, so a new host or argv diffs as a change of this tool.
      if (op.reach?.kind === "command") {
        entry.reaches = reachText(op.reach);
        entry.inputAs = op.reach.inputAs;
        entry.timeoutMs = op.reach.timeoutMs;
      } else if (op.reach?.kind === "http") {
        entry.reaches = reachText(op.reach);
        entry.timeoutMs = op.reach.timeoutMs;
      }
      // The input it accepts: a loosened schema lets the model send what it could not before.
      if (op.input) entry.input = op.input as JsonValue;
      operations[op.name] = entry;
    }
    const spec: Record<string, JsonValue> = { adapter: tool.adapter, operations };
    if (tool.command) {
      spec.command = {
        env: [...tool.command.env].sort(),
        maxOutputBytes: tool.command.maxOutputBytes,
      };
      // The bytes of each repository file its argv names: a program rewritten after an
      // approval is a change of what the operation runs.
      const files: Record<string, JsonValue> = {};
      for (const op of tool.operations.values())
        for (const arg of op.reach?.kind === "command" ? op.reach.argv : []) {
          const path = programPath(arg);
          const digest = path === undefined ? undefined : programs.get(path);
          if (path !== undefined && digest !== undefined) files[path] = digest;
        }
      if (Object.keys(files).length > 0)
        spec.programs = Object.fromEntries(
          Object.entries(files).sort(([a], [b]) => (a < b ? -1 : 1)),
        );
    }
    if (tool.http) {
      const headers: Record<string, JsonValue> = {};
      for (const h of tool.http.headers)
        headers[h.name] = "literal" in h ? h.literal : `${h.prefix ?? ""}<env:${h.fromEnv}>`;
      spec.http = { headers, maxResponseBytes: tool.http.maxResponseBytes };
    }
    if (tool.workspace) {
      spec.workspace = {
        root: tool.workspace.root ?? null,
        testCommand: tool.workspace.testCommand ?? null,
      };
    }
    resources.push({ address, kind: "Tool", name: tool.name, spec });
    locations.resources[address] = tool.bindingSpan ?? tool.span;
  }

  for (const schema of project.schemas.values()) {
    const address = `Schema/${schema.name}`;
    resources.push({
      address,
      kind: "Schema",
      name: schema.name,
      spec: schema.schema as JsonValue,
    });
    locations.resources[address] = schema.span;
  }

  const policies = new Map<string, { rules: JsonValue[]; span: SourceLocation }>();
  for (const p of project.policies) {
    const entry = policies.get(p.policy) ?? { rules: [], span: p.span };
    entry.rules.push(p.rule as JsonValue);
    policies.set(p.policy, entry);
  }
  for (const [name, { rules, span }] of policies) {
    const address = `Policy/${name}`;
    resources.push({ address, kind: "Policy", name, spec: { rules } });
    locations.resources[address] = span;
  }

  // Capability tests are guards: each assertion is part of what the plan compares and hashes.
  for (const test of project.capabilityTests) {
    const address = `CapabilityTest/${test.name}`;
    resources.push({
      address,
      kind: "CapabilityTest",
      name: test.name,
      spec: { assertions: test.value.spec.assertions as JsonValue },
    });
    locations.resources[address] = test.span;
  }

  // Provider settings decide where an agent's prompts, tool results and the repository's text
  // go, and which key pays: a guard like any other.
  for (const [name, { settings, span }] of project.providerSettings) {
    const address = `Provider/${name}`;
    const sorted = Object.fromEntries(
      Object.entries(settings).sort(([a], [b]) => (a < b ? -1 : 1)),
    );
    resources.push({ address, kind: "Provider", name, spec: { settings: sorted } });
    locations.resources[address] = span;
  }

  // Host configurations (`.claude/settings.json`, `.mcp.json`) as agents: compared by their
  // rules (compute-plan), hashed by their files' bytes, located at each rule.
  for (const host of project.hostAgents?.values() ?? []) {
    const address = host.name;
    resources.push({
      address,
      kind: "Host",
      name: address.slice(address.indexOf("/") + 1),
      spec: { files: Object.fromEntries(host.files.map((f) => [f.path, sha256(f.text)])) },
      effect_bound: host.bound.map((e) => ({
        effect: e.effect,
        mode: e.mode,
        tool: e.tool,
        severity: effectSeverity(project, e.effect, e.mode),
      })),
      host_files: host.files.map((f) => ({
        path: f.path,
        text: f.text,
        ...(f.role !== undefined ? { role: f.role } : {}),
      })),
    });
    const first = host.files[0];
    if (first)
      locations.resources[address] = {
        file: first.path,
        line: 1,
        column: 1,
        endLine: 1,
        endColumn: 1,
      };
    for (const e of host.bound) locations.grants[`${address} ${e.tool}`] ??= e.span;
  }

  resources.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  return { resources, locations };
}
