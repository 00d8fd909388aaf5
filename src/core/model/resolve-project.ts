/**
 * Project resolution: parsed `.agent` files and loaded YAML resources → `ResolvedProject`,
 * with every name bound and every declaration-level rule checked (duplicates, unknown names,
 * models and providers, tool bindings). Workflow bodies are checked in `check-workflow.ts`;
 * effects and policies in `../analysis`.
 *
 * Pure: takes file contents, returns data and diagnostics.
 */

import {
  type InvalidResource,
  type LoadedResource,
  loadResources,
} from "../config/load-resources.ts";
import type { OperationSpec } from "../config/schemas.ts";
import { type Diagnostic, diagnostic, type Span } from "../diagnostics.ts";
import { isHostPath } from "../hosts/host-paths.ts";
import type {
  AgentDecl,
  AgentFile,
  Identifier,
  ProviderDecl,
  ToolDecl,
  WorkflowDecl,
} from "../language/ast.ts";
import { parseAgentFile } from "../language/parser.ts";
import { fileSpan, type Range, SourceText } from "../source.ts";
import { didYouMean } from "../suggest.ts";
import { DEPRECATED_ANTHROPIC_MODELS, KNOWN_ANTHROPIC_MODELS } from "./anthropic-models.ts";
import type {
  AgentDefaults,
  ProjectSettings,
  ResolvedAgent,
  ResolvedGrant,
  ResolvedOperation,
  ResolvedPolicyRule,
  ResolvedProject,
  ResolvedSchema,
  ResolvedTool,
  ResolvedWorkflow,
} from "./project.ts";
import { resolveAdapterSettings } from "./tool-adapters.ts";
import { typeFromSchema } from "./types.ts";

/** What the lexer reads as one identifier (docs/language.md): every name `.agent` can write. */
const AGENT_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A file handed to the core: a project-relative POSIX path and its text. */
export interface ProjectFile {
  path: string;
  text: string;
}

export const PROJECT_FILE = "terfyn.yaml";
export const DEFAULT_MODEL = "mock/gpt-4";
export const DEFAULT_MAX_TURNS = 10;
/** A current model named in hints. */
const CURRENT_ANTHROPIC_EXAMPLE = "claude-sonnet-5-5";
/** `max_tokens` of an agent's answers when neither it nor `defaults` says. */
export const DEFAULT_MAX_TOKENS = 4096;
/** The largest `maxTokens` accepted (above any model's output limit today). */
export const MAX_MAX_TOKENS = 1_000_000;

/** Providers every project knows; others need a `provider NAME { … }` declaration. */
export const BUILTIN_PROVIDERS = ["mock", "anthropic", "openai"] as const;

/** The providers Terfyn has a model adapter for: a model of any other fails every run. */
export const ADAPTER_PROVIDERS: readonly string[] = ["mock", "anthropic", "openai"];

/** The request fields an OpenAI-compatible server may read the answer's token limit from. */
const MAX_TOKENS_FIELDS = ["max_completion_tokens", "max_tokens"];

/** Why a provider block's `key "value"` cannot be used, if it cannot. */
function providerSettingProblem(
  provider: string,
  key: string,
  value: string,
): { message: string; hint?: string } | undefined {
  if (provider === "mock") return { message: "the mock provider takes no settings" };
  if (!Object.hasOwn(PROVIDER_SETTINGS, key))
    return {
      message: `\`${key}\` is not a provider setting Terfyn reads, so it would not be applied`,
      hint:
        didYouMean(key, Object.keys(PROVIDER_SETTINGS)) ??
        `the settings: ${Object.entries(PROVIDER_SETTINGS)
          .map(([k, v]) => `${k} (${v})`)
          .join(", ")}`,
    };
  if (key === "maxTokensField" && provider !== "openai")
    return { message: "maxTokensField is a setting of the openai provider only" };
  if (key === "maxTokensField" && !MAX_TOKENS_FIELDS.includes(value))
    return {
      message: `maxTokensField must be ${MAX_TOKENS_FIELDS.map((f) => `"${f}"`).join(" or ")}, not ${JSON.stringify(value)}`,
      hint: "OpenAI's API and its reasoning models read max_completion_tokens; most compatible servers read max_tokens",
    };
  if (key === "apiKeyEnv" && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(value))
    return {
      message: `apiKeyEnv must name an environment variable, not ${JSON.stringify(value)}`,
      hint: "the key itself never goes in a project: name the variable that holds it",
    };
  if (key === "baseUrl") {
    let url: URL | undefined;
    try {
      url = new URL(value);
    } catch {}
    if (
      !url ||
      (url.protocol !== "https:" && url.protocol !== "http:") ||
      url.username ||
      url.password
    )
      return {
        message: `baseUrl must be an http or https URL without credentials, not ${JSON.stringify(value)}`,
      };
  }
  return undefined;
}

