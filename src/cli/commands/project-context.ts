/**
 * What plan, apply and test share: reading the project at --project, validating it, and
 * finding the prior side of a plan (a git revision with --against, else the state file).
 */
import { relative, resolve, sep } from "node:path";
import { directorySource } from "../../adapters/fs/project-source.ts";
import type { ReadProjectResult } from "../../adapters/fs/read-project.ts";
import { gitToplevel, realPathOf } from "../../adapters/fs/real-path.ts";
import { type Diagnostic, hasErrors, sortDiagnostics } from "../../core/diagnostics.ts";
import {
  type LoadedSource,
  loadSource,
  type PlannedFromSources,
  type ProjectSource,
  planFromSources,
  priorProblemText,
  type RecordedPrior,
} from "../../core/plan/plan-from-sources.ts";
import { repositoryFromRemoteUrl } from "../../core/plan/repository-identity.ts";
import type { StateFile } from "../../core/plan/state.ts";
import { renderDiagnosticsText } from "../../core/render/diagnostics-text.ts";
import { escapeTerminalText } from "../../core/render/terminal-text.ts";
import { type ValidationResult, validateProject } from "../../core/validate.ts";
import { readStdinFor, STDIN, STDIN_LABEL } from "../file-args.ts";
import { type CliIo, useColor } from "../io.ts";

export interface ProjectContext {
  root: string;
  /** The project as read and validated, with the reader's own diagnostics merged in. */
  loaded: LoadedSource;
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
export function repositoryPath(ctx: Pick<ProjectContext, "root">): string {
  const real = realPathOf(ctx.root);
  const top = gitToplevel(real);
  return (top === undefined ? "" : relative(top, real).split(sep).join("/")) || ".";
}

/**
 * The repository of a checkout as a plan hash binds it: its `origin` remote's URL (after
 * `insteadOf` rewriting) as `host/owner/name`, or null without a hosted origin.
 */
async function repositoryOf(root: string): Promise<string | null> {
  if (gitToplevel(root) === undefined) return null;
  const { gitText } = await import("../../adapters/git/git-process.ts");
  try {
    return repositoryFromRemoteUrl(await gitText(root, ["remote", "get-url", "origin"]));
  } catch {
    return null; // no origin: the repository is not known
  }
}

export async function loadProject(
  io: CliIo,
  projectArg: string | undefined,
): Promise<ProjectContext> {
  const root = resolve(io.cwd, projectArg ?? ".");
  return contextOf(io, root, await loadSource(directorySource(root)));
}

/** The context of a project already read from `root`. */
export function validateRead(io: CliIo, root: string, read: ReadProjectResult): ProjectContext {
  const files = read.files;
  const source: ProjectSource = {
    read: async () => ({ ...read, files, existed: true, origin: { source: "none" } }),
    programs: directorySource(root).programs,
  };
  const validation = validateProject(files);
  return contextOf(io, root, {
    source,
    existed: true,
    origin: { source: "none" },
    validation: {
      ...validation,
      diagnostics: sortDiagnostics([...read.diagnostics, ...validation.diagnostics]),
      ok: validation.ok && !hasErrors(read.diagnostics),
    },
  });
}

function contextOf(io: CliIo, root: string, loaded: LoadedSource): ProjectContext {
  return {
    root,
    loaded,
    validation: loaded.validation,
    diagnostics: loaded.validation.diagnostics,
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
  /** The prior side as the plan use case takes it: a git revision, recorded resources, or none. */
  side: ProjectSource | RecordedPrior | undefined;
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
    // state file, and loading them cost ~15 ms.
    const { projectRevisionSource } = await import("../../adapters/git/project-source.ts");
    return { side: await projectRevisionSource(ctx.root, options.against), name: options.against };
  }
  const { readStateFile, stateFromText } = await import("../../adapters/fs/state-file.ts");
  // `--state -`: the state file's text on standard input (plan only; apply writes its file).
  const fromStdin = options.state === STDIN;
  const path = fromStdin ? STDIN : statePath(io, ctx, options.state);
  const state = fromStdin
    ? stateFromText(await readStdinFor(io, "--state"), STDIN_LABEL)
    : await readStateFile(path);
  if (!state) return { side: undefined, name: "an empty state" };
  return {
    side: {
      recorded: state.resources,
      origin: { source: "state", ref: fromStdin ? STDIN : relative(io.cwd, path) || path },
    },
    name: "the state",
    state,
  };
}

/**
 * The project planned against its prior through the one plan use case, with a note on stderr
 * when the prior side is missing or does not validate (it is then not used: everything is new).
 */
export async function planAgainst(
  io: CliIo,
  ctx: ProjectContext,
  prior: Prior,
): Promise<PlannedFromSources["result"]> {
  const planned = await planFromSources(ctx.loaded, prior.side, {
    path: repositoryPath(ctx),
    repository: await repositoryOf(ctx.root),
  });
  const problem = planned.priorProblem;
  if (problem?.kind === "absent")
    io.stderr(
      `note: ${escapeTerminalText(ctx.where)} has no terfyn.yaml at ${escapeTerminalText(prior.name)}; everything is planned as new\n`,
    );
  else if (problem)
    io.stderr(
      `note: ${escapeTerminalText(priorProblemText(problem, `the project at ${prior.name}`))}\n`,
    );
  return planned.result;
}
