/**
 * Whole-process ratios against an honest floor, measured in the same run:
 *
 * - `node dist/cli.js validate|test --project P` against `node floor.mjs P` (the floor reads the
 *   same bytes, parses the YAML with the same library and options, and tokenises the `.agent`
 *   files with Terfyn's lexer: the cost every correct tool pays);
 * - `node dist/cli.js plan --project P --against HEAD~1` against `node floor.mjs P --against
 *   HEAD~1` (both sides read and parsed);
 * - peak RSS of `plan --against` against the floor's, at the largest size.
 *
 * Each pair runs A B A B (alternated, so drift hits both), a warm-up pair first, and the median
 * of the pairs' ratios is reported with the spread, for wall time and for CPU time (user +
 * system, read by a preload in the child, so machine load that steals no CPU from the child
 * does not count). Sizes 500 / 2,000 / 8,000 agents, one file per agent and 100 agents per
 * file; the growth exponent is fitted over the sizes (1.0 is linear). `--quick` measures only
 * 2,000 agents, 100 per file, with 3 pairs: a CI smoke run of well under a minute. At 2,000
 * agents, 100 per file, validate is also measured with `TERFYN_V8_DEFAULTS=1` (V8's own
 * settings instead of the CLI's, src/cli/v8-tuning.ts), as a row beside the target's.
 *
 *   npx tsx bench/ratios.ts [--quick] [--pairs N] [--check] [--sizes 8000] [--layouts 100]
 *
 * `--sizes` and `--layouts` (comma-separated) measure only those, e.g. the peak-RSS target at
 * 8,000 agents alone: `npx tsx bench/ratios.ts --sizes 8000 --layouts 100 --pairs 3`.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { BUNDLE_ALIASES } from "../scripts/bundle-aliases.ts";
import { cliTarget } from "../scripts/node-targets.ts";
import { benchGit } from "./git-repo.ts";
import { median } from "./median.ts";
import {
  generateGrantChange,
  type SyntheticOptions,
  writeGeneratedFiles,
} from "./synthetic-project.ts";
import { type Target, targetLines } from "./target.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const CLI = join(ROOT, "dist", "cli.js");

export const TARGETS = { validate: 1.5, test: 1.5, plan: 2.5, planRss: 3 };

interface Sample {
  wall: number;
  cpu: number;
  rssKiB: number;
}

const CPU_PRELOAD = `
import { writeFileSync } from "node:fs";
process.on("exit", () => {
  const u = process.resourceUsage();
  writeFileSync(process.env.TERFYN_BENCH_USAGE, JSON.stringify({ cpu: (u.userCPUTime + u.systemCPUTime) / 1000, rss: u.maxRSS }));
});
`;

function runOnce(
  args: string[],
  work: string,
  expectStatus: number[],
  env: Record<string, string> = {},
): Sample {
  const usage = join(work, "usage.json");
  rmSync(usage, { force: true });
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, ["--import", join(work, "usage.mjs"), ...args], {
    encoding: "utf8",
    env: { ...process.env, ...env, TERFYN_BENCH_USAGE: usage, NO_COLOR: "1" },
    maxBuffer: 256 * 1024 * 1024,
  });
  const wall = Number(process.hrtime.bigint() - start) / 1e6;
  if (!expectStatus.includes(r.status ?? -1))
    throw new Error(
      `${args.join(" ")} exited ${r.status}: ${(r.stderr || r.stdout).slice(0, 400)}`,
    );
  const u = JSON.parse(readFileSync(usage, "utf8")) as { cpu: number; rss: number };
  return { wall, cpu: u.cpu, rssKiB: u.rss };
}

export interface PairResult {
  a: Sample[];
  b: Sample[];
  wallRatio: number;
  cpuRatio: number;
  spread: [number, number];
  rssRatio: number;
  rssSpread: [number, number];
}

/** A B A B …: a warm-up pair, then `pairs` measured pairs; ratios are per pair, then the median. */
function pairs(a: () => Sample, b: () => Sample, n: number): PairResult {
  a();
  b();
  const as: Sample[] = [];
  const bs: Sample[] = [];
  const wall: number[] = [];
  const cpu: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < n; i++) {
    const x = a();
    const y = b();
    as.push(x);
    bs.push(y);
    wall.push(x.wall / y.wall);
    cpu.push(x.cpu / y.cpu);
    rss.push(x.rssKiB / y.rssKiB);
  }
  return {
    a: as,
    b: bs,
    wallRatio: median(wall),
    cpuRatio: median(cpu),
    spread: [Math.min(...cpu), Math.max(...cpu)],
    rssRatio: median(as.map((s) => s.rssKiB)) / median(bs.map((s) => s.rssKiB)),
    rssSpread: [Math.min(...rss), Math.max(...rss)],
  };
}