/** What a provider block may set, and for which providers. */
const PROVIDER_SETTINGS: Readonly<Record<string, string>> = {
  apiKeyEnv: "the environment variable the key is read from",
  baseUrl: "the API's base URL (a proxy, a gateway, a compatible server)",
  maxTokensField:
    "openai only: the request field of the answer's token limit, max_completion_tokens (default for OpenAI's API) or max_tokens (default at a baseUrl)",
};
const MOCK_MODELS = ["gpt-4", "script"];

/** Operations the native workspace adapter implements. */
export const WORKSPACE_OPERATIONS = ["read_file", "write_file", "run_tests"] as const;

/**
 * The effects the native workspace operations have, fixed here: what they do at run time does
 * not depend on YAML, so YAML cannot relabel them (`write_file: { effects: [] }` would hide a
 * write from every policy and test).
 */
export const NATIVE_EFFECTS: Readonly<Record<(typeof WORKSPACE_OPERATIONS)[number], string>> = {
  read_file: "workspace.read",
  write_file: "workspace.write",
  run_tests: "process.exec",
};

/** The effect an operation of each executing adapter always has, whatever else it declares. */
const INTRINSIC_EFFECTS: Partial<Record<string, string>> = {
  command: "process.exec",
  http: "network.egress",
};

const EXCLUDED_DIRS = new Set(["fixtures", ".terfyn", "node_modules", ".git"]);

/** Whether a project-relative path is one of the project's source files. */
export function belongsToProject(path: string, exclude: readonly string[] = []): boolean {
  if (!/\.(agent|ya?ml)$/.test(path) && !isHostPath(path)) return false;
  const parts = path.split("/");
  for (let i = 0; i < parts.length - 1; i++) {
    if (EXCLUDED_DIRS.has(parts[i] as string)) return false;
  }
  return !exclude.some((dir) => {
    const d = dir.replace(/^\.\//, "").replace(/\/+$/, "");
    return d !== "" && (path === d || path.startsWith(`${d}/`));
  });
}

/** What to do about a project file that is not UTF-8 text (adapters reading files use it too). */
export const NOT_TEXT_HINT =
  "project .agent and YAML files are UTF-8 text: save it as UTF-8, or move it out of the project (files under fixtures/ are not read)";

export interface ResolveResult {
  project: ResolvedProject;
  diagnostics: Diagnostic[];
}

/** One file's parse, kept for the next `resolveProject` call. */
interface FileParse {
  text: string;
  source: SourceText;
  agent?: ReturnType<typeof parseAgentFile>;
  yaml?: ReturnType<typeof loadResources>;
}

/**
 * The previous call's parses by path. A file whose text is the same as in the previous call is
 * not parsed again: `plan --against` resolves the working tree and then the revision, and most
 * files (in the benchmark, every YAML file) are byte for byte the same on both sides. Parsing is
 * pure (the result depends on the path and the text only) and its results are never mutated, so
 * sharing them between the two projects changes nothing; only the last call's parses are kept,
 * so memory is bounded by one project's.
 */
let previousParses = new Map<string, FileParse>();

/** Drops the kept parses, so the next call parses every file (the benchmark's cold figures). */
export function forgetParses(): void {
  previousParses = new Map();
}

export function resolveProject(files: readonly ProjectFile[]): ResolveResult {
  const parses = new Map<string, FileParse>();
  const diagnostics: Diagnostic[] = [];
  const sources = new Map<string, SourceText>();
  const agentFiles: AgentFile[] = [];
  const resources: LoadedResource[] = [];
  const invalid: InvalidResource[] = [];

  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const f of sorted) {
    const previous = previousParses.get(f.path);
    const reused = previous !== undefined && previous.text === f.text ? previous : undefined;
    const source = reused?.source ?? new SourceText(f.path, f.text);
    sources.set(f.path, source);
    // A binary file would otherwise be one diagnostic per stray byte; it is one problem.
    const nul = f.text.indexOf("\u0000");
    if (nul >= 0) {
      diagnostics.push(
        diagnostic(
          "TF2009",
          source.span({ start: nul, end: nul + 1 }),
          "this is not a text file (it holds a NUL byte); it was not parsed",
          { hint: NOT_TEXT_HINT },
        ),
      );
      continue;
    }
    if (f.path.endsWith(".agent")) {
      const parsed = reused?.agent ?? parseAgentFile(source);
      parses.set(f.path, { text: f.text, source, agent: parsed });
      agentFiles.push(parsed.file);
      diagnostics.push(...parsed.diagnostics);
    } else {
      const loaded = reused?.yaml ?? loadResources(f.path, f.text, source);
      parses.set(f.path, { text: f.text, source, yaml: loaded });
      resources.push(...loaded.resources);
      invalid.push(...loaded.invalid);
      diagnostics.push(...loaded.diagnostics);
    }
  }
  previousParses = parses;

  const r = new Resolver(sources, diagnostics, invalid);
  const project = r.resolve(agentFiles, resources);
  return { project, diagnostics };
}

