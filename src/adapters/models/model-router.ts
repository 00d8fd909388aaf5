/**
 * Picks the model adapter for each agent turn by its provider: `mock/gpt-4`, `mock/script`
 * (the project's or --model-script's script), `anthropic/…` (key from ANTHROPIC_API_KEY),
 * `openai/…` (key from OPENAI_API_KEY; any OpenAI-compatible server at a base URL).
 * With a --model-script every agent is driven by the script, whatever its declared model; with
 * `model` every agent runs on that model instead of its declared one (`terfyn review` runs its
 * agents on the mock unless told otherwise).
 */
import type { ModelAnswer, ModelPort, ModelRequest } from "../../core/engine/ports.ts";
import type { AnthropicModel } from "./anthropic.ts";
import { MockGpt4 } from "./mock-gpt4.ts";
import type { ScriptedModel } from "./model-script.ts";
import type { MaxTokensField, OpenAIModel } from "./openai.ts";

type Env = Readonly<Record<string, string | undefined>>;
type ProviderBlock = Readonly<Record<string, string>>;

/** The providers with an API behind them, and the variables they read when no block says. */
const ENDPOINTS = {
  anthropic: { keyEnv: "ANTHROPIC_API_KEY", urlEnv: "ANTHROPIC_BASE_URL" },
  openai: { keyEnv: "OPENAI_API_KEY", urlEnv: "OPENAI_BASE_URL" },
} as const;

/**
 * The key sent to a server on this machine that was given none: OpenAI-compatible local servers
 * (Ollama, llama.cpp) take no key, but the SDK will not send a request without one.
 */
export const LOCAL_SERVER_KEY = "no-key";

/**
 * Where a provider's API is and the key for it: the provider block's `baseUrl` and `apiKeyEnv`,
 * else the provider's own variables in the run's environment (never this process's).
 * `missingKey` names the variable to set when there is no key (an OpenAI-compatible server on a
 * loopback address needs none).
 */
export function endpointOf(
  provider: keyof typeof ENDPOINTS,
  block: ProviderBlock | undefined,
  env: Env,
): { key?: string; baseURL?: string; missingKey?: string } {
  const keyEnv = block?.apiKeyEnv ?? ENDPOINTS[provider].keyEnv;
  const baseURL = block?.baseUrl ?? (env[ENDPOINTS[provider].urlEnv]?.trim() || undefined);
  const url = baseURL ? { baseURL } : {};
  const key = env[keyEnv];
  if (key) return { key, ...url };
  if (provider === "openai" && baseURL && isLoopback(baseURL))
    return { key: LOCAL_SERVER_KEY, ...url };
  return { ...url, missingKey: keyEnv };
}

function isLoopback(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return false;
  }
  return host === "localhost" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
}

export class ModelRouter implements ModelPort {
  private readonly mock = new MockGpt4();
  private anthropic: AnthropicModel | undefined;
  private openai: OpenAIModel | undefined;

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
      providers?: Readonly<Record<string, ProviderBlock>>;
      env: Env;
    },
  ) {}

  async turn(declared: ModelRequest): Promise<ModelAnswer> {
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
      return { ...(await this.options.script.turn(request)), model: "mock/script" };
    }
    if (provider === "mock") return { ...(await this.mock.turn(request)), model: request.model };
    if (provider === "anthropic" || provider === "openai") {
      const end = endpointOf(provider, this.options.providers?.[provider], this.options.env);
      if (end.key === undefined)
        throw new Error(`agent ${request.agent} uses ${request.model}: set ${end.missingKey}`);
      const options = { ...(end.baseURL ? { baseURL: end.baseURL } : {}) };
      // Imported on first use: an SDK is most of the code a run on the mock or a script would
      // otherwise compile at start (~380 KB of the review command's bundle for Anthropic's).
      if (provider === "anthropic") {
        this.anthropic ??= new (await import("./anthropic.ts")).AnthropicModel(end.key, options);
        return { ...(await this.anthropic.turn(request)), model: request.model };
      }
      const field = this.options.providers?.openai?.maxTokensField as MaxTokensField | undefined;
      this.openai ??= new (await import("./openai.ts")).OpenAIModel(end.key, {
        ...options,
        ...(field ? { maxTokensField: field } : {}),
      });
      return { ...(await this.openai.turn(request)), model: request.model };
    }
    throw new Error(
      `no adapter for the model provider \`${provider}\` of agent ${request.agent} (available: ${MODEL_PROVIDERS.join(", ")})`,
    );
  }
}

/** The model providers this router has an adapter for. */
export const MODEL_PROVIDERS = ["mock", "anthropic", "openai"] as const;

/**
 * Why `models` cannot be run with `env`, before any work: an unknown provider, or a model whose
 * provider has no key (endpointOf). Undefined when they can.
 */
export function modelProblem(models: readonly string[], env: Env): string | undefined {
  for (const m of models) {
    const [provider, name] = m.split("/", 2);
    if (!(MODEL_PROVIDERS as readonly string[]).includes(provider ?? "") || !name)
      return `no adapter for the model \`${m}\` (use anthropic/<model>, openai/<model>, or mock/gpt-4)`;
    if (provider === "anthropic" || provider === "openai") {
      const { missingKey } = endpointOf(provider, undefined, env);
      if (missingKey) return `${m} needs ${missingKey} in the environment; nothing was started`;
    }
  }
  return undefined;
}
