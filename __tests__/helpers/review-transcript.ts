/**
 * The review example's model script as a recorded transcript the local Messages API
 * (messages-api.ts) or Chat Completions API (chat-completions-api.ts) plays back: each review agent is known by the opening of its instructions,
 * and a request is answered with the script's turn for it, as tool_use blocks the API would
 * send. Used by the recovery tests and the caching bench.
 */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import type { ChatAnswer, ChatRequest } from "./chat-completions-api.ts";
import type { Answer, AnswerBlock, MessagesRequest } from "./messages-api.ts";
import { REVIEW_SCRIPT } from "./review-run.ts";

/** Each review agent by the opening of its instructions (its system prompt). */
export const OPENINGS = {
  Decider: "You decide what to do about each unresolved review thread",
  Planner: "Plan the fixes the decisions call for",
  TestWriter: "Write the failing tests the plan names",
  Builder: "Make the planned tests pass",
  StandardsReviewer: "You review a change against the repository's conventions",
} as const;
export type ReviewAgent = keyof typeof OPENINGS;

export const reviewAgentOf = (body: MessagesRequest): ReviewAgent | "?" =>
  (Object.keys(OPENINGS) as ReviewAgent[]).find((a) =>
    JSON.stringify(body.system).includes(OPENINGS[a]),
  ) ?? "?";

type Turn = { toolCalls?: { tool: string; input: unknown }[]; output?: unknown };

const SCRIPT = (
  parseYaml(readFileSync(REVIEW_SCRIPT, "utf8")) as { agents: Record<ReviewAgent, Turn[]> }
).agents;

/**
 * The script's turn for a request, as the API would send it: the turn is the number of
 * assistant messages already in the conversation (so a retry or a resume asks the same turn).
 */
export function transcriptAnswer(body: MessagesRequest): Answer {
  const agent = reviewAgentOf(body);
  if (agent === "?") throw new Error("a request from no known agent");
  const turn = (body.messages as { role: string }[]).filter((m) => m.role === "assistant").length;
  const t = SCRIPT[agent][turn];
  if (!t) throw new Error(`no turn ${turn} scripted for ${agent}`);
  const content: AnswerBlock[] = (t.toolCalls ?? []).map((c, i) => ({
    type: "tool_use",
    id: `toolu_${agent}_${turn}_${i}`,
    name: c.tool.replace(/^tool\./, "").replace(/\./g, "__"),
    input: c.input,
  }));
  if (t.output !== undefined)
    content.push({
      type: "tool_use",
      id: `toolu_${agent}_${turn}_out`,
      name: "submit_output",
      input: t.output,
    });
  return { content, stop_reason: "tool_use" };
}

/** A Chat Completions request's agent: by its system message, as the openai adapter sends it. */
export const chatAgentOf = (body: ChatRequest): ReviewAgent | "?" => {
  const system = JSON.stringify(
    (body.messages as { role: string; content: unknown }[]).filter(
      (m) => m.role === "system" || m.role === "developer",
    ),
  );
  return (Object.keys(OPENINGS) as ReviewAgent[]).find((a) => system.includes(OPENINGS[a])) ?? "?";
};

/** The script's turn for a Chat Completions request, as function calls the API would send. */
export function transcriptChatAnswer(body: ChatRequest): ChatAnswer {
  const agent = chatAgentOf(body);
  if (agent === "?") throw new Error("a request from no known agent");
  // The script's turns are all calls: an assistant message without any (a prose answer the
  // test injected, and its correction) is not one of them.
  const turn = (body.messages as { role: string; tool_calls?: unknown[] }[]).filter(
    (m) => m.role === "assistant" && (m.tool_calls?.length ?? 0) > 0,
  ).length;
  const t = SCRIPT[agent][turn];
  if (!t) throw new Error(`no turn ${turn} scripted for ${agent}`);
  const calls = (t.toolCalls ?? []).map((c, i) => ({
    id: `call_${agent}_${turn}_${i}`,
    name: c.tool.replace(/^tool\./, "").replace(/\./g, "__"),
    arguments: c.input,
  }));
  if (t.output !== undefined)
    calls.push({ id: `call_${agent}_${turn}_out`, name: "submit_output", arguments: t.output });
  return { content: null, tool_calls: calls, finish_reason: "tool_calls" };
}
