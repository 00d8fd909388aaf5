/**
 * The Anthropic adapter over the wire (issue 24, item 1): `terfyn run` with ANTHROPIC_BASE_URL
 * pointed at a local server that speaks the Messages API (helpers/messages-api.ts), so the SDK's
 * real requests are read and every conversation the adapter replays is checked against the
 * rules the real API enforces (a rule broken is the 400 the API would answer). A model that
 * answers in prose, stops at max_tokens with nothing said, corrects itself twice, or calls tools
 * in the same turn as its output must neither break the conversation nor lose a tool call.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AnthropicModel } from "../src/adapters/models/anthropic.ts";
import { runTerfyn } from "./helpers/cli.ts";
import { edit } from "./helpers/example-project.ts";
import {
  type Answer,
  type MessagesApi,
  type MessagesRequest,
  messagesProblems,
  startMessagesApi,
} from "./helpers/messages-api.ts";
import {
  exampleOn,
  journalOf,
  perAgent as perAgentOf,
  state,
  TASK,
  terminateWhileAsked,
} from "./helpers/model-run.ts";

const apis: MessagesApi[] = [];
afterEach(async () => {
  for (const a of apis.splice(0)) await a.close();
});

const output = (id: string, input: unknown) => ({
  type: "tool_use" as const,
  id,
  name: "submit_output",
  input,
});
const write = (id: string, path: string) => ({
  type: "tool_use" as const,
  id,
  name: "workspace__write_file",
  input: { path, content: "package src\n" },
});

/** Which agent a request is for, by its system prompt. */
const agentOf = (body: MessagesRequest) =>
  /You are the (Implementer|Reviewer)/.exec(JSON.stringify(body.system))?.[1] ?? "?";

/** Answers each agent's requests in turn from its own list. */
const perAgent = (script: Record<string, Answer[]>) => perAgentOf(agentOf, script);

/** The implement-review example with every agent on `anthropic/claude-test`, and its run's args. */
const example = (api: MessagesApi) =>
  exampleOn("anthropic/claude-test", {
    ANTHROPIC_API_KEY: "sk-ant-test",
    ANTHROPIC_BASE_URL: api.origin,
  });

/** The local API answering each agent's first request with its output, and the example on it. */
async function oneTurnEach() {
  const api = await startMessagesApi(
    perAgent({
      Implementer: [{ content: [output("toolu_i", state(false, "added"))] }],
      Reviewer: [{ content: [output("toolu_r", state(true, "fine"))] }],
    }),
  );
  apis.push(api);
  return { api, ex: example(api) };
}

/** `terfyn run` of the example, in process. */
async function run(api: MessagesApi) {
  const ex = example(api);
  const r = await runTerfyn(ex.args, ex.project, ex.env);
  return { ...r, journal: journalOf(ex.runDir), workspace: ex.workspace };
}

