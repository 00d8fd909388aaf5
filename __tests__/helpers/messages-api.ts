/**
 * A local server that speaks Anthropic's Messages API (`POST /v1/messages`) as the SDK expects:
 * JSON message objects, error bodies of the API's shape, `retry-after` on 429/529. Each request
 * is checked against the rules the real API enforces on a conversation (messagesProblems), and
 * answered by the test's script, so a request the real API would refuse with a 400 fails the
 * test here instead of passing a fake fetch.
 */
import type { ServerResponse } from "node:http";
import { type LocalServer, type SeenRequest, startServer } from "./local-server.ts";

/** One content block of an answer, as the API sends it. */
export type AnswerBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: unknown };

/** What the script answers a request with: a message, or an HTTP error. */
export type Answer =
  | { content: AnswerBlock[]; stop_reason?: string; usage?: Record<string, number> }
  | {
      status: number;
      type: string;
      message: string;
      retryAfter?: number;
      retryAfterMs?: number;
    };

// biome-ignore lint/suspicious/noExplicitAny: request bodies are loose JSON
export type MessagesRequest = Record<string, any>;

export interface MessagesApi extends LocalServer {
  /** The request bodies, in order. */
  bodies: MessagesRequest[];
  /** Every rule a request broke, as `request N: …`. */
  problems: string[];
  /** What answers each request (the script given); "hang" leaves the request unanswered. */
  respond: (body: MessagesRequest, n: number) => Answer | "hang";
}

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** The rules the Messages API enforces that a conversation replayed by an adapter can break. */
export function messagesProblems(body: MessagesRequest): string[] {
  const problems: string[] = [];
  if (typeof body.model !== "string" || body.model === "") problems.push("model is not set");
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1)
    problems.push("max_tokens is not a positive integer");
  const tools: MessagesRequest[] = Array.isArray(body.tools) ? body.tools : [];
  const toolNames = new Set<string>();
  for (const t of tools) {
    if (!NAME.test(String(t.name))) problems.push(`tool name ${JSON.stringify(t.name)}`);
    if (toolNames.has(t.name)) problems.push(`tool ${t.name} is offered twice`);
    toolNames.add(t.name);
    if (t.input_schema?.type !== "object")
      problems.push(`tool ${t.name}: input_schema.type must be "object"`);
  }
  const messages: MessagesRequest[] = Array.isArray(body.messages) ? body.messages : [];
  if (messages.length === 0) problems.push("messages is empty");
  if (messages[0]?.role !== "user") problems.push("the first message is not the user's");
  const ids = new Set<string>();
  let breakpoints = 0;
  const count = (block: MessagesRequest) => {
    if (block?.cache_control) breakpoints++;
  };
  for (const t of tools) count(t);
  if (Array.isArray(body.system)) for (const b of body.system) count(b);
  messages.forEach((m, i) => {
    const where = `messages[${i}]`;
    if (m.role !== "user" && m.role !== "assistant") problems.push(`${where}: role ${m.role}`);
    if (i > 0 && messages[i - 1]?.role === m.role)
      problems.push(`${where}: two ${m.role} messages in a row`);
    const blocks: MessagesRequest[] =
      typeof m.content === "string" ? [{ type: "text", text: m.content }] : (m.content ?? []);
    if (blocks.length === 0) problems.push(`${where}: empty content`);
    for (const b of blocks) {
      count(b);
      if (b.type === "text" && (typeof b.text !== "string" || b.text.trim() === ""))
        problems.push(`${where}: an empty text block`);
      if (b.type === "tool_use") {
        if (m.role !== "assistant") problems.push(`${where}: tool_use in a user message`);
        if (typeof b.input !== "object" || b.input === null || Array.isArray(b.input))
          problems.push(`${where}: tool_use ${b.id}'s input is not an object`);
        if (ids.has(b.id)) problems.push(`${where}: tool_use id ${b.id} is used twice`);
        ids.add(b.id);
      }
    }
    // Every tool_use is answered by a tool_result, first in the next message, and only those.
    const uses = blocks.filter((b) => b.type === "tool_use").map((b) => b.id as string);
    const next = messages[i + 1];
    if (m.role === "assistant" && uses.length > 0 && next) {
      const nextBlocks: MessagesRequest[] = Array.isArray(next.content) ? next.content : [];
      const results = nextBlocks.filter((b) => b.type === "tool_result");
      const answered = results.map((b) => b.tool_use_id as string);
      for (const id of uses)
        if (!answered.includes(id)) problems.push(`${where}: tool_use ${id} has no tool_result`);
      const firstOther = nextBlocks.findIndex((b) => b.type !== "tool_result");
      if (firstOther !== -1 && firstOther < results.length)
        problems.push(`messages[${i + 1}]: tool_result blocks must come first`);
    }
    if (m.role === "user" && Array.isArray(m.content)) {
      const prev = messages[i - 1];
      const prevUses = new Set(
        (Array.isArray(prev?.content) ? prev.content : [])
          .filter((b: MessagesRequest) => b.type === "tool_use")
          .map((b: MessagesRequest) => b.id),
      );
      for (const b of m.content)
        if (b.type === "tool_result" && !prevUses.has(b.tool_use_id))
          problems.push(`${where}: tool_result for ${b.tool_use_id}, no such tool_use before it`);
    }
  });
  if (messages.at(-1)?.role !== "user") problems.push("the last message is not the user's");
  if (breakpoints > 4) problems.push(`${breakpoints} cache_control breakpoints (at most 4)`);
  return problems;
}

