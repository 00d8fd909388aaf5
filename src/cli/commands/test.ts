/**
 * `terfyn test`: run every CapabilityTest assertion statically, with no model. One line per
 * assertion, then `N passed, M failed` as the last line; exit 1 on any failure (or when the
 * project has errors, since the results then rest on a broken model).
 */
import { resolve } from "node:path";
import { writeJunitReport } from "../../adapters/report/junit.ts";
import { countBySeverity } from "../../core/render/diagnostics-text.ts";
import { escapeTerminalText } from "../../core/render/terminal-text.ts";
import { runCapabilityTests } from "../../core/testing/capability-tests.ts";
import { plural } from "../../core/words.ts";
import { parseFlags } from "../args.ts";
import { type CliIo, UsageError, useColor } from "../io.ts";
import { loadProject } from "./project-context.ts";

export const TEST_HELP = `Usage: terfyn test --project DIR [--junit FILE]

Check every CapabilityTest assertion (forbidEffect, allowEffect, maxIterations,
workflowEffects, requiresApproval) over the project's effect bounds, with no model. Prints
PASS or FAIL per assertion (a failure names the grant and .agent line responsible) and ends
with "N passed, M failed". Exits 1 on any failure.

Options:
  --project DIR   the directory holding terfyn.yaml (default: .)
  --junit FILE    also write the results as JUnit XML
  -h, --help      show this help
`;

export async function testCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags("test", argv, {
    project: { type: "string" },
    junit: { type: "string" },
  });
  if (values.help) {
    io.stdout(TEST_HELP);
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError(`test: unexpected argument \`${positionals[0]}\` (use --project DIR)`);
  const ctx = await loadProject(io, values.project as string | undefined);
  const report = runCapabilityTests(ctx.validation.project);
  const color = useColor(io);
  const paint = (code: string, s: string) => (color ? `\u001b[${code}m${s}\u001b[0m` : s);
  const at = (s: { file: string; line: number }) => `${ctx.displayPath(s.file)}:${s.line}`;

  if (report.results.length === 0) {
    io.stdout(
      `${ctx.where}: no capability tests (add a CapabilityTest document, e.g. tests/capabilities.yaml)\n`,
    );
  }
  // Assertion text and reasons quote the project's YAML: escaped before they reach a terminal.
  const safe = (s: string) => escapeTerminalText(s);
  for (const r of report.results) {
    if (r.passed) io.stdout(`${paint("32", "PASS")} ${safe(r.test)}: ${safe(r.text)}\n`);
    else {
      const culprit = r.culprit ? ` at ${safe(at(r.culprit))}` : "";
      io.stdout(
        `${paint("31", "FAIL")} ${safe(r.test)}: ${safe(r.text)}: ${safe(r.reason ?? "")}${culprit}\n`,
      );
    }
  }
  const { errors } = countBySeverity(ctx.diagnostics);
  if (errors > 0) {
    io.stderr(
      `note: ${ctx.where} has ${plural(errors, "validation error")} (run terfyn validate); failing the run\n`,
    );
  }
  if (values.junit !== undefined) {
    await writeJunitReport(resolve(io.cwd, values.junit as string), report, at);
  }
  io.stdout(`${report.passed} passed, ${report.failed} failed\n`);
  return report.failed > 0 || errors > 0 ? 1 : 0;
}
