/**
 * A local server that speaks OpenAI's Chat Completions API (`POST /v1/chat/completions`) as the
 * `openai` SDK expects: chat.completion objects, error bodies of the API's shape, `retry-after`
 * on 429/5xx. Each request is checked against the rules the real API enforces on a conversation
 * (chatProblems), and answered by the test's script, so a request OpenAI (or a strict compatible
 * server) would refuse with a 400 fails the test here instead of passing a fake fetch.
 */
import type { ServerResponse } from "node:http";
import { type LocalServer, type SeenRequest, startServer } from "./local-server.ts";

/** One function call of an answer; `arguments` as text is sent as is (a model may break JSON). */
export interface AnswerCall {
  id?: string;
  name: string;
  arguments: unknown;
}

/** What the script answers a request with: a message, or an HTTP error. */
export type ChatAnswer =
  | {
      content?: string | null;
      refusal?: string;
      tool_calls?: AnswerCall[];
      finish_reason?: string;
      usage?: { prompt_tokens?: number; completion_tokens?: number; cached_tokens?: number };
    }
  | { status: number; type: string; message: string; retryAfter?: number; retryAfterMs?: number };

// biome-ignore lint/suspicious/noExplicitAny: request bodies are loose JSON
export type ChatRequest = Record<string, any>;

export interface ChatApi extends LocalServer {
  /** The base URL the SDK is given (`…/v1`). */
  baseURL: string;
  /** The request bodies, in order. */
  bodies: ChatRequest[];
  /** Every rule a request broke, as `request N: …`. */
  problems: string[];
  /** What answers each request (the script given); "hang" leaves the request unanswered. */
  respond: (body: ChatRequest, n: number) => ChatAnswer | "hang";
}

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const ROLES = new Set(["system", "developer", "user", "assistant", "tool"]);

