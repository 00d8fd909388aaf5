/**
 * One project's result on a pull request as Markdown: the sticky comment, the check run's
 * summary and the job summary are this one renderer at different budgets. The order is what a
 * reviewer needs: the outcome and its counts first, then what widened (per agent: effect, mode,
 * operation, severity, `.agent` line), the policy violations and failing capability tests, the
 * risk delta, changed prompts as a diff, the full plan folded, and the footer (plan hash,
 * base/head/merge commits, the run, and who may approve with the exact command — only when an
 * approval would change the outcome).
 *
 * Within any budget the headline, the head of the widened list (with "and N more") and the
 * footer survive; the rest is dropped or truncated, saying so. Every value from the repository
 * is escaped (escape.ts, markdown-escape.ts). Pure.
 */

import { diffLines } from "diff";
import type { ProjectOutcomeVerdict } from "../ci/outcome.ts";
import { outcomeHeadline } from "../ci/outcome.ts";
import type { Diagnostic } from "../diagnostics.ts";
import { hostChangeEffect, hostChangeMode, hostChangeSubject } from "../hosts/host-plan.ts";
import { agentAddress } from "../model/agent-names.ts";
import type { AttributeChange, Plan } from "../plan/plan.ts";
import type { BoundEntry } from "../plan/resources.ts";
import { defaultSeverity, SEVERITY_ORDER } from "../plan/resources.ts";
import type { SourceText } from "../source.ts";
import type { CapabilityTestReport } from "../testing/capability-tests.ts";
import { renderDiagnosticsText } from "./diagnostics-text.ts";
import { htmlCode } from "./escape.ts";
import { mdCode, mdFence, mdText } from "./markdown-escape.ts";
import { renderPlanText } from "./plan-text.ts";

/** GitHub's limits per surface, in characters. */
export const COMMENT_BUDGET = 65_536;
export const CHECK_OUTPUT_BUDGET = 65_535;
export const JOB_SUMMARY_BUDGET = 1_048_576;

export interface Revisions {
  event: "pull_request" | "merge_group" | "push";
  base?: string;
  head: string;
  /** The merge result planned: a commit, or a tree computed with `git merge-tree`. */
  merge?: { id: string; computed: boolean };
}

export interface ProjectReport {
  /** Relative to the repository root; "." for the root. */
  path: string;
  outcome: ProjectOutcomeVerdict;
  plan?: Plan;
  tests: CapabilityTestReport;
  /** Errors that stopped planning, with the sources they point into. */
  blocking: readonly Diagnostic[];
  sources?: ReadonlyMap<string, SourceText>;
  /** Why the base could not serve as the prior (it does not validate), when it could not. */
  baseProblem?: string;
  /** Where the base had this project, when it moved (the plan is against the project there). */
  movedFrom?: string;
  /** The base's project is gone from the head's selection: deleted, or moved to `movedTo`. */
  removed?: { movedTo?: string };
  conflicts?: readonly string[];
  revisions: Revisions;
  runUrl?: string;
  /** The role an approver needs. */
  approvers: string;
}

export interface ReportOptions {
  budget: number;
  /** A hidden marker line put first (the sticky comment's). */
  marker?: string;
  /** Where the complete plan is when this rendering is cut (job summary, artifact). */
  fullPlanAt?: string;
  /** Rows of the widened table before "and N more", at most. */
  maxWidenedRows?: number;
}

const short = (sha: string | undefined) => (sha ? sha.slice(0, 12) : "?");

export function projectLabel(path: string): string {
  return path === "." ? "(repository root)" : path;
}

interface WidenedRow {
  address: string;
  entry: BoundEntry | { effect: string; mode: string; tool: string; severity: string };
  where?: string;
  note?: string;
}

export function widenedRows(plan: Plan, projectPath: string): WidenedRow[] {
  const prefix = projectPath === "." ? "" : `${projectPath}/`;
  const where = (address: string, tool: string) => {
    const loc = plan.locations.grants[`${address} ${tool}`] ?? plan.locations.resources[address];
    return loc ? `${prefix}${loc.file}:${loc.line}` : undefined;
  };
  const rows: WidenedRow[] = [];
  for (const d of plan.effect_bounds)
    for (const e of d.added)
      rows.push({ address: d.address, entry: e, where: where(d.address, e.tool) });
  for (const c of plan.capability_delta)
    for (const m of c.mode_changes.filter((x) => x.to === "autonomous"))
      rows.push({
        address: c.address,
        entry: {
          effect: "(all of the operation's)",
          mode: "autonomous",
          tool: m.tool,
          severity: "high",
        },
        where: where(c.address, m.tool),
        note: "gated → autonomous",
      });
  // A host configuration's widened rule or key: one row, on its line, whatever else changed.
  for (const h of plan.hosts ?? [])
    for (const c of h.changes.filter((x) => x.direction === "widened")) {
      const mode = hostChangeMode(c);
      rows.push({
        address: h.agent,
        entry: {
          effect: hostChangeEffect(c),
          mode,
          tool: `${c.change} ${hostChangeSubject(c)}`,
          severity: defaultSeverity(mode),
        },
        // A removed rule's line is where the base had it.
        where: `${prefix}${c.file}:${c.line}${c.change === "removed" ? " (base)" : ""}`,
        note: c.reason,
      });
    }
  const rank = (s: string) => {
    const i = SEVERITY_ORDER.indexOf(s as (typeof SEVERITY_ORDER)[number]);
    return i < 0 ? 99 : i;
  };
  return rows.sort((a, b) => rank(a.entry.severity) - rank(b.entry.severity));
}

