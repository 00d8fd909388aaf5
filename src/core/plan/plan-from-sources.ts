/**
 * The one plan use case: a project read from a source (a directory on disk, a tree in git)
 * planned against a prior (another source, a recorded state, or nothing). The CLI and the
 * Action both plan through it, so they read programs, validate and treat a prior that does not
 * validate by the same rules. Sources are a port: the readers in src/adapters implement it;
 * nothing here reads a file or runs git.
 */
import { type Diagnostic, hasErrors, sortDiagnostics } from "../diagnostics.ts";
import type { ProjectFile } from "../model/resolve-project.ts";
import { type ValidationResult, validateProject } from "../validate.ts";
import { plural } from "../words.ts";
import type { Plan, PlanIdentity } from "./plan.ts";
import { type PlanProjectResult, planProject } from "./plan-project.ts";
import { type ProgramDigests, programPaths } from "./programs.ts";
import { projectResources, type ResourceRecord } from "./resources.ts";

/** What a source holds at the project's place. */
export interface SourceRead {
  /** False when there is no project there (no regular terfyn.yaml). */
  existed: boolean;
  files: readonly ProjectFile[];
  /** Problems with the files themselves (unsafe names, links, undecodable bytes). */
  diagnostics: readonly Diagnostic[];
  /** How a plan names this side when it is the prior. */
  origin: Plan["prior"];
}

/** A project as one reader sees it. */
export interface ProjectSource {
  read(): Promise<SourceRead>;
  /** The digests of the project files (relative paths) its command tools run (programs.ts). */
  programs(paths: readonly string[]): Promise<ProgramDigests>;
}

/** A source read and validated: what the CLI holds after loading the project. */
export interface LoadedSource {
  source: ProjectSource;
  existed: boolean;
  origin: Plan["prior"];
  /** Validation of the files, with the reader's own diagnostics merged in. */
  validation: ValidationResult;
}

/** Resources recorded earlier (the state file written by `terfyn apply`). */
export interface RecordedPrior {
  recorded: readonly ResourceRecord[];
  origin: Plan["prior"];
}

/** Why the prior side was not used: everything is then planned as new. */
export type PriorProblem = { kind: "absent" } | { kind: "invalid"; errors: readonly Diagnostic[] };

export interface PlannedFromSources {
  current: LoadedSource;
  /** The plan, or the errors that stop the current side from being planned. */
  result: PlanProjectResult;
  origin: Plan["prior"];
  priorProblem?: PriorProblem;
}

export async function loadSource(source: ProjectSource): Promise<LoadedSource> {
  const read = await source.read();
  const validated = validateProject(read.files);
  const validation: ValidationResult =
    read.diagnostics.length > 0
      ? {
          ...validated,
          diagnostics: sortDiagnostics([...read.diagnostics, ...validated.diagnostics]),
          ok: validated.ok && !hasErrors(read.diagnostics),
        }
      : validated;
  return { source, existed: read.existed, origin: read.origin, validation };
}

/**
 * The resources the prior side holds. A prior source that does not validate is never used in
 * part (what resolved of a broken project can lack the very guards that failed to parse): it
 * is empty, so every grant of the current side shows as new, and the problem says why.
 */
export async function priorResources(
  prior: ProjectSource | LoadedSource | RecordedPrior | undefined,
): Promise<{
  resources: readonly ResourceRecord[];
  origin: Plan["prior"];
  problem?: PriorProblem;
}> {
  if (prior === undefined) return { resources: [], origin: { source: "none" } };
  if ("recorded" in prior) return { resources: prior.recorded, origin: prior.origin };
  const side = "validation" in prior ? prior : await loadSource(prior);
  if (!side.existed) return { resources: [], origin: side.origin, problem: { kind: "absent" } };
  const errors = side.validation.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0)
    return { resources: [], origin: side.origin, problem: { kind: "invalid", errors } };
  const programs = await side.source.programs(programPaths(side.validation.project));
  return {
    resources: projectResources(side.validation, programs).resources,
    origin: side.origin,
  };
}

export async function planFromSources(
  current: ProjectSource | LoadedSource,
  prior: ProjectSource | LoadedSource | RecordedPrior | undefined,
  /** Where the project is: its path in its repository, and the repository when known. */
  identity: PlanIdentity,
): Promise<PlannedFromSources> {
  const loaded = "validation" in current ? current : await loadSource(current);
  const base = await priorResources(prior);
  const programs = await loaded.source.programs(programPaths(loaded.validation.project));
  const result = planProject(
    loaded.validation,
    { resources: base.resources, source: base.origin },
    identity,
    programs,
  );
  return {
    current: loaded,
    result,
    origin: base.origin,
    ...(base.problem ? { priorProblem: base.problem } : {}),
  };
}

/** The problem in one sentence, naming the prior side as `side` ("the base", "main"). */
export function priorProblemText(problem: PriorProblem, side: string): string {
  if (problem.kind === "absent")
    return `${side} has no project here (no terfyn.yaml): everything is planned as new.`;
  const first = problem.errors[0];
  const where = first
    ? `; first: ${first.span.file}:${first.span.line}: ${first.code} ${first.message}`
    : "";
  return `${side}'s project does not validate (${plural(problem.errors.length, "error")}${where}). It is not used as the prior: everything is planned as new.`;
}
