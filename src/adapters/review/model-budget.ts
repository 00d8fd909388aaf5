/**
 * A review run's model budget: how many calls and tokens a run may spend over all its sessions,
 * and the model port that counts them and refuses the call past the budget. Owns the counting;
 * never decides what a run does when it is refused (the agent fails, the run ends stuck).
 */
import { readFile } from "node:fs/promises";
import type { ModelPort } from "../../core/engine/ports.ts";
import {
  addUsage,
  DEFAULT_PRICES,
  describeCost,
  estimateCost,
  type PriceTable,
  parsePriceTable,
  type TokenCounts,
} from "../../core/model/prices.ts";
import { DEFAULT_MAX_TURNS } from "../../core/model/resolve-project.ts";
import { DEFAULT_LIMITS } from "../../core/review/referee.ts";
import { plural } from "../../core/words.ts";

/**
 * The most model calls a run can need: each agent step the doctrine can take, at its agent's
 * `maxTurns`. A run decides once, and per plan round (the first and each escalation, at most
 * `maxEscalations`) plans, writes the red tests and builds up to `maxIterations` times.
 */
export function defaultModelBudget(
  agents: { agents: ReadonlyMap<string, { maxTurns: number }> },
  limits = DEFAULT_LIMITS,
): number {
  const turns = (name: string) => agents.agents.get(name)?.maxTurns ?? DEFAULT_MAX_TURNS;
  const rounds = 1 + limits.maxEscalations;
  return (
    turns("Decider") +
    rounds * (turns("Planner") + turns("TestWriter") + limits.maxIterations * turns("Builder"))
  );
}

/**
 * The tokens one model call is allowed by the default token budget: the Anthropic adapter's
 * 4,096 output tokens (its `max_tokens`; no agent declares its own) and up to 28,672 input
 * tokens (the agent's instructions, its input and the turns so far).
 */
export const DEFAULT_TOKENS_PER_CALL = 32_768;

/** The default token budget: every call the call budget allows, at DEFAULT_TOKENS_PER_CALL. */
export function defaultTokenBudget(calls: number): number {
  return calls * DEFAULT_TOKENS_PER_CALL;
}

/** A run's model spend so far (kept in `model-spend.json` across its sessions). */
export interface ModelSpend {
  calls: number;
  limit: number;
  /** Input tokens at full price (the API's `input_tokens`: neither read from nor written to the cache). */
  input_tokens: number;
  output_tokens: number;
  /** Input tokens written to the cache (priced above full input) and read from it (a tenth). */
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
  /** The token budget: every token of every kind together. */
  token_limit: number;
  /** The calls and tokens of each model that answered (`provider/model`), for the cost. */
  by_model?: Record<string, TokenCounts>;
}

/** Every token the spend counts against the token budget: input of each kind and output. */
export function spentTokens(s: ModelSpend): number {
  return (
    s.input_tokens +
    s.output_tokens +
    (s.cache_creation_input_tokens ?? 0) +
    (s.cache_read_input_tokens ?? 0)
  );
}

/**
 * The spend as one sentence: the calls, the tokens by kind when the model reported them, and
 * the estimated cost from `prices`.
 */
export function describeSpend(s: ModelSpend, prices: PriceTable = DEFAULT_PRICES): string {
  const written = s.cache_creation_input_tokens ?? 0;
  const read = s.cache_read_input_tokens ?? 0;
  /** " of N" against a budget; nothing when there is none. */
  const of = (limit: number) => (Number.isFinite(limit) ? ` of ${limit}` : "");
  const tokens =
    spentTokens(s) === 0
      ? ""
      : written + read === 0
        ? `, ${s.input_tokens} input and ${s.output_tokens} output tokens${of(s.token_limit)}`
        : `, ${s.input_tokens} input, ${written} cache-write, ${read} cache-read and ${s.output_tokens} output tokens: ${spentTokens(s)}${of(s.token_limit)}`;
  // Said when there is one: nothing for runs on the mock or a script, which cost nothing.
  const estimate = s.by_model ? estimateCost(s.by_model, prices) : undefined;
  const cost =
    estimate && (estimate.usd > 0 || estimate.unpriced.length > 0)
      ? `; ${describeCost(estimate)}`
      : "";
  const calls = Number.isFinite(s.limit)
    ? `${s.calls} of ${s.limit} model calls`
    : plural(s.calls, "model call");
  return `${calls}${tokens}${cost}`;
}

/**
 * The price table a process estimates costs with: the file `path` (a `--prices` flag), else
 * TERFYN_PRICES, laid over the shipped prices; the shipped prices alone when neither is set.
 * A file that cannot be read or is not a table is an error saying where.
 */