class Resolver {
  constructor(
    private readonly sources: Map<string, SourceText>,
    private readonly diagnostics: Diagnostic[],
    private readonly invalid: InvalidResource[],
  ) {}

  /** Whether a resource of this kind and name exists but failed validation (already reported). */
  private isInvalid(kind: InvalidResource["kind"], name: string): boolean {
    return this.invalid.some((r) => r.kind === kind && r.name === name);
  }

  private span(file: string, range: { start: number; end: number }): Span {
    const s = this.sources.get(file);
    return s ? s.span(range) : fileSpan(file);
  }

  private where(span: Span): string {
    return `${span.file}:${span.line}`;
  }

  resolve(files: AgentFile[], resources: LoadedResource[]): ResolvedProject {
    const settings = this.resolveSettings(resources);
    const byKind = this.indexResources(resources);

    // ── .agent declarations, with duplicates ──
    const agentDecls = new Map<string, { decl: AgentDecl; file: string }>();
    const workflowDecls = new Map<string, { decl: WorkflowDecl; file: string }>();
    const toolDecls = new Map<string, { decl: ToolDecl; file: string }>();
    const providerDecls = new Map<string, { decl: ProviderDecl; file: string }>();
    let defaultsSeen: Span | undefined;
    const defaults: AgentDefaults = {
      model: DEFAULT_MODEL,
      maxTurns: DEFAULT_MAX_TURNS,
      maxTokens: DEFAULT_MAX_TOKENS,
    };
    let defaultsModelSpan: Span | undefined;

    const callables = new Map<string, Span>();
    for (const file of files) {
      for (const decl of file.decls) {
        switch (decl.kind) {
          case "defaults": {
            const sp = this.span(file.path, decl.range);
            if (defaultsSeen) {
              this.diagnostics.push(
                diagnostic(
                  "TF3006",
                  sp,
                  `a second \`defaults\` block (the first is at ${this.where(defaultsSeen)})`,
                  {
                    hint: "merge them into one",
                    related: [{ span: defaultsSeen, message: "first defaults block" }],
                  },
                ),
              );
              break;
            }
            defaultsSeen = sp;
            if (decl.model) {
              defaults.model = decl.model.value;
              defaultsModelSpan = this.span(file.path, decl.model.range);
            }
            this.modelSettings(decl, file.path, defaults);
            break;
          }
          case "provider":
            this.declareOnce(
              providerDecls,
              decl.name,
              { decl, file: file.path },
              file.path,
              "provider",
            );
            break;
          case "tool":
            this.declareOnce(toolDecls, decl.name, { decl, file: file.path }, file.path, "tool");
            break;
          case "agent":
          case "workflow": {
            const sp = this.span(file.path, decl.name.range);
            const prev = callables.get(decl.name.name);
            if (prev) {
              const what = agentDecls.has(decl.name.name) ? "an agent" : "a workflow";
              this.diagnostics.push(
                diagnostic(
                  "TF3006",
                  sp,
                  `\`${decl.name.name}\` is already declared as ${what} at ${this.where(prev)}`,
                  {
                    hint: "agents and workflows share one namespace; rename one of them",
                    related: [{ span: prev, message: "first declaration" }],
                  },
                ),
              );
              break;
            }
            callables.set(decl.name.name, sp);
            if (decl.kind === "agent") agentDecls.set(decl.name.name, { decl, file: file.path });
            else workflowDecls.set(decl.name.name, { decl, file: file.path });
            break;
          }
        }
      }
    }

    const providers = new Set<string>([...BUILTIN_PROVIDERS, ...providerDecls.keys()]);
    if (defaultsModelSpan) this.checkModel(defaults.model, defaultsModelSpan, providers);

    const schemas = this.resolveSchemas(byKind.Schema);
    const tools = this.resolveTools(byKind.Tool, toolDecls);
    const agents = new Map<string, ResolvedAgent>();
    for (const [name, { decl, file }] of agentDecls) {
      agents.set(name, this.resolveAgent(decl, file, defaults, providers, schemas, tools));
    }
    const workflows = new Map<string, ResolvedWorkflow>();
    for (const [name, { decl, file }] of workflowDecls) {
      workflows.set(name, this.resolveWorkflowHeader(decl, file, schemas));
    }

    const policies: ResolvedPolicyRule[] = [];
    let maxLoopLimit: ResolvedProject["maxLoopLimit"];
    for (const res of byKind.Policy) {
      res.value.spec.rules.forEach((rule, i) => {
        const span = res.spanOf(["spec", "rules", i]);
        policies.push({ policy: res.name, rule, span });
        if (
          "maxLoopLimit" in rule &&
          (maxLoopLimit === undefined || rule.maxLoopLimit < maxLoopLimit.limit)
        ) {
          maxLoopLimit = { limit: rule.maxLoopLimit, span };
        }
      });
    }

    const providerSettings = new Map<string, { settings: Record<string, string>; span: Span }>();
    for (const [name, { decl, file }] of providerDecls) {
      const values: Record<string, string> = {};
      for (const s of decl.settings) {
        this.checkProviderSetting(name, s.key.name, s.value.value, this.span(file, s.key.range));
        values[s.key.name] = s.value.value;
      }
      if (!ADAPTER_PROVIDERS.includes(name))
        this.diagnostics.push(
          diagnostic(
            "TF3014",
            this.span(file, decl.name.range),
            `Terfyn has no model adapter for the provider \`${name}\`: its models cannot run`,
            { hint: `declare only ${ADAPTER_PROVIDERS.filter((p) => p !== "mock").join(", ")}` },
          ),
        );
      providerSettings.set(name, { settings: values, span: this.span(file, decl.range) });
    }
    const project: ResolvedProject = {
      settings,
      defaults,
      providers,
      providerSettings,
      agents,
      tools,
      schemas,
      workflows,
      policies,
      capabilityTests: byKind.CapabilityTest,
      files,
      sources: this.sources,
    };
    if (maxLoopLimit) project.maxLoopLimit = maxLoopLimit;
    return project;
  }