const isObjectJson = (text: unknown): boolean => {
  if (typeof text !== "string") return false;
  try {
    const v = JSON.parse(text);
    return typeof v === "object" && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
};

/** The rules Chat Completions enforces that a conversation replayed by an adapter can break. */
export function chatProblems(body: ChatRequest): string[] {
  const problems: string[] = [];
  if (typeof body.model !== "string" || body.model === "") problems.push("model is not set");
  for (const field of ["max_tokens", "max_completion_tokens"])
    if (field in body && (!Number.isInteger(body[field]) || body[field] < 1))
      problems.push(`${field} is not a positive integer`);
  if ("max_tokens" in body && "max_completion_tokens" in body)
    problems.push("both max_tokens and max_completion_tokens are set");
  if ("temperature" in body && !(body.temperature >= 0 && body.temperature <= 2))
    problems.push("temperature is out of [0, 2]");
  const tools: ChatRequest[] = Array.isArray(body.tools) ? body.tools : [];
  const toolNames = new Set<string>();
  for (const t of tools) {
    if (t.type !== "function") problems.push(`tool type ${JSON.stringify(t.type)}`);
    const name = t.function?.name;
    if (!NAME.test(String(name))) problems.push(`tool name ${JSON.stringify(name)}`);
    if (toolNames.has(name)) problems.push(`tool ${name} is offered twice`);
    toolNames.add(name);
    if (t.function?.parameters?.type !== "object")
      problems.push(`tool ${name}: parameters.type must be "object"`);
  }
  const messages: ChatRequest[] = Array.isArray(body.messages) ? body.messages : [];
  if (messages.length === 0) problems.push("messages is empty");
  const ids = new Set<string>();
  /** The calls of the last assistant turn not yet answered by a tool message. */
  let open: string[] = [];
  /** The calls of the last assistant turn, which tool messages may answer. */
  let answerable = new Set<string>();
  messages.forEach((m, i) => {
    const where = `messages[${i}]`;
    if (!ROLES.has(m.role)) problems.push(`${where}: role ${m.role}`);
    if (m.role !== "tool" && open.length > 0) {
      problems.push(
        `${where}: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id' (${open.join(", ")})`,
      );
      open = [];
    }
    if (m.role === "assistant") {
      const calls: ChatRequest[] = Array.isArray(m.tool_calls) ? m.tool_calls : [];
      const hasText = typeof m.content === "string" ? m.content !== "" : Array.isArray(m.content);
      if (!hasText && calls.length === 0)
        problems.push(`${where}: content is required unless tool_calls is specified`);
      if (m.tool_calls !== undefined && calls.length === 0)
        problems.push(`${where}: tool_calls is an empty array`);
      for (const c of calls) {
        if (typeof c.id !== "string" || c.id === "") problems.push(`${where}: a call with no id`);
        if (ids.has(c.id)) problems.push(`${where}: tool_call id ${c.id} is used twice`);
        ids.add(c.id);
        if (c.type !== "function") problems.push(`${where}: call ${c.id} type ${c.type}`);
        if (!isObjectJson(c.function?.arguments))
          problems.push(`${where}: call ${c.id}'s arguments are not a JSON object`);
      }
      open = calls.map((c) => c.id);
      answerable = new Set(open);
    } else if (m.role === "tool") {
      if (!answerable.has(m.tool_call_id))
        problems.push(
          `${where}: messages with role 'tool' must be a response to a preceding message with 'tool_calls' (${m.tool_call_id})`,
        );
      else if (!open.includes(m.tool_call_id))
        problems.push(`${where}: call ${m.tool_call_id} is answered twice`);
      open = open.filter((id) => id !== m.tool_call_id);
      if (typeof m.content !== "string") problems.push(`${where}: tool content is not text`);
    } else {
      answerable = new Set();
      if (typeof m.content !== "string" && !Array.isArray(m.content))
        problems.push(`${where}: content is missing`);
    }
  });
  if (open.length > 0)
    problems.push(`the last assistant message's calls are not all answered (${open.join(", ")})`);
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
export async function startChatApi(
  script: (body: ChatRequest, n: number) => ChatAnswer,
): Promise<ChatApi> {
  const bodies: ChatRequest[] = [];
  const problems: string[] = [];
  let n = 0;
  let ids = 0;
  let api: Pick<ChatApi, "respond"> = { respond: script };
  const server = await startServer((req: SeenRequest, res) => {
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      send(res, 404, {
        error: { message: `Unknown request URL: ${req.url}`, type: "invalid_request_error" },
      });
      return;
    }
    const body = JSON.parse(req.body) as ChatRequest;
    const index = n++;
    bodies.push(body);
    const wrong = chatProblems(body);
    if (wrong.length > 0) {
      problems.push(...wrong.map((p) => `request ${index}: ${p}`));
      send(res, 400, {
        error: {
          message: wrong.join("; "),
          type: "invalid_request_error",
          param: null,
          code: null,
        },
      });
      return;
    }
    const answer = api.respond(body, index);
    if (answer === "hang") return;
    if ("status" in answer) {
      send(
        res,
        answer.status,
        { error: { message: answer.message, type: answer.type, param: null, code: null } },
        {
          ...(answer.retryAfter !== undefined ? { "retry-after": String(answer.retryAfter) } : {}),
          ...(answer.retryAfterMs !== undefined
            ? { "retry-after-ms": String(answer.retryAfterMs) }
            : {}),
        },
      );
      return;
    }
    const calls = (answer.tool_calls ?? []).map((c) => ({
      ...(c.id !== undefined ? { id: c.id } : {}),
      type: "function",
      function: {
        name: c.name,
        arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments),
      },
    }));
    const u = answer.usage ?? {};
    const prompt = u.prompt_tokens ?? 100;
    const completion = u.completion_tokens ?? 20;
    send(res, 200, {
      id: `chatcmpl-${++ids}`,
      object: "chat.completion",
      created: 1_780_000_000,
      model: body.model,
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: answer.content ?? null,
            refusal: answer.refusal ?? null,
            ...(calls.length > 0 ? { tool_calls: calls } : {}),
          },
          logprobs: null,
          finish_reason: answer.finish_reason ?? (calls.length > 0 ? "tool_calls" : "stop"),
        },
      ],
      usage: {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: prompt + completion,
        prompt_tokens_details: { cached_tokens: u.cached_tokens ?? 0, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 0 },
      },
      system_fingerprint: null,
    });
  });
  const result: ChatApi = Object.assign(server, {
    baseURL: `${server.origin}/v1`,
    bodies,
    problems,
    respond: script,
  });
  api = result;
  return result;
}
