/**
 * The plan as Markdown for a pull-request comment: the verdict first (one line a reviewer can
 * act on), then the authority table and risk delta, then the full text plan in a collapsible
 * block. A size budget truncates only the collapsible part, so the verdict always survives.
 * Every value from the repository (the project's path, names, files, messages) is escaped
 * (markdown-escape.ts): none can open a link, image, mention, heading or `</details>`.
 */
import { agentAddress } from "../model/agent-names.ts";
import type { Plan } from "../plan/plan.ts";
import { SEVERITY_ORDER } from "../plan/resources.ts";
import { mdCode, mdFence, mdText } from "./markdown-escape.ts";
import { renderPlanText } from "./plan-text.ts";

/** GitHub rejects comment bodies over 65,536 characters; stay well below. */
export const DEFAULT_MARKDOWN_BUDGET = 60_000;

export interface PlanMarkdownOptions {
  projectPath: string;
  budget?: number;
  /** Text appended after the details (e.g. where the full plan is when truncated). */
  footer?: string;
  priorName?: string;
}

export function planVerdict(plan: Plan): { icon: string; text: string } {
  if (plan.summary.forbidden) return { icon: "⛔", text: "forbidden by policy" };
  if (plan.summary.widened)
    return {
      icon: "⚠️",
      text:
        plan.authority.autonomous === "WIDENED" || plan.authority.gated === "WIDENED"
          ? "authority WIDENED"
          : "guards relaxed: authority WIDENED",
    };
  if (!plan.summary.has_changes) return { icon: "✅", text: "no changes" };
  return { icon: "✅", text: "no authority widened" };
}

export function renderPlanMarkdown(plan: Plan, options: PlanMarkdownOptions): string {
  const budget = options.budget ?? DEFAULT_MARKDOWN_BUDGET;
  const v = planVerdict(plan);
  const s = plan.summary;
  const head: string[] = [
    `### ${v.icon} Terfyn plan for ${mdCode(options.projectPath)}: ${v.text}`,
    "",
    s.has_changes
      ? `**${s.add} to add, ${s.change} to change, ${s.destroy} to destroy** · plan \`${plan.hash}\``
      : `No changes; no authority changed · plan \`${plan.hash}\``,
  ];
  if (plan.policy_violations.length > 0) {
    head.push("", "**Policy violations**", "");
    for (const p of plan.policy_violations) {
      const loc = plan.locations.grants[`${agentAddress(p.agent)} ${p.tool}`];
      head.push(`- ⛔ ${mdText(p.message)}${loc ? ` (${mdCode(`${loc.file}:${loc.line}`)})` : ""}`);
    }
  }
  if (plan.authority.agents.length > 0) {
    head.push("", "| Agent | autonomous | gated |", "|---|---|---|");
    for (const a of plan.authority.agents)
      head.push(
        `| ${mdCode(a.address, { inTable: true })} | ${cell(a.autonomous)} | ${cell(a.gated)} |`,
      );
  }
  if (plan.guards_relaxed.length > 0) {
    head.push("", "**Guards relaxed** (each one WIDENED)", "");
    for (const g of plan.guards_relaxed) head.push(`- ${g.kind}: ${mdText(g.reason)}`);
  }
  if (plan.risk_delta.length > 0) {
    head.push("", "**Risk delta**", "");
    for (const sev of SEVERITY_ORDER) {
      for (const r of plan.risk_delta.filter((x) => x.severity === sev))
        head.push(`- **${r.severity}** ${r.kind}: ${mdText(r.message)}`);
    }
  }
  const foot = options.footer ? ["", options.footer] : [];
  const fixed = `${head.join("\n")}\n`;
  const text = renderPlanText(plan, { priorName: options.priorName ?? "the base" });
  const open = "\n<details><summary>Full plan</summary>\n\n";
  const close = "\n</details>\n";
  const footer = foot.length > 0 ? `${foot.join("\n")}\n` : "";
  // The fence outgrows any run of backticks in the plan; room for a long one is kept.
  const room = budget - fixed.length - open.length - close.length - footer.length - 40;
  if (room <= 200)
    return `${fixed}\n_The full plan is too long for this comment._\n${footer}`.slice(0, budget);
  let body = text;
  if (body.length > room) {
    const note = "\n… (truncated: the full plan is in the job summary and the plan artifact)\n";
    body = `${body.slice(0, room - note.length).replace(/\n[^\n]*$/, "")}${note}`;
  }
  return `${fixed}${open}${mdFence(body)}${close}${footer}`;
}

function cell(change: string): string {
  return change === "WIDENED" ? "**WIDENED**" : change === "NARROWED" ? "NARROWED" : "–";
}
