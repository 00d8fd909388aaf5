/**
 * Plans for the projects of an event: each project as it is in the tree being planned (a pull
 * request's merge result, a merge queue's commit, a pushed commit) against itself at the prior
 * commit (or where it was, when it moved), read from git objects (nothing is checked out or
 * executed), with its capability tests. A prior that does not validate is never used
 * silently: the project is planned as new and the report says why. Which projects, and what
 * became of the base's, is project-set.ts.
 */
import { revisionProgramDigests } from "../adapters/git/program-digests.ts";
import { readProjectInRepository } from "../adapters/git/read-revision.ts";
import { type Diagnostic, hasErrors, sortDiagnostics } from "../core/diagnostics.ts";
import type { Plan } from "../core/plan/plan.ts";
import { planProject, planRemovedProject } from "../core/plan/plan-project.ts";
import { programPaths } from "../core/plan/programs.ts";
import { projectResources } from "../core/plan/resources.ts";
import { type CapabilityTestReport, runCapabilityTests } from "../core/testing/capability-tests.ts";
import { type ValidationResult, validateProject } from "../core/validate.ts";
import { plural } from "../core/words.ts";

export interface ProjectOutcome {
  /** Relative to the repository root; "." for the root. */
  path: string;
  head: ValidationResult;
  /** Undefined when the planned tree has errors that stop planning, or conflicts. */
  plan?: Plan;
  blocking: Diagnostic[];
  tests: CapabilityTestReport;
  /** Why the prior could not be used, when it could not. */
  baseProblem?: string;
  /** This project's files that conflict in the merge result. */
  conflicts: string[];
  /** Where the base had this project, when it moved: the plan is against the project there. */
  movedFrom?: string;
  /** The base's project is gone from the head's selection: deleted, or moved to `movedTo`. */
  removed?: { movedTo?: string };
}

/**
 * The project at `path` in `current` (a commit or tree id) planned against `prior` (a commit,
 * or undefined for none). `conflicts` are the repository's conflicting paths.
 */
export async function planProjectAt(
  repoRoot: string,
  path: string,
  current: string,
  prior: string | undefined,
  conflicts: readonly string[] = [],
  priorPath: string = path,
): Promise<ProjectOutcome> {
  const prefix = path === "." ? "" : path;
  const inProject = conflicts.filter((c) => prefix === "" || c.startsWith(`${prefix}/`));
  const read = await readProjectInRepository(repoRoot, prefix, current);
  const validated = validateProject(read.files);
  const head: ValidationResult = read.diagnostics.length
    ? {
        project: validated.project,
        diagnostics: sortDiagnostics([...read.diagnostics, ...validated.diagnostics]),
        ok: validated.ok && !hasErrors(read.diagnostics),
      }
    : validated;
  const tests = runCapabilityTests(head.project);
  if (inProject.length > 0) return { path, head, blocking: [], tests, conflicts: inProject };

  let priorResources: ReturnType<typeof projectResources>["resources"] = [];
  let baseProblem: string | undefined;
  let priorCommit: string | undefined;
  if (prior !== undefined) {
    const base = await readProjectInRepository(repoRoot, priorPath, prior);
    priorCommit = base.commit;
    if (base.existed) {
      const v = validateProject(base.files);
      const errors = [...base.diagnostics, ...v.diagnostics].filter((d) => d.severity === "error");
      if (errors.length > 0) {
        const first = errors[0]!;
        baseProblem = `The base's project does not validate (${plural(errors.length, "error")}; first: ${first.span.file}:${first.span.line}: ${first.code} ${first.message}). It is not used as the prior: everything is planned as new.`;
      } else {
        const programs = await revisionProgramDigests(
          repoRoot,
          priorPath,
          prior,
          programPaths(v.project),
        );
        priorResources = projectResources(v.project, programs).resources;
      }
    }
  }
  const programs = await revisionProgramDigests(
    repoRoot,
    prefix,
    current,
    programPaths(head.project),
  );
  const result = planProject(
    head,
    {
      resources: priorResources,
      source:
        prior !== undefined
          ? { source: "git", ref: prior, commit: priorCommit }
          : { source: "none" },
    },
    path,
    programs,
  );
  const base = {
    path,
    head,
    tests,
    conflicts: [],
    ...(baseProblem ? { baseProblem } : {}),
    ...(priorPath !== path ? { movedFrom: priorPath } : {}),
  };
  return result.ok
    ? { ...base, plan: result.plan, blocking: [] }
    : { ...base, blocking: result.blocking };
}

const NO_TESTS: CapabilityTestReport = { results: [], passed: 0, failed: 0 };

/** A project that cannot be planned at all (a link where it is, an entry naming nothing): blocked. */
export function projectErrorOutcome(path: string, error: Diagnostic): ProjectOutcome {
  const empty = validateProject([]).project;
  return {
    path,
    head: { project: empty, diagnostics: [error], ok: false },
    blocking: [error],
    tests: NO_TESTS,
    conflicts: [],
  };
}

/**
 * The base's project at `path`, gone from the head's selection (deleted, or moved to
 * `movedTo`): planned as removed, a widening that needs an approval.
 */
export async function planRemovedAt(
  repoRoot: string,
  path: string,
  prior: string,
  movedTo?: string,
): Promise<ProjectOutcome> {
  const base = await readProjectInRepository(repoRoot, path, prior);
  const v = validateProject(base.files);
  const valid = !hasErrors([...base.diagnostics, ...v.diagnostics]);
  const name = v.project.settings.name || path;
  const shown = path === "." ? "the repository root" : path;
  const reason =
    movedTo === undefined
      ? `The project at ${shown} is removed in the head: every guard it declared (policies, approve gates, loop bounds) is gone with it.`
      : `The project at ${shown} moved to ${movedTo}, which input \`project\` does not select: every guard it declared is no longer checked.`;
  const plan = planRemovedProject(
    {
      name,
      resources: valid ? projectResources(v.project).resources : [],
      source: { source: "git", ref: prior, commit: base.commit },
    },
    reason,
    path,
  );
  return {
    path,
    head: { project: validateProject([]).project, diagnostics: [], ok: true },
    plan,
    blocking: [],
    tests: NO_TESTS,
    conflicts: [],
    removed: movedTo === undefined ? {} : { movedTo },
  };
}
