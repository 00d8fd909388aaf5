import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { ModelRouter } from "../src/adapters/models/model-router.ts";
import { ModelScriptError, ScriptedModel } from "../src/adapters/models/model-script.ts";
import {
  DEFAULT_TOKENS_PER_CALL,
  defaultModelBudget,
  defaultTokenBudget,
} from "../src/adapters/review/review-runner.ts";
import { recordRequests } from "./helpers/action-harness.ts";
import {
  agents,
  approval,
  build,
  commented,
  EXAMPLE,
  exampleRunner,
  fakeGraphql,
  type Loose,
  labeled,
  probotWith,
  status,
  writer,
} from "./helpers/app-runner.ts";
import { startAppServer } from "./helpers/app-server.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

const request = {
  agent: "Decider",
  model: "mock/script",
  ordinal: 0,
  system: "",
  messages: [],
  tools: [],
} as unknown as Parameters<ScriptedModel["turn"]>[0];

/** The example's script, with `usage` added to some agents' turns. */
function scriptWithUsage(
  usage: Record<string, Record<number, { input_tokens: number; output_tokens: number }>>,
): string {
  const script = parse(readFileSync(join(EXAMPLE, "model-script.yaml"), "utf8")) as {
    agents: Record<string, Loose[]>;
  };
  for (const [agent, turns] of Object.entries(usage))
    for (const [i, u] of Object.entries(turns)) script.agents[agent]![Number(i)]!.usage = u;
  const file = join(mkdtempSync(join(tmpdir(), "terfyn-usage-script-")), "model-script.yaml");
  writeFileSync(file, stringify(script));
  return file;
}

describe("a model script's turns report usage", () => {
  it("a turn's usage is answered as the model's usage; a turn without one reports none", async () => {
    const m = ScriptedModel.parse(
      "s.yaml",
      [
        "agents:",
        "  Decider:",
        "    - toolCalls: [{ tool: tool.workspace.read_file, input: { path: a } }]",
        "      usage: { input_tokens: 120, output_tokens: 30 }",
        "    - output: { decisions: [] }",
      ].join("\n"),
    );
    expect(await m.turn(request)).toMatchObject({
      response: { kind: "tool_calls" },
      usage: { input_tokens: 120, output_tokens: 30 },
    });
    const second = await m.turn({ ...request, ordinal: 1 });
    expect(second.response.kind).toBe("output");
    expect("usage" in second).toBe(false);
  });

  it("usage is validated: whole non-negative numbers, both fields, nothing else", () => {
    for (const usage of [
      "{ input_tokens: -1, output_tokens: 0 }",
      "{ input_tokens: 1.5, output_tokens: 0 }",
      "{ input_tokens: 1 }",
      "{ input_tokens: 1, output_tokens: 2, cost: 3 }",
      '"lots"',
    ])
      expect(
        () =>
          ScriptedModel.parse("s.yaml", `agents:\n  A:\n    - output: 1\n      usage: ${usage}\n`),
        usage,
      ).toThrow(ModelScriptError);
  });
});

describe("the App runner's token budget", () => {
  it("defaults to DEFAULT_TOKENS_PER_CALL for every call of the call budget", async () => {
    const calls = defaultModelBudget(await agents());
    expect(defaultTokenBudget(calls)).toBe(calls * DEFAULT_TOKENS_PER_CALL);
    expect(DEFAULT_TOKENS_PER_CALL).toBe(32_768);
  });

  it("tokens reported over two sessions reach the budget: the next call is refused, the run ends stuck with its spend", async () => {
    const ex = build();
    const gh = writer(ex);
    fakeGraphql(ex);
    // Session 1 (label → the Decider and the Planner → plan gate) spends 600 tokens, under the
    // budget of 1000. Session 2 (the approval → the TestWriter) spends 500 more: 1100 in all
    // (700 input, 400 output), over the budget only because session 1's tokens are kept.
    const script = scriptWithUsage({
      Decider: { 0: { input_tokens: 400, output_tokens: 200 } },
      TestWriter: { 0: { input_tokens: 300, output_tokens: 200 } },
    });
    const runner = await exampleRunner(ex, {
      maxTokens: 1000,
      model: async () =>
        new ModelRouter({ script: await ScriptedModel.load(script), forceScript: true, env: {} }),
    });
    const receive = probotWith(runner);
    const rec = recordRequests();
    let run: string;
    try {
      await receive("pull_request", labeled(ex));
      await runner.idle();
      let s = status(gh.comments);
      run = s.ledger.run;
      expect(s.ledger.gate, s.body).toBe("plan");
      expect(s.body).toMatch(
        /Model spend: 5 of \d+ model calls, 400 input and 200 output tokens of 1000\./,
      );
      const spendFile = runner.paths(run).spend;
      expect(JSON.parse(readFileSync(spendFile, "utf8"))).toMatchObject({
        calls: 5,
        input_tokens: 400,
        output_tokens: 200,
      });

      await receive("issue_comment", commented(approval(gh.comments, s.ledger.hash!)));
      await runner.idle();
      s = status(gh.comments);
      expect(s.ledger.terminal).toBe("stuck");
      expect(s.body).toMatch(/token budget is spent/);
      expect(s.body).toMatch(
        /agent TestWriter \\\(red\\-tests\\\) did not finish: agent TestWriter, turn 2/,
      );
      expect(s.body).toContain("6 of ");
      expect(s.body).toContain("700 input and 400 output tokens of 1000");
      expect(s.body).toMatch(/TERFYN\\?_APP\\?_MAX\\?_TOKENS/);
      expect((gh.checkRuns.at(-1)!.body as Loose).conclusion).toBe("failure");
      // The refused call was never made: 6 calls, the TestWriter's second turn not among them.
      expect(JSON.parse(readFileSync(spendFile, "utf8"))).toMatchObject({
        calls: 6,
        input_tokens: 700,
        output_tokens: 400,
      });
      const report = readFileSync(join(runner.paths(run).run, "report.md"), "utf8");
      expect(report).toMatch(
        /token budget is spent \(6 of \d+ model calls, 700 input and 400 output tokens of 1000; TERFYN_APP_MAX_TOKENS\)/,
      );
    } finally {
      rec.stop();
      gh.done();
    }
    expect(rec.problems).toEqual([]);
  }, 240_000);
});

describe("the App server's budget settings", () => {
  const start = startAppServer;

  it("a TERFYN_APP_MAX_TOKENS that is not a positive integer stops the App at startup, naming it", () => {
    for (const v of ["12.5", "lots"]) {
      const r = start({ TERFYN_APP_SLUG: "terfyn-test", TERFYN_APP_MAX_TOKENS: v });
      expect(r.status, v).toBe(1);
      expect(r.stderr).toContain(
        `terfyn app: cannot start:\n  - TERFYN_APP_MAX_TOKENS must be a positive integer, not ${JSON.stringify(v)}`,
      );
    }
  }, 120_000);
});
