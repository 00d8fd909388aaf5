/**
 * The engine's ToolPort for a project: routes each call to its tool's adapter. Workspace tools
 * get their sandbox root and test command from the `.agent` declaration, else from
 * TERFYN_WORKSPACE_ROOT / TERFYN_WORKSPACE_TEST_COMMAND (declared config wins; a relative
 * declared root resolves against the project root). Command and http tools are built with only
 * the operations the run's agents are granted (the others do not exist for the run), their
 * programs resolved and their environment read once. `external` tools cannot run. Problems are
 * found before the run starts.
 */
import { resolve } from "node:path";
import type { IrProgram } from "../../core/engine/ir.ts";
import type { ToolCall, ToolPort } from "../../core/engine/ports.ts";
import type { HttpReach, ResolvedProject, ResolvedTool } from "../../core/model/project.ts";
import { resolveProgram } from "../fs/find-executable.ts";
import { type Sandbox, SandboxUnavailable } from "../sandbox/sandbox.ts";
import { type CommandOperation, CommandTool } from "../tools/command-tool.ts";
import { HttpTool } from "../tools/http-tool.ts";
import { type WorkspaceConfig, WorkspaceTool } from "./workspace-tool.ts";

interface ToolAdapterInstance {
  execute(
    operation: string,
    input: unknown,
  ): Promise<{ ok: boolean; result: unknown; summary?: string }>;
}

export class ToolSetupError extends Error {}

export async function buildToolPort(
  project: ResolvedProject,
  program: IrProgram,
  options: {
    projectRoot: string;
    cwd: string;
    env: Record<string, string | undefined>;
    workspace?: Partial<WorkspaceConfig>;
    /** Aborted when the run is interrupted: running commands' process groups are killed. */
    signal?: AbortSignal;
    /**
     * The sandbox for what executes (run_tests, command tools), opened only when the workflow's
     * agents are granted one of those; its refusal (SandboxUnavailable) stops the setup.
     */
    sandbox: () => Promise<Sandbox>;
    /** Paths the executed commands must not see even inside their directory (the run directory, the state). */
    hide?: readonly string[];
  },
): Promise<ToolPort> {
  const used = new Map<string, Set<string>>();
  for (const name of program.agents) {
    for (const g of project.agents.get(name)?.grants ?? []) {
      const ops = used.get(g.tool) ?? new Set<string>();
      ops.add(g.operation);
      used.set(g.tool, ops);
    }
  }
  const workspaces = new Map<string, ToolAdapterInstance>();
  for (const [name, ops] of used) {
    const tool = project.tools.get(name);
    if (!tool) continue;
    if (tool.adapter === "external") {
      throw new ToolSetupError(
        `Tool/${name} uses the external adapter, which is declared for planning and testing only and cannot run, so workflow ${program.entry} cannot run; declare it with \`adapter: command\` or \`adapter: http\` to execute it`,
      );
    }
    if (tool.adapter === "command") {
      workspaces.set(name, await commandTool(tool, ops, options));
      continue;
    }
    if (tool.adapter === "http") {
      workspaces.set(name, httpTool(tool, ops, options.env));
      continue;
    }
    const declaredRoot = tool.workspace?.root;
    const root =
      declaredRoot !== undefined
        ? resolve(options.projectRoot, declaredRoot)
        : options.env.TERFYN_WORKSPACE_ROOT
          ? resolve(options.cwd, options.env.TERFYN_WORKSPACE_ROOT)
          : undefined;
    if (root === undefined) {
      throw new ToolSetupError(
        `the workspace tool \`${name}\` has no sandbox root: set TERFYN_WORKSPACE_ROOT, or declare it: tool ${name} { workspace { root "…" } }`,
      );
    }
    const testCommand = tool.workspace?.testCommand ?? options.env.TERFYN_WORKSPACE_TEST_COMMAND;
    if (ops.has("run_tests") && !testCommand) {
      throw new ToolSetupError(
        `the workspace tool \`${name}\` grants run_tests but has no test command: set TERFYN_WORKSPACE_TEST_COMMAND, or declare it: tool ${name} { workspace { testCommand "…" } }`,
      );
    }
    const sandbox = ops.has("run_tests")
      ? await openFor(options.sandbox, `Tool/${name}.run_tests`)
      : undefined;
    try {
      const ws = await WorkspaceTool.open({
        ...options.workspace,
        ...(options.signal ? { signal: options.signal } : {}),
        root,
        ...(testCommand ? { testCommand } : {}),
        ...(sandbox ? { sandbox } : {}),
        ...(options.hide ? { hide: options.hide } : {}),
      });
      workspaces.set(name, { execute: (op, input) => ws.executeWithSummary(op, input) });
    } catch (e) {
      throw new ToolSetupError(`${(e as Error).message} (the sandbox root of tool \`${name}\`)`);
    }
  }
  return {
    async execute(call: ToolCall) {
      const ws = workspaces.get(call.tool);
      if (!ws) return { ok: false, result: { error: `no adapter for tool ${call.tool}` } };
      return ws.execute(call.operation, call.input);
    },
  };
}

