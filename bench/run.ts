/**
 * `npm run bench`: whole processes of `terfyn validate`, `test` and `plan --against` against an
 * honest floor (bench/ratios.ts); how long `terfyn validate` takes in-process on a large project,
 * phase by phase; how long `terfyn plan --against HEAD~1` takes on the same project in a git
 * repository, after a commit that changes 5% of its grants (added, removed, and gated <->
 * autonomous); and what the workflow engine costs per agent step, per journaled effect, and to
 * resume a run from a 10,000-event journal (bench/engine.ts); and the bundled GitHub Action
 * (dist/index.js, as a runner spawns it) on the example pull request end to end against a mock of
 * the GitHub API on loopback, its API calls, and its cold start with nothing to do
 * (bench/action.ts; build the bundle first with `npm run build`); and the review-fix example end
 * to end as whole processes (bench/review.ts): its wall time over the time of the repository
 * commands it runs (target <= 2x), and the git processes and commands it starts, by kind;
 * before it, what the sandbox adds to one command against the same command unconfined
 * (bench/sandbox.ts, target <= 30 ms); and, on the review example driven by its recorded
 * transcript through a local Messages API, the share of each request's input that the prompt
 * cache can serve after each agent's first turn (bench/caching.ts, target >= 60%) and the input
 * tokens billed at full price per run; and, beside validate, the widening recall and false
 * widenings on the corpus of Claude Code settings changes (bench/host-corpus.ts).
 *
 *   npm run bench [-- --check] [--out DIR] [--reps N] [--warmup N] [--seed N] [--no-cli]
 *                 [--engine-only] [--action-only] [--no-engine] [--no-action] [--no-review]
 *
 * `--engine-only` and `--action-only` run only those sections (both: both); `--no-engine`,
 * `--no-action` and `--no-review` leave theirs out. `--quick` runs the review example once
 * (a few seconds, no strace pass) after the quick ratios, and the host corpus.
 *
 * Every target is printed with PASS or FAIL and the measure it was judged on: the ratio (or the
 * figure over its target), the median and the spread of the runs behind it.
 *
 * A benchmark is a report, not a gate: it exits 0 unless the synthetic project cannot be
 * generated, either revision does not validate cleanly, git fails, the plan does not report
 * exactly the change that was made, or an engine run does not end or journal as it must
 * (exit 2). `--check` also exits 1 when a target is missed.
 * `--out DIR` keeps the project (a git repository with both commits) for profiling, e.g.
 * `node --cpu-prof bin/terfyn.mjs plan --project DIR --against HEAD~1`, and the engine's run
 * directories in DIR/.terfyn-engine-bench (the 10,000-event journal is in `resume/`).
 * Profile the engine alone with `node --cpu-prof --import tsx bench/run.ts --engine-only`.
 * `--out DIR` also keeps the Action's repository and runner files in DIR/.terfyn-action-bench.
 * No GC is forced between measurements: forcing one (global.gc) was tried and made every
 * figure 40-130% slower and noisier, so the figures are the warm, steady state.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { readProjectDirectory } from "../src/adapters/fs/read-project.ts";
import { readProjectAtRevision } from "../src/adapters/git/read-revision.ts";
import { runCli as runTerfyn } from "../src/cli/main.ts";
import { analyseProject } from "../src/core/analysis/analysis.ts";
import { checkEffects } from "../src/core/analysis/check-effects.ts";
import { loadResources } from "../src/core/config/load-resources.ts";
import type { Diagnostic } from "../src/core/diagnostics.ts";
import { parseAgentFile } from "../src/core/language/parser.ts";
import { checkWorkflows } from "../src/core/model/check-workflow.ts";
import { forgetParses, resolveProject } from "../src/core/model/resolve-project.ts";
import { canonicalJson, sha256 } from "../src/core/plan/canonical-hash.ts";
import type { Plan } from "../src/core/plan/plan.ts";
import { planProject } from "../src/core/plan/plan-project.ts";
import { projectResources } from "../src/core/plan/resources.ts";
import { renderPlanText } from "../src/core/render/plan-text.ts";
import { SourceText } from "../src/core/source.ts";
import { validateProject } from "../src/core/validate.ts";
import { ActionBenchBroken, runActionBench } from "./action.ts";
import { CachingBenchBroken, runCachingBench } from "./caching.ts";
import { runEditorBench } from "./editor.ts";
import { EngineBenchBroken, runEngineBench } from "./engine.ts";
import { benchGit } from "./git-repo.ts";
import { runHostCorpusBench } from "./host-corpus.ts";
import { median } from "./median.ts";
import { runRatios } from "./ratios.ts";
import { ReviewBenchBroken, runReviewBench } from "./review.ts";
import { runSandboxBench, SandboxBenchBroken } from "./sandbox.ts";
import {
  DEFAULT_OPTIONS,
  type GeneratedFile,
  type GrantChangeSummary,
  generateGrantChange,
  type SyntheticProject,
} from "./synthetic-project.ts";
import { medianAndSpread, type Target } from "./target.ts";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const BIN = join(REPO_ROOT, "bin", "terfyn.mjs");
const EXAMPLE = join(REPO_ROOT, "examples", "implement-review-loop");
/** Marks a directory this benchmark wrote, so `--out` may safely replace it on the next run. */
const MARKER = ".terfyn-bench";
/** Below the project directory: the engine benchmark's run directories (journals). */
const ENGINE_DIR = ".terfyn-engine-bench";
/** Below the project directory: the Action benchmark's repository and runner files. */
const ACTION_DIR = ".terfyn-action-bench";

