/**
 * Did a test run? (docs/review-doctrine.md, doctrines 7–8.) A single-test command exiting 0 is
 * not evidence: `--test-name-pattern X` or `-k X` exit 0 after running nothing, and a test the
 * TestWriter renamed matches nothing. "Ran" is decided from what the command printed: the
 * runner's machine-readable report where AGENTS.md declares one (`test report: tap` on standard
 * output, or `test report: junit <path>` for a JUnit XML file the command writes), otherwise the
 * summary line most runners print ("Ran 1 test", "tests 1", "1 passed", …). No count found is
 * no evidence, and zero tests run is a false green. Where the report names tests, the planned
 * name must be among them. Evidence printed by the test itself could be forged; a declared
 * machine-readable report, with names, is the stronger form. Pure.
 */
import { XMLParser } from "fast-xml-parser";
import { Parser as TapParser } from "tap-parser";

export type TestReportFormat =
  | { kind: "summary" }
  | { kind: "tap" }
  | { kind: "junit"; path: string };

export interface TestEvidence {
  /** Tests the command ran, or undefined when its output shows no count. */
  ran: number | undefined;
  /** Whether the planned test's name is among those reported (undefined: the report names none). */
  named: boolean | undefined;
  /** Where the count came from, for the report. */
  source: "tap" | "junit" | "summary" | "none";
  /** The line or element the count was read from. */
  detail: string;
}

/** What AGENTS.md's `test report:` value declares: `tap`, `junit <path>`, or nothing (summary). */
export function parseTestReportFormat(value: string | undefined): TestReportFormat | string {
  const v = (value ?? "").trim();
  if (v === "" || v.toLowerCase() === "summary") return { kind: "summary" };
  if (v.toLowerCase() === "tap") return { kind: "tap" };
  const junit = /^junit\s+(\S+)$/i.exec(v);
  if (junit?.[1]) return { kind: "junit", path: junit[1] };
  return `test report \`${v}\` is not one of: tap, junit <path>, summary`;
}

/** The test's name as a report may show it: exactly, or as the last part of a qualified name. */
function nameMatches(reported: string, test: string): boolean {
  const r = reported.trim();
  return r === test || r.endsWith(`.${test}`) || r.endsWith(` ${test}`) || r.includes(test);
}

export function tapEvidence(output: string, test: string): TestEvidence {
  let events: unknown[] = [];
  try {
    events = TapParser.parse(output) as unknown[];
  } catch {
    events = [];
  }
  const names: string[] = [];
  for (const e of events) {
    if (!Array.isArray(e) || e[0] !== "assert") continue;
    const point = e[1] as { name?: unknown; skip?: unknown; todo?: unknown };
    if (point.skip || point.todo) continue;
    names.push(typeof point.name === "string" ? point.name : "");
  }
  if (names.length === 0)
    return { ran: 0, named: false, source: "tap", detail: "the TAP output has no test points" };
  return {
    ran: names.length,
    named: names.some((n) => nameMatches(n, test)),
    source: "tap",
    detail: `${names.length} TAP test point(s)`,
  };
}

export function junitEvidence(xml: string | undefined, test: string): TestEvidence {
  if (xml === undefined)
    return {
      ran: undefined,
      named: undefined,
      source: "junit",
      detail: "no JUnit file was written",
    };
  let doc: unknown;
  try {
    doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(xml);
  } catch {
    return {
      ran: undefined,
      named: undefined,
      source: "junit",
      detail: "the JUnit file is not XML",
    };
  }
  const cases: { name: string; skipped: boolean }[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const n of node) walk(n);
      return;
    }
    if (!node || typeof node !== "object") return;
    for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
      if (k === "testcase")
        for (const c of Array.isArray(v) ? v : [v]) {
          const tc = (c ?? {}) as Record<string, unknown>;
          cases.push({
            name: `${String(tc.classname ?? "")} ${String(tc.name ?? "")}`.trim(),
            skipped: "skipped" in tc,
          });
        }
      else walk(v);
    }
  };
  walk(doc);
  const run = cases.filter((c) => !c.skipped);
  return {
    ran: run.length,
    named: run.some((c) => nameMatches(c.name, test)),
    source: "junit",
    detail: `${run.length} test case(s) in the JUnit file`,
  };
}

/**
 * Runner summaries. A total ("Ran 2 tests", "tests 2", "Tests: 2 total") counts skipped tests
 * too (a name filter often reports the others as skipped), so the skipped count is taken off;
 * a passed count ("2 passed", "2 passing", "2 run") is what ran and passed.
 */
