/**
 * `terfyn validate --project DIR [--format text|json]`: exit 0 when sound, 1 on any error.
 */
import { relative, resolve } from "node:path";
import { readProjectDirectory } from "../../adapters/fs/read-project.ts";
import { sortDiagnostics } from "../../core/diagnostics.ts";
import {
  countBySeverity,
  diagnosticsToJson,
  renderDiagnosticsText,
} from "../../core/render/diagnostics-text.ts";
import { escapeTerminalText } from "../../core/render/terminal-text.ts";
import { validateProject } from "../../core/validate.ts";
import { plural } from "../../core/words.ts";
import { parseFlags } from "../args.ts";
import { refuseStdinDirectories } from "../file-args.ts";
import { type CliIo, UsageError, useColor } from "../io.ts";

export const VALIDATE_HELP = `Usage: terfyn validate --project DIR [--format text|json]

Parse and check a Terfyn project: every .agent file and YAML resource below DIR
(except fixtures/, .terfyn/ and node_modules/). Prints each problem as
  path:line:col: error TF1234: message
with the source line, and exits 0 when the project is sound, 1 on any error.

Options:
  --project DIR     the directory holding terfyn.yaml (default: .)
  --format FORMAT   text (default) or json (format_version "1", ok, summary, diagnostics)
  --json            same as --format json
  --debug           show stack traces for internal errors
  -h, --help        show this help
`;

export async function validateCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags("validate", argv, {
    project: { type: "string" },
    format: { type: "string" },
    json: { type: "boolean" },
  });
  if (values.help) {
    io.stdout(VALIDATE_HELP);
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError(`validate: unexpected argument \`${positionals[0]}\` (use --project DIR)`);
  const format = values.json ? "json" : ((values.format as string | undefined) ?? "text");
  if (format !== "text" && format !== "json")
    throw new UsageError(`validate: --format must be text or json, not \`${format}\``);

  refuseStdinDirectories("validate", {
    "--project": { value: values.project, what: "the directory holding terfyn.yaml" },
  });
  const projectArg = (values.project as string | undefined) ?? ".";
  const root = resolve(io.cwd, projectArg);
  const read = await readProjectDirectory(root);
  const result = validateProject(read.files);
  const diagnostics = sortDiagnostics([...read.diagnostics, ...result.diagnostics]);
  const displayPath = (file: string) => relative(io.cwd, resolve(root, file)) || file;
  const { errors, warnings } = countBySeverity(diagnostics);

  if (format === "json") {
    io.stdout(`${JSON.stringify(diagnosticsToJson(diagnostics, displayPath), null, 2)}\n`);
    return errors > 0 ? 1 : 0;
  }
  if (diagnostics.length > 0) {
    io.stdout(
      `${renderDiagnosticsText(diagnostics, { sources: result.project.sources, displayPath, color: useColor(io) })}\n\n`,
    );
  }
  const p = result.project;
  const counts = [
    plural(p.agents.size, "agent"),
    plural(p.workflows.size, "workflow"),
    plural(p.tools.size, "tool"),
    plural(new Set(p.policies.map((r) => r.policy)).size, "policy", "policies"),
    plural(p.capabilityTests.length, "capability test"),
    // Only when there is one: `Host/claude-code` from .claude/settings.json or .mcp.json.
    ...[...(p.hostAgents?.keys() ?? [])].map((name) => `host agent ${name}`),
  ].join(", ");
  // The summary line names the directory as given: escaped, like every path we print.
  const where = escapeTerminalText(relative(io.cwd, root) || ".");
  if (errors > 0) {
    io.stdout(
      `${where}: ${plural(errors, "error")}${warnings ? `, ${plural(warnings, "warning")}` : ""}\n`,
    );
    return 1;
  }
  io.stdout(
    `${where}: project ${p.settings.name} is valid (${counts})${warnings ? `; ${plural(warnings, "warning")}` : ""}\n`,
  );
  return 0;
}
