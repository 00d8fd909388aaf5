/**
 * Evidence that a test ran, from what real runners print (src/core/review/test-evidence.ts):
 * summaries of many toolchains, TAP and JUnit reports, and the outputs that mean nothing ran.
 */
import { describe, expect, it } from "vitest";
import {
  junitEvidence,
  parseTestReportFormat,
  reportedTestNames,
  summaryEvidence,
  tapEvidence,
  testRan,
} from "../src/core/review/test-evidence.ts";

const T = "add returns the sum";

describe("summary lines", () => {
  const cases: [string, string, number | undefined][] = [
    [
      "node --test, TAP to a pipe",
      `ok 1 - ${T}\n1..1\n# tests 1\n# suites 0\n# pass 1\n# fail 0\n# skipped 0\n`,
      1,
    ],
    [
      "node --test, filtered out",
      "ok 1 - other # SKIP\n1..1\n# tests 1\n# pass 0\n# fail 0\n# skipped 1\n",
      0,
    ],
    [
      "node --test, spec reporter",
      `✔ ${T} (0.9ms)\nℹ tests 1\nℹ suites 0\nℹ pass 1\nℹ fail 0\nℹ skipped 0\n`,
      1,
    ],
    [
      "unittest -v",
      `test_add (test_calc.T.test_add) ... ok\n\n----\nRan 1 test in 0.000s\n\nOK\n`,
      1,
    ],
    [
      "unittest -k matching nothing",
      "\n----------------------------------------------------------------------\nRan 0 tests in 0.000s\n\nNO TESTS RAN\n",
      0,
    ],
    ["unittest, skipped", "Ran 2 tests in 0.001s\n\nOK (skipped=2)\n", 0],
    [
      "pytest",
      "collected 3 items / 2 deselected / 1 selected\n\ntest_calc.py .    [100%]\n\n==== 1 passed, 2 deselected in 0.01s ====\n",
      1,
    ],
    ["pytest, nothing selected", "collected 0 items\n\n==== no tests ran in 0.01s ====\n", 0],
    ["jest", "Tests:       1 passed, 1 total\nTime: 0.5 s\n", 1],
    ["jest, all skipped", "Tests:       3 skipped, 3 total\n", 0],
    [
      "cargo test",
      "running 1 test\ntest tests::add ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored\n",
      1,
    ],
    ["rspec", "Finished in 0.01 seconds\n1 example, 0 failures\n", 1],
    ["mocha", "  ✓ add returns the sum\n\n  1 passing (4ms)\n", 1],
    [
      "go test -v",
      "=== RUN   TestAdd\n--- PASS: TestAdd (0.00s)\nPASS\nok  \texample.com/calc\t0.002s\n",
      undefined,
    ],
    [
      "go test, no test matched",
      "testing: warning: no tests to run\nPASS\nok  \texample.com/calc\t0.002s [no tests to run]\n",
      0,
    ],
    ["a shell runner", "ok test_upper\n1 run, 0 failed\n", 1],
    ["nothing at all", "", undefined],
  ];
  for (const [name, output, ran] of cases)
    it(`${name}: ${ran === undefined ? "no count" : `${ran} ran`}`, () => {
      expect(summaryEvidence(output, T).ran).toBe(ran);
    });

  it("ran needs a count above zero", () => {
    expect(testRan(summaryEvidence("Ran 0 tests in 0.000s\n", T))).toBe(false);
    expect(testRan(summaryEvidence("", T))).toBe(false);
    expect(testRan(summaryEvidence("Ran 1 test in 0.000s\n", T))).toBe(true);
  });
});

describe("TAP", () => {
  it("counts test points, not skipped ones, and needs the planned name among them", () => {
    const e = tapEvidence(`TAP version 13\nok 1 - ${T}\nok 2 - other # SKIP no match\n1..2\n`, T);
    expect(e).toMatchObject({ ran: 1, named: true, source: "tap" });
    expect(testRan(e)).toBe(true);
    const renamed = tapEvidence("TAP version 13\nok 1 - add gives the total\n1..1\n", T);
    expect(renamed).toMatchObject({ ran: 1, named: false });
    expect(testRan(renamed)).toBe(false);
    expect(testRan(tapEvidence("TAP version 13\n1..0\n", T))).toBe(false);
    expect(testRan(tapEvidence("not TAP at all", T))).toBe(false);
  });
});

