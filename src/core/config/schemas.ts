/**
 * The YAML resource contract: zod schemas for every `kind` (DESIGN.md, "Resource configuration").
 *
 * These schemas are the single source of truth: the loader validates with them and
 * `npm run schemas` generates the published JSON Schemas under `schemas/` from them. Field names
 * are fixed by the design; optional fields may be added, never renamed.
 */
import { z } from "zod";

export const API_VERSION = "terfyn.dev/v1";

const name = z
  .string()
  .min(1)
  .regex(
    /^[A-Za-z_][A-Za-z0-9_.-]*$/,
    "must start with a letter or `_` and contain only letters, digits, `_`, `.` and `-`",
  );

/** An effect class such as `workspace.read`: dot-separated lower-level names. */
export const effectName = z
  .string()
  .regex(
    /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/,
    "an effect is dot-separated names, e.g. `workspace.read`",
  );

export const metadataSchema = z
  .object({
    /** The resource's name; resources are addressed `Kind/name`. */
    name: name.describe("The resource's name; resources are addressed Kind/name."),
    /** Free-form labels, carried into plans. */
    labels: z.record(z.string(), z.string()).optional().describe("Free-form labels."),
  })
  .strict();

/** The JSON Schema 2020-12 subset Terfyn types with: object, array, string, number, integer, boolean, enum, required. */
export interface JsonSchemaNode {
  type?: "object" | "array" | "string" | "number" | "integer" | "boolean";
  description?: string;
  title?: string;
  properties?: Record<string, JsonSchemaNode>;
  required?: string[];
  additionalProperties?: boolean;
  items?: JsonSchemaNode;
  enum?: (string | number | boolean | null)[];
  default?: unknown;
}

export const jsonSchemaNode: z.ZodType<JsonSchemaNode> = z.lazy(() =>
  z
    .object({
      type: z.enum(["object", "array", "string", "number", "integer", "boolean"]).optional(),
      description: z.string().optional(),
      title: z.string().optional(),
      properties: z.record(z.string(), jsonSchemaNode).optional(),
      required: z.array(z.string()).optional(),
      additionalProperties: z.boolean().optional(),
      items: jsonSchemaNode.optional(),
      enum: z
        .array(z.union([z.string(), z.number(), z.boolean(), z.null()]))
        .min(1)
        .optional(),
      default: z.unknown().optional(),
    })
    .strict(),
);

export const projectSpec = z
  .object({
    /** Path of the state file that `terfyn apply` writes, relative to the project root. */
    state: z
      .string()
      .min(1)
      .optional()
      .describe("State file path, relative to the project root (default .terfyn/state.json)."),
    /** Root of run directories, relative to the project root. */
    runs: z
      .string()
      .min(1)
      .optional()
      .describe("Run directory root, relative to the project root (default .terfyn/runs)."),
    /** Extra directories (relative to the root) whose files do not belong to the project. */
    exclude: z
      .array(z.string().min(1))
      .optional()
      .describe(
        "Extra directories excluded from the project, besides fixtures/, .terfyn/ and node_modules/.",
      ),
    /** A model script used when an agent's model is `mock/script`. */
    modelScript: z
      .string()
      .min(1)
      .optional()
      .describe("Model script (YAML) used by agents whose model is mock/script."),
  })
  .strict();

export const operationSpec = z
  .object({
    /** Effect classes this operation may cause. */
    effects: z
      .array(effectName)
      .describe("Effect classes the operation may cause, e.g. workspace.write."),
    /** Whether re-issuing the operation after a crash is safe. */
    idempotent: z
      .boolean()
      .default(false)
      .describe("Whether re-issuing the operation after a crash is safe."),
    /** JSON Schema of the operation's input. */
    input: jsonSchemaNode.optional().describe("JSON Schema of the operation's input."),
    description: z.string().optional().describe("What the operation does, shown to the model."),
  })
  .strict();

