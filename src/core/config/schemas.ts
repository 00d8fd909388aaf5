/**
 * The YAML resource contract: zod schemas for every `kind` (docs/language.md, "YAML resources").
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
export const effectName = z.string().regex(
  // `-` and a final `.*` for a host's MCP servers: `mcp.brave-search.*`.
  /^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*(\.\*)?$/,
  "an effect is dot-separated names, e.g. `workspace.read` (an MCP server's tools: `mcp.<server>.*`)",
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
    /**
     * Host configuration files at paths other than their conventional ones, each read as the
     * host `kind` reads it (docs/hosts.md): the project's host agents include them.
     */
    hosts: z
      .array(
        z
          .object({
            kind: z
              .enum([
                "claude-code",
                "claude-code-local",
                "mcp",
                "codex",
                "claude-code-action",
                "gh-aw",
                "copilot",
                "copilot-local",
                "copilot-mcp",
                "copilot-managed",
                "copilot-hooks",
              ])
              .describe("The host that reads the file."),
            path: z
              .string()
              .min(1)
              .regex(
                /^(?!\/)(?!.*(^|\/)\.\.?(\/|$))[^\\]+$/,
                "a path inside the project, `/`-separated, without `.` or `..` components",
              )
              .describe("The file, relative to the project root."),
          })
          .strict(),
      )
      .optional()
      .describe("Host configuration files at other than their conventional paths."),
    /** A model script used when an agent's model is `mock/script`. */
    modelScript: z
      .string()
      .min(1)
      .optional()
      .describe("Model script (YAML) used by agents whose model is mock/script."),
  })
  .strict();

/** How a command tool passes an operation's input to the process. */
export const commandInputMode = z
  .enum(["stdin", "args"])
  .describe(
    "stdin: the input as one JSON document on stdin (default). args: each top-level field as `--key value`.",
  );

const positiveMs = z.number().int().min(1).max(3_600_000);
const positiveBytes = z
  .number()
  .int()
  .min(1)
  .max(64 * 1024 * 1024);

/** Settings of a command operation that may replace the tool-wide ones. */
export const commandOperationSettings = z
  .object({
    /** The program and its fixed arguments; never run through a shell. */
    argv: z
      .array(z.string())
      .optional()
      .describe(
        "The program and its fixed arguments, never run through a shell. argv[0] is looked up in PATH, or resolved against the project root when it holds a /.",
      ),
    /** How the input reaches the process. */
    inputAs: commandInputMode.optional(),
    /** Milliseconds before the process group is killed. */
    timeoutMs: positiveMs
      .optional()
      .describe("Milliseconds before the whole process group is killed (default 30000)."),
  })
  .strict();

export const commandToolSettings = commandOperationSettings
  .extend({
    /** Environment variables passed to the process; nothing else is. */
    env: z
      .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name"))
      .optional()
      .describe(
        "Names of the environment variables the process receives (values from Terfyn's environment); no other variable is passed, not even PATH.",
      ),
    /** Bytes of stdout kept; more is cut and the result says `truncated`. */
    maxOutputBytes: positiveBytes
      .optional()
      .describe("Bytes of stdout kept as the result (default 1 MiB); stderr keeps its last 8 KiB."),
  })
  .strict();

/** The request an http operation makes. */
export const httpOperationSettings = z
  .object({
    method: z
      .enum(["GET", "POST", "PUT", "PATCH", "DELETE"])
      .describe("The HTTP method. POST, PUT and PATCH send a JSON body."),
    /** Scheme, host and port are fixed; `{field}` placeholders only in the path and query. */
    url: z
      .string()
      .describe(
        "URL template: http(s)://host[:port]/path?query. Scheme, host and port are literal; {field} placeholders (filled from the input, percent-encoded) only in the path and query.",
      ),
    timeoutMs: positiveMs
      .optional()
      .describe("Milliseconds before the request is aborted (replaces the tool's)."),
  })
  .strict();

/** A header's value: a literal (not for credentials) or an environment variable's value. */
export const headerValue = z.union([
  z.string(),
  z
    .object({
      fromEnv: z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name")
        .describe("The environment variable holding the value; the value is never shown."),
      prefix: z.string().optional().describe('Text before the value, e.g. "Bearer ".'),
    })
    .strict(),
]);

export const httpToolSettings = z
  .object({
    /** The only headers sent, besides Content-Type and Accept. */
    headers: z
      .record(z.string(), headerValue)
      .optional()
      .describe(
        "The only headers sent (besides Content-Type and Accept): a literal value, or { fromEnv: NAME } for secrets.",
      ),
    timeoutMs: positiveMs
      .optional()
      .describe("Milliseconds before a request is aborted (default 10000)."),
    /** Largest response body read; a larger one fails the call. */
    maxResponseBytes: positiveBytes
      .optional()
      .describe(
        "Largest response body read, in bytes (default 1 MiB); a larger one fails the call.",
      ),
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
    /** `adapter: command` only: this operation's argv, input mode or timeout, replacing the tool's. */
    command: commandOperationSettings
      .optional()
      .describe("command tools: this operation's argv, inputAs or timeoutMs (replace the tool's)."),
    /** `adapter: http` only: the request this operation makes. */
    http: httpOperationSettings
      .optional()
      .describe("http tools: the method and URL template of this operation's request."),
  })
  .strict();

export const toolSpec = z
  .object({
    /** Which adapter runs the operations. */
    adapter: z
      .enum(["workspace", "command", "http", "external"])
      .describe(
        "workspace (native sandboxed files and test command), command (a fixed argv, no shell), http (a URL template with a fixed host), or external (planning and testing only; fails at run time).",
      ),
    /** `adapter: command`: the tool-wide argv, input mode, timeout, env allowlist and output cap. */
    command: commandToolSettings
      .optional()
      .describe("adapter: command only: argv, inputAs, timeoutMs, env allowlist, maxOutputBytes."),
    /** `adapter: http`: headers, timeout and response cap. */
    http: httpToolSettings
      .optional()
      .describe("adapter: http only: headers, timeoutMs, maxResponseBytes."),
    operations: z.record(name, operationSpec).describe("The tool's operations, by name."),
    description: z.string().optional(),
  })
  .strict();

export const riskLevel = z.enum(["low", "medium", "high", "critical"]);

const forbidRule = z
  .object({
    forbid: z
      .object({
        agent: z.string().min(1).optional().describe("An agent name, or * for every agent."),
        holding: z
          .string()
          .regex(/^tool\.[^.\s]+\.[^.\s]+$/, "a grant such as `tool.vault.read_secret`")
          .optional()
          .describe(
            "Instead of agent: every agent that holds this grant (any mode), whatever it is called, so a rename cannot escape the rule.",
          ),
        effect: effectName,
      })
      .strict()
      .refine((f) => (f.agent === undefined) !== (f.holding === undefined), {
        message: "give exactly one of `agent` (a name, or *) and `holding` (a grant)",
      }),
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
              /^tool\.[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*$|^(?!tool\.)[A-Za-z_][A-Za-z0-9_-]*(\(.+\))?$/s,
              "a tool operation such as tool.workspace.write_file (for a host agent, a rule as written: Bash(git push *))",
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
export type ToolSpec = z.infer<typeof toolSpec>;
export type HeaderValue = z.infer<typeof headerValue>;
