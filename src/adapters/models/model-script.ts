/**
 * `mock/script`: a YAML script of model turns per agent (README, "Run it"), consumed
 * in order across invocations, so `terfyn run` works end to end offline and in CI. The engine
 * passes each agent's turn ordinal, so a resumed run continues where the script left off.
 * A turn may say what it cost (`usage: { input_tokens, output_tokens }`, and optionally
 * `cache_creation_input_tokens` and `cache_read_input_tokens`), reported as a real
 * model's usage is: journaled, and counted against the App's token budget.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { readYamlFile } from "../../core/config/yaml-file.ts";
import type { ModelAnswer, ModelPort, ModelRequest } from "../../core/engine/ports.ts";

const tokens = z.number().int().nonnegative();
const usageSchema = z
  .object({
    input_tokens: tokens,
    output_tokens: tokens,
    cache_creation_input_tokens: tokens.optional(),
    cache_read_input_tokens: tokens.optional(),
  })
  .strict();

const turnSchema = z.union([
  z
    .object({
      toolCalls: z
        .array(
          z
            .object({
              tool: z.string().min(1),
              input: z.unknown().optional(),
              id: z.string().optional(),
            })
            .strict(),
        )
        .min(1),
      text: z.string().optional(),
      usage: usageSchema.optional(),
    })
    .strict(),
  z
    .object({ output: z.unknown(), text: z.string().optional(), usage: usageSchema.optional() })
    .strict(),
]);

const scriptSchema = z.object({ agents: z.record(z.string(), z.array(turnSchema)) }).strict();

export class ModelScriptError extends Error {}

export class ScriptedModel implements ModelPort {
  private constructor(
    readonly path: string,
    private readonly agents: Record<string, z.infer<typeof turnSchema>[]>,
  ) {}

  static async load(path: string): Promise<ScriptedModel> {
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch {
      throw new ModelScriptError(`cannot read the model script ${path}`);
    }
    return ScriptedModel.parse(path, text);
  }

  static parse(path: string, text: string): ScriptedModel {
    const read = readYamlFile(
      path,
      text,
      scriptSchema,
      "a turn is { toolCalls: [{ tool, input }] } or { output: … }, with an optional usage: { input_tokens, output_tokens, cache_creation_input_tokens?, cache_read_input_tokens? }",
    );
    if (!read.ok) throw new ModelScriptError(read.message);
    return new ScriptedModel(path, read.value.agents);
  }

  async turn(request: ModelRequest): Promise<ModelAnswer> {
    // `Agent@step` names the turns of one step of a review run (its repair turn, a re-plan).
    const stepKey = request.step === undefined ? undefined : `${request.agent}@${request.step}`;
    const turns =
      stepKey !== undefined && Object.hasOwn(this.agents, stepKey)
        ? this.agents[stepKey]
        : this.agents[request.agent];
    if (!turns)
      throw new Error(`the model script ${this.path} has no turns for agent ${request.agent}`);
    const turn = turns[request.ordinal];
    if (!turn) {
      throw new Error(
        `the model script ${this.path} has ${turns.length} turn(s) for agent ${request.agent}; turn ${request.ordinal + 1} was asked for`,
      );
    }
    const usage = turn.usage ? { usage: { ...turn.usage } } : {};
    if ("toolCalls" in turn) {
      const calls = turn.toolCalls.map((c, i) => ({
        id: c.id ?? `call_${request.ordinal}_${i}`,
        tool: c.tool,
        input: c.input ?? {},
      }));
      return {
        response:
          turn.text === undefined
            ? { kind: "tool_calls", calls }
            : { kind: "tool_calls", calls, text: turn.text },
        ...usage,
      };
    }
    return {
      response:
        turn.text === undefined
          ? { kind: "output", output: turn.output }
          : { kind: "output", output: turn.output, text: turn.text },
      ...usage,
    };
  }
}