export const toolSpec = z
  .object({
    /** `workspace` is native; `external` is declared for planning and testing. */
    adapter: z
      .enum(["workspace", "external"])
      .describe(
        "workspace (native sandboxed files and test command) or external (planning and testing only unless a handler is registered).",
      ),
    operations: z.record(name, operationSpec).describe("The tool's operations, by name."),
    description: z.string().optional(),
  })
  .strict();

export const riskLevel = z.enum(["low", "medium", "high", "critical"]);

const forbidRule = z
  .object({
    forbid: z
      .object({
        agent: z.string().min(1).describe("An agent name, or * for every agent."),
        effect: effectName,
      })
      .strict(),
  })
  .strict();
const requireApprovalRule = z
  .object({ requireApproval: z.object({ effect: effectName }).strict() })
  .strict();
const riskRule = z
  .object({ risk: z.object({ effect: effectName, level: riskLevel }).strict() })
  .strict();
const maxLoopLimitRule = z.object({ maxLoopLimit: z.number().int().min(1) }).strict();

export const policyRule = z.union([forbidRule, requireApprovalRule, riskRule, maxLoopLimitRule]);

export const policySpec = z
  .object({
    rules: z.array(policyRule).describe("forbid, requireApproval, risk and maxLoopLimit rules."),
    description: z.string().optional(),
  })
  .strict();

const agentEffect = z.object({ agent: z.string().min(1), effect: effectName }).strict();

export const assertion = z.union([
  z.object({ forbidEffect: agentEffect }).strict(),
  z
    .object({
      allowEffect: z
        .object({
          agent: z.string().min(1),
          effect: effectName,
          mode: z.enum(["autonomous", "gated", "any"]).optional(),
        })
        .strict(),
    })
    .strict(),
  z
    .object({
      maxIterations: z
        .object({ workflow: z.string().min(1), limit: z.number().int().min(0) })
        .strict(),
    })
    .strict(),
  z
    .object({
      workflowEffects: z
        .object({ workflow: z.string().min(1), equals: z.array(effectName) })
        .strict(),
    })
    .strict(),
  z
    .object({
      requiresApproval: z
        .object({
          agent: z.string().min(1),
          tool: z
            .string()
            .regex(
              /^tool\.[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*$/,
              "a tool operation such as tool.workspace.write_file",
            ),
        })
        .strict(),
    })
    .strict(),
]);

export const capabilityTestSpec = z
  .object({
    assertions: z
      .array(assertion)
      .describe("Static assertions over the effect bound, checked with no model."),
    description: z.string().optional(),
  })
  .strict();

function envelope<K extends string, S extends z.ZodType>(kind: K, spec: S) {
  return z
    .object({
      apiVersion: z.literal(API_VERSION),
      kind: z.literal(kind),
      metadata: metadataSchema,
      spec,
    })
    .strict();
}

export const resourceSchemas = {
  Project: envelope("Project", projectSpec),
  Tool: envelope("Tool", toolSpec),
  Schema: envelope("Schema", jsonSchemaNode),
  Policy: envelope("Policy", policySpec),
  CapabilityTest: envelope("CapabilityTest", capabilityTestSpec),
} as const;

export type ResourceKind = keyof typeof resourceSchemas;
export const RESOURCE_KINDS = Object.keys(resourceSchemas) as ResourceKind[];

export type ProjectResource = z.infer<(typeof resourceSchemas)["Project"]>;
export type ToolResource = z.infer<(typeof resourceSchemas)["Tool"]>;
export type SchemaResource = z.infer<(typeof resourceSchemas)["Schema"]>;
export type PolicyResource = z.infer<(typeof resourceSchemas)["Policy"]>;
export type CapabilityTestResource = z.infer<(typeof resourceSchemas)["CapabilityTest"]>;
export type PolicyRule = z.infer<typeof policyRule>;
export type Assertion = z.infer<typeof assertion>;
export type OperationSpec = z.infer<typeof operationSpec>;
