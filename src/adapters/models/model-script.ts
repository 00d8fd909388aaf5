/**
 * `mock/script`: a YAML script of model turns per agent (README, "Run it"), consumed
 * in order across invocations, so `terfyn run` works end to end offline and in CI. The engine
 * passes each agent's turn ordinal, so a resumed run continues where the script left off.
 * A turn may say what it cost (`usage: { input_tokens, output_tokens }`, and optionally
 * `cache_creation_input_tokens` and `cache_read_input_tokens`), reported as a real
 * model's usage is: journaled, and counted against the App's token budget.
 */
import { readFile } from "node:fs/promises";
import { isMap, isSeq, LineCounter, parseDocument } from "yaml";
import { z } from "zod";
import { QUIET_YAML, yamlDocumentValue } from "../../core/config/yaml-value.ts";
import type { ModelResponse, TokenUsage } from "../../core/engine/journal.ts";
import type { ModelPort, ModelRequest } from "../../core/engine/ports.ts";

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
    const lineCounter = new LineCounter();
    const doc = parseDocument(text, { lineCounter, ...QUIET_YAML });
    if (doc.errors.length > 0) {
      const e = doc.errors[0];
      const pos = e ? lineCounter.linePos(e.pos[0]) : { line: 1, col: 1 };
      throw new ModelScriptError(`${path}:${pos.line}:${pos.col}: ${e?.message.split("\n")[0]}`);
    }
    // Alias bombs, unknown aliases, self-containing values and collection keys: a located
    // message here, not a thrown error (or a run that fails mid-way on a value that cannot be
    // journaled).
    const read = yamlDocumentValue(doc);
    if (!read.ok) {
      const pos = lineCounter.linePos(read.problem.range.start);
      const hint = read.problem.hint === undefined ? "" : `; ${read.problem.hint}`;
      throw new ModelScriptError(`${path}:${pos.line}:${pos.col}: ${read.problem.message}${hint}`);
    }
    const parsed = scriptSchema.safeParse(read.value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const p = issue?.path.filter((x): x is string | number => typeof x !== "symbol") ?? [];
      let node = doc.contents as unknown;
      let offset = 0;
      for (const seg of p) {
        const next = isMap(node)
          ? node.get(seg, true)
          : isSeq(node)
            ? node.get(seg as number, true)
            : undefined;
        if (!next) break;
        node = next;
        offset = (next as { range?: [number] }).range?.[0] ?? offset;
      }
      const pos = lineCounter.linePos(offset);
      throw new ModelScriptError(
        `${path}:${pos.line}:${pos.col}: ${p.join(".") || "(script)"}: ${issue?.message ?? "invalid"} (a turn is { toolCalls: [{ tool, input }] } or { output: … }, with an optional usage: { input_tokens, output_tokens, cache_creation_input_tokens?, cache_read_input_tokens? })`,
      );
    }
    return new ScriptedModel(path, parsed.data.agents);
  }

  async turn(request: ModelRequest): Promise<{ response: ModelResponse; usage?: TokenUsage }> {
    const turns = this.agents[request.agent];
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
