/**
 * What a run's model calls cost, estimated from a price table: US dollars per million tokens of
 * each kind a provider bills apart (input at full price, cache writes, cache reads, output), per
 * `provider/model`. The table shipped here is the providers' list prices when it was written
 * (PRICES_AS_OF); a user's table (`--prices FILE`, TERFYN_PRICES) is laid over it, so a new
 * model, a negotiated price or a local model at zero is one entry. Pure.
 */
import { z } from "zod";
import { readYamlFile } from "../config/yaml-file.ts";
import type { TokenUsage } from "../engine/journal.ts";

/** US dollars per million tokens. */
export interface Price {
  input: number;
  output: number;
  /** Input written to the cache (Anthropic: 1.25 × input for the 5-minute cache). */
  cacheWrite: number;
  /** Input read from the cache. */
  cacheRead: number;
}

export type PriceTable = Readonly<Record<string, Price>>;

/** When the shipped prices were read from the providers' price pages. */
export const PRICES_AS_OF = "2026-10-24";

const anthropic = (input: number, output: number, cacheRead: number): Price => ({
  input,
  output,
  cacheWrite: input * 1.25,
  cacheRead,
});
const openai = (input: number, output: number, cacheRead: number): Price => ({
  input,
  output,
  cacheWrite: input,
  cacheRead,
});
const FREE: Price = { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };

/** List prices as of PRICES_AS_OF; anything else is unpriced until a table names it. */
export const DEFAULT_PRICES: PriceTable = {
  "mock/gpt-4": FREE,
  "mock/script": FREE,
  "anthropic/claude-opus-5-5": anthropic(4, 20, 0.2),
  "anthropic/claude-sonnet-5-5": anthropic(2, 10, 0.1),
  "anthropic/claude-haiku-5-5": anthropic(0.1, 0.5, 0.01),
  "anthropic/claude-opus-5": anthropic(5, 25, 0.5),
  "anthropic/claude-sonnet-5": anthropic(2, 10, 0.2),
  "anthropic/claude-opus-4-5": anthropic(5, 25, 0.5),
  "anthropic/claude-haiku-4-5": anthropic(1, 5, 0.1),
  "openai/gpt-4.1": openai(2, 8, 0.5),
  "openai/gpt-4.1-mini": openai(0.4, 1.6, 0.1),
  "openai/gpt-5": openai(1.25, 10, 0.125),
  "openai/gpt-5-mini": openai(0.25, 2, 0.025),
};

/** Token counts of each kind, as a spend keeps them per model. */
export interface TokenCounts {
  calls: number;
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

/** Adds one answered call's usage to the counts of its model. */
export function addUsage(
  byModel: Record<string, TokenCounts>,
  model: string,
  usage: TokenUsage | undefined,
): void {
  // Own keys only: a model named like an object's property is a model like any other.
  if (!Object.hasOwn(byModel, model))
    Object.defineProperty(byModel, model, {
      value: { calls: 0, input_tokens: 0, output_tokens: 0 },
      enumerable: true,
      writable: true,
      configurable: true,
    });
  const c = byModel[model] as TokenCounts;
  c.calls++;
  if (usage) {
    c.input_tokens += usage.input_tokens;
    c.output_tokens += usage.output_tokens;
    if (usage.cache_creation_input_tokens)
      c.cache_creation_input_tokens =
        (c.cache_creation_input_tokens ?? 0) + usage.cache_creation_input_tokens;
    if (usage.cache_read_input_tokens)
      c.cache_read_input_tokens = (c.cache_read_input_tokens ?? 0) + usage.cache_read_input_tokens;
  }
}

/**
 * The estimated cost of the tokens counted, and the models with tokens the table has no price
 * for (their cost is not in the sum, and the estimate says so).
 */
export function estimateCost(
  byModel: Readonly<Record<string, TokenCounts>>,
  table: PriceTable,
): { usd: number; unpriced: string[] } {
  let usd = 0;
  const unpriced: string[] = [];
  for (const [model, c] of Object.entries(byModel)) {
    const tokens =
      c.input_tokens +
      c.output_tokens +
      (c.cache_creation_input_tokens ?? 0) +
      (c.cache_read_input_tokens ?? 0);
    const p = Object.hasOwn(table, model) ? table[model] : undefined;
    if (!p) {
      if (tokens > 0) unpriced.push(model);
      continue;
    }
    usd +=
      (c.input_tokens * p.input +
        c.output_tokens * p.output +
        (c.cache_creation_input_tokens ?? 0) * p.cacheWrite +
        (c.cache_read_input_tokens ?? 0) * p.cacheRead) /
      1_000_000;
  }
  return { usd, unpriced: unpriced.sort() };
}

/** An estimate in words: `about $0.42`, and what it leaves out. */
export function describeCost(cost: { usd: number; unpriced: readonly string[] }): string {
  const amount =
    cost.usd === 0 ? "$0" : cost.usd < 0.01 ? "under $0.01" : `about $${cost.usd.toFixed(2)}`;
  return cost.unpriced.length === 0
    ? `${amount} (estimated)`
    : `${amount} (estimated; not counted: ${cost.unpriced.join(", ")}, which the price table does not name)`;
}

const dollars = z.number().nonnegative().finite();
const priceEntry = z
  .object({
    input: dollars,
    output: dollars,
    cacheWrite: dollars.optional(),
    cacheRead: dollars.optional(),
  })
  .strict();
const MODEL_KEY = /^[A-Za-z0-9_.-]+\/\S+$/;
const tableSchema = z.record(z.string(), priceEntry).superRefine((table, ctx) => {
  for (const key of Object.keys(table))
    if (!MODEL_KEY.test(key))
      ctx.addIssue({
        code: "custom",
        path: [key],
        message: "a key is provider/model, e.g. openai/gpt-4.1",
      });
});

/**
 * A user's price table (YAML or JSON) laid over `base`: `provider/model: { input, output,
 * cacheWrite?, cacheRead? }` in US dollars per million tokens. An entry without cacheWrite
 * prices cache writes at 1.25 × input, without cacheRead cache reads at input (no discount
 * assumed). The problem, located, when the file is not such a table.
 */
export function parsePriceTable(
  path: string,
  text: string,
  base: PriceTable = DEFAULT_PRICES,
): { ok: true; table: PriceTable } | { ok: false; message: string } {
  const read = readYamlFile(
    path,
    text,
    tableSchema,
    "each entry is provider/model: { input, output, cacheWrite?, cacheRead? } in US dollars per million tokens",
  );
  if (!read.ok) return read;
  const table: Record<string, Price> = { ...base };
  for (const [model, p] of Object.entries(read.value)) {
    Object.defineProperty(table, model, {
      value: {
        input: p.input,
        output: p.output,
        cacheWrite: p.cacheWrite ?? p.input * 1.25,
        cacheRead: p.cacheRead ?? p.input,
      },
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return { ok: true, table };
}
