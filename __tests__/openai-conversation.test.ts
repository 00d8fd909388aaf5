/**
 * The OpenAI adapter over the wire (issue 24, item 2): `terfyn run` with the agents on
 * `openai/…` and the API at a local server that speaks Chat Completions as the `openai` SDK
 * expects (helpers/chat-completions-api.ts), so the SDK's real requests are read and every
 * conversation the adapter replays is checked against the rules the API enforces. The same
 * contract as the Anthropic adapter: prose answers and `length` stops corrected, unique call
 * ids, every call of a turn through the gate before an output counts, outages paused and
 * resumable, SIGTERM aborting the request; plus what compatible servers do (no call ids, ids
 * twice in a turn, arguments that are not JSON, no key on a local server).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { OpenAIModel } from "../src/adapters/models/openai.ts";
import {
  type AnswerCall,
  type ChatAnswer,
  type ChatApi,
  type ChatRequest,
  chatProblems,
  startChatApi,
} from "./helpers/chat-completions-api.ts";
import { runTerfyn } from "./helpers/cli.ts";
import { edit } from "./helpers/example-project.ts";
import {
  exampleOn,
  journalOf,
  perAgent as perAgentOf,
  state,
  TASK,
  terminateWhileAsked,
} from "./helpers/model-run.ts";

const apis: ChatApi[] = [];
afterEach(async () => {
  for (const a of apis.splice(0)) await a.close();
});

const output = (id: string | undefined, input: unknown): AnswerCall => ({
  ...(id !== undefined ? { id } : {}),
  name: "submit_output",
  arguments: input,
});
const write = (id: string | undefined, path: string): AnswerCall => ({
  ...(id !== undefined ? { id } : {}),
  name: "workspace__write_file",
  arguments: { path, content: "package src\n" },
});

/** Which agent a request is for, by its system message. */
const agentOf = (body: ChatRequest) =>
  /You are the (Implementer|Reviewer)/.exec(String(body.messages?.[0]?.content))?.[1] ?? "?";

const perAgent = (script: Record<string, ChatAnswer[]>) => perAgentOf(agentOf, script);

/** The example with every agent on `openai/gpt-test`, the API at the local server. */
const example = (api: ChatApi) =>
  exampleOn("openai/gpt-test", { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: api.baseURL });

async function serve(script: (body: ChatRequest, n: number) => ChatAnswer) {
  const api = await startChatApi(script);
  apis.push(api);
  return api;
}

async function run(api: ChatApi) {
  const ex = example(api);
  const r = await runTerfyn(ex.args, ex.project, ex.env);
  return { ...r, journal: journalOf(ex.runDir), workspace: ex.workspace, ex };
}

const oneTurnEach = () =>
  serve(
    perAgent({
      Implementer: [{ tool_calls: [output("call_i", state(false, "added"))] }],
      Reviewer: [{ tool_calls: [output("call_r", state(true, "fine"))] }],
    }),
  );

