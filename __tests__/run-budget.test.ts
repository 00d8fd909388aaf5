/**
 * `terfyn run`'s model budgets and cost (issue 24, item 4), against a local Messages API: the
 * calls and tokens of every session counted from the journal, the next call refused past a
 * budget (the run fails, and resumes with a larger one asking no answered turn again), the
 * spend said with its tokens by kind and a cost priced per model from the shipped table or the
 * user's (`--prices`, TERFYN_PRICES).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_PRICES, estimateCost, parsePriceTable } from "../src/core/model/prices.ts";
import { runTerfyn } from "./helpers/cli.ts";
import {
  type MessagesApi,
  type MessagesRequest,
  startMessagesApi,
} from "./helpers/messages-api.ts";
import { exampleOn, state } from "./helpers/model-run.ts";

const apis: MessagesApi[] = [];
afterEach(async () => {
  for (const a of apis.splice(0)) await a.close();
});

const USAGE = {
  input_tokens: 100_000,
  output_tokens: 20_000,
  cache_creation_input_tokens: 40_000,
  cache_read_input_tokens: 500_000,
};

const agentOf = (body: MessagesRequest) =>
  /You are the (Implementer|Reviewer)/.exec(JSON.stringify(body.system))?.[1] ?? "?";

/** Each agent answers its output at once, reporting USAGE. */
async function example() {
  const api = await startMessagesApi((body) => ({
    content: [
      {
        type: "tool_use",
        id: `toolu_${agentOf(body)}`,
        name: "submit_output",
        input: state(agentOf(body) === "Reviewer", "ok"),
      },
    ],
    usage: USAGE,
  }));
  apis.push(api);
  const ex = exampleOn("anthropic/claude-sonnet-5-5", {
    ANTHROPIC_API_KEY: "sk-ant-test",
    ANTHROPIC_BASE_URL: api.origin,
  });
  return { api, ex };
}

const stateOf = (runDir: string) => JSON.parse(readFileSync(join(runDir, "state.json"), "utf8"));

describe("terfyn run: model budgets and cost", () => {
  it("refuses the call past --max-model-calls; a resume with a larger budget goes on and asks no answered turn again", async () => {
    const { api, ex } = await example();
    const first = await runTerfyn([...ex.args, "--max-model-calls", "1"], ex.project, ex.env);
    expect(first.code, first.stderr).toBe(1);
    expect(first.stderr).toMatch(
      /the run's model-call budget is spent \(1 of 1 model calls.*; --max-model-calls\)/,
    );
    expect(api.bodies).toHaveLength(1);
    expect(stateOf(ex.runDir).budget).toEqual({ calls: 1 });
    // Given again it replaces the run's budget.
    const second = await runTerfyn(
      ["run", "--resume", ex.runDir, "--max-model-calls", "2"],
      ex.project,
      ex.env,
    );
    expect(second.code, second.stderr).toBe(0);
    expect(api.bodies.map(agentOf)).toEqual(["Implementer", "Reviewer"]);
    // Both sessions' calls, by kind, priced at the shipped Sonnet 5.5 prices ($2 input, $2.50
    // cache write, $0.10 cache read, $10 output per million): $0.55 a call.
    const spend = stateOf(ex.runDir).spend as string;
    expect(spend).toBe(
      "2 of 2 model calls, 200000 input, 80000 cache-write, 1000000 cache-read and 40000 output tokens: 1320000; about $1.10 (estimated)",
    );
    expect(second.stderr).toContain(`terfyn: model spend: ${spend}`);
  });

  it("refuses the call past --max-tokens (every kind counted)", async () => {
    const { api, ex } = await example();
    const r = await runTerfyn([...ex.args, "--max-tokens", "600000"], ex.project, ex.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /the run's token budget is spent \(1 model call, .*: 660000 of 600000/,
    );
    expect(api.bodies).toHaveLength(1);
  });

  it("--prices and TERFYN_PRICES lay the user's prices over the shipped ones; a bad table is refused before anything runs", async () => {
    const { api, ex } = await example();
    const table = join(ex.project, "prices.yaml");
    writeFileSync(
      table,
      "anthropic/claude-sonnet-5-5: { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 }\n",
    );
    const r = await runTerfyn([...ex.args, "--prices", table], ex.project, ex.env);
    expect(r.code, r.stderr).toBe(0);
    expect(stateOf(ex.runDir).spend).toMatch(/; about \$1\.80 \(estimated\)$/);
    writeFileSync(table, "anthropic/claude-sonnet-5-5:\n  input: 3\n  output: -1\n");
    const bad = await runTerfyn([...ex.args.slice(0, -1), `${ex.runDir}-2`], ex.project, {
      ...ex.env,
      TERFYN_PRICES: table,
    });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      `the price table ${table}:3:11: anthropic/claude-sonnet-5-5.output`,
    );
    expect(api.bodies).toHaveLength(2);
  });

  it("a model the table does not name is said, never priced at zero", () => {
    const cost = estimateCost(
      {
        "openai/qwen3:8b": { calls: 1, input_tokens: 10, output_tokens: 1 },
        "mock/script": { calls: 1, input_tokens: 10, output_tokens: 1 },
      },
      DEFAULT_PRICES,
    );
    expect(cost).toEqual({ usd: 0, unpriced: ["openai/qwen3:8b"] });
    const local = parsePriceTable("p.yaml", '"openai/qwen3:8b": { input: 0, output: 0 }\n');
    expect(
      local.ok &&
        estimateCost(
          { "openai/qwen3:8b": { calls: 1, input_tokens: 10, output_tokens: 1 } },
          local.table,
        ),
    ).toEqual({ usd: 0, unpriced: [] });
    // Without cacheWrite and cacheRead: writes at 1.25 x input, reads at input (no discount assumed).
    const p = parsePriceTable("p.yaml", "openai/x: { input: 2, output: 8 }\n");
    expect(p.ok && p.table["openai/x"]).toEqual({
      input: 2,
      output: 8,
      cacheWrite: 2.5,
      cacheRead: 2,
    });
    expect(parsePriceTable("p.yaml", "gpt-4.1: { input: 2, output: 8 }\n")).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^p\.yaml:1:\d+: gpt-4\.1: a key is provider\/model/),
    });
  });
});