function send(res: ServerResponse, status: number, body: unknown, headers = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/**
 * The API on 127.0.0.1; `script(body, n)` answers the n-th request (0-based). A request that
 * breaks a rule is answered 400 invalid_request_error, as the API does.
 */
export async function startMessagesApi(
  script: (body: MessagesRequest, n: number) => Answer,
): Promise<MessagesApi> {
  const bodies: MessagesRequest[] = [];
  const problems: string[] = [];
  let n = 0;
  let ids = 0;
  // The server answers through the returned object's `respond`, which a test may replace.
  let api: Pick<MessagesApi, "respond"> = { respond: script };
  const server = await startServer((req: SeenRequest, res) => {
    if (req.method !== "POST" || !req.url.startsWith("/v1/messages")) {
      send(res, 404, { type: "error", error: { type: "not_found_error", message: req.url } });
      return;
    }
    const body = JSON.parse(req.body) as MessagesRequest;
    const index = n++;
    bodies.push(body);
    const wrong = messagesProblems(body);
    if (wrong.length > 0) {
      problems.push(...wrong.map((p) => `request ${index}: ${p}`));
      send(res, 400, {
        type: "error",
        error: { type: "invalid_request_error", message: wrong.join("; ") },
      });
      return;
    }
    const answer = api.respond(body, index);
    if (answer === "hang") return;
    if ("status" in answer) {
      send(
        res,
        answer.status,
        { type: "error", error: { type: answer.type, message: answer.message } },
        {
          ...(answer.retryAfter !== undefined ? { "retry-after": String(answer.retryAfter) } : {}),
          ...(answer.retryAfterMs !== undefined
            ? { "retry-after-ms": String(answer.retryAfterMs) }
            : {}),
        },
      );
      return;
    }
    const stop =
      answer.stop_reason ??
      (answer.content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn");
    send(res, 200, {
      id: `msg_${++ids}`,
      type: "message",
      role: "assistant",
      model: body.model,
      content: answer.content,
      stop_reason: stop,
      stop_sequence: null,
      usage: { input_tokens: 100, output_tokens: 20, ...answer.usage },
    });
  });
  const result: MessagesApi = Object.assign(server, { bodies, problems, respond: script });
  api = result;
  return result;
}
