/**
 * The host-configuration section of `npm run bench`: Terfyn's own corpus of host configuration
 * changes (__tests__/fixtures/hosts/claude-corpus.yaml for Claude Code's settings,
 * other-hosts-corpus.yaml for Codex, claude-code-action and gh-aw; labelled by the hosts'
 * documented semantics) planned as `terfyn plan` plans them. Reported: widening recall (labelled widenings
 * found as widenings; target 100%), false widenings (changes called widened that the label says
 * are not; target 0), agreement on every label, the time to read and plan one file, and how
 * planning a large settings file grows: the same generated file at 1,500 and at 6,000 rules
 * (mixed Bash, Read, Edit, WebFetch rules in all three lists, against a base that differs), where
 * four times the rules must cost at most eight times the time (linear, with room for noise; a
 * quadratic reader costs sixteen times).
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

/** A settings file of `n` rules (60% allow, 20% ask, 20% deny), `shift` moving every rule's name. */
function largeSettings(n: number, shift: number): string {
  const words = ["git", "npm", "make", "docker", "kubectl", "cargo", "go", "python", "node", "ls"];
  const rule = (i: number) =>
    [
      `Bash(${words[i % words.length]} sub${i} *)`,
      `Read(src/mod${i}/**)`,
      `Edit(/pkg/p${i}/*.ts)`,
      `WebFetch(domain:h${i}.example.com)`,
    ][i % 4] as string;
  const list = (count: number, from: number) =>
    Array.from({ length: count }, (_, i) => rule(from + i + shift));
  return JSON.stringify(
    { permissions: { allow: list(n * 0.6, 0), ask: list(n * 0.2, 1e5), deny: list(n * 0.2, 2e5) } },
    null,
    2,
  );
}

/** The median time of planning a change to an `n`-rule settings file, in ms. */
function planTime(n: number): number {
  const base = [{ path: ".claude/settings.json", text: largeSettings(n, 0) }];
  const head = [{ path: ".claude/settings.json", text: largeSettings(n, 7) }];
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = process.hrtime.bigint();
    planHosts(base, head);
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return times.sort((a, b) => a - b)[1] as number;
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
  const small = planTime(1500);
  const large = planTime(6000);
  const growth = large / Math.max(0.001, small);
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  return {
    rows: [
      ["cases (host configuration changes)", String(cases.length)],
      ["widenings labelled / found", `${labelledWidened} / ${found}`],
      ["false widenings", String(falseWidened)],
      ["cases whose every label agrees", `${agreeing} of ${cases.length}`],
      ["time to read and plan one file", `${perFile.toFixed(3)} ms`],
      [
        "a settings file of 1,500 / 6,000 rules planned",
        `${small.toFixed(0)} ms / ${large.toFixed(0)} ms`,
      ],
    ],
    targets: [
      ["host corpus: widening recall", recall === 1, `${pct(recall)} (target 100%)`],
      ["host corpus: false widenings", falseWidened === 0, `${falseWidened} (target 0)`],
      [
        "host settings: 4x the rules <= 8x the time",
        growth <= 8,
        `${growth.toFixed(1)}x (1,500 -> 6,000 rules; quadratic would be 16x)`,
      ],
    ],
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = runHostCorpusBench();
  for (const [k, v] of r.rows) process.stdout.write(`${k.padEnd(44)} ${v}\n`);
  for (const line of targetLines(r.targets, 40)) process.stdout.write(`${line}\n`);
  if (process.argv.includes("--check") && r.targets.some(([, ok]) => !ok)) process.exit(1);
}