  private declareOnce<T>(
    map: Map<string, T>,
    name: Identifier,
    value: T,
    file: string,
    what: string,
  ): void {
    const existing = map.get(name.name) as { decl: { name: Identifier }; file: string } | undefined;
    if (existing) {
      const first = this.span(existing.file, existing.decl.name.range);
      this.diagnostics.push(
        diagnostic(
          "TF3006",
          this.span(file, name.range),
          `${what} \`${name.name}\` is already declared at ${this.where(first)}`,
          {
            related: [{ span: first, message: "first declaration" }],
          },
        ),
      );
      return;
    }
    map.set(name.name, value);
  }

  private resolveSettings(resources: LoadedResource[]): ProjectSettings {
    // The project document belongs in terfyn.yaml; any other is the extra one.
    const projects = resources
      .filter((r): r is LoadedResource<"Project"> => r.kind === "Project")
      .sort((a, b) => Number(b.file === PROJECT_FILE) - Number(a.file === PROJECT_FILE));
    const first = projects[0];
    for (const extra of projects.slice(1)) {
      this.diagnostics.push(
        diagnostic(
          "TF2006",
          extra.span,
          `a project has one Project document; another is at ${first ? this.where(first.span) : "?"}`,
          {
            hint: "keep a single Project document, in terfyn.yaml",
          },
        ),
      );
    }
    if (!first) {
      if (!this.sources.has(PROJECT_FILE)) {
        this.diagnostics.push(
          diagnostic("TF2005", fileSpan(PROJECT_FILE), "no terfyn.yaml at the project root"),
        );
      } else {
        this.diagnostics.push(
          diagnostic(
            "TF2005",
            fileSpan(PROJECT_FILE),
            "terfyn.yaml holds no valid Project document",
            {
              hint: "add `apiVersion: terfyn.dev/v1`, `kind: Project`, `metadata: { name: … }` and `spec: {}`",
            },
          ),
        );
      }
      return {
        name: "unnamed",
        statePath: ".terfyn/state.json",
        runsPath: ".terfyn/runs",
        exclude: [],
        span: fileSpan(PROJECT_FILE),
      };
    }
    const spec = first.value.spec;
    const settings: ProjectSettings = {
      name: first.name,
      statePath: spec.state ?? ".terfyn/state.json",
      runsPath: spec.runs ?? ".terfyn/runs",
      exclude: spec.exclude ?? [],
      span: first.span,
    };
    if (spec.modelScript !== undefined) settings.modelScript = spec.modelScript;
    return settings;
  }

