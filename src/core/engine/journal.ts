/**
 * Journal events: one JSON object per line in `journal.jsonl`, append-only. The interpreter
 * writes them; resume reads them back to replay completed steps, model turns and effects
 * without repeating any of them.
 */

import { z } from "zod";
import { nestingProblem } from "../nesting.ts";
import type { ApprovalSubject } from "../render/approval-text.ts";

export type JournalEvent =
  | { type: "run.start"; run: string; workflow: string; ir_hash: string; input: unknown }
  | {
      type: "run.resume";
      ir_hash: string;
      /** The stale lock this resume took over: its owner had gone without releasing it. */
      took_over?: { pid: number; host: string; since: string };
    }
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
      /** The model that answered (absent in journals written before it was recorded). */
      model?: string;
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
      /** Exactly what is approved (absent in journals written before it was recorded). */
      subject?: ApprovalSubject;
    }
  | { type: "approval.granted"; hash: string; step: string }
  | {
      /**
       * The run was stopped by a signal. `in_flight` is the tool call that was running (its
       * process group killed, its result not journaled); `in_doubt` when it is not idempotent
       * and so may have had its effect: a resume stops there instead of repeating it.
       */
      type: "run.interrupted";
      /** The signal, or `none` when the model's API could not answer (`unavailable`). */
      signal: string;
      step: string;
      in_flight?: { key: string; tool: string; idempotent: boolean; in_doubt: boolean };
      unavailable?: string;
    }
  | {
      type: "run.end";
      status: "completed" | "failed" | "in-doubt";
      result?: unknown;
      error?: string;
    };

/**
 * A model's answer for one turn: tool calls, or the final output. `stop` is the provider's reason
 * the answer ended when it was not a plain end of turn (`max_tokens`: cut off at the output
 * limit). An output given by a call has that call's `id` (replayed under it); an output without
 * one was text. An output given in the same turn as tool calls is `early`: not accepted before
 * the calls' results are seen (the model is asked again), kept so the turn replays as it was.
 */
export type ModelResponse =
  | {
      kind: "tool_calls";
      calls: { id: string; tool: string; input: unknown }[];
      text?: string;
      early?: { id: string; output: unknown };
      stop?: string;
    }
  | { kind: "output"; output: unknown; text?: string; id?: string; stop?: string };

export interface TokenUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

const stepEvent = z.looseObject({ step: z.string() });
const keyEvent = z.looseObject({ key: z.string() });
const hashEvent = z.looseObject({ step: z.string(), hash: z.string() });
const modelResponse = z.union([
  z.looseObject({
    kind: z.literal("tool_calls"),
    calls: z.array(z.looseObject({ id: z.string(), tool: z.string() })),
  }),
  z.looseObject({ kind: z.literal("output") }),
]);
/**
 * The fields resume relies on, per event type. Other fields and unknown types pass: the journal
 * may grow, but what replay reads must be what the interpreter wrote.
 */
const EVENT_SHAPES: Record<string, z.ZodType> = {
  "step.start": stepEvent,
  "step.end": stepEvent,
  "model.turn": z.looseObject({ step: z.string(), turn: z.number(), response: modelResponse }),
  "effect.intent": keyEvent,
  "effect.result": z.looseObject({ key: z.string(), ok: z.boolean() }),
  "tool.denied": keyEvent,
  "approval.requested": hashEvent,
  "approval.granted": hashEvent,
  "run.end": z.looseObject({ status: z.string() }),
};

/** Inputs and model outputs are held to 200 levels; an event wraps them in a few more. */
const MAX_EVENT_DEPTH = 256;

/**
 * Why a parsed journal line is not an event resume can trust, or undefined when it is. A
 * journal is written only by Terfyn, so a line that fails this was damaged or edited by hand.
 */
export function journalEventProblem(value: unknown): string | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return `is ${value === null ? "null" : Array.isArray(value) ? "a list" : `a ${typeof value}`}, not a journal event (an object with a \`type\`)`;
  }
  const type = (value as { type?: unknown }).type;
  if (typeof type !== "string") return "is an object without a string `type`, not a journal event";
  if (nestingProblem(value, MAX_EVENT_DEPTH) !== undefined)
    return `nests deeper than ${MAX_EVENT_DEPTH} levels, deeper than any event Terfyn writes`;
  const shape = EVENT_SHAPES[type];
  const parsed = shape?.safeParse(value);
  if (parsed && !parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.map(String).join(".") || "(event)";
    return `is a ${type} event whose \`${field}\` is not what Terfyn writes (${issue?.message ?? "invalid"})`;
  }
  return undefined;
}