const TOTAL_PATTERNS: readonly RegExp[] = [
  /\bran\s+(\d+)\s+tests?\b/gi,
  /^\W{0,3}\s*tests?\s*[:=]?\s+(\d+)\s*$/gim,
  /\b(\d+)\s+total\b/gi,
  /\b(\d+)\s+(?:tests?|examples?|specs?)\s*,\s*\d+\s+failures?\b/gi,
];
const PASSED_PATTERNS: readonly RegExp[] = [
  /\b(\d+)\s+(?:tests?\s+)?(?:passed|passing)\b/gi,
  /\b(\d+)\s+(?:tests?\s+)?(?:ran|run|executed|completed)\b/gi,
  /^\W{0,3}\s*pass\s+(\d+)\s*$/gim,
];
const SKIPPED_PATTERNS: readonly RegExp[] = [
  /^\W{0,3}\s*skipped\s+(\d+)\s*$/gim,
  /\b(\d+)\s+skipped\b/gi,
  /\bskipped=(\d+)\b/gi,
];
const NONE_RAN: readonly RegExp[] = [
  /\bno tests? (?:ran|run|to run|found|were found|executed|collected)\b/i,
  /\bcollected 0 items\b/i,
  /\bran 0 tests?\b/i,
];

/** The largest count any of `patterns` finds, with the text it was read from. */
function largest(
  output: string,
  patterns: readonly RegExp[],
): { n: number; line: string } | undefined {
  let best: { n: number; line: string } | undefined;
  for (const re of patterns)
    for (const m of output.matchAll(re)) {
      const n = Number(m[1]);
      if (Number.isSafeInteger(n) && (best === undefined || n > best.n))
        best = { n, line: m[0].trim() };
    }
  return best;
}

/**
 * Test points in the per-test line forms runners print: TAP (`ok 1 - name`, `not ok 2 - name`,
 * what Node's own test runner prints to a pipe up to Node 22) and spec lines (`✔ name (0.6ms)`,
 * `✖ name (1.2ms)`, `✓ name (3 ms)`, which Node's runner prints from Node 24).
 * Skipped and todo points are left out. A TAP line needs its number (go's `ok  \tpkg 0.01s` is
 * not one), a spec line its duration (the `✖ failing tests:` heading Node 24 prints has none).
 * Not tap-parser, as for a declared TAP report: this output is not declared TAP, and the parser
 * takes an unnumbered `ok …` line for a test point.
 */
const TAP_POINT = /^\s*(?:not )?ok \d+(?: - | )(.+?)\s*$/;
const SPEC_POINT = /^\s*[✔✖✓✕×] (.+?) \(\d+(?:\.\d+)?\s?m?s\)\s*$/;

export function reportedTestNames(output: string): string[] {
  const names: string[] = [];
  for (const line of output.split("\n")) {
    if (/\s#\s*(?:SKIP|TODO)\b/i.test(line)) continue;
    const m = TAP_POINT.exec(line) ?? SPEC_POINT.exec(line);
    const name = m?.[1]?.replace(/\s+#.*$/, "").trim();
    if (name) names.push(name);
  }
  return names;
}

export function summaryEvidence(output: string, test: string): TestEvidence {
  // Where the output names the tests it ran, the planned one must be among them. From Node 22,
  // Node's test runner, given a name pattern that matches nothing in a file, reports the file
  // itself as a test that passed (`✔ test/add.test.js`, `tests 1`, `pass 1`): the count alone was a false
  // green. Without such lines, the name appearing anywhere is all that can be asked.
  const points = reportedTestNames(output);
  const named =
    points.length > 0
      ? points.some((n) => nameMatches(n, test))
      : output.includes(test)
        ? true
        : undefined;
  for (const re of NONE_RAN) {
    const m = re.exec(output);
    if (m) return { ran: 0, named, source: "summary", detail: m[0] };
  }
  const total = largest(output, TOTAL_PATTERNS);
  if (total) {
    const skipped = largest(output, SKIPPED_PATTERNS);
    const ran = Math.max(0, total.n - (skipped?.n ?? 0));
    return {
      ran,
      named,
      source: "summary",
      detail: skipped ? `${total.line}, ${skipped.line}` : total.line,
    };
  }
  const passed = largest(output, PASSED_PATTERNS);
  if (passed) return { ran: passed.n, named, source: "summary", detail: passed.line };
  return {
    ran: undefined,
    named,
    source: "none",
    detail:
      "the output shows no count of tests run; declare `test report: tap` or `test report: junit <path>` in AGENTS.md, or make the single-test command print its runner's summary",
  };
}

/** The evidence a single-test run produced, read the way AGENTS.md declares. */
export function testEvidence(
  format: TestReportFormat,
  test: string,
  output: string,
  junitXml?: string,
): TestEvidence {
  if (format.kind === "tap") return tapEvidence(output, test);
  if (format.kind === "junit") return junitEvidence(junitXml, test);
  return summaryEvidence(output, test);
}

/** Whether the evidence shows the planned test ran: a count above zero, and its name where names are reported. */
export function testRan(e: TestEvidence): boolean {
  return e.ran !== undefined && e.ran > 0 && e.named !== false;
}
