/**
 * The App's one status comment per review run: the hidden ledger first, then what the run is
 * doing, what awaits whom (the gate, the hash, the exact command, who may give it), and at the
 * end the report. Every value from the repository or the run is escaped; the report (which
 * quotes review comments) is shown as a fenced block, never rendered as Markdown. Pure.
 */
import { LABEL_ROLE, type Ledger, ledgerMarker } from "../app/triggers.ts";
import { mdCode, mdFence, mdText } from "./markdown-escape.ts";

export interface RunStatusDetails {
  /** One line on what happens now ("reading the review threads", "stuck: …"). */
  note?: string;
  /** Comments left out of the trigger-time snapshot. */
  leftOut?: readonly { comment: string; author: string; reason: string }[];
  /** The run's report.md, at a terminal state. */
  report?: string;
  /** What the publishers could not do without failing the run (issues disabled). */
  notices?: readonly string[];
  /** The run's model spend so far, one sentence. */
  spend?: string;
  runUrl?: string;
}

export function renderRunStatus(l: Ledger, d: RunStatusDetails = {}): string {
  const lines = [ledgerMarker(l)];
  const state = l.terminal ?? (l.gate ? `waiting at the ${l.gate} gate` : `phase ${l.phase}`);
  lines.push(
    `### ${l.terminal ? (["done", "nothing-to-do"].includes(l.terminal) ? "✅" : l.terminal === "done-but-unproven" ? "⚠️" : "⛔") : l.gate ? "⏸️" : "🔄"} Terfyn review-fix · ${mdText(state)}`,
    "",
    `Run ${mdCode(l.run)} on head ${mdCode(l.head.slice(0, 12))}.`,
  );
  if (d.note) lines.push("", mdText(d.note));
  if (l.gate && l.hash && !l.terminal) {
    lines.push(
      "",
      `The ${l.gate} gate awaits a person with the **${LABEL_ROLE}** role or higher (not the pull request's author, not a bot). Read the ${l.gate === "plan" ? "plan" : "diff and the replies"} in the run, then comment on a line of its own:`,
      "",
      mdFence(`/terfyn approve ${l.hash}`, ""),
      "",
      "`/terfyn stop` ends the run; `/terfyn status` shows this again. A push to the branch voids approvals and stops the run.",
    );
  }
  if (l.interrupted && !l.terminal && !l.gate) {
    lines.push(
      "",
      `The run stopped in phase ${mdCode(l.phase)} without ending. A person with the **${LABEL_ROLE}** role or higher goes on by commenting, on a line of its own:`,
      "",
      mdFence("/terfyn resume", ""),
      "",
      "`/terfyn stop` ends the run instead.",
    );
  }
  if (d.leftOut && d.leftOut.length > 0) {
    lines.push("", `**Left out of the snapshot** (created or edited after the label):`);
    for (const c of d.leftOut.slice(0, 20))
      lines.push(`- comment ${mdCode(c.comment)} by ${mdCode(c.author)}: ${mdText(c.reason)}`);
    if (d.leftOut.length > 20) lines.push(`- … and ${d.leftOut.length - 20} more`);
  }
  if (d.notices && d.notices.length > 0) {
    lines.push("", "**Not published:**");
    for (const n of d.notices.slice(0, 20)) lines.push(`- ${mdText(n)}`);
  }
  if (d.spend) lines.push("", `Model spend: ${mdText(d.spend)}.`);
  if (d.report)
    lines.push(
      "",
      "<details><summary>Report</summary>",
      "",
      mdFence(d.report.slice(0, 50_000), "markdown"),
      "",
      "</details>",
    );
  if (d.runUrl && /^https:\/\/[^\s()<>]+$/.test(d.runUrl)) lines.push("", `[Run](${d.runUrl})`);
  return `${lines.join("\n")}\n`;
}
