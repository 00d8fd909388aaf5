/**
 * A review run's model budget: how many calls and tokens a run may spend over all its sessions,
 * and the model port that counts them and refuses the call past the budget. Owns the counting;
 * never decides what a run does when it is refused (the agent fails, the run ends stuck).
 */
import type { ModelPort } from "../../core/engine/ports.ts";
import type { ResolvedProject } from "../../core/model/project.ts";
import { DEFAULT_LIMITS } from "../../core/review/referee.ts";

/**
 * The most model calls a run can need: each agent step the doctrine can take, at its agent's
 * `maxTurns`. A run decides once, and per plan round (the first and each escalation, at most
 * `maxEscalations`) plans, writes the red tests and builds up to `maxIterations` times.
 */
export function defaultModelBudget(agents: ResolvedProject, limits = DEFAULT_LIMITS): number {
  const turns = (name: string) => agents.agents.get(name)?.maxTurns ?? agents.defaults.maxTurns;
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

/** A run's model spend so far (kept in `<run>/model-spend.json` across its sessions). */
export interface ModelSpend {
  calls: number;
  limit: number;
  input_tokens: number;
  output_tokens: number;
  /** The token budget (input and output tokens together). */
  token_limit: number;
}

/** The spend as one sentence: the calls, and the tokens when the model reported them. */
export function describeSpend(s: ModelSpend): string {
  const tokens =
    s.input_tokens + s.output_tokens > 0
      ? `, ${s.input_tokens} input and ${s.output_tokens} output tokens of ${s.token_limit}`
      : "";
  return `${s.calls} of ${s.limit} model calls${tokens}`;
}

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
): ModelPort {
  return {
    async turn(request) {
      if (spend.calls >= spend.limit)
        throw new Error(
          `the run's model-call budget is spent (${describeSpend(spend)}; TERFYN_APP_MAX_MODEL_CALLS)`,
        );
      if (spend.input_tokens + spend.output_tokens >= spend.token_limit)
        throw new Error(
          `the run's token budget is spent (${describeSpend(spend)}; TERFYN_APP_MAX_TOKENS)`,
        );
      spend.calls++;
      await save();
      const answer = await model.turn(request);
      if (answer.usage) {
        spend.input_tokens += answer.usage.input_tokens;
        spend.output_tokens += answer.usage.output_tokens;
        await save();
      }
      return answer;
    },
  };
}
