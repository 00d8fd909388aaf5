/**
 * `terfyn plan`: what applying the configuration would change, above all in authority.
 * Exit 0 (no changes, or changes without --detailed-exitcode), 2 (changes, with
 * --detailed-exitcode), 1 (errors, or policy violations in the plan).
 */
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { renderPlanSarif } from "../../adapters/report/sarif.ts";
import { diagnosticsToJson } from "../../core/render/diagnostics-text.ts";
import { renderPlanAnnotations } from "../../core/render/plan-annotations.ts";
import { planToJson } from "../../core/render/plan-json.ts";
import { renderPlanMarkdown } from "../../core/render/plan-markdown.ts";
import { renderPlanText } from "../../core/render/plan-text.ts";
import { escapeTerminalText } from "../../core/render/terminal-text.ts";
import { plural } from "../../core/words.ts";
import { parseFlags } from "../args.ts";
import { refuseStdinDirectories } from "../file-args.ts";
import { type CliIo, UsageError, useColor } from "../io.ts";
import { VERSION } from "../version.ts";
import { hostFilesAt, hostFilesIn, hostPlanCommand } from "./host-plan.ts";
import { loadPrior, loadProject, planAgainst, printDiagnostics } from "./project-context.ts";

export const PLAN_HELP = `Usage: terfyn plan --project DIR [--against GITREF] [--state FILE] [--json] [--detailed-exitcode]

Show what applying the project would change: resource changes, each agent's effect bound
(every effect it may reach, autonomously or gated, and the tool operation that reaches it),
the capability delta, authority WIDENED/NARROWED per mode, the risk delta, and workflow
bounds. Compares against the state file (written by \`terfyn apply\`), or with --against
against the project as it was at a git revision. A revision whose project does not validate
is not used in part: everything is planned as new, and a note says why (the Action does the
same with a pull request's base). The plan ends with its content hash.

In a directory without terfyn.yaml that holds Claude Code's settings (.claude/settings.json,
.claude/settings.local.json), plan plans those as the agent Host/claude-code: each rule added
or removed, and the start mode, WIDENED, NARROWED or neutral by containment (text or json).

Options:
  --project DIR        the directory holding terfyn.yaml (default: .)
  --against GITREF     compare with the project at this git revision (no checkout needed)
  --state FILE         the state file to compare with (default: the project's spec.state);
                       - reads it from standard input
  --json               print the plan as JSON (same as --format json)
  --format FORMAT      text (default), json, markdown, annotations or sarif
  --out FILE           also write the plan in --out-format to FILE
  --out-format FORMAT  format for --out (default: json)
  --detailed-exitcode  exit 0 when nothing changes, 2 when something does, 1 on error
  -h, --help           show this help
`;

const FORMATS = ["text", "json", "markdown", "annotations", "sarif"] as const;
type Format = (typeof FORMATS)[number];

export async function planCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags("plan", argv, {
    project: { type: "string" },
    against: { type: "string" },
    state: { type: "string" },
    json: { type: "boolean" },
    format: { type: "string" },
    out: { type: "string" },
    "out-format": { type: "string" },
    "detailed-exitcode": { type: "boolean" },
  });
  if (values.help) {
    io.stdout(PLAN_HELP);
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError(`plan: unexpected argument \`${positionals[0]}\` (use --project DIR)`);
  const format = checkFormat(
    values.json ? "json" : ((values.format as string | undefined) ?? "text"),
    "--format",
  );
  const outFormat = checkFormat(
    (values["out-format"] as string | undefined) ?? "json",
    "--out-format",
  );
  if (values.against !== undefined && values.state !== undefined) {
    throw new UsageError("plan: --against and --state are alternatives; give one");
  }

  refuseStdinDirectories("plan", {
    "--project": { value: values.project, what: "the directory holding terfyn.yaml" },
  });
  // No terfyn.yaml, but the configurations of agents people already run: plan those.
  const root = resolve(io.cwd, (values.project as string | undefined) ?? ".");
  if (!existsSync(join(root, "terfyn.yaml"))) {
    const present = await hostFilesIn(root);
    // Every host file deleted is a change to plan too: the base's files count.
    const before =
      present.length === 0 && values.against !== undefined
        ? await hostFilesAt(root, values.against as string).catch(() => [])
        : [];
    if (present.length > 0 || before.length > 0)
      return hostPlanCommand(io, root, present, {
        ...(values.against !== undefined ? { against: values.against as string } : {}),
        format,
        detailedExitcode: values["detailed-exitcode"] === true,
      });
  }
  const ctx = await loadProject(io, values.project as string | undefined);
  const prior = await loadPrior(io, ctx, {
    against: values.against as string | undefined,
    state: values.state as string | undefined,
  });
  const result = await planAgainst(io, ctx, prior);
  if (!result.ok) {
    const errors = ctx.diagnostics.filter((d) => d.severity === "error");
    if (format === "json") {
      io.stdout(
        `${JSON.stringify({ ...diagnosticsToJson(ctx.diagnostics, ctx.displayPath), plan: null }, null, 2)}\n`,
      );
    } else {
      printDiagnostics(io, ctx, ctx.diagnostics);
      io.stdout(
        `${escapeTerminalText(ctx.where)}: ${plural(errors.length, "error")}; the project cannot be planned until they are fixed\n`,
      );
    }
    return 1;
  }
  const plan = result.plan;
  const render = (f: Format): string => {
    switch (f) {
      case "json":
        return `${JSON.stringify(planToJson(plan), null, 2)}\n`;
      case "markdown":
        return renderPlanMarkdown(plan, { projectPath: ctx.where });
      case "annotations":
        return `${JSON.stringify(renderPlanAnnotations(plan, { pathPrefix: ctx.where === "." ? "" : `${ctx.where}/` }), null, 2)}\n`;
      case "sarif":
        return `${JSON.stringify(
          renderPlanSarif(plan, {
            pathPrefix: ctx.where === "." ? "" : `${ctx.where}/`,
            toolVersion: VERSION,
          }),
          null,
          2,
        )}\n`;
      default:
        return renderPlanText(plan, { color: useColor(io), priorName: prior.name });
    }
  };
  io.stdout(render(format));
  if (values.out !== undefined)
    await writeFile(resolve(io.cwd, values.out as string), render(outFormat));
  const warnings = ctx.diagnostics.filter((d) => d.severity === "warning");
  if (warnings.length > 0 && format === "text") printDiagnostics(io, ctx, warnings, io.stderr);
  if (plan.summary.forbidden) {
    io.stderr(
      `terfyn plan: the plan violates policy (${plural(plan.policy_violations.length, "violation")}); it cannot be applied\n`,
    );
    return 1;
  }
  if (values["detailed-exitcode"]) return plan.summary.has_changes ? 2 : 0;
  return 0;
}

function checkFormat(value: string, flag: string): Format {
  if (!(FORMATS as readonly string[]).includes(value)) {
    throw new UsageError(`plan: ${flag} must be one of ${FORMATS.join(", ")}, not \`${value}\``);
  }
  return value as Format;
}
