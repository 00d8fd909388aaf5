/**
 * A project at a git revision as a plan source (src/core/plan/plan-from-sources.ts): read from
 * git objects, nothing checked out or executed.
 */
import type { ProjectSource } from "../../core/plan/plan-from-sources.ts";
import { revisionProgramDigests } from "./program-digests.ts";
import { locateProject, readProjectInRepository } from "./read-revision.ts";

/**
 * The project at `prefix` (relative to the repository root; "" or "." for the root) in
 * `revision` (a commit or tree id, or a ref). `ref` is how the plan names it (default the
 * revision itself).
 */
export function revisionSource(
  repoRoot: string,
  prefix: string,
  revision: string,
  ref: string = revision,
): ProjectSource {
  return {
    read: async () => {
      const r = await readProjectInRepository(repoRoot, prefix, revision);
      return {
        existed: r.existed,
        files: r.files,
        diagnostics: r.diagnostics,
        origin: { source: "git", ref, commit: r.commit },
      };
    },
    programs: (paths) => revisionProgramDigests(repoRoot, prefix, revision, paths),
  };
}

/** The same, for the project directory `projectDir` of a work tree (the CLI's `--against`). */
export async function projectRevisionSource(
  projectDir: string,
  revision: string,
): Promise<ProjectSource> {
  const { top, prefix } = await locateProject(projectDir);
  return revisionSource(top, prefix, revision);
}
