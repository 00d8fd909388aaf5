/**
 * The engine's ports: how it reaches models, tools, the journal and the run's state. Adapters
 * implement them (src/adapters/models, src/adapters/workspace, src/adapters/fs/run-store).
 */
import type { JsonSchemaNode } from "../config/schemas.ts";
import type { JournalEvent, ModelResponse, TokenUsage } from "./journal.ts";

/** A tool as offered to a model: only the agent's granted operations are ever offered. */
export interface ToolSpec {
  /** Canonical name, `tool.<tool>.<operation>`; adapters map it to what their API allows. */
  name: string;
  description: string;
  inputSchema: JsonSchemaNode;
}

export type ConversationMessage =
  | { role: "user"; content: string }
  | { role: "assistant"; response: ModelResponse }
  | { role: "tool_results"; results: { id: string; tool: string; ok: boolean; content: string }[] };

export interface ModelRequest {
  agent: string;
  /** `provider/model`, e.g. `mock/script` or `anthropic/claude-sonnet-5-5`. */
  model: string;
  system: string;
  messages: ConversationMessage[];
  tools: ToolSpec[];
  /** The schema the final output must match. */
  outputSchema?: JsonSchemaNode;
  /** How many model turns this agent has already taken in this run (scripts index by it). */
  ordinal: number;
  /** The step the agent runs as (`decide`, `decide-repair`, a workflow's step path). */
  step?: string;
  /** The agent's `maxTokens`: the most tokens its answer may have. */
  maxTokens?: number;
  /** The agent's `temperature`; absent, none is sent (the provider's default). */
  temperature?: number;
  /** Aborted when the run is interrupted: the request, and any wait before a retry, stop. */
  signal?: AbortSignal;
}

/** A model's answer to one turn: what it said, what it cost, and which model gave it. */
export interface ModelAnswer {
  response: ModelResponse;
  usage?: TokenUsage;
  /** The model that answered (`provider/model`), when it is not the one the agent declares. */
  model?: string;
}

export interface ModelPort {
  turn(request: ModelRequest): Promise<ModelAnswer>;
}

/**
 * The provider could not answer, after its own retries: the connection refused or timed out,
 * 429, 5xx or overloaded. Environmental, not the agent's doing: the run stops at the step, which
 * a resume takes again (approvals and the turns already answered are kept). An adapter throws it;
 * errors of the request itself (a bad key, an unknown model, a refused request) are not it.
 */
export class ModelUnavailable extends Error {
  override readonly name = "ModelUnavailable";
}

export interface ToolCall {
  tool: string;
  operation: string;
  input: unknown;
  /** Run id + step path + iteration + call index: the same effect always has the same key. */
  idempotencyKey: string;
}

/** What a tool call returned: its result for the model, and a one-line summary for people. */
export interface ToolOutcome {
  ok: boolean;
  result: unknown;
  /**
   * How the call ended, for the progress line (`refused by the sandbox: …`, `tests passed`);
   * untrusted text, escaped where it is printed.
   */
  summary?: string;
}

export interface ToolPort {
  execute(call: ToolCall): Promise<ToolOutcome>;
}

export interface JournalPort {
  append(event: JournalEvent): Promise<void>;
}

export interface Checkpoint {
  iteration: number;
  cursor: string;
}

export interface EnginePorts {
  model: ModelPort;
  tools: ToolPort;
  journal: JournalPort;
  checkpoint(c: Checkpoint): Promise<void>;
  progress(line: string): void;
}
