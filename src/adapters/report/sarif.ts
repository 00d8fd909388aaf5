/**
 * The plan as SARIF 2.1.0 (for code-scanning upload), built with node-sarif-builder. Lives in
 * adapters because the builder library also writes files; the content comes from the core's
 * annotations so every format agrees on what is flagged and where.
 */

import {
  SarifBuilder,
  SarifResultBuilder,
  SarifRuleBuilder,
  SarifRunBuilder,
} from "node-sarif-builder";
import type { Log } from "sarif";
import type { Plan } from "../../core/plan/plan.ts";
import { renderPlanAnnotations } from "../../core/render/plan-annotations.ts";

const RULES = {
  "terfyn/forbidden-effect":
    "A grant reaches an effect that a policy forbids or requires approval for.",
  "terfyn/authority-widened":
    "A change lets an agent autonomously reach an effect or operation it could not before.",
  "terfyn/gated-authority-added":
    "A change adds an operation an agent may use with human approval.",
} as const;

export function renderPlanSarif(
  plan: Plan,
  options: { pathPrefix?: string; toolVersion: string },
): Log {
  const builder = new SarifBuilder();
  const run = new SarifRunBuilder().initSimple({
    toolDriverName: "terfyn",
    toolDriverVersion: options.toolVersion,
    url: "https://github.com/terfyn/terfyn",
  });
  for (const [ruleId, text] of Object.entries(RULES)) {
    run.addRule(new SarifRuleBuilder().initSimple({ ruleId, shortDescriptionText: text }));
  }
  for (const a of renderPlanAnnotations(
    plan,
    options.pathPrefix === undefined ? {} : { pathPrefix: options.pathPrefix },
  )) {
    const ruleId =
      a.annotation_level === "failure"
        ? "terfyn/forbidden-effect"
        : a.annotation_level === "warning"
          ? "terfyn/authority-widened"
          : "terfyn/gated-authority-added";
    const init: Parameters<SarifResultBuilder["initSimple"]>[0] = {
      level:
        a.annotation_level === "failure"
          ? "error"
          : a.annotation_level === "warning"
            ? "warning"
            : "note",
      messageText: `${a.title}: ${a.message}`,
      ruleId,
      fileUri: a.path,
      startLine: a.start_line,
      endLine: a.end_line,
    };
    if (a.start_column !== undefined) init.startColumn = a.start_column;
    if (a.end_column !== undefined) init.endColumn = a.end_column + 1;
    run.addResult(new SarifResultBuilder().initSimple(init));
  }
  builder.addRun(run);
  const log = builder.buildSarifOutput() as Log;
  const first = log.runs[0];
  if (first) first.properties = { planHash: plan.hash, project: plan.project };
  return log;
}