function widenedTable(rows: readonly WidenedRow[], room: number, maxRows: number): string {
  if (rows.length === 0) return "";
  const head = [
    "**Authority widened**",
    "",
    "| Agent | Effect | Mode | Operation | Severity | Where |",
    "|---|---|---|---|---|---|",
  ];
  let text = `${head.join("\n")}\n`;
  let shown = 0;
  for (const r of rows) {
    if (shown >= maxRows) break;
    const line = `| ${mdCode(r.address, { inTable: true })} | ${mdCode(r.entry.effect, { inTable: true })} | ${r.entry.mode}${r.note ? ` (${r.note})` : ""} | ${mdCode(r.entry.tool, { inTable: true })} | ${mdText(r.entry.severity)} | ${r.where ? mdCode(r.where, { inTable: true }) : "–"} |\n`;
    if (text.length + line.length + 40 > room && shown > 0) break;
    text += line;
    shown++;
  }
  if (shown < rows.length)
    text += `\n… and ${rows.length - shown} more (the full plan has every line)\n`;
  return text;
}

function changedTextSection(plan: Plan): string {
  const parts: string[] = [];
  for (const c of plan.changes) {
    for (const a of c.attributes) {
      if (!isLongText(a)) continue;
      const before = typeof a.before === "string" ? a.before : "";
      const after = typeof a.after === "string" ? a.after : "";
      // The <details> line is an HTML block: no Markdown escape or code span works there.
      parts.push(
        `<details><summary>${htmlCode(c.address)} ${htmlCode(a.path)} changed</summary>\n\n${mdFence(unifiedDiff(before, after), "diff")}\n\n</details>`,
      );
    }
  }
  return parts.length > 0 ? `**Changed text**\n\n${parts.join("\n\n")}\n` : "";
}

function isLongText(a: AttributeChange): boolean {
  const long = (v: unknown) => typeof v === "string" && (v.length > 72 || v.includes("\n"));
  return long(a.before) || long(a.after);
}

/** A line diff, `-`/`+`/` ` prefixed, as a reviewer reads a prompt change. */
export function unifiedDiff(before: string, after: string): string {
  const out: string[] = [];
  for (const part of diffLines(before, after)) {
    const sign = part.added ? "+" : part.removed ? "-" : " ";
    const lines = part.value.replace(/\n$/, "").split("\n");
    for (const l of lines) out.push(`${sign}${l}`);
  }
  return out.join("\n");
}

function violationsSection(plan: Plan, projectPath: string): string {
  if (plan.policy_violations.length === 0) return "";
  const prefix = projectPath === "." ? "" : `${projectPath}/`;
  const lines = ["**Policy violations**", ""];
  for (const v of plan.policy_violations) {
    const loc = plan.locations.grants[`${agentAddress(v.agent)} ${v.tool}`];
    lines.push(
      `- ⛔ ${mdText(v.message.replace(/`/g, ""))}${loc ? ` (${mdCode(`${prefix}${loc.file}:${loc.line}`)})` : ""}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

function testsSection(tests: CapabilityTestReport): string {
  if (tests.results.length === 0) return "";
  const lines = [`**Capability tests:** ${tests.passed} passed, ${tests.failed} failed`];
  for (const f of tests.results.filter((r) => !r.passed))
    lines.push(
      `- ❌ ${mdCode(f.test)}: ${mdCode(f.text)}${f.reason ? `: ${mdText(f.reason)}` : ""}`,
    );
  return `${lines.join("\n")}\n`;
}

function guardsSection(plan: Plan): string {
  if (plan.guards_relaxed.length === 0) return "";
  const lines = ["**Guards relaxed** (each one WIDENED)", ""];
  for (const g of plan.guards_relaxed) lines.push(`- ${mdText(g.kind)}: ${mdText(g.reason)}`);
  return `${lines.join("\n")}\n`;
}

function riskSection(plan: Plan): string {
  if (plan.risk_delta.length === 0) return "";
  const lines = ["**Risk delta**", ""];
  for (const sev of SEVERITY_ORDER)
    for (const r of plan.risk_delta.filter((x) => x.severity === sev))
      lines.push(`- **${r.severity}** ${mdText(r.kind)}: ${mdText(r.message)}`);
  return `${lines.join("\n")}\n`;
}

