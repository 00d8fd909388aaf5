/**
 * The review section of `npm run bench`: the review-fix example (examples/review-fix) end to end
 * as a user runs it, each step a whole process: `terfyn review` to the plan gate, `terfyn
 * approve`, `terfyn review --resume` to the publish gate, `terfyn approve`, `terfyn review
 * --resume` to done. The CLI is bundled from the sources first (as `npm run build` does, into
 * node_modules/.cache), so the figures are of the code as it is, not of a stale dist/.
 *
 * Reported: the total wall time of the five processes; the time spent in the repository's own
 * commands (the sum of the durations of the AGENTS.md commands the run starts: test, single
 * test, lint, … and the test command of the agents' `run_tests` calls); their ratio (target <=
 * 2x: the run costs at most as much again as the commands it runs); and the child processes by
 * kind, per step: git by subcommand, and the commands. Both come from TERFYN_BENCH_SPAWN_LOG
 * (src/adapters/spawn-log.ts), which the branch writer, the repository-command runner and the
 * workspace tool append to only when it is set.
 * When `strace` is installed (and not with --quick), one more run under `strace -f -e
 * trace=execve` counts every process started, the tests' own node processes included, and the
 * exec attempts of PATH lookups that found nothing.
 *
 *   npx tsx bench/review.ts [--quick] [--reps N] [--check] [--no-strace]
 *
 * `--quick` is one run (a few seconds), for the one-minute quick mode of `npm run bench`.
 */

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { BUNDLE_ALIASES } from "../scripts/bundle-aliases.ts";
import { cliTarget } from "../scripts/node-targets.ts";
import type { SpawnRecord } from "../src/adapters/spawn-log.ts";
import { median } from "./median.ts";
import { type Target, targetLines } from "./target.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const EXAMPLE = join(ROOT, "examples", "review-fix");
export const TARGET_RATIO = 2;

export class ReviewBenchBroken extends Error {}

interface Step {
  name: string;
  ms: number;
  records: SpawnRecord[];
}

interface Run {
  steps: Step[];
  wallMs: number;
  commandMs: number;
}

/** The CLI bundled from the sources (code splitting, as dist/ is), below node_modules/.cache. */
async function bundleCli(): Promise<{ cli: string; dir: string }> {
  // Inside the repository, so the CLI finds agents/review-response above it as dist/ does.
  const cache = join(ROOT, "node_modules", ".cache");
  const dir = mkdtempSync(join(existsSync(cache) ? cache : join(ROOT, "node_modules"), "rb-"));
  await build({
    entryPoints: [{ in: join(ROOT, "src", "cli", "bin.ts"), out: "cli" }],
    bundle: true,
    platform: "node",
    format: "esm",
    target: cliTarget(ROOT),
    minify: true,
    splitting: true,
    outdir: dir,
    entryNames: "[name]",
    chunkNames: "chunks/[name]-[hash]",
    logLevel: "silent",
    alias: BUNDLE_ALIASES,
    banner: {
      js: "import{createRequire as __terfynCreateRequire}from'node:module';import{fileURLToPath as __terfynPath}from'node:url';const require=__terfynCreateRequire(import.meta.url);const __filename=__terfynPath(import.meta.url);const __dirname=__terfynPath(new URL('.',import.meta.url));",
    },
  });
  return { cli: join(dir, "cli.js"), dir };
}

function readLog(file: string): SpawnRecord[] {
  if (!existsSync(file)) return [];
  const lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
  rmSync(file);
  return lines.map((l) => JSON.parse(l) as SpawnRecord);
}

