/**
 * Picks the model adapter for each agent turn by its provider: `mock/gpt-4`, `mock/script`
 * (the project's or --model-script's script), `anthropic/…` (key from ANTHROPIC_API_KEY).
 * With a --model-script every agent is driven by the script, whatever its declared model; with
 * `model` every agent runs on that model instead of its declared one (`terfyn review` runs its
 * agents on the mock unless told otherwise).
 */
import type { ModelResponse, TokenUsage } from "../../core/engine/journal.ts";
import type { ModelPort, ModelRequest } from "../../core/engine/ports.ts";
import type { AnthropicModel } from "./anthropic.ts";
import { MockGpt4 } from "./mock-gpt4.ts";
import type { ScriptedModel } from "./model-script.ts";

export class ModelRouter implements ModelPort {
  private readonly mock = new MockGpt4();
  private anthropic: AnthropicModel | undefined;

  constructor(
    private readonly options: {
      script?: ScriptedModel;
      /** Force the script for every agent (--model-script). */
      forceScript?: boolean;
      /** Run every agent on this model, whatever it declares (the script still wins). */
      model?: string;
      /** Run these agents on these models (wins over `model`; the script still wins). */
      agentModels?: Readonly<Record<string, string>>;
      /**
       * The project's provider blocks: `apiKeyEnv` names the variable the key is read from
       * (default ANTHROPIC_API_KEY), `baseUrl` the API's base URL (default ANTHROPIC_BASE_URL).
       */
      providers?: Readonly<Record<string, Readonly<Record<string, string>>>>;
      env: Record<string, string | undefined>;
    },
  ) {}

  async turn(declared: ModelRequest): Promise<{ response: ModelResponse; usage?: TokenUsage }> {
    const over = this.options.agentModels;
    // Own keys only: an agent named like an object's property is not overridden by it.
    const chosen =
      over && Object.hasOwn(over, declared.agent) ? over[declared.agent] : this.options.model;
    const request = chosen !== undefined ? { ...declared, model: chosen } : declared;
    const provider = request.model.split("/")[0];
    if (this.options.forceScript || request.model === "mock/script") {
      if (!this.options.script)
        throw new Error(
          `agent ${request.agent} uses mock/script but no model script was given (--model-script FILE or the project's spec.modelScript)`,
        );
      return this.options.script.turn(request);
    }
    if (provider === "mock") return this.mock.turn(request);
    if (provider === "anthropic") {
      const block = this.options.providers?.anthropic;
      const keyEnv = block?.apiKeyEnv ?? "ANTHROPIC_API_KEY";
      const key = this.options.env[keyEnv];
      if (!key) throw new Error(`agent ${request.agent} uses ${request.model}: set ${keyEnv}`);
      // Imported on first use: the SDK is most of the code a run on the mock or a script
      // would otherwise compile at start (~380 KB of the review command's bundle).
      // The base URL from the run's environment (not the SDK's own read of process.env): a
      // proxy or a local server speaking the Messages API.
      const baseURL = block?.baseUrl ?? this.options.env.ANTHROPIC_BASE_URL?.trim();
      this.anthropic ??= new (await import("./anthropic.ts")).AnthropicModel(key, {
        ...(baseURL ? { baseURL } : {}),
      });
      return this.anthropic.turn(request);
    }
    throw new Error(
      `no adapter for the model provider \`${provider}\` of agent ${request.agent} (available: mock, anthropic)`,
    );
  }
}

/** The model providers this router has an adapter for. */
export const MODEL_PROVIDERS = ["mock", "anthropic"] as const;

/**
 * Why `models` cannot be run with `env`, before any work: an unknown provider, or an
 * `anthropic/…` model with no ANTHROPIC_API_KEY. Undefined when they can.
 */
export function modelProblem(
  models: readonly string[],
  env: Record<string, string | undefined>,
): string | undefined {
  for (const m of models) {
    const [provider, name] = m.split("/", 2);
    if (!(MODEL_PROVIDERS as readonly string[]).includes(provider ?? "") || !name)
      return `no adapter for the model \`${m}\` (use anthropic/<model>, or mock/gpt-4)`;
    if (provider === "anthropic" && !env.ANTHROPIC_API_KEY)
      return `${m} needs ANTHROPIC_API_KEY in the environment; nothing was started`;
  }
  return undefined;
}
