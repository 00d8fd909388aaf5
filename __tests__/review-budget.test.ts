/**
 * `terfyn review --max-model-calls` and `--max-tokens` (issue 24, item 4): the run's model spend
 * over all its sessions, counted in RUN_DIR/model-spend.json with the tokens by kind (input,
 * output, written to and read from the prompt cache), said in every report; a budget reached
 * ends the run stuck naming the flag.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { runTerfyn } from "./helpers/cli.ts";
import { buildReviewExample, REVIEW_SCRIPT, reviewStartArgs } from "./helpers/review-run.ts";

const build = () => buildReviewExample("terfyn-review-budget-");
const spendOf = (runDir: string) =>
  JSON.parse(readFileSync(join(runDir, "model-spend.json"), "utf8"));

describe("terfyn review's model budget", () => {
  it("--max-model-calls reached: the next call is refused and the run ends stuck naming the flag, the spend in the report", async () => {
    const b = build();
    const r = await runTerfyn(
      reviewStartArgs(b, REVIEW_SCRIPT, ["--max-model-calls", "3"]),
      b.repo,
    );
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toMatch(
      /^stuck: .*the run's model-call budget is spent \(3 of 3 model calls; --max-model-calls\)/,
    );
    expect(spendOf(b.runDir)).toMatchObject({ calls: 3 });
    expect(readFileSync(join(b.runDir, "report.md"), "utf8")).toContain(
      "Model spend: 3 of 3 model calls.",
    );
    expect(JSON.parse(readFileSync(join(b.runDir, "run.json"), "utf8")).maxModelCalls).toBe(3);
  }, 60_000);

  it("counts cache writes and reads against --max-tokens, by kind in the report; a bad number is a usage error", async () => {
    const b = build();
    const bad = await runTerfyn(reviewStartArgs(b, REVIEW_SCRIPT, ["--max-tokens", "0"]), b.repo);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('review: --max-tokens must be a positive whole number, not "0"');
    expect(existsSync(b.runDir)).toBe(false);
    // Each of the Decider's turns reports usage with cache writes and reads.
    const script = parseYaml(readFileSync(REVIEW_SCRIPT, "utf8")) as {
      agents: Record<string, Record<string, unknown>[]>;
    };
    for (const turn of script.agents.Decider ?? [])
      turn.usage = {
        input_tokens: 100,
        output_tokens: 50,
        cache_creation_input_tokens: 400,
        cache_read_input_tokens: 1000,
      };
    const file = join(b.runDir, "..", "script.yaml");
    writeFileSync(file, stringifyYaml(script));
    const r = await runTerfyn(reviewStartArgs(b, file, ["--max-tokens", "3000"]), b.repo);
    // Two turns spend 3,100 tokens (1,550 each): the third call is refused.
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toMatch(
      /the run's token budget is spent \(2 of 264 model calls, 200 input, 800 cache-write, 2000 cache-read and 100 output tokens: 3100 of 3000; --max-tokens\)/,
    );
    expect(spendOf(b.runDir)).toEqual({
      calls: 2,
      limit: 264,
      input_tokens: 200,
      output_tokens: 100,
      cache_creation_input_tokens: 800,
      cache_read_input_tokens: 2000,
      token_limit: 3000,
      // Kept per model for the cost: every call, and its tokens by kind.
      by_model: {
        "mock/script": {
          calls: 2,
          input_tokens: 200,
          output_tokens: 100,
          cache_creation_input_tokens: 800,
          cache_read_input_tokens: 2000,
        },
      },
    });
  }, 60_000);
});