function buildExample(work: string): { repo: string; request: string } {
  const r = spawnSync(process.execPath, [join(EXAMPLE, "build-repo.mjs"), join(work, "repo")], {
    encoding: "utf8",
  });
  if (r.status !== 0) throw new ReviewBenchBroken(`build-repo.mjs failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as { repo: string; request: string };
}

/** The example end to end; `wrap` runs each terfyn process under another program (strace). */
function runExample(cli: string, wrap: (step: number) => string[] = () => []): Run {
  const work = mkdtempSync(join(tmpdir(), "terfyn-review-bench-"));
  try {
    const { repo, request } = buildExample(work);
    const runDir = join(work, "run");
    const log = join(work, "spawns.jsonl");
    const steps: Step[] = [];
    const terfyn = (name: string, args: string[], expect: number) => {
      const [cmd, ...pre] = [...wrap(steps.length), process.execPath];
      const start = performance.now();
      const r = spawnSync(cmd as string, [...pre, cli, ...args], {
        cwd: repo,
        encoding: "utf8",
        env: { ...process.env, TERFYN_BENCH_SPAWN_LOG: log, NO_COLOR: "1" },
      });
      const ms = performance.now() - start;
      if (r.status !== expect)
        throw new ReviewBenchBroken(
          `terfyn ${args.join(" ")} exited ${r.status}, not ${expect}:\n${(r.stderr || r.stdout).slice(0, 1500)}`,
        );
      steps.push({ name, ms, records: readLog(log) });
    };
    const approve = (name: string) => {
      const state = JSON.parse(readFileSync(join(runDir, "state.json"), "utf8")) as {
        awaiting?: { hash?: string };
      };
      if (!state.awaiting?.hash) throw new ReviewBenchBroken(`${name}: the run awaits nothing`);
      terfyn(name, ["approve", "--run", runDir, "--hash", state.awaiting.hash], 0);
    };
    const script = join(EXAMPLE, "model-script.yaml");
    terfyn(
      "review (to the plan gate)",
      [
        "review",
        "--repo",
        repo,
        "--request",
        request,
        "--run-dir",
        runDir,
        "--model-script",
        script,
      ],
      2,
    );
    approve("approve plan");
    terfyn("review --resume (to the publish gate)", ["review", "--resume", runDir], 2);
    approve("approve publish");
    terfyn("review --resume (to done)", ["review", "--resume", runDir], 0);
    const state = JSON.parse(readFileSync(join(runDir, "state.json"), "utf8")) as {
      terminal?: string;
    };
    if (state.terminal !== "done")
      throw new ReviewBenchBroken(`the example ended ${state.terminal}, not done`);
    const all = steps.flatMap((s) => s.records);
    return {
      steps,
      wallMs: steps.reduce((n, s) => n + s.ms, 0),
      commandMs: all.filter((r) => r.kind !== "git").reduce((n, r) => n + r.ms, 0),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** `git rev-parse ×10, git diff ×4, …`: counts by kind, most first. */
function countsByKind(records: readonly SpawnRecord[]): string {
  const counts = new Map<string, number>();
  for (const r of records) {
    const key =
      r.kind === "git"
        ? `git ${r.what}`
        : `${r.kind === "agent-test" ? "run_tests " : ""}\`${r.what}\``;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([k, n]) => `${k} x${n}`)
    .join(", ");
}

function spawnSummary(records: readonly SpawnRecord[]): string {
  const of = (kind: SpawnRecord["kind"], name: string) => {
    const rs = records.filter((r) => r.kind === kind);
    return `${rs.length} ${name} ${rs.reduce((n, r) => n + r.ms, 0).toFixed(0)} ms`;
  };
  return `${records.length} (${of("git", "git")}, ${of("repo-command", "repository commands")}, ${of("agent-test", "agents' run_tests")})`;
}

/** One exec line of `strace -f -e trace=execve`: the program and its argv, when it succeeded. */
const EXEC = /^\d+\s+execve\("([^"]*)", \[(.*)\], .*\) = (-?\d+)/;

/** What a successful exec was: `git <subcommand>`, `sh -c`, `node`, … */
function execKind(program: string, argv: string): string {
  const args = [...argv.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1] as string);
  const name = basename(program);
  if (name !== "git") return name === "sh" ? "sh -c (repository command)" : name;
  // After the -c pairs of the hardening: the subcommand.
  for (let i = 1; i < args.length; i++) {
    if (args[i] === "-c") i++;
    else return `git ${args[i]}`;
  }
  return "git";
}

/**
 * Every process the example starts (strace -f, one output file per step): the processes, by
 * kind, and the exec attempts that failed (PATH lookups), which start no process.
 */
