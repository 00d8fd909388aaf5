/**
 * Capability test results as JUnit XML (`terfyn test --junit FILE`), built with
 * junit-report-builder: one test suite per CapabilityTest, one test case per assertion. When
 * the project does not validate, its errors are the failures (suite `terfyn validate`), so a
 * CI dashboard shows why the job failed instead of an empty or all-green report. The builder
 * escapes XML; every name and message is plain text with its invisible characters (controls,
 * bidi, zero-width) shown as escapes first (escape.ts), which XML could not hold anyway.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { Builder } from "junit-report-builder";
import { plainText } from "../../core/render/escape.ts";
import type { CapabilityTestReport } from "../../core/testing/capability-tests.ts";

const t = (s: string) => plainText(s);

/** A validation error as a failed test case. */
export interface ValidationFailure {
  /** Where: `path:line:col`. */
  location: string;
  code: string;
  message: string;
}

export class JunitReportError extends Error {}

export async function writeJunitReport(
  file: string,
  report: CapabilityTestReport,
  describe: (span: { file: string; line: number }) => string,
  validationFailures: readonly ValidationFailure[] = [],
): Promise<void> {
  // Imported here, when a report is written, not when `terfyn test` loads: the builder is
  // 158 KiB of bundle that a run without --junit would otherwise compile and evaluate.
  const junitModule = (await import("junit-report-builder")).default;
  // A CommonJS module whose types declare an ES default export: take whichever shape arrives.
  const junit =
    (junitModule as unknown as { default?: Builder }).default ??
    (junitModule as unknown as Builder);
  const builder = junit.newBuilder();
  const suites = new Map<string, ReturnType<typeof builder.testSuite>>();
  for (const r of report.results) {
    let suite = suites.get(r.test);
    if (!suite) {
      suite = builder.testSuite().name(`CapabilityTest/${t(r.test)}`);
      suites.set(r.test, suite);
    }
    const testCase = suite
      .testCase()
      .className(`CapabilityTest/${t(r.test)}`)
      .name(t(r.text))
      .file(t(describe(r.span)));
    if (!r.passed) testCase.failure(plainText(r.reason ?? "failed", { multiline: true }), r.kind);
    // A pass over a project that does not validate is not evidence: skipped, not passed.
    else if (validationFailures.length > 0) testCase.skipped();
  }
  if (validationFailures.length > 0) {
    const suite = builder.testSuite().name("terfyn validate");
    for (const f of validationFailures) {
      suite
        .testCase()
        .className("terfyn validate")
        .name(t(`${f.location}: ${f.code}`))
        .file(t(f.location))
        .failure(plainText(f.message, { multiline: true }), f.code);
    }
  } else if (report.results.length === 0) builder.testSuite().name("CapabilityTest (none)");
  try {
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, builder.build());
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === "EISDIR"
        ? "it is a directory"
        : code === "EEXIST" || code === "ENOTDIR"
          ? "a directory on its path is a file"
          : code === "EACCES" || code === "EPERM"
            ? "permission denied"
            : (code ?? (e as Error).message);
    throw new JunitReportError(
      `cannot write the JUnit report to ${file}: ${why}; --junit takes the path of a file to write`,
    );
  }
}