const TARGET_MS = 1000;
const TARGET_PLAN_MS = 1500;
/** The share of the project's grants the second commit changes. */
const CHANGED_GRANTS = 0.05;
const AGAINST = "HEAD~1";

class BenchBroken extends Error {}

interface Options {
  check: boolean;
  out?: string;
  reps: number;
  warmup: number;
  seed: number;
  cli: boolean;
  /** Run the validate and plan figures (off with --engine-only or --action-only). */
  validate: boolean;
  /** Run the engine figures (off with --no-engine, or --action-only alone). */
  engine: boolean;
  /** Run the Action figures (off with --no-action, or --engine-only alone). */
  action: boolean;
  /** Whole-process ratios against the honest floor (bench/ratios.ts); off with --no-ratios. */
  ratios: boolean;
  /** The review example end to end (bench/review.ts); off with --no-review or an --*-only flag. */
  review: boolean;
  /** --quick: the ratios at 2,000 agents only, 3 pairs, and one review run (a CI smoke run). */
  quick: boolean;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      check: { type: "boolean", default: false },
      out: { type: "string" },
      reps: { type: "string", default: "7" },
      warmup: { type: "string", default: "2" },
      seed: { type: "string", default: String(DEFAULT_OPTIONS.seed) },
      "no-cli": { type: "boolean", default: false },
      "engine-only": { type: "boolean", default: false },
      "no-engine": { type: "boolean", default: false },
      "action-only": { type: "boolean", default: false },
      "no-action": { type: "boolean", default: false },
      "no-ratios": { type: "boolean", default: false },
      "no-review": { type: "boolean", default: false },
      quick: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(
      "Usage: npm run bench -- [--quick] [--check] [--out DIR] [--reps N] [--warmup N] [--seed N] [--no-cli] [--engine-only] [--action-only] [--no-engine] [--no-action] [--no-ratios] [--no-review]\n",
    );
    process.exit(0);
  }
  const int = (name: string, v: string, min: number) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min)
      throw new BenchBroken(`--${name} must be an integer >= ${min}`);
    return n;
  };
  const only = values["engine-only"] || values["action-only"];
  const opts: Options = {
    check: values.check,
    reps: int("reps", values.reps, 1),
    warmup: int("warmup", values.warmup, 0),
    seed: int("seed", values.seed, 0),
    cli: !values["no-cli"],
    validate: !only && !values.quick,
    engine: (!only || values["engine-only"]) && !values["no-engine"] && !values.quick,
    action: (!only || values["action-only"]) && !values["no-action"] && !values.quick,
    ratios: (!only && !values["no-ratios"]) || values.quick,
    review: !only && !values["no-review"],
    quick: values.quick,
  };
  if (!opts.validate && !opts.engine && !opts.action && !opts.ratios && !opts.review)
    throw new BenchBroken("the --*-only and --no-* flags given leave nothing to run");
  if (values.out !== undefined) opts.out = resolve(values.out);
  return opts;
}

// ── Project on disk ───────────────────────────────────────────────────────────────────────────

async function prepareDir(opts: Options): Promise<{ dir: string; temporary: boolean }> {
  if (opts.out === undefined)
    return { dir: await mkdtemp(join(tmpdir(), "terfyn-bench-")), temporary: true };
  const dir = opts.out;
  let entries: string[] = [];
  try {
    entries = await readdir(dir);
  } catch {
    // Does not exist yet.
  }
  if (entries.length > 0) {
    if (!entries.includes(MARKER)) {
      throw new BenchBroken(
        `--out ${dir} is not empty and was not written by the benchmark; choose another directory`,
      );
    }
    await rm(dir, { recursive: true, force: true });
  }
  await mkdir(dir, { recursive: true });
  return { dir, temporary: false };
}

