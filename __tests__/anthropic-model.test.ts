/**
 * The Anthropic adapter: request shape (only granted tools, API-safe names, the output tool
 * with the output schema, prompt caching on instructions and tools), response mapping, and
 * token usage. A fake fetch stands in for the network. The real model runs only with
 * ANTHROPIC_API_KEY set.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AnthropicModel, toApiName } from "../src/adapters/models/anthropic.ts";
import { runTerfyn } from "./helpers/cli.ts";
import { copyExample, edit } from "./helpers/example-project.ts";

function fakeFetch(
  reply: unknown,
  seen: { url: string; body: Record<string, unknown>; headers: Headers }[],
): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const req = new Request(input, init);
    seen.push({ url: req.url, body: JSON.parse(await req.text()), headers: req.headers });
    return new Response(JSON.stringify(reply), {
      status: 200,
      headers: { "content-type": "application/json" },
    });
  }) as typeof fetch;
}

const message = (content: unknown[]) => ({
  id: "msg_1",
  type: "message",
  role: "assistant",
  model: "claude-test",
  content,
  stop_reason: "tool_use",
  stop_sequence: null,
  usage: {
    input_tokens: 120,
    output_tokens: 30,
    cache_read_input_tokens: 100,
    cache_creation_input_tokens: 0,
  },
});

const request = {
  agent: "Reviewer",
  model: "anthropic/claude-test",
  system: "You are the Reviewer.",
  messages: [{ role: "user" as const, content: '{"task":"t","approved":false}' }],
  tools: [
    {
      name: "tool.workspace.read_file",
      description: "Read",
      inputSchema: {
        type: "object" as const,
        required: ["path"],
        properties: { path: { type: "string" as const } },
      },
    },
  ],
  outputSchema: {
    type: "object" as const,
    required: ["approved"],
    properties: { approved: { type: "boolean" as const } },
  },
  ordinal: 0,
};

describe("Anthropic adapter", () => {
  it("offers only the granted tools under API-safe names, plus submit_output, with a cache breakpoint on the latest turn", async () => {
    const seen: { url: string; body: Record<string, unknown>; headers: Headers }[] = [];
    const model = new AnthropicModel("test-key", {
      fetch: fakeFetch(
        message([
          { type: "tool_use", id: "tu_1", name: "workspace__read_file", input: { path: "add.go" } },
        ]),
        seen,
      ),
      maxRetries: 0,
    });
    const { response, usage } = await model.turn(request);
    expect(response).toEqual({
      kind: "tool_calls",
      calls: [{ id: "tu_1", tool: "tool.workspace.read_file", input: { path: "add.go" } }],
    });
    expect(usage).toEqual({
      input_tokens: 120,
      output_tokens: 30,
      cache_read_input_tokens: 100,
      cache_creation_input_tokens: 0,
    });
    const body = seen[0]?.body as {
      model: string;
      tools: { name: string; input_schema: unknown; cache_control?: unknown }[];
      system: { cache_control?: unknown }[];
    };
    expect(seen[0]?.url).toMatch(/\/v1\/messages$/);
    const auth = `${seen[0]?.headers.get("x-api-key") ?? ""} ${seen[0]?.headers.get("authorization") ?? ""}`;
    expect(auth).toContain("test-key");
    expect(body.model).toBe("claude-test");
    expect(body.tools.map((t) => t.name)).toEqual(["workspace__read_file", "submit_output"]);
    expect(body.tools[1]?.input_schema).toEqual(request.outputSchema);
    // Short instructions and tools: below what the API caches, so no breakpoint there; the
    // latest turn carries one (anthropic-conversation.test.ts checks both over a conversation).
    expect(body.tools[1]?.cache_control).toBeUndefined();
    expect(body.system[0]?.cache_control).toBeUndefined();
    expect(
      (body as unknown as { messages: { content: { cache_control?: unknown }[] }[] }).messages
        .at(-1)
        ?.content.at(-1)?.cache_control,
    ).toEqual({ type: "ephemeral" });
    for (const t of body.tools) expect(t.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });

  it("maps a submit_output call to the agent's output", async () => {
    const seen: { url: string; body: Record<string, unknown>; headers: Headers }[] = [];
    const model = new AnthropicModel("k", {
      fetch: fakeFetch(
        message([{ type: "tool_use", id: "o", name: "submit_output", input: { approved: true } }]),
        seen,
      ),
      maxRetries: 0,
    });
    expect((await model.turn(request)).response).toEqual({
      kind: "output",
      output: { approved: true },
      id: "o",
    });
  });

  it("names tools the API accepts", () => {
    expect(toApiName("tool.workspace.write_file")).toBe("workspace__write_file");
  });

  it.skipIf(!process.env.ANTHROPIC_API_KEY)(
    "runs the example against the real model (needs ANTHROPIC_API_KEY)",
    async () => {
      const project = copyExample();
      edit(
        project,
        "main.agent",
        'model "mock/gpt-4"',
        `model "anthropic/${process.env.TERFYN_ANTHROPIC_MODEL ?? "claude-sonnet-5-5"}"`,
      );
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
          ANTHROPIC_API_KEY: process.env.ANTHROPIC_API_KEY ?? "",
          TERFYN_WORKSPACE_ROOT: workspace,
          TERFYN_WORKSPACE_TEST_COMMAND: "ls",
        },
      );
      expect([0, 1]).toContain(r.code);
      const journal = readFileSync(join(runDir, "journal.jsonl"), "utf8");
      expect(journal).toContain('"type":"model.turn"');
      expect(journal).not.toMatch(/"type":"effect.intent"[^\n]*"agent":"Reviewer"[^\n]*write_file/);
    },
    300_000,
  );
});
