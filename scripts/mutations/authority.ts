/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: a guard is source text, template placeholders included */
/**
 * The guards of the authority diff (issue 21): what a pull request can change besides a grant
 * and still widen what agents may do, and the escaping that keeps a pull request's names and
 * text from forging what the plan's reviewers are shown (`escape`), each with the test that
 * must catch its removal. Run by scripts/mutate.ts (the `authority` set).
 */
import type { Mutation } from "./mutation.ts";

const TEST = "__tests__/guards-relaxed.test.ts";
/** The escaper's guards: hostile names and text on every output surface (render-escape). */
const ESCAPE_TEST = "__tests__/render-escape.test.ts";

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
    group: "escape",
    guard: "the changed-text <summary> line (an HTML block) is HTML-escaped, not code spans",
    file: "src/core/render/pr-report.ts",
    find: "<details><summary>${htmlCode(c.address)} ${htmlCode(a.path)} changed</summary>",
    replace: "<details><summary>${mdCode(c.address)} ${mdCode(a.path)} changed</summary>",
    test: ESCAPE_TEST,
    filter: "sticky comment",
  },
  {
    group: "escape",
    guard: "bidi controls and other format characters (Cf) are shown as \\u escapes",
    file: "src/core/render/escape.ts",
    find: '"[\\\\p{Cc}\\\\p{Cf}\\\\p{Zl}',
    replace: '"[\\\\p{Cc}\\\\p{Zl}',
    test: ESCAPE_TEST,
    filter: "shows each bidi",
  },
  {
    group: "escape",
    guard: "HTML text entity-escapes & < > \" '",
    file: "src/core/render/escape.ts",
    find: "return showInvisible(value).replace(/[&<>\"']/g, (c) => HTML_ENTITY[c] ?? c);",
    replace: "return showInvisible(value);",
    test: ESCAPE_TEST,
    filter: "entity-escapes",
  },
  {
    group: "escape",
    guard: "the text plan shows the invisible characters of names, keys and messages",
    file: "src/core/render/plan-text.ts",
    find: "const t = (s: string) => plainText(s);",
    replace: "const t = (s: string) => s;",
    test: ESCAPE_TEST,
    filter: "the text plan",
  },
  {
    group: "escape",
    guard: "the check run's text is a code block no line of the plan can close",
    file: "src/action/report-flow.ts",
    find: 'const wrapped = `${codeBlock(shown, "text", { minFence: 4 })}\\n`;',
    replace: "const wrapped = `\\`\\`\\`\\`text\\n${shown}\\`\\`\\`\\`\\n`;",
    test: ESCAPE_TEST,
    filter: "does not end its block",
  },
];
