/**
 * Removes each guard of a set in turn (a small source edit), runs the test that should catch
 * it, and restores the file. Every guard must be caught: a guard no test notices is not a
 * guard. Prints one line per guard and exits 1 if any survived.
 *
 *   tsx scripts/mutate.ts doctrine              # the review doctrine's guards
 *   tsx scripts/mutate.ts app                   # the GitHub App's and the review-fix Action's
 *   tsx scripts/mutate.ts confinement           # the sandbox and the one git door
 *   tsx scripts/mutate.ts authority             # what widens besides a grant (relaxed guards)
 *   tsx scripts/mutate.ts doctrine --only 7,8   # the guards of doctrines 7 and 8
 *
 * It edits files under src/ while it runs, so it refuses a working tree with uncommitted
 * changes to those files, and always puts the original bytes back (also on Ctrl-C). A guard
 * whose test runs the bundled Action (`bundle: true`, or a test file that calls the harness's
 * runAction) is built into dist/ before its test and dist/ is rebuilt once the guard is back,
 * so dist/ must be clean too.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { APP } from "./mutations/app.ts";
import { AUTHORITY } from "./mutations/authority.ts";
import { CONFINEMENT } from "./mutations/confinement.ts";
import { DOCTRINE } from "./mutations/doctrine.ts";
import { MODELS } from "./mutations/models.ts";
import type { Mutation } from "./mutations/mutation.ts";

const SETS: Record<string, Mutation[]> = {
  doctrine: DOCTRINE,
  app: APP,
  confinement: CONFINEMENT,
  authority: AUTHORITY,
  models: MODELS,
};
const set = process.argv[2] ?? "";
const M = SETS[set];
if (!M) {
  process.stderr.write(`usage: mutate.ts ${Object.keys(SETS).join("|")} [--only GROUP,…]\n`);
  process.exit(2);
}

const root = join(import.meta.dirname, "..");
const only = (() => {
  const i = process.argv.indexOf("--only");
  if (i < 0) return undefined;
  return new Set((process.argv[i + 1] ?? "").split(","));
})();

const selected = M.filter((m) => !only || only.has(m.group));
const bundled = selected.some(
  (m) => m.bundle || readFileSync(join(root, m.test), "utf8").includes("runAction("),
);
// A mutation whose test runs the bundle rebuilds dist/, so dist/ must be clean too.
const files = [...new Set(M.map((m) => m.file)), ...(bundled ? ["dist"] : [])];
const dirty = spawnSync("git", ["status", "--porcelain", "--", ...files], {
  cwd: root,
  encoding: "utf8",
}).stdout.trim();
if (dirty !== "") {
  process.stderr.write(`mutate ${set}: commit or stash these first:\n${dirty}\n`);
  process.exit(2);
}

/** Rebuilds dist/ from the sources as they are now; false when the build fails. */
const rebuild = () =>
  spawnSync("npx", ["tsx", "scripts/build-dist.ts"], { cwd: root, encoding: "utf8" }).status === 0;
/** Whether a test file runs the bundled Action (the harness imports dist/index.js). */
const runsBundle = (test: string) => readFileSync(join(root, test), "utf8").includes("runAction(");

let current: { file: string; original: string; bundle: boolean } | undefined;
const restore = () => {
  if (current) {
    writeFileSync(join(root, current.file), current.original);
    if (current.bundle && !rebuild()) process.stderr.write("mutate: rebuilding dist/ failed\n");
  }
  current = undefined;
};
for (const sig of ["SIGINT", "SIGTERM"] as const)
  process.on(sig, () => {
    restore();
    process.exit(130);
  });

let survived = 0;
for (const m of M) {
  if (only && !only.has(m.group)) continue;
  const path = join(root, m.file);
  const original = readFileSync(path, "utf8");
  const at = original.indexOf(m.find);
  if (at < 0 || original.indexOf(m.find, at + 1) >= 0) {
    process.stdout.write(
      `MISSING  ${set} ${m.group}: ${m.guard} (the guard's text is not found exactly once in ${m.file})\n`,
    );
    survived++;
    continue;
  }
  const bundle = m.bundle === true || runsBundle(m.test);
  current = { file: m.file, original, bundle };
  try {
    writeFileSync(path, original.replace(m.find, m.replace));
    if (bundle && !rebuild()) {
      process.stdout.write(`NO BUILD ${set} ${m.group}: ${m.guard} (dist/ did not build)\n`);
      survived++;
      continue;
    }
    const r = spawnSync("npx", ["vitest", "run", m.test, "-t", m.filter], {
      cwd: root,
      env: { ...process.env, TERFYN_FROM_SOURCE: "1" },
      encoding: "utf8",
    });
    const caught = r.status !== 0;
    if (!caught) survived++;
    process.stdout.write(
      `${caught ? "caught  " : "SURVIVED"} ${set} ${m.group}: ${m.guard} (${m.test} -t "${m.filter}")\n`,
    );
  } finally {
    restore();
  }
}
process.stdout.write(
  survived === 0 ? "every guard is caught by a test\n" : `${survived} guard(s) not caught\n`,
);
process.exit(survived === 0 ? 0 : 1);