  private indexResources(resources: LoadedResource[]) {
    const byKind = {
      Project: [] as LoadedResource<"Project">[],
      Tool: [] as LoadedResource<"Tool">[],
      Schema: [] as LoadedResource<"Schema">[],
      Policy: [] as LoadedResource<"Policy">[],
      CapabilityTest: [] as LoadedResource<"CapabilityTest">[],
    };
    const seen = new Map<string, LoadedResource>();
    for (const res of resources) {
      const key = `${res.kind}/${res.name}`;
      const prev = seen.get(key);
      if (prev && res.kind !== "Project") {
        this.diagnostics.push(
          diagnostic("TF2007", res.span, `${key} is already defined at ${this.where(prev.span)}`, {
            hint: "resource names are unique per kind",
            related: [{ span: prev.span, message: "first definition" }],
          }),
        );
        continue;
      }
      seen.set(key, res);
      (byKind[res.kind] as LoadedResource[]).push(res);
    }
    return byKind;
  }

  private resolveSchemas(resources: LoadedResource<"Schema">[]): Map<string, ResolvedSchema> {
    const out = new Map<string, ResolvedSchema>();
    for (const res of resources) {
      const schema = res.value.spec;
      this.checkAgentName(res.name, res.span, "Schema", `Schema/${res.name}`);
      out.set(res.name, {
        name: res.name,
        schema,
        type: typeFromSchema(schema, res.name),
        span: res.span,
      });
      this.checkRequiredProperties(res, schema, ["spec"]);
    }
    return out;
  }

  /**
   * One naming rule for `.agent` and YAML: a Tool, an operation or a Schema is referred to from
   * `.agent` files (`tool.<Tool>.<op>`, `input <Schema>`), so its name must be an `.agent`
   * identifier. `my-tool`, `v1.read` or `2fa` would be a resource no grant or type can name.
   */
  private checkAgentName(name: string, span: Span, what: string, shown: string): void {
    if (AGENT_IDENTIFIER.test(name)) return;
    const fixed = name.replace(/[^A-Za-z0-9_]/g, "_").replace(/^(?=[0-9])/, "_") || "_";
    this.diagnostics.push(
      diagnostic(
        "TF2015",
        span,
        `${shown}: \`${name}\` is not an .agent identifier ([A-Za-z_][A-Za-z0-9_]*), so no .agent file can refer to this ${what}`,
        {
          hint: `rename it to \`${fixed}\` (letters, digits and \`_\`, not starting with a digit)`,
        },
      ),
    );
  }

  /** `required` names must be declared properties (a typo there silently loosens the type). */
  private checkRequiredProperties(
    res: LoadedResource,
    node: import("../config/schemas.ts").JsonSchemaNode,
    path: (string | number)[],
  ): void {
    if (node.required && node.properties) {
      node.required.forEach((key, i) => {
        if (!node.properties || !(key in node.properties)) {
          const hint = didYouMean(key, Object.keys(node.properties ?? {}));
          this.diagnostics.push(
            diagnostic(
              "TF2002",
              res.spanOf([...path, "required", i]),
              `Schema/${res.name}: ${[...path, "required", i].join(".")}: \`${key}\` is required but not among the properties`,
              hint ? { hint } : {},
            ),
          );
        }
      });
    }
    for (const [key, child] of Object.entries(node.properties ?? {}))
      this.checkRequiredProperties(res, child, [...path, "properties", key]);
    if (node.items) this.checkRequiredProperties(res, node.items, [...path, "items"]);
  }

