/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: a guard is source text, template placeholders included */
/**
 * The guards of the model adapters (issue 24): what keeps a conversation the Anthropic adapter
 * replays one the Messages API accepts (a prose answer, an empty stop, a second correction, an
 * output beside tool calls), and every tool call of a turn run through the gate before an
 * output is taken. Each with the test that must catch its removal. Run by scripts/mutate.ts
 * (the `models` set).
 */
import type { Mutation } from "./mutation.ts";

const T = "__tests__/anthropic-conversation.test.ts";
const ADAPTER = "src/adapters/models/anthropic.ts";

export const MODELS: Mutation[] = [
  {
    group: "adapter",
    guard: "the run's ANTHROPIC_BASE_URL reaches the SDK",
    file: "src/adapters/models/model-router.ts",
    find: "        ...(baseURL ? { baseURL } : {}),",
    replace: "",
    test: T,
    filter: "a prose answer",
  },
  {
    group: "adapter",
    guard: "each replayed output call keeps its own id",
    file: ADAPTER,
    find: "        pending = r.id ?? `toolu_terfyn_output_${++legacy}`;",
    replace: '        pending = "output";',
    test: T,
    filter: "keeps its own id",
  },
  {
    group: "adapter",
    guard: "an assistant turn that said nothing is replayed with text, never empty",
    file: ADAPTER,
    find: 'text: typeof r.output === "string" && r.output.trim() ? r.output : NOTHING_SAID,',
    replace: "text: String(r.output),",
    test: T,
    filter: "a prose answer",
  },
  {
    group: "adapter",
    guard: "an output beside tool calls is not taken before the calls run",
    file: ADAPTER,
    find: "    if (calls.length > 0)\n      return {",
    replace: "    if (calls.length > 0 && !output)\n      return {",
    test: T,
    filter: "in the same turn as the output",
  },
  {
    group: "adapter",
    guard: "an output call given beside tool calls is answered in the next message",
    file: ADAPTER,
    find: "          ...(early\n",
    replace: "          ...(false\n",
    test: T,
    filter: "in the same turn as the output",
  },
  {
    group: "adapter",
    guard: "an answer cut off at max_tokens is corrected as such",
    file: "src/core/engine/interpreter.ts",
    find: '  if (response.stop === "max_tokens")',
    replace: "  if (false)",
    test: T,
    filter: "a prose answer",
  },
  {
    group: "recovery",
    guard: "an outage stops the run resumable at the step, not failed",
    file: "src/core/engine/interpreter.ts",
    find: '          if (e instanceof ModelUnavailable || (e as Error)?.name === "ModelUnavailable")',
    replace: "          if (false)",
    test: T,
    filter: "an outage after the SDK's retries",
  },
  {
    group: "recovery",
    guard: "429, 5xx and overload after the retries are an outage",
    file: ADAPTER,
    find: "        throw unavailable(e) ?? e;",
    replace: "        throw e;",
    test: T,
    filter: "an outage after the SDK's retries",
  },
  {
    group: "recovery",
    guard: "a retry-after longer than the bound is cut to it",
    file: ADAPTER,
    find: "    if (waitSeconds(res.headers) <= cap) return res;",
    replace: "    return res;",
    test: T,
    filter: "waited only as long as the bound",
  },
  {
    group: "recovery",
    guard: "the run's interruption aborts the model request",
    file: ADAPTER,
    find: "        request.signal ? { signal: request.signal } : {},",
    replace: "        {},",
    test: T,
    filter: "SIGTERM during a model call",
  },
];
