/**
 * Plans for the projects of a pull request: each project as it is at the head commit against
 * itself at the base commit, read from git objects (nothing from the pull request is checked
 * out or executed), with its capability tests.
 */
import { minimatch } from "minimatch";
import { findProjectsAtRevision, readProjectInRepository } from "../adapters/git/read-revision.ts";
import type { Diagnostic } from "../core/diagnostics.ts";
import type { Plan } from "../core/plan/plan.ts";
import { planProject } from "../core/plan/plan-project.ts";
import { projectResources } from "../core/plan/resources.ts";
import { type CapabilityTestReport, runCapabilityTests } from "../core/testing/capability-tests.ts";
import { type ValidationResult, validateProject } from "../core/validate.ts";

export interface ProjectOutcome {
  /** Relative to the repository root; "." for the root. */
  path: string;
  head: ValidationResult;
  /** Undefined when the head has errors that stop planning. */
  plan?: Plan;
  blocking: Diagnostic[];
  tests: CapabilityTestReport;
}

export async function selectProjects(
  repoRoot: string,
  headSha: string,
  patterns: readonly string[],
): Promise<string[]> {
  const all = await findProjectsAtRevision(repoRoot, headSha);
  const norm = (p: string) => p.replace(/^\.\//, "").replace(/\/+$/, "") || ".";
  return all.filter((dir) =>
    patterns.some((pat) => minimatch(dir, norm(pat), { dot: true }) || dir === norm(pat)),
  );
}

export async function planProjectAt(
  repoRoot: string,
  path: string,
  headSha: string,
  baseSha: string,
): Promise<ProjectOutcome> {
  const prefix = path === "." ? "" : path;
  const head = validateProject((await readProjectInRepository(repoRoot, prefix, headSha)).files);
  const base = await readProjectInRepository(repoRoot, prefix, baseSha);
  const priorResources = base.existed
    ? projectResources(validateProject(base.files).project).resources
    : [];
  const result = planProject(head, {
    resources: priorResources,
    source: { source: "git", ref: baseSha, commit: base.commit },
  });
  const tests = runCapabilityTests(head.project);
  return result.ok
    ? { path, head, plan: result.plan, blocking: [], tests }
    : { path, head, blocking: result.blocking, tests };
}
