/**
 * What a `terfyn run` ran against besides its IR: the resolved workspace root and test command
 * of each workspace tool, and the tool declarations (a content hash). Recorded when the run
 * starts; a resume where any of them differs is refused with both values, because it would run
 * the approved steps against a different sandbox, a different test command or different tools.
 * Pure: the CLI passes in the environment values; path resolution is `node:path` only.
 */
import { resolve } from "node:path";
import type { IrProgram } from "../engine/ir.ts";
import type { ResolvedProject } from "../model/project.ts";
import { sha256 } from "../plan/canonical-hash.ts";

/** One workspace tool's sandbox as the run resolved it. */
export interface WorkspaceBinding {
  tool: string;
  /** Absolute root, resolved from the declaration (against the project) or the env (against cwd). */
  root: string;
  /** Where the root came from. */
  root_from: "declaration" | "TERFYN_WORKSPACE_ROOT";
  test_command?: string;
  test_command_from?: "declaration" | "TERFYN_WORKSPACE_TEST_COMMAND";
}

export interface RunEnvironment {
  workspaces: WorkspaceBinding[];
  /** sha256 over the declarations of every tool the program's agents are granted. */
  tools_hash: string;
}

/** The environment values that can set a sandbox. */
export interface WorkspaceEnv {
  TERFYN_WORKSPACE_ROOT?: string | undefined;
  TERFYN_WORKSPACE_TEST_COMMAND?: string | undefined;
}

/** The tools the program's agents are granted, by name, sorted. */
function usedTools(project: ResolvedProject, program: IrProgram): string[] {
  const names = new Set<string>();
  for (const a of program.agents)
    for (const g of project.agents.get(a)?.grants ?? []) names.add(g.tool);
  return [...names].filter((n) => project.tools.has(n)).sort();
}

/**
 * The run's environment, resolved as the workspace adapter resolves it (declared config wins
 * over env; a relative declared root resolves against the project root, an env root against cwd).
 */
export function resolveRunEnvironment(
  project: ResolvedProject,
  program: IrProgram,
  where: { projectRoot: string; cwd: string; env: WorkspaceEnv },
): RunEnvironment {
  const workspaces: WorkspaceBinding[] = [];
  const declarations: unknown[] = [];
  for (const name of usedTools(project, program)) {
    const tool = project.tools.get(name);
    if (!tool) continue;
    declarations.push({
      name: tool.name,
      adapter: tool.adapter,
      workspace: tool.workspace ?? null,
      operations: [...tool.operations.values()]
        .map((o) => ({
          name: o.name,
          effects: o.effects,
          idempotent: o.idempotent,
          input: o.input ?? null,
          description: o.description ?? null,
        }))
        .sort((a, b) => (a.name < b.name ? -1 : 1)),
    });
    if (tool.adapter !== "workspace") continue;
    const declaredRoot = tool.workspace?.root;
    const envRoot = where.env.TERFYN_WORKSPACE_ROOT;
    const binding: WorkspaceBinding | undefined =
      declaredRoot !== undefined
        ? { tool: name, root: resolve(where.projectRoot, declaredRoot), root_from: "declaration" }
        : envRoot
          ? { tool: name, root: resolve(where.cwd, envRoot), root_from: "TERFYN_WORKSPACE_ROOT" }
          : undefined;
    if (binding === undefined) continue;
    const declaredCommand = tool.workspace?.testCommand;
    const envCommand = where.env.TERFYN_WORKSPACE_TEST_COMMAND;
    if (declaredCommand !== undefined) {
      binding.test_command = declaredCommand;
      binding.test_command_from = "declaration";
    } else if (envCommand) {
      binding.test_command = envCommand;
      binding.test_command_from = "TERFYN_WORKSPACE_TEST_COMMAND";
    }
    workspaces.push(binding);
  }
  return { workspaces, tools_hash: sha256(declarations) };
}

const shown = (v: string | undefined) => (v === undefined ? "(none)" : JSON.stringify(v));

/**
 * Every difference between the environment a run started with and the one it would resume in,
 * each a sentence with both values and what to do; empty when they agree.
 */
export function environmentDrift(recorded: RunEnvironment, now: RunEnvironment): string[] {
  const problems: string[] = [];
  const tools = new Set([...recorded.workspaces, ...now.workspaces].map((w) => w.tool));
  for (const tool of [...tools].sort()) {
    const was = recorded.workspaces.find((w) => w.tool === tool);
    const is = now.workspaces.find((w) => w.tool === tool);
    const rootSource = is?.root_from ?? was?.root_from ?? "TERFYN_WORKSPACE_ROOT";
    if (was?.root !== is?.root) {
      problems.push(
        `the workspace root of tool ${tool} was ${was?.root ?? "(none)"} when the run started and is ${is?.root ?? "(none)"} now; resume with the same ${rootSource === "declaration" ? `root in tool ${tool}'s workspace declaration` : "TERFYN_WORKSPACE_ROOT"} or start a new run`,
      );
    }
    if (was?.test_command !== is?.test_command) {
      const source =
        is?.test_command_from ?? was?.test_command_from ?? "TERFYN_WORKSPACE_TEST_COMMAND";
      problems.push(
        `the test command of tool ${tool} was ${shown(was?.test_command)} when the run started and is ${shown(is?.test_command)} now; resume with the same ${source === "declaration" ? `testCommand in tool ${tool}'s workspace declaration` : "TERFYN_WORKSPACE_TEST_COMMAND"} or start a new run`,
      );
    }
  }
  if (recorded.tools_hash !== now.tools_hash) {
    problems.push(
      `the tool declarations hashed ${recorded.tools_hash} when the run started and hash ${now.tools_hash} now; restore the tool declarations the run started with, or start a new run`,
    );
  }
  return problems;
}