async function writeMarker(dir: string): Promise<void> {
  await writeFile(join(dir, MARKER), "Generated by npm run bench (bench/synthetic-project.ts).\n");
}

async function writeProject(dir: string, files: GeneratedFile[]): Promise<void> {
  for (const f of files) {
    const full = join(dir, f.path);
    await mkdir(dirname(full), { recursive: true });
    await writeFile(full, f.text);
  }
  await writeMarker(dir);
}

// ── The measured operations ───────────────────────────────────────────────────────────────────

/**
 * What `terfyn validate` does in-process: read the directory, validate the files. The parses
 * resolveProject keeps for its next call are dropped first, or every run after the first would
 * reuse them and time a cache hit.
 */
async function runValidate(root: string) {
  forgetParses();
  const read = await readProjectDirectory(root);
  const result = validateProject(read.files);
  return { read, result };
}

interface Phases {
  read: number;
  /** Standalone re-runs of what resolveProject does first, to split its time. */
  parseAgent: number;
  loadYaml: number;
  /** resolveProject as a whole: parse .agent, load YAML, bind names. */
  resolve: number;
  checkWorkflows: number;
  checkEffects: number;
}

/** The same pipeline, phase by phase (informational: where validate's time goes). */
async function runPhases(root: string): Promise<Phases> {
  forgetParses();
  let t = performance.now();
  const { files } = await readProjectDirectory(root);
  const read = performance.now() - t;
  t = performance.now();
  for (const f of files)
    if (f.path.endsWith(".agent")) parseAgentFile(new SourceText(f.path, f.text));
  const parseAgent = performance.now() - t;
  t = performance.now();
  for (const f of files) if (!f.path.endsWith(".agent")) loadResources(f.path, f.text);
  const loadYaml = performance.now() - t;
  t = performance.now();
  const { project } = resolveProject(files);
  const resolveMs = performance.now() - t;
  t = performance.now();
  checkWorkflows(project);
  const cw = performance.now() - t;
  t = performance.now();
  checkEffects(project, analyseProject(project));
  const ce = performance.now() - t;
  return { read, parseAgent, loadYaml, resolve: resolveMs, checkWorkflows: cw, checkEffects: ce };
}

async function time<T>(f: () => Promise<T>): Promise<number> {
  const t = performance.now();
  await f();
  return performance.now() - t;
}

function runCli(project: string): { ms: number; status: number | null; output: string } {
  const t = performance.now();
  const r = spawnSync(process.execPath, [BIN, "validate", "--project", project], {
    encoding: "utf8",
    cwd: REPO_ROOT,
  });
  const ms = performance.now() - t;
  return { ms, status: r.status, output: `${r.stdout ?? ""}${r.stderr ?? ""}` };
}

// ── plan --against ────────────────────────────────────────────────────────────────────────────

function git(dir: string, ...args: string[]): string {
  return benchGit((m) => new BenchBroken(m), dir, ...args);
}

/**
 * Turns the directory (holding the base project) into a repository with two commits: the base
 * project, then the changed files. `HEAD~1` is the base; the working tree is the changed project.
 */
async function commitRevisions(
  dir: string,
  changed: SyntheticProject,
  paths: readonly string[],
): Promise<{ base: string; head: string }> {
  git(dir, "init", "-q");
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "Synthetic project (base)");
  const text = new Map(changed.files.map((f) => [f.path, f.text]));
  for (const p of paths) await writeFile(join(dir, p), text.get(p) as string);
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", `Change ${CHANGED_GRANTS * 100}% of the grants`);
  return {
    base: git(dir, "rev-parse", AGAINST).trim(),
    head: git(dir, "rev-parse", "HEAD").trim(),
  };
}

function captureIo(cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: {
      stdout: (s: string) => {
        out.push(s);
      },
      stderr: (s: string) => {
        err.push(s);
      },
      cwd,
      env: {},
      isTTY: false,
    },
    stdout: () => out.join(""),
    stderr: () => err.join(""),
  };
}

