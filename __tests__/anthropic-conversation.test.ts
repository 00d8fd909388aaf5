/**
 * The Anthropic adapter over the wire (issue 24, item 1): `terfyn run` with ANTHROPIC_BASE_URL
 * pointed at a local server that speaks the Messages API (helpers/messages-api.ts), so the SDK's
 * real requests are read and every conversation the adapter replays is checked against the
 * rules the real API enforces (a rule broken is the 400 the API would answer). A model that
 * answers in prose, stops at max_tokens with nothing said, corrects itself twice, or calls tools
 * in the same turn as its output must neither break the conversation nor lose a tool call.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runTerfyn } from "./helpers/cli.ts";
import { copyExample, edit } from "./helpers/example-project.ts";
import {
  type Answer,
  type MessagesApi,
  type MessagesRequest,
  messagesProblems,
  startMessagesApi,
} from "./helpers/messages-api.ts";

const apis: MessagesApi[] = [];
afterEach(async () => {
  for (const a of apis.splice(0)) await a.close();
});

const TASK = "Add a function Add(a, b int) int to src/add.go.";
const state = (approved: boolean, feedback: string) => ({ task: TASK, approved, feedback });
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
function perAgent(script: Record<string, Answer[]>) {
  const seen: Record<string, number> = {};
  return (body: MessagesRequest): Answer => {
    const agent = agentOf(body);
    const n = seen[agent] ?? 0;
    seen[agent] = n + 1;
    const answer = script[agent]?.[n];
    if (!answer) throw new Error(`no answer scripted for ${agent}'s request ${n}`);
    return answer;
  };
}

/** `terfyn run` of the implement-review example, every agent on `anthropic/claude-test`. */
async function run(api: MessagesApi) {
  const project = copyExample();
  edit(project, "main.agent", 'model "mock/gpt-4"', 'model "anthropic/claude-test"');
  const workspace = mkdtempSync(join(tmpdir(), "terfyn-ws-"));
  const runDir = join(mkdtempSync(join(tmpdir(), "terfyn-run-")), "run");
  const r = await runTerfyn(
    [
      "run",
      "workflow/ImplementAndReview",
      "--project",
      project,
      "--input-file",
      join(project, "fixtures", "task.json"),
      "--run-dir",
      runDir,
    ],
    project,
    {
      ANTHROPIC_API_KEY: "sk-ant-test",
      ANTHROPIC_BASE_URL: api.origin,
      TERFYN_WORKSPACE_ROOT: workspace,
      TERFYN_WORKSPACE_TEST_COMMAND: "true",
    },
  );
  const journal = readFileSync(join(runDir, "journal.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { ...r, journal, workspace };
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
        ? m.content.filter((b: MessagesRequest) => b.type === "tool_use").map((b: MessagesRequest) => b.id)
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