export async function loadPriceTable(
  path: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Promise<PriceTable> {
  const file = path ?? (env.TERFYN_PRICES?.trim() || undefined);
  if (file === undefined) return DEFAULT_PRICES;
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    throw new Error(
      `cannot read the price table ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  const parsed = parsePriceTable(file, text);
  if (!parsed.ok) throw new Error(`the price table ${parsed.message}`);
  return parsed.table;
}

/** What sets each budget, as the refusal names it (the App's variables unless said). */
export interface BudgetNames {
  calls: string;
  tokens: string;
}

const APP_BUDGETS: BudgetNames = {
  calls: "TERFYN_APP_MAX_MODEL_CALLS",
  tokens: "TERFYN_APP_MAX_TOKENS",
};

/**
 * The model port counted: every call (a failed one too) is added to the run's spend before it
 * is sent, and the tokens its answer's `usage` reports after it; once the calls or the tokens
 * reach their budget the next call is refused, so the agent fails and the run ends stuck with
 * the spend in its reason. One call may take the tokens past the budget (its usage is known only
 * when it answers); none follows it. Turns the journals replay on a resume never reach the
 * model, so they cost nothing.
 */
export function budgeted(
  model: ModelPort,
  spend: ModelSpend,
  save: () => Promise<void>,
  names: BudgetNames = APP_BUDGETS,
): ModelPort {
  return {
    async turn(request) {
      if (spend.calls >= spend.limit)
        throw new Error(
          `the run's model-call budget is spent (${describeSpend(spend)}; ${names.calls})`,
        );
      if (spentTokens(spend) >= spend.token_limit)
        throw new Error(
          `the run's token budget is spent (${describeSpend(spend)}; ${names.tokens})`,
        );
      spend.calls++;
      await save();
      const answer = await model.turn(request);
      const u = answer.usage;
      spend.by_model ??= {};
      addUsage(spend.by_model, answer.model ?? request.model, u);
      if (u) {
        spend.input_tokens += u.input_tokens;
        spend.output_tokens += u.output_tokens;
        // Cache writes and reads are tokens the run spent too (a write costs more than input).
        if (u.cache_creation_input_tokens)
          spend.cache_creation_input_tokens =
            (spend.cache_creation_input_tokens ?? 0) + u.cache_creation_input_tokens;
        if (u.cache_read_input_tokens)
          spend.cache_read_input_tokens =
            (spend.cache_read_input_tokens ?? 0) + u.cache_read_input_tokens;
        await save();
      }
      await save();
      return answer;
    },
  };
}

/**
 * The spend a run kept (`file`), with this session's limits; a missing or unreadable file is
 * none spent yet, a number that is not one is zero.
 */
export async function readSpendFile(
  file: string,
  limit: number,
  tokenLimit: number,
): Promise<ModelSpend> {
  let v: Partial<Record<keyof ModelSpend, unknown>> = {};
  try {
    v = JSON.parse(await readFile(file, "utf8"));
  } catch {}
  const byModel = readByModel(v.by_model);
  return {
    calls: count(v.calls),
    limit,
    input_tokens: count(v.input_tokens),
    output_tokens: count(v.output_tokens),
    ...(count(v.cache_creation_input_tokens) > 0
      ? { cache_creation_input_tokens: count(v.cache_creation_input_tokens) }
      : {}),
    ...(count(v.cache_read_input_tokens) > 0
      ? { cache_read_input_tokens: count(v.cache_read_input_tokens) }
      : {}),
    token_limit: tokenLimit,
    ...(byModel ? { by_model: byModel } : {}),
  };
}

/** A kept per-model count; anything that is not one is left out (its cost then shows as none). */
function readByModel(v: unknown): Record<string, TokenCounts> | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  const out: Record<string, TokenCounts> = {};
  for (const [model, c] of Object.entries(v as Record<string, unknown>)) {
    if (typeof c !== "object" || c === null) continue;
    const k = c as Record<string, unknown>;
    const counts: TokenCounts = {
      calls: count(k.calls),
      input_tokens: count(k.input_tokens),
      output_tokens: count(k.output_tokens),
      ...(count(k.cache_creation_input_tokens) > 0
        ? { cache_creation_input_tokens: count(k.cache_creation_input_tokens) }
        : {}),
      ...(count(k.cache_read_input_tokens) > 0
        ? { cache_read_input_tokens: count(k.cache_read_input_tokens) }
        : {}),
    };
    Object.defineProperty(out, model, {
      value: counts,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** A kept count: a positive finite number, else zero. */
const count = (x: unknown) => (typeof x === "number" && Number.isFinite(x) && x > 0 ? x : 0);