/** What `terfyn plan --project DIR --against HEAD~1` does, in-process, output captured. */
async function runPlanCli(
  dir: string,
  json = false,
): Promise<{ code: number; stdout: string; stderr: string }> {
  forgetParses();
  const c = captureIo(dir);
  const argv = ["plan", "--project", dir, "--against", AGAINST, ...(json ? ["--json"] : [])];
  const code = await runTerfyn(argv, c.io);
  return { code, stdout: c.stdout(), stderr: c.stderr() };
}

interface PlanPhases {
  readCurrent: number;
  validateCurrent: number;
  gitRead: number;
  validatePrior: number;
  priorResources: number;
  /** planProject as a whole: current resources, policy violations, computePlan (with hashes). */
  plan: number;
  /** Standalone re-runs of projectResources(current) and of the plan's two digests (sha256
   * over the canonical JSON of each side's resources), to split planProject's time. */
  currentResources: number;
  digests: number;
  /** Size of the prior side's canonical JSON (not a time). */
  digestBytes: number;
  render: number;
}

/** The same path the CLI takes, phase by phase (informational: where plan's time goes). */
async function runPlanPhases(dir: string): Promise<PlanPhases> {
  forgetParses();
  let t = performance.now();
  const read = await readProjectDirectory(dir);
  const readCurrent = performance.now() - t;
  t = performance.now();
  const current = validateProject(read.files);
  const validateCurrent = performance.now() - t;
  t = performance.now();
  const rev = await readProjectAtRevision(dir, AGAINST);
  const gitRead = performance.now() - t;
  t = performance.now();
  const prior = validateProject(rev.files);
  const validatePrior = performance.now() - t;
  t = performance.now();
  const { resources } = projectResources(prior);
  const priorResources = performance.now() - t;
  t = performance.now();
  const result = planProject(
    current,
    {
      resources,
      source: { source: "git", ref: AGAINST, commit: rev.commit },
    },
    { path: "." },
  );
  const plan = performance.now() - t;
  if (!result.ok) throw new BenchBroken("the changed project cannot be planned");
  t = performance.now();
  const currentSide = projectResources(current).resources;
  const currentResources = performance.now() - t;
  t = performance.now();
  sha256(resources);
  sha256(currentSide);
  const digests = performance.now() - t;
  const digestBytes = Buffer.byteLength(canonicalJson(resources));
  t = performance.now();
  renderPlanText(result.plan, { color: false, priorName: AGAINST });
  const render = performance.now() - t;
  return {
    readCurrent,
    validateCurrent,
    gitRead,
    validatePrior,
    priorResources,
    plan,
    currentResources,
    digests,
    digestBytes,
    render,
  };
}

interface PlanCheck {
  grantChanges: number;
  added: number;
  removed: number;
  toAutonomous: number;
  toGated: number;
  agentsChanged: number;
  summary: Plan["summary"];
  authority: { autonomous: string; gated: string; agentsWidened: number; agentsNarrowed: number };
  hash: string;
  textBytes: number;
}

/** Runs the plan once as JSON and once as text and checks it reports the change that was made. */
async function checkPlan(dir: string, change: GrantChangeSummary): Promise<PlanCheck> {
  const j = await runPlanCli(dir, true);
  if (j.code !== 0)
    throw new BenchBroken(
      `terfyn plan --against ${AGAINST} --json exited ${j.code}:\n${j.stderr.slice(0, 2000)}`,
    );
  const plan = JSON.parse(j.stdout) as Plan;
  const sum = (f: (c: Plan["capability_delta"][number]) => number) =>
    plan.capability_delta.reduce((n, c) => n + f(c), 0);
  const check: PlanCheck = {
    grantChanges: sum((c) => c.added.length + c.removed.length + c.mode_changes.length),
    added: sum((c) => c.added.length),
    removed: sum((c) => c.removed.length),
    toAutonomous: sum((c) => c.mode_changes.filter((m) => m.to === "autonomous").length),
    toGated: sum((c) => c.mode_changes.filter((m) => m.to === "gated").length),
    agentsChanged: plan.capability_delta.length,
    summary: plan.summary,
    authority: {
      autonomous: plan.authority.autonomous,
      gated: plan.authority.gated,
      agentsWidened: plan.authority.agents.filter(
        (a) => a.autonomous === "WIDENED" || a.gated === "WIDENED",
      ).length,
      agentsNarrowed: plan.authority.agents.filter(
        (a) => a.autonomous !== "WIDENED" && a.gated !== "WIDENED",
      ).length,
    },
    hash: plan.hash,
    textBytes: 0,
  };
  const problems: string[] = [];
  const expect = (what: string, got: number | string, want: number | string) => {
    if (got !== want) problems.push(`${what} ${got} (expected ${want})`);
  };
  expect("grant changes in capability_delta", check.grantChanges, change.changed);
  expect("added grants", check.added, change.added);
  expect("removed grants", check.removed, change.removed);
  expect("gated -> autonomous", check.toAutonomous, change.toAutonomous);
  expect("autonomous -> gated", check.toGated, change.toGated);
  expect("agents in capability_delta", check.agentsChanged, change.agents);
  expect("authority.autonomous", check.authority.autonomous, "WIDENED");
  expect("summary.forbidden", String(plan.summary.forbidden), "false");
  if (plan.prior.source !== "git")
    problems.push(`prior.source ${plan.prior.source} (expected git)`);

  const t = await runPlanCli(dir);
  if (t.code !== 0)
    throw new BenchBroken(
      `terfyn plan --against ${AGAINST} exited ${t.code}:\n${t.stderr.slice(0, 2000)}`,
    );
  if (!t.stdout.includes("autonomous -> WIDENED"))
    problems.push("the text plan does not say `autonomous -> WIDENED`");
  if (!t.stdout.includes(plan.hash))
    problems.push("the text plan does not end with the JSON plan's hash");
  check.textBytes = Buffer.byteLength(t.stdout);
  if (problems.length > 0)
    throw new BenchBroken(`the plan does not report the change made: ${problems.join("; ")}`);
  return check;
}

