/**
 * `openai/<model>` through the official `openai` package's Chat Completions API: OpenAI itself,
 * and any server that speaks the same API at a `baseUrl` (Ollama, vLLM, llama.cpp's server,
 * Azure OpenAI's v1 endpoint). The same contract as the Anthropic adapter: only the granted
 * operations are offered as functions, the output comes through a `submit_output` function
 * whose parameters are the output schema, every other call of a turn runs (or is denied) through
 * the gate before an output is taken, a prose answer or a `length` stop is corrected by the
 * engine, the SDK retries 429/5xx with the wait bounded, and an outage after the retries pauses
 * the run (ModelUnavailable). The key comes only from the environment.
 *
 * Caching: the API caches a repeated prefix on its own (no breakpoints to place); cached prompt
 * tokens are reported apart and counted as cache reads. The conversation is replayed the same
 * way every time, so each request repeats the previous one's prefix byte for byte.
 */
import OpenAI from "openai";
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

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ToolCallParam = OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;

/** Which request field carries the answer's token limit. */
export type MaxTokensField = "max_completion_tokens" | "max_tokens";

export class OpenAIModel implements ModelPort {
  private readonly client: OpenAI;
  private readonly maxTokensField: MaxTokensField;

  constructor(
    apiKey: string,
    options: {
      maxRetries?: number;
      baseURL?: string;
      fetch?: typeof fetch;
      /** The longest wait before a retry (default MAX_RETRY_WAIT_SECONDS). */
      maxRetryWaitSeconds?: number;
      /**
       * `max_completion_tokens` (OpenAI's current field, which its reasoning models require) or
       * `max_tokens` (the one compatible servers read). Default: the former for OpenAI's own
       * API, the latter at any other base URL.
       */
      maxTokensField?: MaxTokensField;
    } = {},
  ) {
    this.client = new OpenAI({
      apiKey,
      // Nothing from this process's environment: the run's settings are passed in.
      organization: null,
      project: null,
      adminAPIKey: null,
      webhookSecret: null,
      baseURL: options.baseURL ?? "https://api.openai.com/v1",
      maxRetries: options.maxRetries ?? 4,
      fetch: boundedRetryAfter(
        options.fetch ?? globalThis.fetch,
        options.maxRetryWaitSeconds ?? MAX_RETRY_WAIT_SECONDS,
      ),
    });
    this.maxTokensField =
      options.maxTokensField ?? (options.baseURL ? "max_tokens" : "max_completion_tokens");
  }