  /**
   * An operation's effects must say what it does: a native workspace operation has exactly the
   * effect fixed in code; a command operation always has `process.exec` and an http one
   * `network.egress`. Anything else relabels what runs, and would let it escape a policy.
   */
  private checkOperationEffects(
    res: LoadedResource<"Tool">,
    opName: string,
    declared: readonly string[],
    span: Span,
  ): void {
    const adapter = res.value.spec.adapter;
    const native =
      adapter === "workspace" ? NATIVE_EFFECTS[opName as keyof typeof NATIVE_EFFECTS] : undefined;
    const effects = [...new Set(declared)];
    if (native !== undefined && (effects.length !== 1 || effects[0] !== native)) {
      this.diagnostics.push(
        diagnostic(
          "TF2016",
          span,
          `Tool/${res.name}: the workspace operation \`${opName}\` has the effect \`${native}\`, fixed by the adapter; it cannot be declared as ${effects.length === 0 ? "having none" : effects.map((e) => `\`${e}\``).join(", ")}`,
          { hint: `write \`effects: [${native}]\`` },
        ),
      );
      return;
    }
    const intrinsic = INTRINSIC_EFFECTS[adapter];
    if (intrinsic !== undefined && !effects.includes(intrinsic)) {
      this.diagnostics.push(
        diagnostic(
          "TF2016",
          span,
          `Tool/${res.name}: every ${adapter} operation has the effect \`${intrinsic}\`; \`${opName}\` does not declare it`,
          { hint: `add \`${intrinsic}\` to its effects` },
        ),
      );
    }
  }

  private resolveTools(
    resources: LoadedResource<"Tool">[],
    bindings: Map<string, { decl: ToolDecl; file: string }>,
  ): Map<string, ResolvedTool> {
    const tools = new Map<string, ResolvedTool>();
    for (const res of resources) {
      this.checkAgentName(res.name, res.span, "Tool", `Tool/${res.name}`);
      const settings = resolveAdapterSettings(res, this.diagnostics);
      const operations = new Map<string, ResolvedOperation>();
      for (const [opName, op] of Object.entries(res.value.spec.operations) as [
        string,
        OperationSpec,
      ][]) {
        const opSpan = res.spanOf(["spec", "operations", opName]);
        this.checkAgentName(
          opName,
          opSpan,
          "operation",
          `operation \`${opName}\` of Tool/${res.name}`,
        );
        if (
          res.value.spec.adapter === "workspace" &&
          !(WORKSPACE_OPERATIONS as readonly string[]).includes(opName)
        ) {
          const hint = didYouMean(opName, WORKSPACE_OPERATIONS);
          this.diagnostics.push(
            diagnostic(
              "TF3003",
              opSpan,
              `Tool/${res.name}: the workspace adapter has no operation \`${opName}\`; it implements ${WORKSPACE_OPERATIONS.join(", ")}`,
              {
                hint:
                  hint ??
                  "use `adapter: external` for operations Terfyn does not implement natively",
              },
            ),
          );
        }
        this.checkOperationEffects(res, opName, op.effects, opSpan);
        const resolved: ResolvedOperation = {
          name: opName,
          effects: [...new Set(op.effects)],
          idempotent: op.idempotent,
          span: opSpan,
        };
        if (op.input) resolved.input = op.input;
        if (op.description) resolved.description = op.description;
        const reach = settings.reach.get(opName);
        if (reach) resolved.reach = reach;
        operations.set(opName, resolved);
      }
      const tool: ResolvedTool = {
        name: res.name,
        adapter: res.value.spec.adapter,
        operations,
        span: res.span,
      };
      if (settings.command) tool.command = settings.command;
      if (settings.http) tool.http = settings.http;
      tools.set(res.name, tool);
    }
    for (const [name, { decl, file }] of bindings) {
      const tool = tools.get(name);
      const sp = this.span(file, decl.name.range);
      if (!tool) {
        if (this.isInvalid("Tool", name)) continue;
        const hint = didYouMean(name, tools.keys());
        this.diagnostics.push(
          diagnostic(
            "TF3010",
            sp,
            `tool \`${name}\` is declared here but no Tool resource named \`${name}\` defines its operations`,
            {
              hint:
                hint ??
                `add a YAML document with \`kind: Tool\` and \`metadata: { name: ${name} }\``,
            },
          ),
        );
        continue;
      }
      tool.binding = decl;
      tool.bindingSpan = sp;
      if (decl.workspace) {
        if (tool.adapter !== "workspace") {
          this.diagnostics.push(
            diagnostic(
              "TF3010",
              this.span(file, decl.workspace.range),
              `tool \`${name}\` uses the \`${tool.adapter}\` adapter; a \`workspace { … }\` block applies only to the workspace adapter`,
            ),
          );
        }
        const ws: NonNullable<ResolvedTool["workspace"]> = {};
        if (decl.workspace.root) ws.root = decl.workspace.root.value;
        if (decl.workspace.testCommand) ws.testCommand = decl.workspace.testCommand.value;
        tool.workspace = ws;
      }
    }
    return tools;
  }

  /** A provider block's setting: one Terfyn reads, with a value it can use. */
  private checkProviderSetting(provider: string, key: string, value: string, span: Span): void {
    const problem = providerSettingProblem(provider, key, value);
    if (problem)
      this.diagnostics.push(
        diagnostic("TF3015", span, problem.message, problem.hint ? { hint: problem.hint } : {}),
      );
  }

  private checkModel(model: string, span: Span, providers: Set<string>): void {
    const slash = model.indexOf("/");
    if (slash <= 0 || slash === model.length - 1) {
      this.diagnostics.push(
        diagnostic("TF3009", span, `model \`${model}\` is not of the form provider/model`, {
          hint: 'for example "mock/gpt-4" or "anthropic/claude-sonnet-5-5"',
        }),
      );
      return;
    }
    const provider = model.slice(0, slash);
    const rest = model.slice(slash + 1);
    if (!providers.has(provider)) {
      const hint = didYouMean(provider, providers);
      this.diagnostics.push(
        diagnostic("TF3007", span, `unknown model provider \`${provider}\` in \`${model}\``, {
          hint: hint ?? `the model providers: ${[...providers].join(", ")}`,
        }),
      );
      return;
    }
    // Declared without an adapter: reported once, at its provider block (TF3014).
    if (!ADAPTER_PROVIDERS.includes(provider)) return;
    if (provider === "anthropic") {
      const eol = DEPRECATED_ANTHROPIC_MODELS[rest];
      if (eol !== undefined)
        this.diagnostics.push(
          diagnostic(
            "TF3012",
            span,
            `\`${model}\` is deprecated: its end of life is ${eol}, after which every request to it fails`,
            {
              hint: `move to a current model, for example "anthropic/${CURRENT_ANTHROPIC_EXAMPLE}"`,
            },
          ),
        );
      else if (!KNOWN_ANTHROPIC_MODELS.includes(rest)) {
        const near = didYouMean(rest, KNOWN_ANTHROPIC_MODELS);
        this.diagnostics.push(
          diagnostic(
            "TF3013",
            span,
            `the installed Anthropic SDK does not know the model \`${rest}\` (a typo, one too new for this SDK, or one retired)`,
            { hint: near ?? `for example "anthropic/${CURRENT_ANTHROPIC_EXAMPLE}"` },
          ),
        );
      }
    }
    if (provider === "mock" && !MOCK_MODELS.includes(rest)) {
      const hint = didYouMean(rest, MOCK_MODELS);
      this.diagnostics.push(
        diagnostic(
          "TF3009",
          span,
          `unknown mock model \`${rest}\`; the mock provider has ${MOCK_MODELS.map((m) => `mock/${m}`).join(" and ")}`,
          hint ? { hint } : {},
        ),
      );
    }
  }

  private checkSchemaRef(
    ref: Identifier,
    file: string,
    schemas: Map<string, ResolvedSchema>,
  ): string | undefined {
    if (schemas.has(ref.name)) return ref.name;
    if (this.isInvalid("Schema", ref.name)) return undefined;
    const hint = didYouMean(ref.name, schemas.keys());
    this.diagnostics.push(
      diagnostic("TF3004", this.span(file, ref.range), `unknown schema \`${ref.name}\``, {
        hint: hint ?? `define it with a YAML document of \`kind: Schema\` named \`${ref.name}\``,
      }),
    );
    return undefined;
  }

  /**
   * `maxTurns`, `maxTokens` and `temperature` of a defaults block or an agent, checked and set on
   * `into` (a value out of range is reported and the earlier one kept).
   */
  private modelSettings(
    decl: Pick<AgentDecl, "maxTurns" | "maxTokens" | "temperature">,
    file: string,
    into: AgentDefaults,
  ): void {
    const bad = (range: Range, message: string) =>
      this.diagnostics.push(diagnostic("TF5008", this.span(file, range), message));
    if (decl.maxTurns) {
      if (decl.maxTurns.value < 1) bad(decl.maxTurns.range, "`maxTurns` must be at least 1");
      else into.maxTurns = decl.maxTurns.value;
    }
    if (decl.maxTokens) {
      const v = decl.maxTokens.value;
      if (v < 1 || v > MAX_MAX_TOKENS)
        bad(decl.maxTokens.range, `\`maxTokens\` must be from 1 to ${MAX_MAX_TOKENS}`);
      else into.maxTokens = v;
    }
    if (decl.temperature) {
      const v = decl.temperature.value;
      if (!(v >= 0 && v <= 2)) bad(decl.temperature.range, "`temperature` must be from 0 to 2");
      else into.temperature = v;
    }
  }

  private resolveAgent(
    decl: AgentDecl,
    file: string,
    defaults: AgentDefaults,
    providers: Set<string>,
    schemas: Map<string, ResolvedSchema>,
    tools: Map<string, ResolvedTool>,
  ): ResolvedAgent {
    const span = this.span(file, decl.name.range);
    let model = defaults.model;
    let modelSpan = span;
    if (decl.model) {
      model = decl.model.value;
      modelSpan = this.span(file, decl.model.range);
      this.checkModel(model, modelSpan, providers);
    }
    const settings = { ...defaults };
    this.modelSettings(decl, file, settings);
    const { maxTurns, maxTokens, temperature } = settings;
    const grants: ResolvedGrant[] = [];
    const seen = new Map<string, Span>();
    for (const g of decl.grants) {
      const ref = `tool.${g.tool.name}.${g.operation.name}`;
      const gspan = this.span(file, g.range);
      const prev = seen.get(ref);
      if (prev) {
        this.diagnostics.push(
          diagnostic(
            "TF3008",
            gspan,
            `\`${ref}\` is granted twice to agent \`${decl.name.name}\` (first at line ${prev.line})`,
            {
              hint: "keep one grant; add `requires approval` to it if calls must be approved",
            },
          ),
        );
        continue;
      }
      seen.set(ref, gspan);
      const effects: string[] = [];
      const tool = tools.get(g.tool.name);
      let resolved = true;
      if (!tool && this.isInvalid("Tool", g.tool.name)) {
        resolved = false;
      } else if (!tool) {
        resolved = false;
        const hint = didYouMean(g.tool.name, tools.keys());
        this.diagnostics.push(
          diagnostic(
            "TF3002",
            this.span(file, g.tool.range),
            `unknown tool \`${g.tool.name}\` in grant \`${ref}\``,
            {
              hint: hint ?? `define a Tool resource named \`${g.tool.name}\``,
            },
          ),
        );
      } else {
        const op = tool.operations.get(g.operation.name);
        if (!op) {
          resolved = false;
          const hint = didYouMean(g.operation.name, tool.operations.keys());
          this.diagnostics.push(
            diagnostic(
              "TF3003",
              this.span(file, g.operation.range),
              `tool \`${g.tool.name}\` has no operation \`${g.operation.name}\``,
              {
                hint:
                  hint ??
                  `its operations are: ${[...tool.operations.keys()].join(", ") || "(none)"}`,
              },
            ),
          );
        } else effects.push(...op.effects);
      }
      grants.push({
        ref,
        tool: g.tool.name,
        operation: g.operation.name,
        mode: g.requiresApproval ? "gated" : "autonomous",
        effects,
        resolved,
        span: gspan,
      });
    }
    const agent: ResolvedAgent = {
      name: decl.name.name,
      model,
      modelSpan,
      instructions: decl.instructions?.value ?? "",
      maxTurns,
      maxTokens,
      ...(temperature !== undefined ? { temperature } : {}),
      grants,
      span,
      decl,
    };
    if (decl.input) {
      const s = this.checkSchemaRef(decl.input, file, schemas);
      if (s) agent.input = s;
    }
    if (decl.output) {
      const s = this.checkSchemaRef(decl.output, file, schemas);
      if (s) agent.output = s;
    }
    return agent;
  }

  private resolveWorkflowHeader(
    decl: WorkflowDecl,
    file: string,
    schemas: Map<string, ResolvedSchema>,
  ): ResolvedWorkflow {
    const params: { name: string; type: string }[] = [];
    const seen = new Set<string>();
    for (const p of decl.params) {
      if (seen.has(p.name.name)) {
        this.diagnostics.push(
          diagnostic(
            "TF3006",
            this.span(file, p.name.range),
            `parameter \`${p.name.name}\` is declared twice`,
          ),
        );
      }
      seen.add(p.name.name);
      this.checkSchemaRef(p.type, file, schemas);
      params.push({ name: p.name.name, type: p.type.name });
    }
    this.checkSchemaRef(decl.returns, file, schemas);
    const declaredEffects: { name: string; span: Span }[] = [];
    const seenEffects = new Map<string, Span>();
    for (const e of decl.effects) {
      const sp = this.span(file, e.range);
      const prev = seenEffects.get(e.name);
      if (prev) {
        this.diagnostics.push(
          diagnostic(
            "TF3008",
            sp,
            `effect \`${e.name}\` is declared twice (first at column ${prev.column})`,
          ),
        );
        continue;
      }
      seenEffects.set(e.name, sp);
      declaredEffects.push({ name: e.name, span: sp });
    }
    return {
      name: decl.name.name,
      params,
      returns: decl.returns.name,
      declaredEffects,
      effectsSpan: this.span(file, decl.effectsRange),
      calls: [],
      loops: [],
      approvals: [],
      span: this.span(file, decl.name.range),
      decl,
    };
  }
}