function footer(r: ProjectReport): string {
  const rev = r.revisions;
  const bits: string[] = [];
  if (r.plan) bits.push(`Plan ${mdCode(r.plan.hash)}`);
  if (rev.base) bits.push(`base ${mdCode(short(rev.base))}`);
  bits.push(`${rev.event === "merge_group" ? "queue" : "head"} ${mdCode(short(rev.head))}`);
  if (rev.merge)
    bits.push(
      `${rev.merge.computed ? "merge (computed tree)" : "merge"} ${mdCode(short(rev.merge.id))}`,
    );
  if (r.runUrl && /^https:\/\/[^\s()<>]+$/.test(r.runUrl)) bits.push(`[workflow run](${r.runUrl})`);
  const lines = ["---", bits.join(" · ")];
  if (r.outcome.approvable && r.plan) {
    lines.push(
      "",
      `To approve this plan, a person with the **${r.approvers}** role or higher (not a bot, and not anyone who changed this pull request: its author, a commit's author or committer, or whoever pushed its head) comments, on a line of its own:`,
      "",
      mdFence(`/terfyn approve ${r.plan.hash}`, ""),
    );
  }
  return `${lines.join("\n")}\n`;
}

function headlineBlock(r: ProjectReport): string {
  const h = outcomeHeadline(r.outcome);
  const lines = [`### ${h.icon} Terfyn · ${mdCode(projectLabel(r.path))} · ${h.text}`, ""];
  if (r.outcome.reasons.length > 0) {
    lines.push(...r.outcome.reasons.map((x) => `- ${mdText(x)}`), "");
  }
  if (r.conflicts && r.conflicts.length > 0) {
    lines.push(
      `Conflicting files: ${r.conflicts
        .slice(0, 20)
        .map((c) => mdCode(c))
        .join(", ")}${r.conflicts.length > 20 ? ` and ${r.conflicts.length - 20} more` : ""}`,
      "",
    );
  }
  if (r.baseProblem) lines.push(`> ⚠️ ${mdText(r.baseProblem)}`, "");
  if (r.removed)
    lines.push(
      r.removed.movedTo === undefined
        ? "**Project removed**: the base has this project and the head does not. Every guard it declared is gone, which counts as a widening."
        : `**Project removed** from the selection: it moved to ${mdCode(r.removed.movedTo)}, which input \`project\` does not select. Every guard it declared is no longer checked, which counts as a widening.`,
      "",
    );
  if (r.movedFrom)
    lines.push(`Moved from ${mdCode(r.movedFrom)}: planned against the base's project there.`, "");
  if (r.plan && r.outcome.verdict === "no-authority-change" && !r.plan.summary.has_changes)
    lines.push("No resource or authority changed against the base.", "");
  return `${lines.join("\n")}\n`;
}

/** The whole report within `budget` characters. */
export function renderProjectReport(r: ProjectReport, options: ReportOptions): string {
  const budget = options.budget;
  const top = `${options.marker ? `${options.marker}\n` : ""}${headlineBlock(r)}`;
  const foot = footer(r);
  const cut = `\n_Cut to fit this surface${options.fullPlanAt ? `: ${mdText(options.fullPlanAt)}` : ""}._\n`;
  let room = budget - top.length - foot.length - cut.length - 2;
  const parts: string[] = [top];
  let truncated = false;

  if (!r.plan) {
    const text = r.blocking.length
      ? renderDiagnosticsText(r.blocking, {
          sources: r.sources ?? new Map(),
          displayPath: (f) => (r.path === "." ? f : `${r.path}/${f}`),
        })
      : "";
    if (text) {
      let block = mdFence(text);
      if (block.length + 2 > room) {
        block = mdFence(`${text.slice(0, Math.max(0, room - 200)).replace(/\n[^\n]*$/, "")}\n…`);
        truncated = true;
      }
      parts.push(`${block}\n`);
      room -= block.length + 1;
    }
  } else {
    const table = widenedTable(
      widenedRows(r.plan, r.path),
      Math.max(600, Math.floor(room * 0.6)),
      options.maxWidenedRows ?? 100,
    );
    if (table) {
      parts.push(table);
      room -= table.length;
      if (table.includes("\n… and ")) truncated = true;
    }
    for (const section of [
      violationsSection(r.plan, r.path),
      guardsSection(r.plan),
      testsSection(r.tests),
      riskSection(r.plan),
      changedTextSection(r.plan),
    ]) {
      if (!section) continue;
      if (section.length + 1 <= room) {
        parts.push(section);
        room -= section.length + 1;
      } else truncated = true;
    }
    const open = "<details><summary>Full plan</summary>\n\n";
    const close = "\n\n</details>\n";
    const text = renderPlanText(r.plan, { priorName: "the base" });
    const full = mdFence(text);
    if (open.length + full.length + close.length <= room) {
      parts.push(`${open}${full}${close}`);
    } else if (room > open.length + close.length + 400) {
      const keep = room - open.length - close.length - 120;
      parts.push(
        `${open}${mdFence(`${text.slice(0, keep).replace(/\n[^\n]*$/, "")}\n… (truncated)`)}${close}`,
      );
      truncated = true;
    } else truncated = true;
  }
  let body = `${parts.join("\n")}${truncated ? cut : ""}\n${foot}`;
  if (body.length > budget) body = `${top}${cut}\n${foot}`.slice(0, budget);
  return body;
}
