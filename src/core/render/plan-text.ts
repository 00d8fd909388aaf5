/**
 * The plan as terminal text. Reproduces the reference lines word for word (README, docs/language.md) (resource changes,
 * "Effect bound", "Capability delta", "Authority", "Risk delta"), then workflow bounds, policy
 * violations and a summary with the plan hash. Colour only when asked (a TTY). Every name, key,
 * value and message from the project is plain text with its invisible characters (controls,
 * bidi, zero-width) shown as escapes (escape.ts), our colours added after.
 */
import { byDirection, hostChangeLine } from "../hosts/host-plan.ts";
import { agentAddress } from "../model/agent-names.ts";
import type { AttributeChange, Plan } from "../plan/plan.ts";
import { type BoundEntry, type JsonValue, SEVERITY_ORDER } from "../plan/resources.ts";
import { plural } from "../words.ts";
import { plainText } from "./escape.ts";

/** A name, path or message from the project, one line, its invisible characters shown. */
const t = (s: string) => plainText(s);

export interface PlanTextOptions {
  color?: boolean;
  /** How the prior side is named in the no-changes line, e.g. "the state" or "HEAD~1". */
  priorName?: string;
}

const COLORS = {
  green: "\u001b[32m",
  yellow: "\u001b[33m",
  red: "\u001b[31m",
  bold: "\u001b[1m",
  reset: "\u001b[0m",
};

const SYMBOL = { create: "+", update: "~", delete: "-" } as const;
const VERB = { create: "create", update: "update", delete: "destroy" } as const;

export function formatValue(value: JsonValue): string {
  if (typeof value === "string") {
    const firstLine = value.split("\n")[0] ?? "";
    if (value.length > 72 || value.includes("\n")) {
      return `${t(JSON.stringify(`${firstLine.slice(0, 48)}…`))} (${value.length} chars)`;
    }
  }
  return t(JSON.stringify(value));
}

export function attributeLine(a: AttributeChange): string {
  const before = a.before === undefined ? "" : `${formatValue(a.before)} `;
  const after = a.after === undefined ? "" : ` ${formatValue(a.after)}`;
  return `${t(a.path)}: ${before}->${after}`;
}

export function boundLine(address: string, e: BoundEntry, removed = false): string {
  return removed
    ? `- [info] effect_bound_removed: ${t(e.effect)} ${e.mode} ${t(address)} may no longer select ${t(e.tool)}`
    : `- [${e.severity}] effect_bound: ${t(e.effect)} ${e.mode} ${t(address)} may select ${t(e.tool)}`;
}

