/** A project directory on disk as a plan source (src/core/plan/plan-from-sources.ts). */
import type { ProjectSource } from "../../core/plan/plan-from-sources.ts";
import { projectProgramDigests } from "./program-digests.ts";
import { readProjectDirectory } from "./read-project.ts";

/** `origin` is how a plan names this side when it is the prior (a checkout is never one). */
export function directorySource(root: string): ProjectSource {
  return {
    read: async () => ({
      ...(await readProjectDirectory(root)),
      existed: true,
      origin: { source: "none" },
    }),
    programs: (paths) => projectProgramDigests(root, paths),
  };
}