  async turn(request: ModelRequest): Promise<ModelAnswer> {
    const model = request.model.replace(/^openai\//, "");
    const names = new Map(request.tools.map((t) => [toApiName(t.name), t.name]));
    const tools: OpenAI.Chat.Completions.ChatCompletionFunctionTool[] = request.tools.map((t) => ({
      type: "function",
      function: {
        name: toApiName(t.name),
        description: t.description,
        parameters: t.inputSchema as Record<string, unknown>,
      },
    }));
    tools.push({
      type: "function",
      function: {
        name: OUTPUT_TOOL,
        description: OUTPUT_TOOL_DESCRIPTION,
        parameters: (request.outputSchema ?? { type: "object" }) as Record<string, unknown>,
      },
    });
    const completion = await this.client.chat.completions
      .create(
        {
          model,
          [this.maxTokensField]: request.maxTokens ?? DEFAULT_MAX_TOKENS,
          ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
          tools,
          messages: [
            { role: "system", content: request.system || `You are ${request.agent}.` },
            ...toApiMessages(request.messages),
          ],
        },
        request.signal ? { signal: request.signal } : {},
      )
      .catch((e: unknown) => {
        throw unavailable(e) ?? e;
      });
    const usage = usageOf(completion.usage);
    const choice = completion.choices[0];
    const message = choice?.message;
    const text = [message?.content, message?.refusal]
      .filter((t): t is string => typeof t === "string" && t.trim() !== "")
      .join("\n");
    const reason = choice?.finish_reason;
    // `length` is the API's max_tokens stop: named as the engine's correction expects.
    const stop =
      reason === "length"
        ? { stop: "max_tokens" }
        : reason && reason !== "stop" && reason !== "tool_calls"
          ? { stop: reason }
          : {};
    const ids = new Set<string>();
    const uses = (message?.tool_calls ?? [])
      .filter((c): c is ToolCallParam => c.type === "function")
      .map((c, i) => {
        // A compatible server may send no id, or one twice in a turn: each call gets its own,
        // since a result is matched to its call by it.
        const id = c.id && !ids.has(c.id) ? c.id : `call_terfyn_${request.ordinal}_${i}`;
        ids.add(id);
        return { id, name: c.function.name, input: parseArguments(c.function.arguments) };
      });
    return answerOf(uses, names, text, stop, usage);
  }
}

/**
 * A call's arguments: the JSON object the model wrote, or, when it is not valid JSON, the text
 * itself, which no input schema accepts (the gate refuses the call; an output is corrected).
 */
function parseArguments(text: string | undefined): unknown {
  if (text === undefined || text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Token usage as the journal keeps it: cached prompt tokens apart from the rest. */
function usageOf(usage: OpenAI.CompletionUsage | undefined): TokenUsage | undefined {
  if (!usage) return undefined;
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    input_tokens: Math.max(0, usage.prompt_tokens - cached),
    output_tokens: usage.completion_tokens,
    ...(cached > 0 ? { cache_read_input_tokens: cached } : {}),
  };
}

/** The SDK's error as ModelUnavailable when it is an outage (after the SDK's retries). */
function unavailable(e: unknown): ModelUnavailable | undefined {
  if (e instanceof OpenAI.APIUserAbortError) return undefined;
  if (e instanceof OpenAI.APIConnectionError)
    return new ModelUnavailable(`cannot reach the API: ${e.message}`);
  if (e instanceof OpenAI.APIError && e.status !== undefined && isOutageStatus(e.status))
    return new ModelUnavailable(`the API answered ${e.status} after retries: ${e.message}`);
  return undefined;
}

const call = (id: string, name: string, input: unknown): ToolCallParam => ({
  id,
  type: "function",
  function: { name, arguments: JSON.stringify(asObject(input)) },
});

/**
 * The engine's conversation as Chat Completions takes it. Every tool call of an assistant turn
 * is answered by a `tool` message right after it: the results, then (for an output given beside
 * other calls) why it was not taken, and for an output call the next message (the engine's
 * correction). An output that came as text is replayed as text; a turn that said nothing says
 * so. Arguments are always a JSON object, whatever the model sent.
 */
function toApiMessages(messages: ConversationMessage[]): Message[] {
  const out: Message[] = [];
  /** The output call the previous assistant turn made, which the next message must answer. */
  let pending: string | undefined;
  /** Ids given to output calls replayed from journals that kept none, unique in the request. */
  let legacy = 0;
  /** The output call given beside other calls in the previous turn. */
  let early: string | undefined;
  for (const m of messages) {
    if (m.role === "user") {
      out.push(
        pending
          ? { role: "tool", tool_call_id: pending, content: m.content }
          : { role: "user", content: m.content },
      );
      pending = undefined;
    } else if (m.role === "assistant") {
      const r = m.response;
      const text = r.text?.trim() ? r.text : undefined;
      pending = undefined;
      early = undefined;
      if (r.kind === "tool_calls") {
        const calls = r.calls.map((c) => call(c.id, toApiName(c.tool), c.input));
        if (r.early) {
          calls.push(call(r.early.id, OUTPUT_TOOL, r.early.output));
          early = r.early.id;
        }
        out.push({ role: "assistant", content: text ?? null, tool_calls: calls });
      } else if (r.id !== undefined || isObject(r.output)) {
        pending = r.id ?? `call_terfyn_output_${++legacy}`;
        out.push({
          role: "assistant",
          content: text ?? null,
          tool_calls: [call(pending, OUTPUT_TOOL, r.output)],
        });
      } else {
        const said =
          text ?? (typeof r.output === "string" && r.output.trim() ? r.output : NOTHING_SAID);
        out.push({ role: "assistant", content: said });
      }
    } else {
      for (const r of m.results) out.push({ role: "tool", tool_call_id: r.id, content: r.content });
      if (early) out.push({ role: "tool", tool_call_id: early, content: EARLY });
      early = undefined;
      pending = undefined;
    }
  }
  return out;
}
