/**
 * Plans for the projects of an event: each project as it is in the tree being planned (a pull
 * request's merge result, a merge queue's commit, a pushed commit) against itself at the prior
 * commit (or where it was, when it moved), read from git objects (nothing is checked out or
 * executed), with its capability tests. A prior that does not validate is never used
 * silently: the project is planned as new and the report says why. Which projects, and what
 * became of the base's, is project-set.ts.
 */
import { revisionSource } from "../adapters/git/project-source.ts";
import type { Diagnostic } from "../core/diagnostics.ts";
import type { Plan } from "../core/plan/plan.ts";
import {
  loadSource,
  planFromSources,
  priorProblemText,
  priorResources,
} from "../core/plan/plan-from-sources.ts";
import { planRemovedProject } from "../core/plan/plan-project.ts";
import { type CapabilityTestReport, runCapabilityTests } from "../core/testing/capability-tests.ts";
import { type ValidationResult, validateProject } from "../core/validate.ts";

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
  /** `host/owner/name` of the repository (repository-identity.ts), null when not known. */
  repository: string | null = null,
): Promise<ProjectOutcome> {
  const prefix = path === "." ? "" : path;
  const inProject = conflicts.filter((c) => prefix === "" || c.startsWith(`${prefix}/`));
  const loaded = await loadSource(revisionSource(repoRoot, prefix, current));
  const head = loaded.validation;
  const tests = runCapabilityTests(head);
  if (inProject.length > 0) return { path, head, blocking: [], tests, conflicts: inProject };

  const planned = await planFromSources(
    loaded,
    prior !== undefined ? revisionSource(repoRoot, priorPath, prior) : undefined,
    { path, repository },
  );
  const problem = planned.priorProblem;
  const base = {
    path,
    head,
    tests,
    conflicts: [],
    // A base without the project is an ordinary new project; only a broken one is a problem.
    ...(problem?.kind === "invalid" ? { baseProblem: priorProblemText(problem, "The base") } : {}),
    ...(priorPath !== path ? { movedFrom: priorPath } : {}),
  };
  return planned.result.ok
    ? { ...base, plan: planned.result.plan, blocking: [] }
    : { ...base, blocking: planned.result.blocking };
}

const NO_TESTS: CapabilityTestReport = { results: [], passed: 0, failed: 0 };

/** A project that cannot be planned at all (a link where it is, an entry naming nothing): blocked. */
export function projectErrorOutcome(path: string, error: Diagnostic): ProjectOutcome {
  return {
    path,
    head: { ...validateProject([]), diagnostics: [error], ok: false },
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
  repository: string | null = null,
): Promise<ProjectOutcome> {
  const side = await loadSource(revisionSource(repoRoot, path, prior));
  const base = await priorResources(side);
  const name = side.validation.project.settings.name || path;
  const shown = path === "." ? "the repository root" : path;
  const reason =
    movedTo === undefined
      ? `The project at ${shown} is removed in the head: every guard it declared (policies, approve gates, loop bounds) is gone with it.`
      : `The project at ${shown} moved to ${movedTo}, which input \`project\` does not select: every guard it declared is no longer checked.`;
  const plan = planRemovedProject(
    { name, resources: base.resources, source: base.origin },
    reason,
    { path, repository },
  );
  return {
    path,
    head: { ...validateProject([]), diagnostics: [], ok: true },
    plan,
    blocking: [],
    tests: NO_TESTS,
    conflicts: [],
    removed: movedTo === undefined ? {} : { movedTo },
  };
}
