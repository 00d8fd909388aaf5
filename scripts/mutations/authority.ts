/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: a guard is source text, template placeholders included */
/**
 * The guards of the authority diff (issue 21): what a pull request can change besides a grant
 * and still widen what agents may do, each with the test that must catch its removal. Run by
 * scripts/mutate.ts (the `authority` set).
 */
import type { Mutation } from "./mutation.ts";

const TEST = "__tests__/guards-relaxed.test.ts";

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
  {
    group: "effects",
    guard: "a native workspace operation cannot be relabelled (TF2016)",
    file: "src/core/model/resolve-project.ts",
    find: "    if (native !== undefined && (effects.length !== 1 || effects[0] !== native)) {",
    replace: "    if (false) {",
    test: "__tests__/validate-corpus.test.ts",
    filter: "tf2016-workspace-write-relabelled",
  },
  {
    group: "effects",
    guard: "an http operation always has network.egress (TF2016)",
    file: "src/core/model/resolve-project.ts",
    find: "    if (intrinsic !== undefined && !effects.includes(intrinsic)) {",
    replace: "    if (false) {",
    test: "__tests__/validate-corpus.test.ts",
    filter: "tf2016-http-without-egress",
  },
  {
    group: "names",
    guard: "a policy or test naming an effect no tool has is an error",
    file: "src/core/analysis/check-effects.ts",
    find: "    if (known.has(effect)) return;",
    replace: "    return;",
    test: "__tests__/validate-corpus.test.ts",
    filter: "tf3011-test-misspelled-effect",
  },
];
