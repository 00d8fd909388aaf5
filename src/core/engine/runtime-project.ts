/**
 * What running an agent step reads of a project (interpreter.ts): each agent's model, prompt,
 * schemas, turn limit and grants; the JSON Schemas by name; each tool operation's input schema,
 * description and idempotence. A `ResolvedProject` is one; so is the compact copy a review run
 * keeps in its run directory (agents-cache.ts), which is encoded and decoded here. Pure.
 *
 * The decoder treats its input as hostile: the copy lives in a run directory like every other
 * run file. Anything that is not exactly the shape `encodeRuntimeProject` writes (an unknown
 * key, a wrong type, a name given twice, an agent map key that is not the agent's name) is
 * refused, and the caller validates the project from its files instead.
 */
import { z } from "zod";
import { type JsonSchemaNode, jsonSchemaNode } from "../config/schemas.ts";
import type { GrantMode } from "../model/project.ts";

export interface RuntimeGrant {
  /** `tool.<tool>.<operation>`, as written. */
  ref: string;
  tool: string;
  operation: string;
  mode: GrantMode;
}

export interface RuntimeAgent {
  name: string;
  model: string;
  instructions: string;
  input?: string;
  output?: string;
  maxTurns: number;
  /** `max_tokens` of its answers; absent, the adapter's default (DEFAULT_MAX_TOKENS). */
  maxTokens?: number;
  /** Sampling temperature; absent, none is sent. */
  temperature?: number;
  grants: readonly RuntimeGrant[];
}

export interface RuntimeOperation {
  idempotent: boolean;
  input?: JsonSchemaNode;
  description?: string;
}

export interface RuntimeProject {
  agents: ReadonlyMap<string, RuntimeAgent>;
  schemas: ReadonlyMap<string, { schema: JsonSchemaNode }>;
  tools: ReadonlyMap<string, { operations: ReadonlyMap<string, RuntimeOperation> }>;
}

const name = z.string().min(1);

const encodedGrant = z
  .object({
    ref: name,
    tool: name,
    operation: name,
    mode: z.enum(["autonomous", "gated"]),
  })
  .strict();

const encodedAgent = z
  .object({
    name,
    model: name,
    instructions: z.string(),
    input: name.optional(),
    output: name.optional(),
    maxTurns: z.number().int().positive(),
    maxTokens: z.number().int().positive().optional(),
    temperature: z.number().min(0).max(2).optional(),
    grants: z.array(encodedGrant),
  })
  .strict();

const encodedOperation = z
  .object({
    name,
    idempotent: z.boolean(),
    input: jsonSchemaNode.optional(),
    description: z.string().optional(),
  })
  .strict();

const encodedProject = z
  .object({
    agents: z.array(encodedAgent),
    schemas: z.array(z.object({ name, schema: jsonSchemaNode }).strict()),
    tools: z.array(z.object({ name, operations: z.array(encodedOperation) }).strict()),
  })
  .strict();

export type EncodedRuntimeProject = z.infer<typeof encodedProject>;

/** Only the keys that are set: a JSON copy has no `undefined` values either. */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** The runtime part of a project as plain JSON data, in the project's own order. */
export function encodeRuntimeProject(p: RuntimeProject): EncodedRuntimeProject {
  return {
    agents: [...p.agents.values()].map((a) =>
      defined({
        name: a.name,
        model: a.model,
        instructions: a.instructions,
        input: a.input,
        output: a.output,
        maxTurns: a.maxTurns,
        maxTokens: a.maxTokens,
        temperature: a.temperature,
        grants: a.grants.map((g) => ({
          ref: g.ref,
          tool: g.tool,
          operation: g.operation,
          mode: g.mode,
        })),
      }),
    ),
    schemas: [...p.schemas].map(([n, s]) => ({ name: n, schema: s.schema })),
    tools: [...p.tools].map(([n, t]) => ({
      name: n,
      operations: [...t.operations].map(([o, op]) =>
        defined({
          name: o,
          idempotent: op.idempotent,
          input: op.input,
          description: op.description,
        }),
      ),
    })),
  };
}

/** A map by name, or undefined when a name is given twice. */
function byName<T extends { name: string }, V>(
  items: readonly T[],
  value: (item: T) => V,
): Map<string, V> | undefined {
  const m = new Map<string, V>();
  for (const item of items) {
    if (m.has(item.name)) return undefined;
    m.set(item.name, value(item));
  }
  return m;
}

/** The runtime project from what `encodeRuntimeProject` wrote; undefined for anything else. */
export function decodeRuntimeProject(data: unknown): RuntimeProject | undefined {
  const r = encodedProject.safeParse(data);
  if (!r.success) return undefined;
  const e = r.data;
  const agents = byName(e.agents, (a): RuntimeAgent => a);
  const schemas = byName(e.schemas, (s) => ({ schema: s.schema }));
  let operationsOk = true;
  const tools = byName(e.tools, (t) => {
    const operations = byName(t.operations, (op): RuntimeOperation => {
      const { name: _, ...rest } = op;
      return rest;
    });
    if (!operations) operationsOk = false;
    return { operations: operations ?? new Map<string, RuntimeOperation>() };
  });
  if (!agents || !schemas || !tools || !operationsOk) return undefined;
  return { agents, schemas, tools };
}