function runPlanCliProcess(project: string): { ms: number; status: number | null; output: string } {
  const t = performance.now();
  const r = spawnSync(process.execPath, [BIN, "plan", "--project", project, "--against", AGAINST], {
    encoding: "utf8",
    cwd: REPO_ROOT,
    maxBuffer: 1 << 28,
  });
  const ms = performance.now() - t;
  return { ms, status: r.status, output: `${r.stdout ?? ""}${r.stderr ?? ""}` };
}

// ── Verification ──────────────────────────────────────────────────────────────────────────────

function describeDiagnostics(ds: readonly Diagnostic[], n = 10): string {
  return ds
    .slice(0, n)
    .map(
      (d) =>
        `  ${d.span.file}:${d.span.line}:${d.span.column}: ${d.severity} ${d.code}: ${d.message}`,
    )
    .join("\n");
}

async function verify(root: string, synthetic: SyntheticProject): Promise<void> {
  const { read, result } = await runValidate(root);
  const all = [...read.diagnostics, ...result.diagnostics];
  if (all.length > 0) {
    const errors = all.filter((d) => d.severity === "error").length;
    throw new BenchBroken(
      `the synthetic project does not validate cleanly (${errors} errors, ${all.length - errors} other diagnostics); first:\n${describeDiagnostics(all)}`,
    );
  }
  const p = result.project;
  const s = synthetic.stats;
  const operations = [...p.tools.values()].reduce((n, t) => n + t.operations.size, 0);
  const grants = [...p.agents.values()].reduce((n, a) => n + a.grants.length, 0);
  const mismatches = [
    ["files", read.files.length, synthetic.files.length],
    ["agents", p.agents.size, s.agents],
    ["tools", p.tools.size, s.tools],
    ["operations", operations, s.operations],
    ["grants", grants, s.grants],
    ["workflows", p.workflows.size, s.workflows],
  ].filter(([, got, want]) => got !== want);
  if (mismatches.length > 0) {
    throw new BenchBroken(
      `the validated project does not match what was generated: ${mismatches.map(([k, got, want]) => `${k} ${got} (expected ${want})`).join(", ")}`,
    );
  }
  const calls = [...p.workflows.values()].reduce((n, w) => n + w.calls.length, 0);
  if (calls !== s.agentCalls + s.workflowCalls) {
    throw new BenchBroken(
      `validated workflows hold ${calls} calls; the generator wrote ${s.agentCalls + s.workflowCalls}`,
    );
  }
}

// ── Report ────────────────────────────────────────────────────────────────────────────────────

function table(rows: [string, string][]): string {
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => (k === "" ? "" : `  ${k.padEnd(w)}  ${v}`)).join("\n");
}

const ms = (x: number) => `${x.toFixed(1)} ms`;
const kib = (x: number) => `${(x / 1024).toFixed(0)} KiB`;

interface Section {
  rows: [string, string][];
  targets: Target[];
}