describe("JUnit", () => {
  it("counts test cases that were not skipped, and needs the planned name", () => {
    const xml = `<?xml version="1.0"?><testsuites><testsuite name="s" tests="2"><testcase classname="calc" name="${T}"/><testcase name="x"><skipped/></testcase></testsuite></testsuites>`;
    expect(junitEvidence(xml, T)).toMatchObject({ ran: 1, named: true });
    expect(testRan(junitEvidence(xml.replace(T, "renamed"), T))).toBe(false);
    expect(testRan(junitEvidence(undefined, T))).toBe(false);
    expect(testRan(junitEvidence("<<<", T))).toBe(false);
  });
});

describe("the declared format", () => {
  it("tap, junit <path>, summary or nothing; anything else is a message", () => {
    expect(parseTestReportFormat(undefined)).toEqual({ kind: "summary" });
    expect(parseTestReportFormat("TAP")).toEqual({ kind: "tap" });
    expect(parseTestReportFormat("junit build/junit.xml")).toEqual({
      kind: "junit",
      path: "build/junit.xml",
    });
    expect(parseTestReportFormat("xunit")).toMatch(/not one of/);
  });
});

describe("summary mode, where the output names its tests", () => {
  // What node --test --test-name-pattern printed to a pipe, Node 20, 22 and 24, for a pattern
  // that matches a test and for one that matches nothing (test/add.test.js, test/sub.test.js).
  const node22NoMatch =
    "TAP version 13\n1..0\n# Subtest: test/add.test.js\nok 1 - test/add.test.js\n  ---\n  duration_ms: 34.1\n  type: 'test'\n  ...\n# Subtest: test/sub.test.js\nok 2 - test/sub.test.js\n  ---\n  duration_ms: 33.9\n  type: 'test'\n  ...\n1..2\n# tests 2\n# suites 0\n# pass 2\n# fail 0\n# cancelled 0\n# skipped 0\n# todo 0\n";
  const node22Match = `TAP version 13\n# Subtest: ${T}\nok 1 - ${T}\n  ---\n  duration_ms: 0.65\n  ...\n1..0\n# Subtest: test/sub.test.js\nok 2 - test/sub.test.js\n1..2\n# tests 2\n# pass 2\n# fail 0\n# skipped 0\n`;
  const node24NoMatch =
    "✔ test/add.test.js (38.07ms)\n✔ test/sub.test.js (37.80ms)\nℹ tests 2\nℹ suites 0\nℹ pass 2\nℹ fail 0\nℹ cancelled 0\nℹ skipped 0\nℹ todo 0\nℹ duration_ms 88.2\n";
  const node24Match = `✔ ${T} (0.649334ms)\n✔ test/sub.test.js (36.72ms)\nℹ tests 2\nℹ suites 0\nℹ pass 2\nℹ fail 0\n`;
  const node24Fail = `✖ ${T} (1.2ms)\n  AssertionError [ERR_ASSERTION]: 3 !== 2\nℹ tests 1\nℹ pass 0\nℹ fail 1\n\n✖ failing tests:\n\ntest at test/add.test.js:2:1\n✖ ${T} (1.2ms)\n`;

  it("a pattern that matches nothing did not run, though the files count as passed tests (Node 22, 24)", () => {
    for (const out of [node22NoMatch, node24NoMatch]) {
      const e = summaryEvidence(out, T);
      expect(e.named).toBe(false);
      expect(testRan(e)).toBe(false);
    }
  });

  it("a pattern that matches ran, passing or failing (Node 22, 24)", () => {
    for (const out of [node22Match, node24Match, node24Fail]) {
      const e = summaryEvidence(out, T);
      expect(e.named).toBe(true);
      expect(testRan(e)).toBe(true);
    }
  });

  it("reads TAP and spec lines, not skipped points, headings or go's package lines", () => {
    expect(reportedTestNames(node24Fail)).toEqual([T, T]);
    expect(reportedTestNames(`ok 1 - ${T} # SKIP test name does not match pattern\n`)).toEqual([]);
    expect(reportedTestNames("  ✓ adds two numbers (3 ms)\n  ✕ subtracts (1 ms)\n")).toEqual([
      "adds two numbers",
      "subtracts",
    ]);
    const go =
      "=== RUN   TestAdd\n--- PASS: TestAdd (0.00s)\nPASS\nok  \texample.com/calc\t0.004s\n";
    expect(reportedTestNames(go)).toEqual([]);
    expect(summaryEvidence(go, "TestAdd").named).toBe(true);
  });
});
