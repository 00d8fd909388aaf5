/**
 * The host-configuration section of `npm run bench`: Terfyn's own corpus of host configuration
 * changes (__tests__/fixtures/hosts/claude-corpus.yaml for Claude Code's settings,
 * other-hosts-corpus.yaml for Codex, claude-code-action and gh-aw; labelled by the hosts'
 * documented semantics) planned as `terfyn plan` plans them. Reported: widening recall (labelled widenings
 * found as widenings; target 100%), false widenings (changes called widened that the label says
 * are not; target 0), agreement on every label, and the time to read and plan one file.
 *
 *   npx tsx bench/host-corpus.ts [--check]
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { planHosts } from "../src/core/hosts/hosts.ts";
import { type Target, targetLines } from "./target.ts";

const CORPORA = ["claude-corpus.yaml", "other-hosts-corpus.yaml"].map((f) =>
  join(import.meta.dirname, "..", "__tests__", "fixtures", "hosts", f),
);

export interface CorpusCase {
  name: string;
  /** The path the change is made at (default `.claude/settings.json`). */
  file?: string;
  base: string;
  head: string;
  expect: string[];
}

export function corpusCases(): CorpusCase[] {
  return CORPORA.flatMap(
    (p) => (parseYaml(readFileSync(p, "utf8")) as { cases: CorpusCase[] }).cases,
  );
}

/** The plan's changes as the labels write them: `<direction> <change> <list rule | key>`. */
export function describeChanges(c: CorpusCase): string[] {
  const path = c.file ?? ".claude/settings.json";
  const side = (text: string) => (text === "" ? [] : [{ path, text }]);
  return planHosts(side(c.base), side(c.head)).flatMap((plan) =>
    plan.changes.map(
      (x) => `${x.direction} ${x.change} ${x.rule !== undefined ? `${x.list} ${x.rule}` : x.key}`,
    ),
  );
}

export function runHostCorpusBench(): { rows: [string, string][]; targets: Target[] } {
  const cases = corpusCases();
  let labelledWidened = 0;
  let found = 0;
  let falseWidened = 0;
  let agreeing = 0;
  const started = process.hrtime.bigint();
  for (const c of cases) {
    const got = describeChanges(c);
    const widened = (xs: readonly string[]) => xs.filter((x) => x.startsWith("widened "));
    labelledWidened += widened(c.expect).length;
    found += widened(c.expect).filter((x) => got.includes(x)).length;
    falseWidened += widened(got).filter((x) => !c.expect.includes(x)).length;
    if (JSON.stringify([...got].sort()) === JSON.stringify([...c.expect].sort())) agreeing++;
  }
  const perFile = Number(process.hrtime.bigint() - started) / 1e6 / Math.max(1, cases.length * 2);
  const recall = found / Math.max(1, labelledWidened);
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  return {
    rows: [
      ["cases (host configuration changes)", String(cases.length)],
      ["widenings labelled / found", `${labelledWidened} / ${found}`],
      ["false widenings", String(falseWidened)],
      ["cases whose every label agrees", `${agreeing} of ${cases.length}`],
      ["time to read and plan one file", `${perFile.toFixed(3)} ms`],
    ],
    targets: [
      ["host corpus: widening recall", recall === 1, `${pct(recall)} (target 100%)`],
      ["host corpus: false widenings", falseWidened === 0, `${falseWidened} (target 0)`],
    ],
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = runHostCorpusBench();
  for (const [k, v] of r.rows) process.stdout.write(`${k.padEnd(44)} ${v}\n`);
  for (const line of targetLines(r.targets, 40)) process.stdout.write(`${line}\n`);
  if (process.argv.includes("--check") && r.targets.some(([, ok]) => !ok)) process.exit(1);
}