function project(work: string, agents: number, perFile: number): string {
  const opts: SyntheticOptions = {
    seed: 20240601,
    agents,
    tools: Math.max(20, Math.round(agents / 20)),
    operationsPerTool: 10,
    grantsPerAgent: 5,
    workflows: Math.max(10, Math.round(agents / 10)),
    agentFiles: Math.max(1, Math.round(agents / perFile)),
    toolFiles: 10,
  };
  const { base, changed } = generateGrantChange(opts, Math.max(1, Math.round(agents / 20)));
  const dir = join(work, `p-${agents}-${perFile}`);
  const fail = (m: string) => new Error(m);
  writeGeneratedFiles(dir, base.files);
  benchGit(fail, dir, "init", "-q", "-b", "main");
  benchGit(fail, dir, "add", "-A");
  benchGit(fail, dir, "commit", "-qm", "base");
  // The second commit is exactly the changed project: the base's files go, the changed ones come.
  for (const f of base.files) rmSync(join(dir, f.path), { force: true });
  writeGeneratedFiles(dir, changed.files);
  benchGit(fail, dir, "add", "-A");
  benchGit(fail, dir, "commit", "-qm", "change 5% of grants");
  return dir;
}

function growthExponent(points: readonly [number, number][]): number {
  // Least squares of log t over log n: the exponent of t ∝ n^k.
  const xs = points.map(([n]) => Math.log(n));
  const ys = points.map(([, t]) => Math.log(t));
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  for (let i = 0; i < xs.length; i++) {
    num += ((xs[i] as number) - mx) * ((ys[i] as number) - my);
    den += ((xs[i] as number) - mx) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}

export async function runRatios(options: {
  quick: boolean;
  pairs?: number;
  /** Only these sizes and layouts (agents per file), for a targeted run. */
  sizes?: number[];
  layouts?: number[];
}): Promise<{
  rows: [string, string][];
  targets: Target[];
}> {
  const work = mkdtempSync(join(tmpdir(), "terfyn-ratios-"));
  try {
    writeFileSync(join(work, "usage.mjs"), CPU_PRELOAD);
    const floor = join(work, "floor.mjs");
    await build({
      entryPoints: [join(ROOT, "bench", "floor.ts")],
      bundle: true,
      platform: "node",
      format: "esm",
      target: cliTarget(ROOT),
      outfile: floor,
      logLevel: "silent",
      // The floor validates as the CLI does, host configurations included: the same aliases.
      alias: BUNDLE_ALIASES,
      banner: {
        js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
      },
    });
    const n = options.pairs ?? (options.quick ? 3 : 7);
    const sizes = options.sizes ?? (options.quick ? [2000] : [500, 2000, 8000]);
    const layouts = options.layouts ?? (options.quick ? [100] : [1, 100]);
    const rows: [string, string][] = [];
    const targets: Target[] = [];
    const growth = new Map<string, [number, number][]>();
    const measure = (r: PairResult) =>
      `${r.cpuRatio.toFixed(2)}x: median of ${r.a.length} pairs' CPU ratios (spread ${r.spread[0].toFixed(2)}–${r.spread[1].toFixed(2)}); CLI median ${median(r.a.map((s) => s.cpu)).toFixed(0)} ms, floor ${median(r.b.map((s) => s.cpu)).toFixed(0)} ms`;
    const fmt = (r: PairResult) =>
      `${r.cpuRatio.toFixed(2)}x CPU (spread ${r.spread[0].toFixed(2)}–${r.spread[1].toFixed(2)}), ${r.wallRatio.toFixed(2)}x wall; CLI ${median(r.a.map((s) => s.cpu)).toFixed(0)} ms CPU, floor ${median(r.b.map((s) => s.cpu)).toFixed(0)} ms`;
    for (const perFile of layouts) {
      for (const agents of sizes) {
        const dir = project(work, agents, perFile);
        const label = `${agents} agents, ${perFile === 1 ? "one file per agent" : `${perFile} per file`}`;
        const fl = () => runOnce([floor, dir], work, [0]);
        const flAgainst = () => runOnce([floor, dir, "--against", "HEAD~1"], work, [0]);
        const validate = pairs(
          () => runOnce([CLI, "validate", "--project", dir], work, [0]),
          fl,
          n,
        );
        const test = pairs(() => runOnce([CLI, "test", "--project", dir], work, [0, 1]), fl, n);
        const plan = pairs(
          () => runOnce([CLI, "plan", "--project", dir, "--against", "HEAD~1"], work, [0, 1, 2]),
          flAgainst,
          n,
        );
        // The CLI sets V8 up for its short runs (src/cli/v8-tuning.ts); the same measure with
        // V8's defaults shows what the settings are worth, beside the code's own share.
        const defaults =
          agents === 2000 && perFile === 100
            ? pairs(
                () =>
                  runOnce([CLI, "validate", "--project", dir], work, [0], {
                    TERFYN_V8_DEFAULTS: "1",
                  }),
                fl,
                n,
              )
            : undefined;
        rows.push([`validate / floor (${label})`, fmt(validate)]);
        if (defaults) rows.push([`validate with V8's defaults / floor (${label})`, fmt(defaults)]);
        rows.push(
          [`test / floor (${label})`, fmt(test)],
          [`plan --against / floor (${label})`, fmt(plan)],
        );
        for (const [k, r] of [
          ["validate", validate],
          ["plan", plan],
        ] as const) {
          const key = `${k} ${perFile}`;
          growth.set(key, [...(growth.get(key) ?? []), [agents, median(r.a.map((s) => s.cpu))]]);
        }
        if (agents === 2000 && perFile === 100) {
          targets.push(
            [
              `validate CLI <= ${TARGETS.validate}x floor (CPU, 2,000 agents)`,
              validate.cpuRatio <= TARGETS.validate,
              measure(validate),
            ],
            [
              `test CLI <= ${TARGETS.test}x floor (CPU, 2,000 agents)`,
              test.cpuRatio <= TARGETS.test,
              measure(test),
            ],
            [
              `plan --against <= ${TARGETS.plan}x floor (CPU, 2,000 agents)`,
              plan.cpuRatio <= TARGETS.plan,
              measure(plan),
            ],
          );
        }
        if (agents === Math.max(...sizes) && perFile === 100) {
          rows.push([
            `peak RSS plan --against (${label})`,
            `${(median(plan.a.map((s) => s.rssKiB)) / 1024).toFixed(0)} MiB, floor ${(median(plan.b.map((s) => s.rssKiB)) / 1024).toFixed(0)} MiB: ${plan.rssRatio.toFixed(2)}x`,
          ]);
          if (agents === 8000)
            targets.push([
              `plan --against peak RSS <= ${TARGETS.planRss}x floor (8,000 agents)`,
              plan.rssRatio <= TARGETS.planRss,
              `${plan.rssRatio.toFixed(2)}x: median CLI ${(median(plan.a.map((s) => s.rssKiB)) / 1024).toFixed(0)} MiB over median floor ${(median(plan.b.map((s) => s.rssKiB)) / 1024).toFixed(0)} MiB (pairs' ratios ${plan.rssSpread[0].toFixed(2)}–${plan.rssSpread[1].toFixed(2)})`,
            ]);
        }
      }
    }
    for (const [key, points] of growth)
      if (points.length > 1)
        rows.push([
          `growth of ${key.split(" ")[0]} CPU, ${key.endsWith(" 1") ? "one file per agent" : "100 per file"}`,
          `n^${growthExponent(points).toFixed(2)} over ${points.map(([a]) => a).join(" / ")} agents`,
        ]);
    return { rows, targets };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean" },
      pairs: { type: "string" },
      check: { type: "boolean" },
      sizes: { type: "string" },
      layouts: { type: "string" },
    },
  });
  const list = (v: string | undefined) => (v === undefined ? undefined : v.split(",").map(Number));
  const sizes = list(values.sizes);
  const layouts = list(values.layouts);
  const r = await runRatios({
    quick: values.quick === true,
    ...(sizes ? { sizes } : {}),
    ...(layouts ? { layouts } : {}),
    ...(values.pairs ? { pairs: Number(values.pairs) } : {}),
  });
  const width = Math.max(...r.rows.map(([k]) => k.length), ...r.targets.map(([k]) => k.length));
  for (const [k, v] of r.rows) process.stdout.write(`  ${k.padEnd(width)}  ${v}\n`);
  process.stdout.write("\n");
  for (const line of targetLines(r.targets, width)) process.stdout.write(`${line}\n`);
  if (values.check && r.targets.some(([, ok]) => !ok)) process.exitCode = 1;
}
