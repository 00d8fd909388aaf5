/**
 * What plan, apply and test share: reading the project at --project, validating it, and
 * finding the prior side of a plan (a git revision with --against, else the state file).
 */
import { relative, resolve, sep } from "node:path";
import { type ReadProjectResult, readProjectDirectory } from "../../adapters/fs/read-project.ts";
import { gitToplevel, realPathOf } from "../../adapters/fs/real-path.ts";
import { type Diagnostic, sortDiagnostics } from "../../core/diagnostics.ts";
import type { Plan } from "../../core/plan/plan.ts";
import { type ProgramDigests, programPaths } from "../../core/plan/programs.ts";
import { projectResources, type ResourceRecord } from "../../core/plan/resources.ts";
import type { StateFile } from "../../core/plan/state.ts";
import { countBySeverity, renderDiagnosticsText } from "../../core/render/diagnostics-text.ts";
import { escapeTerminalText } from "../../core/render/terminal-text.ts";
import { type ValidationResult, validateProject } from "../../core/validate.ts";
import { plural } from "../../core/words.ts";
import { type CliIo, useColor } from "../io.ts";

export interface ProjectContext {
  root: string;
  validation: ValidationResult;
  diagnostics: Diagnostic[];
  displayPath: (file: string) => string;
  where: string;
}

/**
 * The project's directory relative to its repository's root, `/`-separated ("." for the root,
 * and for a project outside any repository): what a plan hash binds, the same path the Action
 * plans the project under.
 */
/** The digests of the project files its command tools run, as they are on disk. */
export async function currentPrograms(ctx: ProjectContext): Promise<ProgramDigests> {
  const { projectProgramDigests } = await import("../../adapters/fs/program-digests.ts");
  return projectProgramDigests(ctx.root, programPaths(ctx.validation.project));
}

export function repositoryPath(ctx: Pick<ProjectContext, "root">): string {
  const real = realPathOf(ctx.root);
  const top = gitToplevel(real);
  return (top === undefined ? "" : relative(top, real).split(sep).join("/")) || ".";
}

export async function loadProject(
  io: CliIo,
  projectArg: string | undefined,
): Promise<ProjectContext> {
  const root = resolve(io.cwd, projectArg ?? ".");
  return validateRead(io, root, await readProjectDirectory(root));
}

/** The context of a project already read from `root`. */
export function validateRead(io: CliIo, root: string, read: ReadProjectResult): ProjectContext {
  const validation = validateProject(read.files);
  return {
    root,
    validation,
    diagnostics: sortDiagnostics([...read.diagnostics, ...validation.diagnostics]),
    displayPath: (file: string) => relative(io.cwd, resolve(root, file)) || file,
    where: relative(io.cwd, root) || ".",
  };
}

export function printDiagnostics(
  io: CliIo,
  ctx: ProjectContext,
  diagnostics: readonly Diagnostic[],
  write = io.stdout,
): void {
  if (diagnostics.length === 0) return;
  write(
    `${renderDiagnosticsText(diagnostics, { sources: ctx.validation.project.sources, displayPath: ctx.displayPath, color: useColor(io) })}\n\n`,
  );
}

export function statePath(io: CliIo, ctx: ProjectContext, stateArg: string | undefined): string {
  return stateArg
    ? resolve(io.cwd, stateArg)
    : resolve(ctx.root, ctx.validation.project.settings.statePath);
}

export interface Prior {
  resources: ResourceRecord[];
  source: Plan["prior"];
  /** How the no-changes line names it. */
  name: string;
  state?: StateFile;
}

export async function loadPrior(
  io: CliIo,
  ctx: ProjectContext,
  options: { against?: string; state?: string },
): Promise<Prior> {
  if (options.against !== undefined) {
    // Imported here, not with this module: `terfyn test` and `validate` never read git or the
    // state file, and loading simple-git (with debug) and write-file-atomic cost them ~15 ms.
    const { readProjectAtRevision } = await import("../../adapters/git/read-revision.ts");
    const rev = await readProjectAtRevision(ctx.root, options.against);
    if (!rev.existed) {
      io.stderr(
        `note: ${escapeTerminalText(ctx.where)} has no terfyn.yaml at ${escapeTerminalText(options.against)}; everything is planned as new\n`,
      );
      return {
        resources: [],
        source: { source: "git", ref: options.against, commit: rev.commit },
        name: options.against,
      };
    }
    const prior = validateProject(rev.files);
    const { errors } = countBySeverity([...rev.diagnostics, ...prior.diagnostics]);
    if (errors > 0) {
      io.stderr(
        `note: the project at ${options.against} has ${plural(errors, "validation error")}; its side of the plan is what could be resolved\n`,
      );
    }
    const { projectProgramDigestsAt } = await import("../../adapters/git/program-digests.ts");
    const programs = await projectProgramDigestsAt(
      ctx.root,
      options.against,
      programPaths(prior.project),
    );
    return {
      resources: projectResources(prior.project, programs).resources,
      source: { source: "git", ref: options.against, commit: rev.commit },
      name: options.against,
    };
  }
  const path = statePath(io, ctx, options.state);
  const { readStateFile } = await import("../../adapters/fs/state-file.ts");
  const state = await readStateFile(path);
  if (!state) return { resources: [], source: { source: "none" }, name: "an empty state" };
  return {
    resources: state.resources,
    source: { source: "state", ref: relative(io.cwd, path) || path },
    name: "the state",
    state,
  };
}