describe("the Anthropic adapter's conversations, against a local Messages API", () => {
  it("a prose answer and an empty max_tokens stop are corrected; both corrections are usable", async () => {
    const api = await startMessagesApi(
      perAgent({
        Implementer: [
          { content: [{ type: "text", text: "I would add the function and a test." }] },
          { content: [], stop_reason: "max_tokens" },
          { content: [output("toolu_impl_3", state(false, "added"))] },
        ],
        Reviewer: [{ content: [output("toolu_rev_1", state(true, "fine"))] }],
      }),
    );
    apis.push(api);
    const r = await run(api);
    expect(api.problems).toEqual([]);
    expect(r.code, r.stderr).toBe(0);
    expect(api.bodies).toHaveLength(4);
    // The correction after the empty stop says why the answer did not count.
    const third = api.bodies[2] as MessagesRequest;
    expect(JSON.stringify(third.messages.at(-1))).toMatch(/max_tokens|token limit/);
    expect(JSON.stringify(api.bodies[1]?.messages.at(-1))).toMatch(/submit_output/);
  });

  it("an output rejected twice by the schema: every replayed output call keeps its own id", async () => {
    const api = await startMessagesApi(
      perAgent({
        Implementer: [
          { content: [output("toolu_a", { task: TASK })] },
          { content: [output("toolu_b", { approved: "no" })] },
          { content: [output("toolu_c", state(false, "added"))] },
        ],
        Reviewer: [{ content: [output("toolu_r", state(true, "fine"))] }],
      }),
    );
    apis.push(api);
    const r = await run(api);
    expect(api.problems).toEqual([]);
    expect(r.code, r.stderr).toBe(0);
    const last = api.bodies[2] as MessagesRequest;
    const ids = last.messages.flatMap((m: MessagesRequest) =>
      Array.isArray(m.content)
        ? m.content
            .filter((b: MessagesRequest) => b.type === "tool_use")
            .map((b: MessagesRequest) => b.id)
        : [],
    );
    expect(ids).toEqual(["toolu_a", "toolu_b"]);
  });

  it("tool calls in the same turn as the output run (or are denied) before an output is accepted", async () => {
    const api = await startMessagesApi(
      perAgent({
        Implementer: [
          {
            content: [
              { type: "text", text: "Writing it and done." },
              write("toolu_w1", "src/add.go"),
              output("toolu_o1", state(false, "added")),
            ],
          },
          { content: [output("toolu_o2", state(false, "added, written"))] },
        ],
        // The Reviewer is not granted write_file: the call is denied, and recorded.
        Reviewer: [
          { content: [write("toolu_w2", "src/evil.go"), output("toolu_o3", state(true, "ok"))] },
          { content: [output("toolu_o4", state(true, "fine"))] },
        ],
      }),
    );
    apis.push(api);
    const r = await run(api);
    expect(api.problems).toEqual([]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(r.workspace, "src", "add.go"), "utf8")).toBe("package src\n");
    const intents = r.journal.filter((e) => e.type === "effect.intent");
    expect(intents.map((e) => [e.agent, e.tool])).toEqual([
      ["Implementer", "tool.workspace.write_file"],
    ]);
    expect(r.journal.filter((e) => e.type === "tool.denied").map((e) => e.agent)).toEqual([
      "Reviewer",
    ]);
    // The output given with the calls was answered (not accepted), and the one after counted.
    const second = api.bodies[1] as MessagesRequest;
    const results = second.messages.at(-1).content as MessagesRequest[];
    expect(results.map((b) => b.tool_use_id).sort()).toEqual(["toolu_o1", "toolu_w1"]);
    expect(results.find((b) => b.tool_use_id === "toolu_o1")?.is_error).toBe(true);
    const end = r.journal.find((e) => e.type === "run.end") as { result?: { feedback?: string } };
    expect(end.result?.feedback).toBe("fine");
    const implEnd = r.journal.find((e) => e.type === "step.end" && e.name === "Implementer") as {
      output: { feedback: string };
    };
    expect(implEnd.output.feedback).toBe("added, written");
  });

  it("an outage after the SDK's retries stops the run at the step, resumable; the resume asks only what was not answered", async () => {
    let down = true;
    const implementer: Answer = { content: [output("toolu_i", state(false, "added"))] };
    const api = await startMessagesApi((body) => {
      if (agentOf(body) === "Implementer") return implementer;
      if (down)
        return { status: 529, type: "overloaded_error", message: "Overloaded", retryAfterMs: 1 };
      return { content: [output("toolu_r", state(true, "fine"))] };
    });
    apis.push(api);
    const ex = example(api);
    const first = await runTerfyn(ex.args, ex.project, ex.env);
    expect(first.code, first.stderr).toBe(1);
    expect(first.stderr).toMatch(/the model's API did not answer .*529/);
    expect(first.stderr).toMatch(/resume with: terfyn run --resume \S*run\n/);
    const state1 = JSON.parse(readFileSync(join(ex.runDir, "state.json"), "utf8"));
    expect(state1.status).toBe("interrupted");
    // The SDK's own retries (4), then the step stopped: five requests for the Reviewer.
    expect(api.bodies.filter((b) => agentOf(b) === "Reviewer")).toHaveLength(5);
    expect(journalOf(ex.runDir).some((e) => e.type === "run.end")).toBe(false);

    down = false;
    const second = await runTerfyn(["run", "--resume", ex.runDir], ex.project, ex.env);
    expect(second.code, second.stderr).toBe(0);
    expect(api.problems).toEqual([]);
    // The Implementer's answer came from the journal: it was asked once in all.
    expect(api.bodies.filter((b) => agentOf(b) === "Implementer")).toHaveLength(1);
    expect(JSON.parse(readFileSync(join(ex.runDir, "state.json"), "utf8")).status).toBe(
      "completed",
    );
  });

  it("a retry-after longer than the bound is waited only as long as the bound", async () => {
    let n = 0;
    const api = await startMessagesApi(() =>
      n++ === 0
        ? { status: 429, type: "rate_limit_error", message: "slow down", retryAfter: 3600 }
        : { content: [output("toolu_x", { ok: true })] },
    );
    apis.push(api);
    const model = new AnthropicModel("k", {
      baseURL: api.origin,
      maxRetries: 1,
      maxRetryWaitSeconds: 0.2,
    });
    const started = Date.now();
    const answer = await model.turn({
      agent: "A",
      model: "anthropic/claude-test",
      system: "You are A.",
      messages: [{ role: "user", content: "{}" }],
      tools: [],
      ordinal: 0,
    });
    expect(answer.response).toMatchObject({ kind: "output", output: { ok: true } });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(api.bodies).toHaveLength(2);
  });

  it("SIGTERM during a model call aborts the request at once; the resume asks again", async () => {
    let hang = true;
    const api = await startMessagesApi((body) =>
      agentOf(body) === "Implementer"
        ? { content: [output("toolu_i", state(false, "added"))] }
        : { content: [output("toolu_r", state(true, "fine"))] },
    );
    apis.push(api);
    // The first Implementer request is never answered.
    const answer = api.respond;
    api.respond = (body, n) => (hang && n === 0 ? "hang" : answer(body, n));
    const ex = example(api);
    const { code, ms, stderr } = await terminateWhileAsked(
      ex.args,
      ex.project,
      ex.env,
      () => api.bodies.length > 0,
    );
    expect(code, stderr).toBe(143);
    expect(ms).toBeLessThan(10_000);
    expect(stderr).toContain("resume with");
    hang = false;
    const resumed = await runTerfyn(["run", "--resume", ex.runDir], ex.project, ex.env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(api.problems).toEqual([]);
    expect(api.bodies.filter((b) => agentOf(b) === "Implementer")).toHaveLength(2);
  }, 120_000);

  it("each agent's maxTokens and temperature reach its requests; unsaid, max_tokens is 4096 and no temperature is sent", async () => {
    const { api, ex } = await oneTurnEach();
    edit(
      ex.project,
      "main.agent",
      "agent Implementer {\n",
      "agent Implementer {\n  maxTokens 1200\n  temperature 0.25\n",
    );
    const r = await runTerfyn(ex.args, ex.project, ex.env);
    expect(r.code, r.stderr).toBe(0);
    const impl = api.bodies.find((b) => agentOf(b) === "Implementer");
    const rev = api.bodies.find((b) => agentOf(b) === "Reviewer");
    expect(impl).toMatchObject({ max_tokens: 1200, temperature: 0.25 });
    expect(rev?.max_tokens).toBe(4096);
    expect(rev && "temperature" in rev).toBe(false);
  });

  it("cache breakpoints: the latest turn of every request; the instructions only when tools and instructions are long enough to be cached", async () => {
    const long = "Keep every change minimal and explain it in the feedback. ".repeat(90);
    const api = await startMessagesApi(
      perAgent({
        Implementer: [
          { content: [write("toolu_w", "src/add.go")] },
          { content: [output("toolu_i", state(false, "added"))] },
        ],
        Reviewer: [{ content: [output("toolu_r", state(true, "fine"))] }],
      }),
    );
    apis.push(api);
    const ex = example(api);
    edit(ex.project, "main.agent", "You are the Reviewer,", `You are the Reviewer. ${long}`);
    const r = await runTerfyn(ex.args, ex.project, ex.env);
    expect(r.code, r.stderr).toBe(0);
    expect(api.problems).toEqual([]);
    const marked = (b: MessagesRequest) => JSON.stringify(b).split('"cache_control"').length - 1;
    for (const b of api.bodies) {
      const last = b.messages.at(-1);
      const blocks = typeof last.content === "string" ? [] : last.content;
      expect(blocks.at(-1)?.cache_control, "the latest turn").toEqual({ type: "ephemeral" });
    }
    // The Implementer's instructions and tools are short: no breakpoint there (one in all).
    const impl = api.bodies.filter((b) => agentOf(b) === "Implementer");
    expect(impl).toHaveLength(2);
    for (const b of impl) {
      expect(b.system[0].cache_control).toBeUndefined();
      expect(marked(b)).toBe(1);
    }
    // The Reviewer's are long enough: cached after the instructions too.
    const rev = api.bodies.find((b) => agentOf(b) === "Reviewer");
    expect(rev?.system[0].cache_control).toEqual({ type: "ephemeral" });
    expect(rev && marked(rev)).toBe(2);
    // The second request repeats the first's conversation up to its breakpoint.
    const [a, b] = impl as [MessagesRequest, MessagesRequest];
    expect(
      JSON.stringify(b.messages[0]).replace(/,"cache_control":\{"type":"ephemeral"\}/g, ""),
    ).toBe(JSON.stringify(a.messages[0]).replace(/,"cache_control":\{"type":"ephemeral"\}/g, ""));
  });

  it("a provider block is honoured: the key from its apiKeyEnv, the API at its baseUrl (no ANTHROPIC_* variable set)", async () => {
    const { api, ex } = await oneTurnEach();
    writeFileSync(
      join(ex.project, "provider.agent"),
      `provider anthropic { apiKeyEnv "TEAM_CLAUDE_KEY" baseUrl "${api.origin}" }\n`,
    );
    const { ANTHROPIC_API_KEY: _k, ANTHROPIC_BASE_URL: _u, ...rest } = ex.env;
    const missing = await runTerfyn(ex.args, ex.project, rest);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("set TEAM_CLAUDE_KEY");
    expect(api.bodies).toHaveLength(0);
    const r = await runTerfyn([...ex.args.slice(0, -1), `${ex.runDir}-2`], ex.project, {
      ...rest,
      TEAM_CLAUDE_KEY: "sk-ant-team",
    });
    expect(r.code, r.stderr).toBe(0);
    expect(api.bodies).toHaveLength(2);
    expect(api.problems).toEqual([]);
  });

  it("messagesProblems catches what the API refuses", () => {
    const base = {
      model: "m",
      max_tokens: 10,
      tools: [{ name: "submit_output", input_schema: { type: "object" } }],
    };
    expect(
      messagesProblems({
        ...base,
        messages: [
          { role: "user", content: "x" },
          { role: "assistant", content: [output("output", "text")] },
          { role: "user", content: "again" },
        ],
      }),
    ).toEqual([
      "messages[1]: tool_use output's input is not an object",
      "messages[1]: tool_use output has no tool_result",
    ]);
    expect(
      messagesProblems({
        ...base,
        messages: [
          { role: "user", content: "x" },
          { role: "assistant", content: [output("output", {})] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "output" }] },
          { role: "assistant", content: [output("output", {})] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "output" }] },
        ],
      }),
    ).toEqual(["messages[3]: tool_use id output is used twice"]);
    expect(
      messagesProblems({
        ...base,
        messages: [
          { role: "user", content: "x" },
          { role: "assistant", content: [] },
          { role: "user", content: "y" },
        ],
      }),
    ).toEqual(["messages[1]: empty content"]);
  });
});
