/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: a guard is source text, template placeholders included */
/**
 * `npm run mutate:doctrine`: removes each guard of the review doctrine in turn (a small source
 * edit), runs the test that should catch it, and restores the file. Every guard must be caught:
 * a guard no test notices is not a guard. Prints one line per guard and exits 1 if any survived.
 *
 *   npm run mutate:doctrine                 # every guard
 *   npm run mutate:doctrine -- --only 7,8   # the guards of doctrines 7 and 8
 *
 * It edits files under src/ while it runs, so it refuses a working tree with uncommitted
 * changes to those files, and always puts the original bytes back (also on Ctrl-C).
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

interface Mutation {
  doctrine: number;
  guard: string;
  file: string;
  find: string;
  replace: string;
  test: string;
  filter: string;
}

const M: Mutation[] = [
  {
    doctrine: 5,
    guard: "a file edited after composing stops the run at the publish gate",
    file: "src/core/review/phases/gate.ts",
    find: 'if (gate === "publish" && ctx.ports.steps.changedSinceComposed) {',
    replace: "if (false) {",
    test: "__tests__/review-publish.test.ts",
    filter: "voids the approval",
  },
  {
    doctrine: 5,
    guard: "the publisher re-checks the bound bytes before committing",
    file: "src/core/review/steps.ts",
    find: "    if (edited.length > 0)\n      throw new Error(",
    replace: "    if (false)\n      throw new Error(",
    test: "__tests__/review-publish.test.ts",
    filter: "own check",
  },
  {
    doctrine: 5,
    guard: "a re-plan names its round, so an identical plan needs a new approval",
    file: "src/core/review/phases/plan.ts",
    find: "const plan = round > 1 ? { ...planned.plan, round } : planned.plan;",
    replace: "const plan = planned.plan;",
    test: "__tests__/review-orchestrator.test.ts",
    filter: "re-plan from the head",
  },
  {
    doctrine: 7,
    guard: "failure signatures are normalised (durations, times, temp paths)",
    file: "src/core/review/failure-facts.ts",
    find: ".update(`${gate}\\n${code}\\n${normaliseFailureText(output, roots)}`)",
    replace: ".update(`${gate}\\n${code}\\n${output}`)",
    test: "__tests__/review-failure-facts.test.ts",
    filter: "one signature",
  },
  {
    doctrine: 7,
    guard: "a command that is not there is environmental",
    file: "src/core/review/failure-facts.ts",
    find: "if (run.code === 127 || COMMAND_NOT_FOUND.test(run.output))",
    replace: "if (false)",
    test: "__tests__/review-e2e.test.ts",
    filter: "not there is environmental",
  },
  {
    doctrine: 7,
    guard: "the same attempt failing differently is mechanical",
    file: "src/core/review/phases/build.ts",
    find: "    previous.failure_signature !== verdict.failure_signature\n  )",
    replace: "    previous.failure_signature !== verdict.failure_signature && false\n  )",
    test: "__tests__/review-orchestrator.test.ts",
    filter: "mechanical",
  },
  {
    doctrine: 7,
    guard: "an escalation re-plans with its own Planner step",
    file: "src/core/review/steps.ts",
    find: 'const step = round.n === 1 ? "plan" : `plan-${round.n}`;',
    replace: 'const step = "plan";',
    test: "__tests__/review-e2e.test.ts",
    filter: "different durations",
  },
  {
    doctrine: 7,
    guard: "an escalation puts the worktree back to the head",
    file: "src/core/review/phases/build.ts",
    find: "const reset = (await ctx.ports.steps.resetWork?.()) ?? [];",
    replace: "const reset: string[] = [];",
    test: "__tests__/review-orchestrator.test.ts",
    filter: "re-plan from the head",
  },
  {
    doctrine: 8,
    guard: "a test ran only with a count above zero (and its name, where reported)",
    file: "src/core/review/test-evidence.ts",
    find: "return e.ran !== undefined && e.ran > 0 && e.named !== false;",
    replace: "return true;",
    test: "__tests__/review-test-evidence.test.ts",
    filter: "ran needs",
  },
  {
    doctrine: 8,
    guard: "a renamed test (reported name absent) did not run",
    file: "src/core/review/test-evidence.ts",
    find: "return e.ran !== undefined && e.ran > 0 && e.named !== false;",
    replace: "return e.ran !== undefined && e.ran > 0;",
    test: "__tests__/review-test-evidence.test.ts",
    filter: "TAP",
  },
  {
    doctrine: 8,
    guard: "skipped tests are not tests that ran",
    file: "src/core/review/test-evidence.ts",
    find: "total.n - (skipped?.n ?? 0)",
    replace: "total.n",
    test: "__tests__/review-e2e.test.ts",
    filter: "named differently",
  },
  {
    doctrine: 8,
    guard: "a red test that did not run stops the run",
    file: "src/core/review/phases/red-tests.ts",
    find: "if (notRun.length > 0)",
    replace: "if (false)",
    test: "__tests__/review-e2e.test.ts",
    filter: "runs no test",
  },
  {
    doctrine: 8,
    guard: "a proof whose test did not run is vacuous",
    file: "src/core/review/phases/prove.ts",
    find: "r.passed || r.ran === false",
    replace: "r.passed",
    test: "__tests__/review-orchestrator.test.ts",
    filter: "proof that proves",
  },
  {
    doctrine: 8,
    guard: "the single-test command must take the test's name",
    file: "src/core/review/steps.ts",
    find: "if (!new RegExp(NAME_PLACEHOLDER.source).test(",
    replace: "if (false && !new RegExp(NAME_PLACEHOLDER.source).test(",
    test: "__tests__/review-e2e.test.ts",
    filter: "take the test's name",
  },
  {
    doctrine: 8,
    guard: "a reply to a fix says what the proof showed",
    file: "src/core/review/steps.ts",
    find: "body: withProof(d, d.reply as string, proof)",
    replace: "body: d.reply as string",
    test: "__tests__/review-publish.test.ts",
    filter: "content hash and the diff",
  },
  {
    doctrine: 14,
    guard: "a fix of code gone at head needs evidence verified at head",
    file: "src/core/review/doctrine.ts",
    find: 'if (d.action === "fix" && ctx.anchorGone?.includes(d.item)) {',
    replace: "if (false) {",
    test: "__tests__/review-decisions-e2e.test.ts",
    filter: "stale",
  },
  {
    doctrine: 16,
    guard: "harm: reachable needs a path from an entry point",
    file: "src/core/review/doctrine.ts",
    find: 'if (d.harm === "reachable" && !d.path?.trim())',
    replace: "if (false)",
    test: "__tests__/review-decisions-e2e.test.ts",
    filter: "reachable",
  },
  {
    doctrine: 15,
    guard: "an item decided in an earlier run is reaffirmed or reversed",
    file: "src/core/review/doctrine.ts",
    find: "if (priorItems.has(d.item) && !d.prior)",
    replace: "if (false)",
    test: "__tests__/review-orchestrator.test.ts",
    filter: "reaffirmed or reversed",
  },
  {
    doctrine: 18,
    guard: "validation runs every gate AGENTS.md declares",
    file: "src/core/review/steps.ts",
    find: "if (r.code !== 0 && !failedGate) failedGate = { gate, ...r };",
    replace: "",
    test: "__tests__/review-e2e.test.ts",
    filter: "not guessed",
  },
  {
    doctrine: 18,
    guard: "every changed file has a standards finding",
    file: "src/core/review/phases/compose.ts",
    find: "if (unchecked.length > 0)",
    replace: "if (false)",
    test: "__tests__/review-orchestrator.test.ts",
    filter: "standards finding",
  },
  {
    doctrine: 15,
    guard: "a reaffirm that changes the decision is refused",
    file: "src/core/review/doctrine.ts",
    find: "if (earlier && (earlier.action !== d.action || earlier.class !== d.class))",
    replace: "if (false)",
    test: "__tests__/review-decisions-e2e.test.ts",
    filter: "flips",
  },
  {
    doctrine: 16,
    guard: "`executed` is checked against the Decider's journal",
    file: "src/core/review/steps.ts",
    find: 'if (unrun.length > 0) throw new RunEnd("stuck", describeDoctrineProblems(unrun));',
    replace: "",
    test: "__tests__/review-decisions-e2e.test.ts",
    filter: "executed",
  },
  {
    doctrine: 5,
    guard: "a refusal needs its reason",
    file: "src/cli/commands/approve.ts",
    find: 'if (values.deny && (values.reason === undefined || (values.reason as string).trim() === ""))',
    replace: "if (false)",
    test: "__tests__/review-people.test.ts",
    filter: "deny --reason",
  },
  {
    doctrine: 18,
    guard: "a plan that changes code names the repository's conventions",
    file: "src/core/review/steps.ts",
    find: "if (changesCode && conventions.length > 0 && plan.conventions.length === 0)",
    replace: "if (false)",
    test: "__tests__/review-e2e.test.ts",
    filter: "conventions it follows",
  },
  {
    doctrine: 19,
    guard: "a failing install stops the run",
    file: "src/core/review/steps.ts",
    find: '      if (r.code !== 0)\n        throw new RunEnd(\n          "stuck",\n          `the repository\'s install command',
    replace:
      '      if (false)\n        throw new RunEnd(\n          "stuck",\n          `the repository\'s install command',
    test: "__tests__/review-e2e.test.ts",
    filter: "failing install",
  },
];

const root = join(import.meta.dirname, "..");
const only = (() => {
  const i = process.argv.indexOf("--only");
  if (i < 0) return undefined;
  return new Set((process.argv[i + 1] ?? "").split(",").map(Number));
})();

const files = [...new Set(M.map((m) => m.file))];
const dirty = spawnSync("git", ["status", "--porcelain", "--", ...files], {
  cwd: root,
  encoding: "utf8",
}).stdout.trim();
if (dirty !== "") {
  process.stderr.write(`mutate:doctrine: commit or stash these first:\n${dirty}\n`);
  process.exit(2);
}

let current: { file: string; original: string } | undefined;
const restore = () => {
  if (current) writeFileSync(join(root, current.file), current.original);
  current = undefined;
};
for (const sig of ["SIGINT", "SIGTERM"] as const)
  process.on(sig, () => {
    restore();
    process.exit(130);
  });

let survived = 0;
for (const m of M) {
  if (only && !only.has(m.doctrine)) continue;
  const path = join(root, m.file);
  const original = readFileSync(path, "utf8");
  const at = original.indexOf(m.find);
  if (at < 0 || original.indexOf(m.find, at + 1) >= 0) {
    process.stdout.write(
      `MISSING  doctrine ${m.doctrine}: ${m.guard} (the guard's text is not found exactly once in ${m.file})\n`,
    );
    survived++;
    continue;
  }
  current = { file: m.file, original };
  try {
    writeFileSync(path, original.replace(m.find, m.replace));
    const r = spawnSync("npx", ["vitest", "run", m.test, "-t", m.filter], {
      cwd: root,
      env: { ...process.env, TERFYN_FROM_SOURCE: "1" },
      encoding: "utf8",
    });
    const caught = r.status !== 0;
    if (!caught) survived++;
    process.stdout.write(
      `${caught ? "caught  " : "SURVIVED"} doctrine ${m.doctrine}: ${m.guard} (${m.test} -t "${m.filter}")\n`,
    );
  } finally {
    restore();
  }
}
process.stdout.write(
  survived === 0 ? "every guard is caught by a test\n" : `${survived} guard(s) not caught\n`,
);
process.exit(survived === 0 ? 0 : 1);
