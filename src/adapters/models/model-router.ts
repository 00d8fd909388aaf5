/**
 * Picks the model adapter for each agent turn by its provider: `mock/gpt-4`, `mock/script`
 * (the project's or --model-script's script), `anthropic/…` (key from ANTHROPIC_API_KEY).
 * With a --model-script every agent is driven by the script, whatever its declared model.
 */
import type { ModelResponse, TokenUsage } from "../../core/engine/journal.ts";
import type { ModelPort, ModelRequest } from "../../core/engine/ports.ts";
import { AnthropicModel } from "./anthropic.ts";
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
      env: Record<string, string | undefined>;
    },
  ) {}

  async turn(request: ModelRequest): Promise<{ response: ModelResponse; usage?: TokenUsage }> {
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
      const key = this.options.env.ANTHROPIC_API_KEY;
      if (!key)
        throw new Error(`agent ${request.agent} uses ${request.model}: set ANTHROPIC_API_KEY`);
      this.anthropic ??= new AnthropicModel(key);
      return this.anthropic.turn(request);
    }
    throw new Error(
      `no adapter for the model provider \`${provider}\` of agent ${request.agent} (available: mock, anthropic)`,
    );
  }
}
