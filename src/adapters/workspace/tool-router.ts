/**
 * The engine's ToolPort for a project: routes each call to its tool's adapter. Workspace tools
 * get their sandbox root and test command from the `.agent` declaration, else from
 * TERFYN_WORKSPACE_ROOT / TERFYN_WORKSPACE_TEST_COMMAND (declared config wins; a relative
 * declared root resolves against the project root). Problems are found before the run starts.
 */
import { resolve } from "node:path";
import type { IrProgram } from "../../core/engine/ir.ts";
import type { ToolCall, ToolPort } from "../../core/engine/ports.ts";
import type { ResolvedProject } from "../../core/model/project.ts";
import { type WorkspaceConfig, WorkspaceTool } from "./workspace-tool.ts";

export class ToolSetupError extends Error {}

export async function buildToolPort(
  project: ResolvedProject,
  program: IrProgram,
  options: {
    projectRoot: string;
    cwd: string;
    env: Record<string, string | undefined>;
    workspace?: Partial<WorkspaceConfig>;
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
  const workspaces = new Map<string, WorkspaceTool>();
  for (const [name, ops] of used) {
    const tool = project.tools.get(name);
    if (!tool) continue;
    if (tool.adapter === "external") {
      throw new ToolSetupError(
        `Tool/${name} uses the external adapter, which is declared for planning and testing; no handler for it is registered, so workflow ${program.entry} cannot run`,
      );
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
    try {
      workspaces.set(
        name,
        await WorkspaceTool.open({
          ...options.workspace,
          root,
          ...(testCommand ? { testCommand } : {}),
        }),
      );
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
