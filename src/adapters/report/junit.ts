/**
 * Capability test results as JUnit XML (`terfyn test --junit FILE`), built with
 * junit-report-builder: one test suite per CapabilityTest, one test case per assertion.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import junitModule, { type Builder } from "junit-report-builder";
import type { CapabilityTestReport } from "../../core/testing/capability-tests.ts";

export async function writeJunitReport(
  file: string,
  report: CapabilityTestReport,
  describe: (span: { file: string; line: number }) => string,
): Promise<void> {
  // A CommonJS module whose types declare an ES default export: take whichever shape arrives.
  const junit =
    (junitModule as unknown as { default?: Builder }).default ??
    (junitModule as unknown as Builder);
  const builder = junit.newBuilder();
  const suites = new Map<string, ReturnType<typeof builder.testSuite>>();
  for (const r of report.results) {
    let suite = suites.get(r.test);
    if (!suite) {
      suite = builder.testSuite().name(`CapabilityTest/${r.test}`);
      suites.set(r.test, suite);
    }
    const testCase = suite
      .testCase()
      .className(`CapabilityTest/${r.test}`)
      .name(r.text)
      .file(describe(r.span));
    if (!r.passed) testCase.failure(r.reason ?? "failed", r.kind);
  }
  if (report.results.length === 0) builder.testSuite().name("CapabilityTest (none)");
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, builder.build());
}
