/**
 * Evidence that a test ran, from what real runners print (src/core/review/test-evidence.ts):
 * summaries of many toolchains, TAP and JUnit reports, and the outputs that mean nothing ran.
 */
import { describe, expect, it } from "vitest";
import {
  junitEvidence,
  parseTestReportFormat,
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
