/**
 * A review run's model budget: how many calls and tokens a run may spend over all its sessions,
 * and the model port that counts them and refuses the call past the budget. Owns the counting;
 * never decides what a run does when it is refused (the agent fails, the run ends stuck).
 */
import { readFile } from "node:fs/promises";
import type { ModelPort } from "../../core/engine/ports.ts";
import { DEFAULT_MAX_TURNS } from "../../core/model/resolve-project.ts";
import { DEFAULT_LIMITS } from "../../core/review/referee.ts";

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

/** The spend as one sentence: the calls, and the tokens by kind when the model reported them. */
export function describeSpend(s: ModelSpend): string {
  const written = s.cache_creation_input_tokens ?? 0;
  const read = s.cache_read_input_tokens ?? 0;
  const tokens =
    spentTokens(s) === 0
      ? ""
      : written + read === 0
        ? `, ${s.input_tokens} input and ${s.output_tokens} output tokens of ${s.token_limit}`
        : `, ${s.input_tokens} input, ${written} cache-write, ${read} cache-read and ${s.output_tokens} output tokens: ${spentTokens(s)} of ${s.token_limit}`;
  return `${s.calls} of ${s.limit} model calls${tokens}`;
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
  const n = (x: unknown) => (typeof x === "number" && Number.isFinite(x) && x > 0 ? x : 0);
  return {
    calls: n(v.calls),
    limit,
    input_tokens: n(v.input_tokens),
    output_tokens: n(v.output_tokens),
    ...(n(v.cache_creation_input_tokens) > 0
      ? { cache_creation_input_tokens: n(v.cache_creation_input_tokens) }
      : {}),
    ...(n(v.cache_read_input_tokens) > 0
      ? { cache_read_input_tokens: n(v.cache_read_input_tokens) }
      : {}),
    token_limit: tokenLimit,
  };
}
