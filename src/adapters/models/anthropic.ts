/**
 * `anthropic/<model>` through @anthropic-ai/sdk: tool use with only the granted operations,
 * the agent's output returned through a `submit_output` tool whose schema is the output schema,
 * prompt caching on the instructions and the tool list, the SDK's retries with backoff on
 * 429/5xx, and token usage reported for the journal. The key comes only from the environment.
 */
import Anthropic from "@anthropic-ai/sdk";
import type { ModelResponse, TokenUsage } from "../../core/engine/journal.ts";
import type { ConversationMessage, ModelPort, ModelRequest } from "../../core/engine/ports.ts";

const OUTPUT_TOOL = "submit_output";

/** Anthropic tool names allow [a-zA-Z0-9_-]; `tool.workspace.read_file` becomes `workspace__read_file`. */
export function toApiName(ref: string): string {
  return ref.replace(/^tool\./, "").replace(/\./g, "__");
}

export class AnthropicModel implements ModelPort {
  private readonly client: Anthropic;

  constructor(
    apiKey: string,
    options: { maxRetries?: number; baseURL?: string; fetch?: typeof fetch } = {},
  ) {
    this.client = new Anthropic({
      apiKey,
      maxRetries: options.maxRetries ?? 4,
      ...(options.baseURL ? { baseURL: options.baseURL } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  async turn(request: ModelRequest): Promise<{ response: ModelResponse; usage?: TokenUsage }> {
    const model = request.model.replace(/^anthropic\//, "");
    const names = new Map(request.tools.map((t) => [toApiName(t.name), t.name]));
    const tools: Anthropic.Tool[] = request.tools.map((t) => ({
      name: toApiName(t.name),
      description: t.description,
      input_schema: t.inputSchema as Anthropic.Tool.InputSchema,
    }));
    tools.push({
      name: OUTPUT_TOOL,
      description: "Give your final output. Call this exactly once, when you are done.",
      input_schema: (request.outputSchema ?? { type: "object" }) as Anthropic.Tool.InputSchema,
    });
    const last = tools[tools.length - 1];
    if (last) last.cache_control = { type: "ephemeral" };
    const message = await this.client.messages.create({
      model,
      max_tokens: 4096,
      system: [
        {
          type: "text",
          text: request.system || `You are ${request.agent}.`,
          cache_control: { type: "ephemeral" },
        },
      ],
      tools,
      messages: toApiMessages(request.messages),
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
    const uses = message.content.filter((b): b is Anthropic.ToolUseBlock => b.type === "tool_use");
    const output = uses.find((u) => u.name === OUTPUT_TOOL);
    if (output)
      return {
        response: { kind: "output", output: output.input, ...(text ? { text } : {}) },
        usage,
      };
    if (uses.length === 0) {
      // No tool call and no output: treat the text as an (invalid) output so the engine asks again.
      return { response: { kind: "output", output: text, ...(text ? { text } : {}) }, usage };
    }
    const calls = uses.map((u) => ({
      id: u.id,
      tool: names.get(u.name) ?? u.name,
      input: u.input,
    }));
    return { response: { kind: "tool_calls", calls, ...(text ? { text } : {}) }, usage };
  }
}

function toApiMessages(messages: ConversationMessage[]): Anthropic.MessageParam[] {
  const out: Anthropic.MessageParam[] = [];
  for (const m of messages) {
    if (m.role === "user") out.push({ role: "user", content: m.content });
    else if (m.role === "assistant") {
      const r = m.response;
      const content: Anthropic.ContentBlockParam[] = [];
      if (r.text) content.push({ type: "text", text: r.text });
      if (r.kind === "tool_calls") {
        for (const c of r.calls)
          content.push({
            type: "tool_use",
            id: c.id,
            name: toApiName(c.tool),
            input: c.input ?? {},
          });
      } else {
        content.push({
          type: "tool_use",
          id: "output",
          name: OUTPUT_TOOL,
          input: (r.output ?? {}) as Record<string, unknown>,
        });
      }
      out.push({ role: "assistant", content });
    } else {
      out.push({
        role: "user",
        content: m.results.map((r) => ({
          type: "tool_result" as const,
          tool_use_id: r.id,
          content: r.content,
          is_error: !r.ok,
        })),
      });
    }
  }
  // An output the engine rejected is answered by a user message; the API wants that tool_use answered.
  for (let i = 0; i < out.length - 1; i++) {
    const a = out[i];
    const b = out[i + 1];
    if (
      a?.role === "assistant" &&
      Array.isArray(a.content) &&
      a.content.some((c) => c.type === "tool_use" && c.id === "output") &&
      b?.role === "user" &&
      typeof b.content === "string"
    ) {
      out[i + 1] = {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "output", content: b.content, is_error: true },
        ],
      };
    }
  }
  return out;
}