async function commandTool(
  tool: ResolvedTool,
  ops: Set<string>,
  options: {
    projectRoot: string;
    env: Record<string, string | undefined>;
    signal?: AbortSignal;
    sandbox: () => Promise<Sandbox>;
    hide?: readonly string[];
  },
): Promise<CommandTool> {
  const operations = new Map<string, CommandOperation>();
  for (const op of ops) {
    const reach = tool.operations.get(op)?.reach;
    if (reach?.kind !== "command") continue;
    let program: string;
    try {
      program = await resolveProgram(
        reach.argv[0] as string,
        options.projectRoot,
        options.env.PATH,
      );
    } catch (e) {
      throw new ToolSetupError(`Tool/${tool.name} operation ${op}: ${(e as Error).message}`);
    }
    // The network only for an operation that declares it (network.egress): what the plan shows.
    const network = tool.operations.get(op)?.effects.includes("network.egress") ?? false;
    operations.set(op, { ...reach, program, ...(network ? { network } : {}) });
  }
  const env: Record<string, string> = {};
  for (const name of tool.command?.env ?? []) {
    const value = options.env[name];
    if (value !== undefined) env[name] = value;
  }
  return new CommandTool({
    name: tool.name,
    cwd: options.projectRoot,
    sandbox: await openFor(options.sandbox, `Tool/${tool.name}`),
    ...(options.hide ? { hide: options.hide } : {}),
    env,
    maxOutputBytes: tool.command?.maxOutputBytes ?? 1024 * 1024,
    operations,
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

/** The sandbox, or a setup error naming the tool that needed it and what to install or enable. */
async function openFor(open: () => Promise<Sandbox>, what: string): Promise<Sandbox> {
  try {
    return await open();
  } catch (e) {
    if (e instanceof SandboxUnavailable)
      throw new ToolSetupError(
        `${what} executes code, and no sandbox can be made here: ${e.message}`,
      );
    throw e;
  }
}

function httpTool(
  tool: ResolvedTool,
  ops: Set<string>,
  env: Record<string, string | undefined>,
): HttpTool {
  const operations = new Map<string, HttpReach>();
  for (const op of ops) {
    const reach = tool.operations.get(op)?.reach;
    if (reach?.kind === "http") operations.set(op, reach);
  }
  const headers: Record<string, string> = {};
  for (const h of tool.http?.headers ?? []) {
    if ("literal" in h) {
      headers[h.name] = h.literal;
      continue;
    }
    const value = env[h.fromEnv];
    if (value === undefined || value === "")
      throw new ToolSetupError(
        `Tool/${tool.name} sends header ${h.name} from the environment variable ${h.fromEnv}, which is not set`,
      );
    if (/[\r\n\0]/.test(value))
      throw new ToolSetupError(
        `the environment variable ${h.fromEnv} (header ${h.name} of Tool/${tool.name}) holds a line break or NUL`,
      );
    headers[h.name] = `${h.prefix ?? ""}${value}`;
  }
  try {
    return new HttpTool({
      name: tool.name,
      headers,
      maxResponseBytes: tool.http?.maxResponseBytes ?? 1024 * 1024,
      operations,
    });
  } catch (e) {
    throw new ToolSetupError((e as Error).message);
  }
}
