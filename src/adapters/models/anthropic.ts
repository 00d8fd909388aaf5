/**
 * `anthropic/<model>` through @anthropic-ai/sdk: tool use with only the granted operations,
 * the agent's output returned through a `submit_output` tool whose schema is the output schema,
 * prompt caching (below), the agent's `maxTokens` and `temperature`, the SDK's retries with
 * backoff on 429/5xx, and token usage reported for the journal. The key comes only from the
 * environment.
 *
 * Caching: the API caches the prefix of a request up to a `cache_control` breakpoint (tools,
 * then system, then messages) when it is long enough, and each later request that repeats it
 * reads it at a tenth of the price. Two breakpoints: after the instructions, when tools and
 * instructions together are long enough to be cached on their own (MIN_CACHEABLE_TOKENS); and on
 * the conversation's latest turn, so the next request of the same agent, which repeats the whole
 * conversation and adds a turn, reads everything before its new turn from the cache.
 */
import Anthropic from "@anthropic-ai/sdk";
import type { TokenUsage } from "../../core/engine/journal.ts";
import {
  type ConversationMessage,
  type ModelAnswer,
  type ModelPort,
  type ModelRequest,
  ModelUnavailable,
} from "../../core/engine/ports.ts";
import { DEFAULT_MAX_TOKENS } from "../../core/model/resolve-project.ts";
import {
  answerOf,
  asObject,
  boundedRetryAfter,
  EARLY,
  isObject,
  isOutageStatus,
  MAX_RETRY_WAIT_SECONDS,
  NOTHING_SAID,
  OUTPUT_TOOL,
  OUTPUT_TOOL_DESCRIPTION,
  toApiName,
} from "./tool-wire.ts";

export { toApiName };

export class AnthropicModel implements ModelPort {
  private readonly client: Anthropic;

  constructor(
    apiKey: string,
    options: {
      maxRetries?: number;
      baseURL?: string;
      fetch?: typeof fetch;
      /** The longest wait before a retry (default MAX_RETRY_WAIT_SECONDS). */
      maxRetryWaitSeconds?: number;
    } = {},
  ) {
    this.client = new Anthropic({
      apiKey,
      maxRetries: options.maxRetries ?? 4,
      ...(options.baseURL ? { baseURL: options.baseURL } : {}),
      fetch: boundedRetryAfter(
        options.fetch ?? globalThis.fetch,
        options.maxRetryWaitSeconds ?? MAX_RETRY_WAIT_SECONDS,
      ),
    });
  }