export function renderPlanText(plan: Plan, options: PlanTextOptions = {}): string {
  const paint = (c: keyof typeof COLORS, s: string) =>
    options.color ? `${COLORS[c]}${s}${COLORS.reset}` : s;
  const sections: string[][] = [];

  if (!plan.summary.has_changes) {
    const lines = [
      `No changes. The configuration matches ${t(options.priorName ?? "the prior configuration")}; no authority changed.`,
    ];
    if (plan.policy_violations.length > 0) sections.push(violationLines(plan));
    lines.push("", `Plan hash: ${plan.hash}`);
    return `${[lines, ...sections].map((s) => s.join("\n")).join("\n\n")}\n`;
  }

  for (const c of plan.changes) {
    const color = c.action === "create" ? "green" : c.action === "update" ? "yellow" : "red";
    const lines = [paint(color, `${SYMBOL[c.action]} ${VERB[c.action]} ${t(c.address)}`)];
    if (c.action !== "delete") for (const a of c.attributes) lines.push(`  ${attributeLine(a)}`);
    sections.push(lines);
  }

  for (const delta of plan.effect_bounds) {
    sections.push([
      `Effect bound (${t(delta.address)}):`,
      ...delta.added.map((e) => boundLine(delta.address, e)),
      ...delta.removed.map((e) => boundLine(delta.address, e, true)),
    ]);
  }

  if (plan.capability_delta.length > 0) {
    const lines = ["Capability delta:"];
    for (const d of plan.capability_delta) {
      lines.push(`  ${t(d.address)}`);
      for (const a of d.added)
        lines.push(`    + ${t(a.tool)}${a.mode === "gated" ? " (requires approval)" : ""}`);
      for (const m of d.mode_changes) lines.push(`    ~ ${t(m.tool)}: ${m.from} -> ${m.to}`);
      for (const r of d.removed)
        lines.push(`    - ${t(r.tool)}${r.mode === "gated" ? " (requires approval)" : ""}`);
    }
    sections.push(lines);
  }

  for (const h of plan.hosts ?? []) {
    sections.push([
      `Host authority (${t(h.agent)}: ${h.files.map(t).join(", ")}):`,
      ...byDirection(h.changes).map((c) => `  ${hostChangeLine(c, t)}`),
    ]);
  }

  if (plan.authority.agents.length > 0) {
    const lines = ["Authority:"];
    for (const mode of ["autonomous", "gated"] as const) {
      const change = plan.authority[mode];
      if (change === "UNCHANGED") continue;
      lines.push(`  ${mode} -> ${change === "WIDENED" ? paint("red", change) : change}`);
    }
    if (lines.length === 1) lines.push("  unchanged");
    sections.push(lines);
  }

  if (plan.guards_relaxed.length > 0) {
    const lines = [`Guards relaxed (each ${paint("red", "WIDENED")}):`];
    for (const g of plan.guards_relaxed) lines.push(`  - ${g.kind}: ${t(g.reason)}`);
    sections.push(lines);
  }

  if (plan.risk_delta.length > 0) {
    const lines = ["Risk delta:"];
    for (const severity of SEVERITY_ORDER) {
      const items = plan.risk_delta.filter((r) => r.severity === severity);
      if (items.length === 0) continue;
      lines.push(`  ${severity}:`);
      for (const r of items) lines.push(`  - [${r.severity}] ${r.kind}: ${t(r.message)}`);
    }
    sections.push(lines);
  }

  const changedWorkflows = plan.workflows.filter((w) => w.action !== "unchanged");
  if (changedWorkflows.length > 0) {
    const lines = ["Workflow bounds:"];
    for (const w of changedWorkflows) {
      lines.push(`  ${t(w.address)}`);
      lines.push(`    effects: ${w.effects.length > 0 ? t(w.effects.join(", ")) : "none"}`);
      lines.push(
        `    loops: ${w.loop_limits.length > 0 ? `${w.loop_limits.map((l) => `limit ${l}`).join(", ")} (at most ${plural(w.max_iterations, "iteration")})` : "none"}`,
      );
      lines.push(`    human approval: ${w.hitl.length > 0 ? t(w.hitl.join("; ")) : "none"}`);
      lines.push(`    model calls: at most ${w.model_call_bound}`);
    }
    sections.push(lines);
  }

  if (plan.policy_violations.length > 0) sections.push(violationLines(plan));

  const s = plan.summary;
  const authority = (["autonomous", "gated"] as const)
    .filter((m) => plan.authority[m] !== "UNCHANGED")
    .map((m) => `${m} ${plan.authority[m]}`);
  sections.push([
    `Plan: ${s.add} to add, ${s.change} to change, ${s.destroy} to destroy.${authority.length > 0 ? ` Authority: ${authority.join(", ")}.` : ""}${plan.guards_relaxed.length > 0 ? ` ${plural(plan.guards_relaxed.length, "guard")} relaxed (WIDENED).` : ""}${s.forbidden ? ` ${plural(plan.policy_violations.length, "policy violation")}.` : ""}`,
    `Plan hash: ${plan.hash}`,
  ]);
  return `${sections.map((lines) => lines.join("\n")).join("\n\n")}\n`;
}

function violationLines(plan: Plan): string[] {
  const lines = ["Policy violations:"];
  for (const v of plan.policy_violations) {
    const where = plan.locations.grants[`${agentAddress(v.agent)} ${v.tool}`];
    lines.push(
      `- [critical] ${v.rule === "forbid" ? "forbidden_effect" : "approval_required"}: ${t(v.message)}${where ? ` (${t(where.file)}:${where.line})` : ""}`,
    );
  }
  return lines;
}