/** The validate and plan figures, on the synthetic project written to `dir`. */
async function validateAndPlan(opts: Options, dir: string, temporary: boolean): Promise<Section> {
  const t = performance.now();
  const genOpts = { ...DEFAULT_OPTIONS, seed: opts.seed };
  const {
    base: synthetic,
    changed,
    change,
  } = generateGrantChange(
    genOpts,
    Math.round(genOpts.agents * genOpts.grantsPerAgent * CHANGED_GRANTS),
  );
  const genMs = performance.now() - t;
  const contentHash = (files: GeneratedFile[]) => {
    const hash = createHash("sha256");
    for (const f of files) hash.update(`${f.path}\0${f.text}\0`);
    return hash.digest("hex").slice(0, 12);
  };
  const digest = contentHash(synthetic.files);

  await writeProject(dir, synthetic.files);
  await verify(dir, synthetic);

  const agentBytes = synthetic.files
    .filter((f) => f.path.endsWith(".agent"))
    .reduce((n, f) => n + Buffer.byteLength(f.text), 0);
  const yamlBytes = synthetic.files
    .filter((f) => !f.path.endsWith(".agent"))
    .reduce((n, f) => n + Buffer.byteLength(f.text), 0);
  let diskBytes = 0;
  for (const f of synthetic.files) diskBytes += (await stat(join(dir, f.path))).size;

  // Warm-up, then measured repetitions (in-process: a warm JIT; the whole-process figures
  // against the floor are bench/ratios.ts's).
  const val: number[] = [];
  for (let i = 0; i < opts.warmup + opts.reps; i++) {
    const tv = await time(() => runValidate(dir));
    if (i >= opts.warmup) val.push(tv);
  }
  const phases: Phases[] = [];
  for (let i = 0; i < Math.max(3, Math.min(opts.reps, 5)); i++) {
    phases.push(await runPhases(dir));
  }
  const phase = (k: keyof Phases) => median(phases.map((p) => p[k]));

  let cliMs: number | undefined;
  let cliExampleMs: number | undefined;
  if (opts.cli) {
    const cli = runCli(dir);
    if (cli.status !== 0)
      throw new BenchBroken(
        `terfyn validate exited ${cli.status} on the synthetic project:\n${cli.output.slice(0, 2000)}`,
      );
    cliMs = cli.ms;
    const small = runCli(EXAMPLE);
    if (small.status === 0) cliExampleMs = small.ms;
  }

  // plan --against: the base committed, then a commit changing 5% of the grants. After the
  // validate figures, so the repository does not slow their directory walk.
  const commits = await commitRevisions(dir, changed, change.files);
  await verify(dir, changed);
  const planCheck = await checkPlan(dir, change);
  const plans: number[] = [];
  for (let i = 0; i < opts.warmup + opts.reps; i++) {
    let code = -1;
    const tp = await time(async () => {
      code = (await runPlanCli(dir)).code;
    });
    if (code !== 0) throw new BenchBroken(`terfyn plan --against ${AGAINST} exited ${code}`);
    if (i >= opts.warmup) plans.push(tp);
  }
  const planPhases: PlanPhases[] = [];
  for (let i = 0; i < Math.max(3, Math.min(opts.reps, 5)); i++) {
    planPhases.push(await runPlanPhases(dir));
  }
  const planPhase = (k: keyof PlanPhases) => median(planPhases.map((p) => p[k]));
  let planCliMs: number | undefined;
  if (opts.cli) {
    const cli = runPlanCliProcess(dir);
    if (cli.status !== 0)
      throw new BenchBroken(
        `terfyn plan --against ${AGAINST} exited ${cli.status} on the synthetic project:\n${cli.output.slice(-2000)}`,
      );
    planCliMs = cli.ms;
  }

  const valMs = median(val);
  const absOk = valMs < TARGET_MS;
  const planMs = median(plans);
  const planAbsOk = planMs < TARGET_PLAN_MS;
  const s = synthetic.stats;
  const pc = planCheck;

  const rows: [string, string][] = [
    ["project", `${dir}${temporary ? " (temporary, removed afterwards)" : ""}`],
    [
      "seed / content hash",
      `${opts.seed} / ${digest}  (generated with its changed twin in ${ms(genMs)})`,
    ],
    [
      "files",
      `${synthetic.files.length} (${synthetic.files.filter((f) => f.path.endsWith(".agent")).length} .agent, ${synthetic.files.filter((f) => !f.path.endsWith(".agent")).length} YAML)`,
    ],
    [
      "bytes",
      `${diskBytes} (${kib(diskBytes)}: .agent ${kib(agentBytes)}, YAML ${kib(yamlBytes)})`,
    ],
    ["agents", String(s.agents)],
    ["tools / operations", `${s.tools} / ${s.operations}`],
    ["grants", `${s.grants} (${s.gatedGrants} requires approval)`],
    [
      "workflows",
      `${s.workflows} (${s.agentCalls} agent calls, ${s.workflowCalls} workflow calls, ${s.loops} loops)`,
    ],
    ["schemas", String(s.schemas)],
    ["", ""],
    ["repetitions", `${opts.reps} measured after ${opts.warmup} warm-up (median)`],
    [
      "validate",
      `${ms(valMs)}  (readProjectDirectory + validateProject; min ${ms(Math.min(...val))}, max ${ms(Math.max(...val))})`,
    ],
    ["  phase: readProjectDirectory", ms(phase("read"))],
    ["  phase: resolveProject", `${ms(phase("resolve"))}, of which:`],
    ["    parse .agent (lex+parse)", ms(phase("parseAgent"))],
    ["    load YAML (yaml+zod)", ms(phase("loadYaml"))],
    [
      "    bind names (the rest)",
      ms(Math.max(0, phase("resolve") - phase("parseAgent") - phase("loadYaml"))),
    ],
    ["  phase: checkWorkflows", ms(phase("checkWorkflows"))],
    ["  phase: checkEffects", ms(phase("checkEffects"))],
    [
      "CLI wall (end to end)",
      cliMs === undefined
        ? "skipped (--no-cli)"
        : `${ms(cliMs)}  (node bin/terfyn.mjs validate, incl. process start-up${cliExampleMs === undefined ? "" : `; ${ms(cliExampleMs)} on the small example`})`,
    ],
    ["", ""],
    [
      "plan: revisions",
      `${AGAINST} = ${commits.base.slice(0, 12)} (base), working tree = HEAD ${commits.head.slice(0, 12)} (content hash ${contentHash(changed.files)})`,
    ],
    [
      "  the change",
      `${change.changed} of ${s.grants} grants (${((change.changed / s.grants) * 100).toFixed(1)}%) on ${change.agents} agents: ${change.added} added, ${change.removed} removed, ${change.toAutonomous} gated -> autonomous, ${change.toGated} autonomous -> gated; ${change.workflowsWithNewEffects} workflows' effects follow; ${change.files.length} files differ`,
    ],
    [
      "  the plan",
      `${pc.grantChanges} grant changes in capability_delta (${pc.added} added, ${pc.removed} removed, ${pc.toAutonomous} -> autonomous, ${pc.toGated} -> gated); ${pc.summary.change} resources to update; authority autonomous ${pc.authority.autonomous}, gated ${pc.authority.gated} (${pc.authority.agentsWidened} agents widened, ${pc.authority.agentsNarrowed} only narrowed); text ${kib(pc.textBytes)}, ${pc.hash.slice(0, 19)}`,
    ],
    [
      "plan --against",
      `${ms(planMs)}  (runCli plan --project DIR --against ${AGAINST}, in-process; min ${ms(Math.min(...plans))}, max ${ms(Math.max(...plans))})`,
    ],
    ["  plan / validate (in-process)", `${(planMs / valMs).toFixed(2)}x`],
    ["  phase: read current (fs)", ms(planPhase("readCurrent"))],
    ["  phase: validate current", ms(planPhase("validateCurrent"))],
    ["  phase: git read prior", `${ms(planPhase("gitRead"))}  (readProjectAtRevision)`],
    ["  phase: validate prior", ms(planPhase("validatePrior"))],
    ["  phase: prior resources", `${ms(planPhase("priorResources"))}  (projectResources)`],
    ["  phase: plan compute", `${ms(planPhase("plan"))}  (planProject), of which:`],
    ["    current resources", `${ms(planPhase("currentResources"))}  (projectResources)`],
    [
      "    digests prior + current",
      `${ms(planPhase("digests"))}  (sha256 of canonical JSON, ~${kib(planPhase("digestBytes"))} each)`,
    ],
    [
      "    policy, diff, plan hash (rest)",
      ms(Math.max(0, planPhase("plan") - planPhase("currentResources") - planPhase("digests"))),
    ],
    ["  phase: render text", `${ms(planPhase("render"))}  (renderPlanText)`],
    [
      "plan CLI wall (end to end)",
      planCliMs === undefined
        ? "skipped (--no-cli)"
        : `${ms(planCliMs)}  (node bin/terfyn.mjs plan --against ${AGAINST}, incl. process start-up)`,
    ],
  ];
  return {
    rows,
    // Absolute in-process figures; the ratios are the whole-process ones against the floor
    // (bench/ratios.ts).
    targets: [
      [
        `validate < ${TARGET_MS} ms (in-process)`,
        absOk,
        `${(valMs / TARGET_MS).toFixed(2)}x the target: ${medianAndSpread(valMs, Math.min(...val), Math.max(...val), val.length)}`,
      ],
      [
        `plan --against < ${TARGET_PLAN_MS} ms (in-process)`,
        planAbsOk,
        `${(planMs / TARGET_PLAN_MS).toFixed(2)}x the target: ${medianAndSpread(planMs, Math.min(...plans), Math.max(...plans), plans.length)}`,
      ],
    ],
  };
}

