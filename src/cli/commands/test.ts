/**
 * `terfyn test`: run every CapabilityTest assertion statically, with no model. One line per
 * assertion, then `N passed, M failed` as the last line; exit 1 on any failure. On a project
 * that does not validate no assertion counts as passed (a pass over a broken model proves
 * nothing): each error is a FAIL line and a failure, in the count and in the JUnit report.
 */
import { resolve } from "node:path";
import {
  JunitReportError,
  type ValidationFailure,
  writeJunitReport,
} from "../../adapters/report/junit.ts";
import { escapeTerminalText } from "../../core/render/terminal-text.ts";
import {
  type CapabilityTestReport,
  runCapabilityTests,
} from "../../core/testing/capability-tests.ts";
import { plural } from "../../core/words.ts";
import { parseFlags } from "../args.ts";
import { refuseStdinDirectories } from "../file-args.ts";
import { type CliIo, UsageError, UserError, useColor } from "../io.ts";
import { loadProject } from "./project-context.ts";

export const TEST_HELP = `Usage: terfyn test --project DIR [--junit FILE] [--format text|json]

Check every CapabilityTest assertion (forbidEffect, allowEffect, maxIterations,
workflowEffects, requiresApproval) over the project's effect bounds, with no model. Prints
PASS or FAIL per assertion (a failure names the grant and .agent line responsible) and ends
with "N passed, M failed". Exits 1 on any failure. A project that does not validate is not
trusted: each of its errors is a FAIL line and a failure, failed assertions still count, and
passing ones show as SKIP (also in the JUnit report), so it ends "0 passed, M failed".

Options:
  --project DIR   the directory holding terfyn.yaml (default: .)
  --junit FILE    also write the results as JUnit XML
  --format FORMAT text (default) or json: a document with format_version "1", ok, passed,
                  failed, every result (status PASS, FAIL or SKIP, with its location) and,
                  when the project does not validate, its errors
  --json          same as --format json
  -h, --help      show this help
`;

export async function testCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags("test", argv, {
    project: { type: "string" },
    junit: { type: "string" },
    format: { type: "string" },
    json: { type: "boolean" },
  });
  if (values.help) {
    io.stdout(TEST_HELP);
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError(`test: unexpected argument \`${positionals[0]}\` (use --project DIR)`);
  const format = values.json ? "json" : ((values.format as string | undefined) ?? "text");
  if (format !== "text" && format !== "json")
    throw new UsageError(`test: --format must be text or json, not \`${format}\``);
  refuseStdinDirectories("test", {
    "--project": { value: values.project, what: "the directory holding terfyn.yaml" },
  });
  const ctx = await loadProject(io, values.project as string | undefined);
  const color = useColor(io);
  const paint = (code: string, s: string) => (color ? `\u001b[${code}m${s}\u001b[0m` : s);
  const at = (s: { file: string; line: number }) => `${ctx.displayPath(s.file)}:${s.line}`;
  // Assertion text, reasons and messages quote the project: escaped before they reach a terminal.
  const safe = (s: string) => escapeTerminalText(s);
  const junit = async (report: CapabilityTestReport, failures: ValidationFailure[] = []) => {
    if (values.junit === undefined) return;
    try {
      await writeJunitReport(resolve(io.cwd, values.junit as string), report, at, failures);
    } catch (e) {
      if (e instanceof JunitReportError) throw new UserError(e.message);
      throw e;
    }
  };

  const errors = ctx.diagnostics.filter((d) => d.severity === "error");
  // On a project that does not validate, a failed assertion is still a real finding (the reach
  // was found), but a pass may be hollow (a grant that did not resolve reaches nothing). So
  // failures are shown and counted, passes are shown as SKIP and not counted, and every error
  // is a failure of its own: the last line cannot read as green.
  const trusted = errors.length === 0;
  const report = runCapabilityTests(ctx.validation);
  if (format === "json") {
    const where = (s: { file: string; line: number; column: number }) => ({
      file: ctx.displayPath(s.file),
      line: s.line,
      column: s.column,
    });
    const results = report.results.map((r) => ({
      test: r.test,
      kind: r.kind,
      assertion: r.text,
      status: !r.passed ? "FAIL" : trusted ? "PASS" : "SKIP",
      ...(r.reason !== undefined ? { reason: r.reason } : {}),
      ...(r.culprit ? { culprit: where(r.culprit) } : {}),
      at: where(r.span),
    }));
    const failed = report.failed + errors.length;
    const passed = trusted ? report.passed : 0;
    io.stdout(
      `${JSON.stringify(
        {
          format_version: "1",
          ok: failed === 0,
          passed,
          failed,
          validated: trusted,
          results,
          errors: errors.map((d) => ({
            code: d.code,
            message: d.message,
            ...where(d.span),
          })),
        },
        null,
        2,
      )}\n`,
    );
    await junit(
      report,
      errors.map((d) => ({
        location: `${ctx.displayPath(d.span.file)}:${d.span.line}:${d.span.column}`,
        code: d.code,
        message: d.message,
      })),
    );
    return failed > 0 ? 1 : 0;
  }
  if (report.results.length === 0 && trusted) {
    io.stdout(
      `${safe(ctx.where)}: no capability tests (add a CapabilityTest document, e.g. tests/capabilities.yaml)\n`,
    );
  }
  for (const r of report.results) {
    if (r.passed && trusted) io.stdout(`${paint("32", "PASS")} ${safe(r.test)}: ${safe(r.text)}\n`);
    else if (r.passed)
      io.stdout(
        `${paint("33", "SKIP")} ${safe(r.test)}: ${safe(r.text)}: not trusted while the project does not validate\n`,
      );
    else {
      const culprit = r.culprit ? ` at ${safe(at(r.culprit))}` : "";
      io.stdout(
        `${paint("31", "FAIL")} ${safe(r.test)}: ${safe(r.text)}: ${safe(r.reason ?? "")}${culprit}\n`,
      );
    }
  }
  if (trusted) {
    await junit(report);
    io.stdout(`${report.passed} passed, ${report.failed} failed\n`);
    return report.failed > 0 ? 1 : 0;
  }

  const failures = errors.map((d) => ({
    location: `${ctx.displayPath(d.span.file)}:${d.span.line}:${d.span.column}`,
    code: d.code,
    message: d.message,
  }));
  const perFile = new Map<string, number>();
  for (const [i, f] of failures.entries()) {
    const file = (errors[i] as (typeof errors)[number]).span.file;
    const n = (perFile.get(file) ?? 0) + 1;
    perFile.set(file, n);
    if (n <= MAX_FAIL_LINES_PER_FILE)
      io.stdout(
        `${paint("31", "FAIL")} validate: ${safe(f.location)}: ${f.code}: ${safe(f.message)}\n`,
      );
  }
  for (const [file, n] of perFile) {
    if (n > MAX_FAIL_LINES_PER_FILE)
      io.stdout(
        `${paint("31", "FAIL")} validate: ${safe(ctx.displayPath(file))}: and ${n - MAX_FAIL_LINES_PER_FILE} more\n`,
      );
  }
  io.stdout(
    `${safe(ctx.where)} does not validate (${plural(errors.length, "error")}; run terfyn validate for details), so no assertion counts as passed\n`,
  );
  await junit(report, failures);
  io.stdout(`0 passed, ${report.failed + errors.length} failed\n`);
  return 1;
}

/** Like the diagnostics renderer: the first problems of a file say what is wrong with it. */
const MAX_FAIL_LINES_PER_FILE = 20;