describe("the OpenAI adapter's conversations, against a local Chat Completions API", () => {
  it("a prose answer and an empty length stop are corrected; both corrections are usable", async () => {
    const api = await serve(
      perAgent({
        Implementer: [
          { content: "I would add the function and a test." },
          { content: null, finish_reason: "length" },
          { tool_calls: [output("call_3", state(false, "added"))] },
        ],
        Reviewer: [{ tool_calls: [output("call_r", state(true, "fine"))] }],
      }),
    );
    const r = await run(api);
    expect(api.problems).toEqual([]);
    expect(r.code, r.stderr).toBe(0);
    expect(api.bodies).toHaveLength(4);
    expect(JSON.stringify(api.bodies[1]?.messages.at(-1))).toMatch(/submit_output/);
    expect(JSON.stringify(api.bodies[2]?.messages.at(-1))).toMatch(/max_tokens|token limit/);
    // At a base URL (a compatible server), the limit goes in max_tokens.
    expect(api.bodies[0]).toMatchObject({ max_tokens: 4096 });
    expect("max_completion_tokens" in (api.bodies[0] ?? {})).toBe(false);
  });

  it("an output rejected twice by the schema: every replayed output call keeps its own id, each answered", async () => {
    const api = await serve(
      perAgent({
        Implementer: [
          { tool_calls: [output("call_a", { task: TASK })] },
          { tool_calls: [output("call_b", { approved: "no" })] },
          { tool_calls: [output("call_c", state(false, "added"))] },
        ],
        Reviewer: [{ tool_calls: [output("call_r", state(true, "fine"))] }],
      }),
    );
    const r = await run(api);
    expect(api.problems).toEqual([]);
    expect(r.code, r.stderr).toBe(0);
    const third = api.bodies[2] as ChatRequest;
    const ids = third.messages.flatMap((m: ChatRequest) =>
      (m.tool_calls ?? []).map((c: ChatRequest) => c.id),
    );
    expect(ids).toEqual(["call_a", "call_b"]);
    const answered = third.messages
      .filter((m: ChatRequest) => m.role === "tool")
      .map((m: ChatRequest) => m.tool_call_id);
    expect(answered).toEqual(["call_a", "call_b"]);
  });

  it("tool calls in the same turn as the output run (or are denied) before an output is accepted", async () => {
    const api = await serve(
      perAgent({
        Implementer: [
          {
            content: "Writing it and done.",
            tool_calls: [write("call_w1", "src/add.go"), output("call_o1", state(false, "added"))],
          },
          { tool_calls: [output("call_o2", state(false, "added, written"))] },
        ],
        // The Reviewer is not granted write_file: the call is denied, and recorded.
        Reviewer: [
          { tool_calls: [write("call_w2", "src/evil.go"), output("call_o3", state(true, "ok"))] },
          { tool_calls: [output("call_o4", state(true, "fine"))] },
        ],
      }),
    );
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
    const second = api.bodies[1] as ChatRequest;
    const tools = second.messages.filter((m: ChatRequest) => m.role === "tool");
    expect(tools.map((m: ChatRequest) => m.tool_call_id)).toEqual(["call_w1", "call_o1"]);
    expect(tools[1].content).toMatch(/Not taken/);
    const implEnd = r.journal.find((e) => e.type === "step.end" && e.name === "Implementer") as {
      output: { feedback: string };
    };
    expect(implEnd.output.feedback).toBe("added, written");
  });

  it("a compatible server's calls with no ids, an id twice in a turn, and arguments that are not JSON", async () => {
    const api = await serve(
      perAgent({
        Implementer: [
          {
            tool_calls: [
              write(undefined, "src/a.go"),
              write("dup", "src/b.go"),
              write("dup", "src/c.go"),
              { id: "call_bad", name: "workspace__write_file", arguments: '{"path": "src/d.go",' },
            ],
          },
          { tool_calls: [{ name: "submit_output", arguments: "{not json" }] },
          { tool_calls: [output(undefined, state(false, "added"))] },
        ],
        Reviewer: [{ tool_calls: [output(undefined, state(true, "fine"))] }],
      }),
    );
    const r = await run(api);
    expect(api.problems).toEqual([]);
    expect(r.code, r.stderr).toBe(0);
    for (const f of ["a", "b", "c"])
      expect(readFileSync(join(r.workspace, "src", `${f}.go`), "utf8")).toBe("package src\n");
    // The call whose arguments broke off is refused by the gate, never run.
    expect(r.journal.filter((e) => e.type === "effect.intent")).toHaveLength(3);
    const second = api.bodies[1] as ChatRequest;
    const ids = second.messages.flatMap((m: ChatRequest) =>
      (m.tool_calls ?? []).map((c: ChatRequest) => c.id),
    );
    expect(new Set(ids).size).toBe(4);
    expect(second.messages.filter((m: ChatRequest) => m.role === "tool")).toHaveLength(4);
  });

  it("an outage after the SDK's retries stops the run at the step, resumable; the resume asks only what was not answered", async () => {
    let down = true;
    const api = await serve((body) => {
      if (agentOf(body) === "Implementer")
        return { tool_calls: [output("call_i", state(false, "added"))] };
      if (down) return { status: 503, type: "server_error", message: "busy", retryAfterMs: 1 };
      return { tool_calls: [output("call_r", state(true, "fine"))] };
    });
    const ex = example(api);
    const first = await runTerfyn(ex.args, ex.project, ex.env);
    expect(first.code, first.stderr).toBe(1);
    expect(first.stderr).toMatch(/the model's API did not answer .*503/);
    expect(JSON.parse(readFileSync(join(ex.runDir, "state.json"), "utf8")).status).toBe(
      "interrupted",
    );
    expect(api.bodies.filter((b) => agentOf(b) === "Reviewer")).toHaveLength(5);
    down = false;
    const second = await runTerfyn(["run", "--resume", ex.runDir], ex.project, ex.env);
    expect(second.code, second.stderr).toBe(0);
    expect(api.problems).toEqual([]);
    expect(api.bodies.filter((b) => agentOf(b) === "Implementer")).toHaveLength(1);
  });

  it("a refused request (400, 401) is not an outage: the run fails, not paused", async () => {
    const api = await serve(() => ({
      status: 401,
      type: "invalid_request_error",
      message: "Incorrect API key provided",
    }));
    const ex = example(api);
    const r = await runTerfyn(ex.args, ex.project, ex.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Incorrect API key");
    expect(JSON.parse(readFileSync(join(ex.runDir, "state.json"), "utf8")).status).toBe("failed");
    expect(api.bodies).toHaveLength(1);
  });

  it("a retry-after longer than the bound is waited only as long as the bound", async () => {
    let n = 0;
    const api = await serve(() =>
      n++ === 0
        ? { status: 429, type: "rate_limit_exceeded", message: "slow down", retryAfter: 50 }
        : { tool_calls: [output("call_x", { ok: true })] },
    );
    const model = new OpenAIModel("k", {
      baseURL: api.baseURL,
      maxRetries: 1,
      maxRetryWaitSeconds: 0.2,
    });
    const started = Date.now();
    const answer = await model.turn({
      agent: "A",
      model: "openai/gpt-test",
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
    const api = await serve((body) =>
      agentOf(body) === "Implementer"
        ? { tool_calls: [output("call_i", state(false, "added"))] }
        : { tool_calls: [output("call_r", state(true, "fine"))] },
    );
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
    hang = false;
    const resumed = await runTerfyn(["run", "--resume", ex.runDir], ex.project, ex.env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(api.problems).toEqual([]);
    expect(api.bodies.filter((b) => agentOf(b) === "Implementer")).toHaveLength(2);
  }, 120_000);

  it("maxTokens, temperature and cached prompt tokens: sent and counted", async () => {
    const api = await serve(
      perAgent({
        Implementer: [
          {
            tool_calls: [output("call_i", state(false, "added"))],
            usage: { prompt_tokens: 2000, completion_tokens: 30, cached_tokens: 1536 },
          },
        ],
        Reviewer: [{ tool_calls: [output("call_r", state(true, "fine"))] }],
      }),
    );
    const ex = example(api);
    edit(
      ex.project,
      "main.agent",
      "agent Implementer {\n",
      "agent Implementer {\n  maxTokens 1200\n  temperature 0.25\n",
    );
    const r = await runTerfyn(ex.args, ex.project, ex.env);
    expect(r.code, r.stderr).toBe(0);
    expect(api.bodies.find((b) => agentOf(b) === "Implementer")).toMatchObject({
      max_tokens: 1200,
      temperature: 0.25,
    });
    const rev = api.bodies.find((b) => agentOf(b) === "Reviewer");
    expect(rev && "temperature" in rev).toBe(false);
    const turn = journalOf(ex.runDir).find((e) => e.type === "model.turn") as {
      usage: Record<string, number>;
    };
    expect(turn.usage).toEqual({
      input_tokens: 464,
      output_tokens: 30,
      cache_read_input_tokens: 1536,
    });
  });

  it("a provider block is honoured: its apiKeyEnv, its baseUrl and its maxTokensField (no OPENAI_* variable set)", async () => {
    const api = await oneTurnEach();
    const ex = example(api);
    const remote = "https://llm.example.invalid/v1";
    writeFileSync(
      join(ex.project, "provider.agent"),
      `provider openai { apiKeyEnv "TEAM_OPENAI_KEY" baseUrl "${remote}" }\n`,
    );
    const { OPENAI_API_KEY: _k, OPENAI_BASE_URL: _u, ...rest } = ex.env;
    // A server elsewhere than this machine needs the key: refused before any request.
    const missing = await runTerfyn(ex.args, ex.project, rest);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("set TEAM_OPENAI_KEY");
    writeFileSync(
      join(ex.project, "provider.agent"),
      `provider openai { apiKeyEnv "TEAM_OPENAI_KEY" baseUrl "${api.baseURL}" maxTokensField "max_completion_tokens" }\n`,
    );
    const r = await runTerfyn([...ex.args.slice(0, -1), `${ex.runDir}-2`], ex.project, {
      ...rest,
      TEAM_OPENAI_KEY: "sk-team",
    });
    expect(r.code, r.stderr).toBe(0);
    expect(api.bodies).toHaveLength(2);
    expect(api.problems).toEqual([]);
    expect(api.bodies[0]).toMatchObject({ max_completion_tokens: 4096 });
    expect(api.requests[0]?.headers.authorization).toBe("Bearer sk-team");
  });

  it("a server on this machine needs no key (Ollama, llama.cpp): none of the run's secrets is sent", async () => {
    const api = await oneTurnEach();
    const ex = example(api);
    const { OPENAI_API_KEY: _k, ...rest } = ex.env;
    const r = await runTerfyn(ex.args, ex.project, { ...rest, ANTHROPIC_API_KEY: "sk-ant-x" });
    expect(r.code, r.stderr).toBe(0);
    expect(api.requests[0]?.headers.authorization).toBe("Bearer no-key");
    expect(JSON.stringify(api.requests)).not.toContain("sk-ant-x");
  });

  it("the run's environment decides, not the process's: OPENAI_ORG_ID or a stray OPENAI_BASE_URL of the process is not used", async () => {
    const api = await oneTurnEach();
    const saved = process.env.OPENAI_ORG_ID;
    process.env.OPENAI_ORG_ID = "org-from-process";
    try {
      // The SDK reads its defaults when the client is made.
      const model = new OpenAIModel("k", { baseURL: api.baseURL });
      await model.turn({
        agent: "Implementer",
        model: "openai/gpt-test",
        system: "You are the Implementer.",
        messages: [{ role: "user", content: "{}" }],
        tools: [],
        ordinal: 0,
      });
    } finally {
      if (saved === undefined) delete process.env.OPENAI_ORG_ID;
      else process.env.OPENAI_ORG_ID = saved;
    }
    expect(api.requests[0]?.headers["openai-organization"]).toBeUndefined();
  });

  it("chatProblems catches what the API refuses", () => {
    const base = {
      model: "m",
      tools: [
        { type: "function", function: { name: "submit_output", parameters: { type: "object" } } },
      ],
    };
    const call = (id: string, args: string) => ({
      id,
      type: "function",
      function: { name: "submit_output", arguments: args },
    });
    expect(
      chatProblems({
        ...base,
        messages: [
          { role: "user", content: "x" },
          { role: "assistant", content: null, tool_calls: [call("c1", '"text"')] },
          { role: "user", content: "again" },
        ],
      }),
    ).toEqual([
      "messages[1]: call c1's arguments are not a JSON object",
      "messages[2]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id' (c1)",
    ]);
    expect(
      chatProblems({
        ...base,
        messages: [
          { role: "user", content: "x" },
          { role: "assistant", content: null, tool_calls: [call("c1", "{}")] },
          { role: "tool", tool_call_id: "c1", content: "no" },
          { role: "assistant", content: null, tool_calls: [call("c1", "{}")] },
          { role: "tool", tool_call_id: "c2", content: "no" },
        ],
      }),
    ).toEqual([
      "messages[3]: tool_call id c1 is used twice",
      "messages[4]: messages with role 'tool' must be a response to a preceding message with 'tool_calls' (c2)",
      "the last assistant message's calls are not all answered (c1)",
    ]);
    expect(
      chatProblems({
        ...base,
        messages: [
          { role: "user", content: "x" },
          { role: "assistant", content: null },
        ],
      }),
    ).toEqual(["messages[1]: content is required unless tool_calls is specified"]);
  });
});