async function main(): Promise<number> {
  const opts = parseOptions(process.argv.slice(2));
  const { dir, temporary } = await prepareDir(opts);
  try {
    const sections: Section[] = [];
    if (opts.ratios) {
      const r = await runRatios({ quick: opts.quick });
      sections.push({
        rows: [["whole processes against the floor", "(bench/ratios.ts)"], ...r.rows],
        targets: r.targets,
      });
    }
    if (opts.validate) sections.push(await validateAndPlan(opts, dir, temporary));
    // The host corpus takes a second or two: --quick (CI) runs it too.
    if (opts.validate || opts.quick) {
      const h = runHostCorpusBench();
      sections.push({
        rows: [["host configurations: the settings corpus", "(bench/host-corpus.ts)"], ...h.rows],
        targets: h.targets,
      });
    }
    // The language server's edit-to-diagnostics time on the same 2,000 agents.
    if (opts.validate) {
      const e = runEditorBench(opts.quick ? 3 : 7);
      sections.push({
        rows: [["editor: the language server", "(bench/editor.ts)"], ...e.rows],
        targets: e.targets,
      });
    }
    if (opts.engine) {
      if (!temporary) await writeMarker(dir);
      sections.push(
        await runEngineBench({
          reps: opts.reps,
          warmup: opts.warmup,
          dir: join(dir, ENGINE_DIR),
          keep: !temporary,
        }),
      );
    }
    if (opts.action) {
      if (!temporary) await writeMarker(dir);
      sections.push(
        await runActionBench({
          reps: opts.reps,
          warmup: opts.warmup,
          dir: join(dir, ACTION_DIR),
          keep: !temporary,
        }),
      );
    }
    if (opts.review) {
      const s = await runSandboxBench({ reps: opts.quick ? 15 : 51 });
      sections.push({
        rows: [["the sandbox's cost per command", "(bench/sandbox.ts)"], ...s.rows],
        targets: s.targets,
      });
      const r = await runReviewBench({ quick: opts.quick, reps: opts.quick ? 1 : 3 });
      sections.push({
        rows: [["review example end to end", "(bench/review.ts)"], ...r.rows],
        targets: r.targets,
      });
      const c = await runCachingBench();
      sections.push({
        rows: [
          ["prompt caching on a recorded transcript", "(bench/caching.ts)"],
          ...(c.rows as [string, string][]),
        ],
        targets: c.targets,
      });
    }
    const rows: [string, string][] = [];
    for (const s of sections) rows.push(...s.rows, ["", ""]);
    const targets = sections.flatMap((s) => s.targets);
    for (const [name, ok, measure] of targets)
      rows.push([name, `${ok ? "PASS" : "FAIL"}${measure === undefined ? "" : `  ${measure}`}`]);
    const title = [
      opts.ratios ? "ratios against the floor" : "",
      opts.validate ? "validate and plan" : "",
      opts.engine ? "engine" : "",
      opts.action ? "GitHub Action" : "",
      opts.review ? "review example" : "",
    ]
      .filter((x) => x !== "")
      .join(", ");
    process.stdout.write(`Terfyn benchmark: ${title}\n\n${table(rows)}\n`);
    if (opts.check && targets.some(([, ok]) => !ok)) {
      process.stdout.write("\n--check: a target failed\n");
      return 1;
    }
    return 0;
  } finally {
    if (temporary) await rm(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    if (
      e instanceof BenchBroken ||
      e instanceof EngineBenchBroken ||
      e instanceof ActionBenchBroken ||
      e instanceof ReviewBenchBroken ||
      e instanceof CachingBenchBroken ||
      e instanceof SandboxBenchBroken
    )
      process.stderr.write(`bench: ${e.message}\n`);
    else
      process.stderr.write(
        `bench: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`,
      );
    process.exitCode = 2;
  },
);
