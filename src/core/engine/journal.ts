/**
 * Journal events: one JSON object per line in `journal.jsonl`, append-only. The interpreter
 * writes them; resume reads them back to replay completed steps, model turns and effects
 * without repeating any of them.
 */

export type JournalEvent =
  | { type: "run.start"; run: string; workflow: string; ir_hash: string; input: unknown }
  | { type: "run.resume"; ir_hash: string }
  | {
      type: "step.start";
      step: string;
      kind: "agent" | "workflow";
      name: string;
      iteration: number;
    }
  | { type: "step.end"; step: string; kind: "agent" | "workflow"; name: string; output: unknown }
  | {
      type: "model.turn";
      step: string;
      agent: string;
      turn: number;
      response: ModelResponse;
      usage?: TokenUsage;
    }
  | {
      type: "effect.intent";
      key: string;
      step: string;
      agent: string;
      tool: string;
      input: unknown;
      idempotent: boolean;
    }
  | { type: "effect.result"; key: string; ok: boolean; result: unknown }
  | { type: "tool.denied"; key: string; step: string; agent: string; tool: string; reason: string }
  | {
      type: "approval.requested";
      hash: string;
      step: string;
      kind: "approve" | "gated-grant";
      label: string;
    }
  | { type: "approval.granted"; hash: string; step: string }
  | {
      type: "run.end";
      status: "completed" | "failed" | "in-doubt";
      result?: unknown;
      error?: string;
    };

/** A model's answer for one turn: tool calls, or the final output. */
export type ModelResponse =
  | { kind: "tool_calls"; calls: { id: string; tool: string; input: unknown }[]; text?: string }
  | { kind: "output"; output: unknown; text?: string };

export interface TokenUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}
