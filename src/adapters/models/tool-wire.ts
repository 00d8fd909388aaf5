/**
 * What the model adapters share: the output tool, API-safe tool names, how a replayed call's
 * input is made an object, the words for an answer not taken, how a turn's calls become the
 * engine's answer, and the bound on how long a provider may make a retry wait.
 */

import type { TokenUsage } from "../../core/engine/journal.ts";
import type { ModelAnswer } from "../../core/engine/ports.ts";

/** The tool an agent gives its final output through; its input schema is the output schema. */
export const OUTPUT_TOOL = "submit_output";

/** The output tool's description, the same for every provider. */
export const OUTPUT_TOOL_DESCRIPTION =
  "Give your final output. Call this exactly once, when you are done.";

/**
 * Tool names the providers accept ([a-zA-Z0-9_-], up to 64 characters):
 * `tool.workspace.read_file` becomes `workspace__read_file`.
 */
export function toApiName(ref: string): string {
  return ref.replace(/^tool\./, "").replace(/\./g, "__");
}

/** What an assistant turn with nothing to replay says, so the message is never empty. */
export const NOTHING_SAID = "(no answer)";

/** The answer to an output call that was not taken (the engine's correction says why). */
export const EARLY = `Not taken: ${OUTPUT_TOOL} was called in the same turn as other tools, before their results. Read the results, then call ${OUTPUT_TOOL} on its own.`;

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A tool call's input as the APIs require it: an object (anything else is wrapped). */
export const asObject = (v: unknown): Record<string, unknown> => (isObject(v) ? v : { value: v });

/** The longest wait before a retry the API may ask for; a longer one is cut to this. */
export const MAX_RETRY_WAIT_SECONDS = 60;

/**
 * `fetch` as an SDK's retries see it, with a `retry-after` (or `retry-after-ms`) longer than
 * `cap` seconds cut to it: an SDK would otherwise sleep as long as the API says (an hour for
 * `retry-after: 3600`). An outage that outlasts the retries ends the step as unavailable, and
 * the run is resumed later instead of hanging.
 */
export function boundedRetryAfter(inner: typeof fetch, cap: number): typeof fetch {
  return async (input, init) => {
    const res = await inner(input, init);
    if (waitSeconds(res.headers) <= cap) return res;
    const headers = new Headers(res.headers);
    headers.delete("retry-after");
    headers.set("retry-after-ms", String(Math.round(cap * 1000)));
    return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
  };
}

/** How long a response asks to wait before a retry, in seconds (0 when it does not say). */
function waitSeconds(headers: Headers): number {
  const ms = headers.get("retry-after-ms");
  if (ms !== null && Number.isFinite(Number(ms))) return Number(ms) / 1000;
  const after = headers.get("retry-after");
  if (after === null || after.trim() === "") return 0;
  if (Number.isFinite(Number(after))) return Number(after);
  const at = Date.parse(after);
  return Number.isNaN(at) ? 0 : (at - Date.now()) / 1000;
}

/** Whether an HTTP status after the SDK's retries is an outage (the run pauses, resumable). */
export function isOutageStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** One call of a model's turn, as the provider's answer gives it (its API name). */
export interface WireCall {
  id: string;
  name: string;
  input: unknown;
}

/**
 * A turn's answer for the engine. Every call other than the output runs (or is denied) first:
 * an output given beside them was written before their results, so it is answered and asked
 * for again, never taken. No call at all (prose, a refusal, a stop with nothing said): the text
 * stands as the output, which the engine takes only when the agent has no output schema, and
 * otherwise corrects. `stop` is a stop reason the engine must hear of (max_tokens, …).
 */
export function answerOf(
  uses: readonly WireCall[],
  names: ReadonlyMap<string, string>,
  text: string,
  stop: { stop?: string },
  usage: TokenUsage | undefined,
): ModelAnswer {
  const said = text ? { text } : {};
  const spent = usage ? { usage } : {};
  const output = uses.find((u) => u.name === OUTPUT_TOOL);
  const calls = uses
    .filter((u) => u !== output)
    .map((u) => ({ id: u.id, tool: names.get(u.name) ?? u.name, input: u.input }));
  if (calls.length > 0)
    return {
      response: {
        kind: "tool_calls",
        calls,
        ...said,
        ...(output ? { early: { id: output.id, output: output.input } } : {}),
        ...stop,
      },
      ...spent,
    };
  if (output)
    return {
      response: { kind: "output", output: output.input, id: output.id, ...said, ...stop },
      ...spent,
    };
  return { response: { kind: "output", output: text, ...said, ...stop }, ...spent };
}
