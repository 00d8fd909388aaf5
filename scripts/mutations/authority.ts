/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: a guard is source text, template placeholders included */
/**
 * The guards of the authority diff (issue 21): what a pull request can change besides a grant
 * and still widen what agents may do (a relaxed guard, a project that vanishes), each with the
 * test that must catch its removal. Run by scripts/mutate.ts (the `authority` set).
 */
import type { Mutation } from "./mutation.ts";

const TEST = "__tests__/guards-relaxed.test.ts";
const PROJECTS = "__tests__/projects-vanish.test.ts";
const PROJECT_SET = "src/action/project-set.ts";

export const AUTHORITY: Mutation[] = [
  {
    group: "guards",
    guard: "a relaxed guard makes the plan WIDENED (approval needed)",
    file: "src/core/plan/compute-plan.ts",
    find: '      authority.autonomous === "WIDENED" || authority.gated === "WIDENED" || guards.length > 0,',
    replace: '      authority.autonomous === "WIDENED" || authority.gated === "WIDENED",',
    test: TEST,
    filter: "forbid policy deleted",
  },
  {
    group: "guards",
    guard: "fail-on: widening fails on a relaxed guard",
    file: "src/core/ci/outcome.ts",
    find: '  if (failOn === "widening" && (plan.authority.autonomous === "WIDENED" || guards.length > 0))',
    replace: '  if (failOn === "widening" && plan.authority.autonomous === "WIDENED")',
    test: TEST,
    filter: "forbid policy deleted",
  },
  {
    group: "guards",
    guard: "an approve gate removed is a relaxed guard",
    file: "src/core/plan/compute-plan.ts",
    find: '  "approval_removed",\n  "workflow_effects_widened",',
    replace: '  "workflow_effects_widened",',
    test: TEST,
    filter: "approve gate removed",
  },
  {
    group: "names",
    guard: "a policy or test naming an agent that does not exist is an error",
    file: "src/core/diagnostics.ts",
    find: '  TF3011: { severity: "error", title: "unknown name in policy or test" },',
    replace: '  TF3011: { severity: "warning", title: "unknown name in policy or test" },',
    test: "__tests__/capability-test-command.test.ts",
    filter: "naming an agent that does not exist",
  },
  // The set of projects is part of authority: a project that vanishes fails closed.
  {
    group: "projects",
    guard: "a terfyn.yaml that is a symbolic link blocks",
    file: PROJECT_SET,
    find: '  for (const dir of head.linkedProjectFiles)\n    if (selected(dir))\n      out.set(dir, { kind: "error", path: dir, diagnostic: linkedProjectFileDiagnostic(dir) });\n',
    replace: "",
    test: PROJECTS,
    filter: "a terfyn.yaml that becomes a symbolic link",
  },
  {
    group: "projects",
    guard: "a base project behind a symbolic link (or submodule) in the head blocks",
    file: PROJECT_SET,
    find: '    if (link) {\n      out.set(dir, { kind: "error", path: dir, diagnostic: linkDiagnostic(dir, link) });\n      continue;\n    }\n',
    replace: "",
    test: PROJECTS,
    filter: "a directory above the projects",
  },
  {
    group: "projects",
    guard: "a symbolic link a glob selects, leading to a project, blocks",
    file: PROJECT_SET,
    find: "    if (leadsToProject)\n",
    replace: "    if (false)\n",
    test: PROJECTS,
    filter: "a new symbolic link a glob selects",
  },
  {
    group: "projects",
    guard: "an explicit project entry that names no project blocks",
    file: PROJECT_SET,
    find: "    if (!isExplicit(pat)) continue;",
    replace: "    continue;",
    test: PROJECTS,
    filter: "explicit project entry that matches nothing",
  },
  {
    group: "projects",
    guard: "a base project gone from the head's selection is reported removed",
    file: PROJECT_SET,
    find: '    else out.set(dir, { kind: "removed", path: dir, ...(to !== undefined ? { movedTo: to } : {}) });',
    replace: "    else continue;",
    test: PROJECTS,
    filter: "attack 3",
  },
  {
    group: "projects",
    guard: "a removed project is a relaxed guard (WIDENED, approval needed)",
    file: "src/core/plan/compute-plan.ts",
    find: '  "project_removed",\n]);',
    replace: "]);",
    test: PROJECTS,
    filter: "deleted in the head",
  },
  {
    group: "projects",
    guard: "a submodule (gitlink) inside a project blocks",
    file: "src/adapters/git/read-revision.ts",
    find: "    if (e.mode === GITLINK && !hasUnsafeFileName(rel) && mayHoldProjectFiles(rel)) {",
    replace: "    if (e.mode === GITLINK && false) {",
    test: PROJECTS,
    filter: "inside a project blocks",
  },
  {
    group: "projects",
    guard: "the CLI refuses a terfyn.yaml that is a symbolic link",
    file: "src/adapters/fs/read-project.ts",
    find: "  if (projectFile.isSymbolicLink())",
    replace: "  if (false)",
    test: PROJECTS,
    filter: "the CLI refuses",
  },
];