function straceRows(cli: string): [string, string][] | undefined {
  if (spawnSync("strace", ["-V"]).status !== 0) return undefined;
  const dir = mkdtempSync(join(tmpdir(), "terfyn-review-bench-strace-"));
  try {
    const run = runExample(cli, (i) => [
      "strace",
      "-f",
      "-qq",
      "-e",
      "trace=execve",
      "-o",
      join(dir, `step-${i}.txt`),
    ]);
    return run.steps.map((s, i): [string, string] => {
      const counts = new Map<string, number>();
      let failed = 0;
      let started = -1; // the terfyn process itself is not a child
      for (const line of readFileSync(join(dir, `step-${i}.txt`), "utf8").split("\n")) {
        const m = line.match(EXEC);
        if (!m) continue;
        if (m[3] !== "0") {
          failed++;
          continue;
        }
        started++;
        if (started === 0) continue;
        const k = execKind(m[1] as string, m[2] as string);
        counts.set(k, (counts.get(k) ?? 0) + 1);
      }
      const byKind = [...counts]
        .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
        .map(([k, n]) => `${k} x${n}`)
        .join(", ");
      return [
        `  strace: ${s.name}`,
        `${started} processes${byKind ? ` (${byKind})` : ""}; ${failed} failed exec attempts`,
      ];
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runReviewBench(options: {
  quick: boolean;
  reps?: number;
  strace?: boolean;
}): Promise<{ rows: [string, string][]; targets: Target[] }> {
  const { cli, dir } = await bundleCli();
  try {
    const reps = options.reps ?? (options.quick ? 1 : 3);
    const runs: Run[] = [];
    for (let i = 0; i < reps; i++) runs.push(runExample(cli));
    const ratios = runs.map((r) => r.wallMs / r.commandMs);
    const ratio = median(ratios);
    const wall = median(runs.map((r) => r.wallMs));
    const commands = median(runs.map((r) => r.commandMs));
    const first = runs[0] as Run;
    const rows: [string, string][] = [
      [
        "example end to end (5 processes)",
        `${wall.toFixed(0)} ms wall (median of ${reps}; ${runs.map((r) => r.wallMs.toFixed(0)).join(", ")})`,
      ],
      ["  in the repository's own commands", `${commands.toFixed(0)} ms (sum of their durations)`],
      ...first.steps.map((s): [string, string] => [
        `  ${s.name}`,
        `${s.ms.toFixed(0)} ms; spawns ${spawnSummary(s.records)}${s.records.length > 0 ? `: ${countsByKind(s.records)}` : ""}`,
      ]),
      ["  spawns, all steps", spawnSummary(first.steps.flatMap((s) => s.records))],
    ];
    if (options.strace !== false && !options.quick) {
      const counted = straceRows(cli);
      if (counted) rows.push(["every process started (strace -f, one more run)", ""], ...counted);
    }
    const targets: Target[] = [
      [
        `review example end to end <= ${TARGET_RATIO}x its own commands (wall)`,
        ratio <= TARGET_RATIO,
        `${ratio.toFixed(2)}x: median of ${reps} runs' ratios (spread ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}); ${wall.toFixed(0)} ms over ${commands.toFixed(0)} ms`,
      ],
    ];
    return { rows, targets };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean" },
      reps: { type: "string" },
      check: { type: "boolean" },
      "no-strace": { type: "boolean" },
    },
  });
  const r = await runReviewBench({
    quick: values.quick === true,
    strace: values["no-strace"] !== true,
    ...(values.reps ? { reps: Number(values.reps) } : {}),
  });
  const width = Math.max(...r.rows.map(([k]) => k.length), ...r.targets.map(([k]) => k.length));
  for (const [k, v] of r.rows) process.stdout.write(`  ${k.padEnd(width)}  ${v}\n`);
  process.stdout.write("\n");
  for (const line of targetLines(r.targets, width)) process.stdout.write(`${line}\n`);
  if (values.check && r.targets.some(([, ok]) => !ok)) process.exitCode = 1;
}
