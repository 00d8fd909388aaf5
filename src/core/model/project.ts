/**
 * The resolved project: every declaration from `.agent` files and YAML resources, with names
 * bound and spans kept, ready for analysis, planning and execution. Pure data.
 */

import type { LoadedResource } from "../config/load-resources.ts";
import type { JsonSchemaNode, PolicyRule } from "../config/schemas.ts";
import type { Span } from "../diagnostics.ts";
import type { HostAgent } from "../hosts/host-agents.ts";
import type { AgentDecl, AgentFile, ToolDecl, WorkflowDecl } from "../language/ast.ts";
import type { SourceText } from "../source.ts";
import type { Type } from "./types.ts";

export type GrantMode = "autonomous" | "gated";

export interface ResolvedGrant {
  /** `tool.<tool>.<operation>`, as written. */
  ref: string;
  tool: string;
  operation: string;
  mode: GrantMode;
  /** Effects of the operation, empty when the tool or operation is unknown. */
  effects: string[];
  /** False when the tool or operation could not be found, so `effects` is incomplete. */
  resolved: boolean;
  span: Span;
}

/** What an agent that does not say takes: the project's `defaults` block, else the language's. */
export interface AgentDefaults {
  model: string;
  maxTurns: number;
  maxTokens: number;
  temperature?: number;
}

export interface ResolvedAgent {
  name: string;
  model: string;
  modelSpan: Span;
  instructions: string;
  input?: string;
  output?: string;
  maxTurns: number;
  /** The most tokens one answer may have (`max_tokens`). Default DEFAULT_MAX_TOKENS. */
  maxTokens: number;
  /** Sampling temperature; absent, none is sent (the provider's own default). */
  temperature?: number;
  grants: ResolvedGrant[];
  span: Span;
  decl: AgentDecl;
}

export interface ResolvedOperation {
  name: string;
  effects: string[];
  idempotent: boolean;
  input?: JsonSchemaNode;
  description?: string;
  /** What a command or http operation reaches (its argv, or its method and URL template). */
  reach?: OperationReach;
  span: Span;
}

/** A command operation: a fixed argv, never a shell. */
export interface CommandReach {
  kind: "command";
  /** As declared; argv[0] is resolved (PATH or project root) when a run starts. */
  argv: string[];
  inputAs: "stdin" | "args";
  timeoutMs: number;
}

/** An http operation: a method and a URL template whose origin is fixed. */
export interface HttpReach {
  kind: "http";
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** The template as declared, e.g. `http://127.0.0.1:8080/issues/{id}`. */
  url: string;
  /** `scheme://host[:port]`, the only origin the operation may reach. */
  origin: string;
  timeoutMs: number;
}

export type OperationReach = CommandReach | HttpReach;

/** A header an http tool sends: a literal, or the value of a named environment variable. */
export type HttpHeader =
  | { name: string; literal: string }
  | { name: string; fromEnv: string; prefix?: string };

export type ToolAdapter = "workspace" | "command" | "http" | "external";

export interface ResolvedTool {
  name: string;
  adapter: ToolAdapter;
  operations: Map<string, ResolvedOperation>;
  /** `adapter: command`: the environment allowlist and stdout cap. */
  command?: { env: string[]; maxOutputBytes: number };
  /** `adapter: http`: the headers sent and the response cap. */
  http?: { headers: HttpHeader[]; maxResponseBytes: number };
  /** Sandbox settings from the `.agent` binding (`tool X { workspace { … } }`). */
  workspace?: { root?: string; testCommand?: string };
  span: Span;
  /** The `.agent` binding, when there is one. */
  binding?: ToolDecl;
  bindingSpan?: Span;
}

export interface ResolvedSchema {
  name: string;
  schema: JsonSchemaNode;
  type: Type;
  span: Span;
}

/** Where a workflow calls an agent or another workflow. */
export interface CallSite {
  callee: string;
  kind: "agent" | "workflow";
  span: Span;
  /** Limits of the loops enclosing the call, outermost first. */
  loopLimits: number[];
}

export interface LoopInfo {
  limit: number;
  /** Limits of the loops enclosing this one, outermost first. */
  enclosingLimits: number[];
  span: Span;
  limitSpan: Span;
}

export interface ApprovalPoint {
  label?: string;
  span: Span;
  loopLimits: number[];
}

export interface ResolvedWorkflow {
  name: string;
  params: { name: string; type: string }[];
  returns: string;
  declaredEffects: { name: string; span: Span }[];
  effectsSpan: Span;
  calls: CallSite[];
  loops: LoopInfo[];
  approvals: ApprovalPoint[];
  span: Span;
  decl: WorkflowDecl;
}

export interface ResolvedPolicyRule {
  policy: string;
  rule: PolicyRule;
  span: Span;
}

export interface ProjectSettings {
  name: string;
  statePath: string;
  runsPath: string;
  exclude: string[];
  modelScript?: string;
  span: Span;
}

export interface ResolvedProject {
  settings: ProjectSettings;
  defaults: AgentDefaults;
  providers: Set<string>;
  /** The `provider NAME { key "value" … }` blocks: where prompts go and which key they use. */
  providerSettings: Map<string, { settings: Record<string, string>; span: Span }>;
  agents: Map<string, ResolvedAgent>;
  tools: Map<string, ResolvedTool>;
  schemas: Map<string, ResolvedSchema>;
  workflows: Map<string, ResolvedWorkflow>;
  policies: ResolvedPolicyRule[];
  /** Smallest `maxLoopLimit` over all policies, if any policy sets one. */
  maxLoopLimit?: { limit: number; span: Span };
  capabilityTests: LoadedResource<"CapabilityTest">[];
  files: AgentFile[];
  sources: Map<string, SourceText>;
  /**
   * The agents of host configurations in the project (`Host/claude-code` from
   * `.claude/settings.json` and `.mcp.json`): bounded, policed and tested like declared agents,
   * never run by a workflow.
   */
  hostAgents?: Map<string, HostAgent>;
}