  async turn(request: ModelRequest): Promise<ModelAnswer> {
    const model = request.model.replace(/^anthropic\//, "");
    const names = new Map(request.tools.map((t) => [toApiName(t.name), t.name]));
    const tools: Anthropic.Tool[] = request.tools.map((t) => ({
      name: toApiName(t.name),
      description: t.description,
      input_schema: t.inputSchema as Anthropic.Tool.InputSchema,
    }));
    tools.push({
      name: OUTPUT_TOOL,
      description: OUTPUT_TOOL_DESCRIPTION,
      input_schema: (request.outputSchema ?? { type: "object" }) as Anthropic.Tool.InputSchema,
    });
    const system = request.system || `You are ${request.agent}.`;
    const prefix = estimateTokens(JSON.stringify(tools)) + estimateTokens(system);
    const message = await this.client.messages
      .create(
        {
          model,
          max_tokens: request.maxTokens ?? DEFAULT_MAX_TOKENS,
          ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
          system: [
            {
              type: "text",
              text: system,
              ...(prefix >= MIN_CACHEABLE_TOKENS ? { cache_control: EPHEMERAL } : {}),
            },
          ],
          tools,
          messages: withLatestTurnCached(toApiMessages(request.messages)),
        },
        request.signal ? { signal: request.signal } : {},
      )
      .catch((e: unknown) => {
        throw unavailable(e) ?? e;
      });
    const usage: TokenUsage = {
      input_tokens: message.usage.input_tokens,
      output_tokens: message.usage.output_tokens,
      ...(message.usage.cache_read_input_tokens != null
        ? { cache_read_input_tokens: message.usage.cache_read_input_tokens }
        : {}),
      ...(message.usage.cache_creation_input_tokens != null
        ? { cache_creation_input_tokens: message.usage.cache_creation_input_tokens }
        : {}),
    };
    const text = message.content
      .filter((b): b is Anthropic.TextBlock => b.type === "text")
      .map((b) => b.text)
      .join("\n");
    const stop =
      message.stop_reason && !["end_turn", "tool_use"].includes(message.stop_reason)
        ? { stop: message.stop_reason }
        : {};
    const uses = message.content.filter((b): b is Anthropic.ToolUseBlock => b.type === "tool_use");
    return answerOf(uses, names, text, stop, usage);
  }
}

const EPHEMERAL = { type: "ephemeral" } as const;

/**
 * The shortest prefix the API caches for the models in use (1,024 tokens for Sonnet and Opus
 * models; shorter prefixes are sent uncached, and a breakpoint on them is wasted).
 */
export const MIN_CACHEABLE_TOKENS = 1024;

/** A cautious estimate of a text's tokens (about four characters each in English and code). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * The messages with a cache breakpoint on the last block of the latest turn: the next request
 * repeats everything up to it. Every message's content is a list of blocks, so the turn that
 * carried the breakpoint reads the same in the next request (where it has none).
 */
function withLatestTurnCached(messages: Anthropic.MessageParam[]): Anthropic.MessageParam[] {
  const out = messages.map(
    (m) =>
      ({
        ...m,
        content:
          typeof m.content === "string"
            ? [{ type: "text", text: m.content }]
            : m.content.map((b) => ({ ...b })),
      }) as Anthropic.MessageParam,
  );
  const tail = (out.at(-1)?.content as Anthropic.ContentBlockParam[] | undefined)?.at(-1);
  if (tail && tail.type !== "thinking" && tail.type !== "redacted_thinking")
    (tail as { cache_control?: unknown }).cache_control = EPHEMERAL;
  return out;
}

/** The SDK's error as ModelUnavailable when it is an outage (after the SDK's retries). */
function unavailable(e: unknown): ModelUnavailable | undefined {
  if (e instanceof Anthropic.APIUserAbortError) return undefined;
  if (e instanceof Anthropic.APIConnectionError)
    return new ModelUnavailable(`cannot reach the API: ${e.message}`);
  if (e instanceof Anthropic.APIError && e.status !== undefined) {
    if (isOutageStatus(e.status))
      return new ModelUnavailable(`the API answered ${e.status} after retries: ${e.message}`);
  }
  return undefined;
}

/**
 * The engine's conversation as the Messages API takes it. Each output call is replayed under its
 * own id with its object input and answered by the next message (a correction becomes that
 * call's error result); an output that came as text is replayed as text; an assistant turn
 * that said nothing says so, since the API refuses empty content.
 */
function toApiMessages(messages: ConversationMessage[]): Anthropic.MessageParam[] {
  const out: Anthropic.MessageParam[] = [];
  /** The output call the previous assistant turn made, which the next message must answer. */
  let pending: string | undefined;
  /** Ids given to output calls replayed from journals that kept none, unique in the request. */
  let legacy = 0;
  for (const m of messages) {
    if (m.role === "user") {
      out.push({
        role: "user",
        content: pending
          ? [{ type: "tool_result", tool_use_id: pending, content: m.content, is_error: true }]
          : m.content,
      });
      pending = undefined;
    } else if (m.role === "assistant") {
      const r = m.response;
      const content: Anthropic.ContentBlockParam[] = [];
      if (r.text?.trim()) content.push({ type: "text", text: r.text });
      pending = undefined;
      if (r.kind === "tool_calls") {
        for (const c of r.calls)
          content.push({
            type: "tool_use",
            id: c.id,
            name: toApiName(c.tool),
            input: asObject(c.input),
          });
        if (r.early)
          content.push({
            type: "tool_use",
            id: r.early.id,
            name: OUTPUT_TOOL,
            input: asObject(r.early.output),
          });
      } else if (r.id !== undefined || isObject(r.output)) {
        // A journal written before ids were kept holds object outputs with none.
        pending = r.id ?? `toolu_terfyn_output_${++legacy}`;
        content.push({
          type: "tool_use",
          id: pending,
          name: OUTPUT_TOOL,
          input: asObject(r.output),
        });
      } else if (content.length === 0) {
        content.push({
          type: "text",
          text: typeof r.output === "string" && r.output.trim() ? r.output : NOTHING_SAID,
        });
      }
      if (content.length === 0) content.push({ type: "text", text: NOTHING_SAID });
      out.push({ role: "assistant", content });
    } else {
      const last = out.at(-1);
      const early =
        last?.role === "assistant" && Array.isArray(last.content)
          ? last.content.find(
              (c): c is Anthropic.ToolUseBlockParam =>
                c.type === "tool_use" && c.name === OUTPUT_TOOL,
            )
          : undefined;
      out.push({
        role: "user",
        content: [
          ...m.results.map((r) => ({
            type: "tool_result" as const,
            tool_use_id: r.id,
            content: r.content,
            is_error: !r.ok,
          })),
          ...(early
            ? [
                {
                  type: "tool_result" as const,
                  tool_use_id: early.id,
                  content: EARLY,
                  is_error: true,
                },
              ]
            : []),
        ],
      });
      pending = undefined;
    }
  }
  return out;
}
