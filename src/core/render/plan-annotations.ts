/**
 * The plan as GitHub check-run annotations: a failure on the grant line of every policy
 * violation, a warning on every grant that widened an agent's autonomous authority and on the
 * declaration of every relaxed guard the head still has, a notice on every new gated grant.
 * Errors first. Paths are prefixed to be relative to the repository.
 * Titles and messages are plain text with every invisible character (controls, bidi, zero-width)
 * shown as an escape (escape.ts); SARIF takes its messages from here. A path stays as it is: it
 * must name the file (a name with a control or bidi character is refused before, TF2010).
 */
import { hostChangeSubject } from "../hosts/host-plan.ts";
import { agentAddress } from "../model/agent-names.ts";
import type { Plan } from "../plan/plan.ts";
import { plainText } from "./escape.ts";

/** One line of plain text: a value cannot forge a second line or hide what it says. */
const t = (s: string) => plainText(s);

export interface Annotation {
  path: string;
  start_line: number;
  end_line: number;
  start_column?: number;
  end_column?: number;
  annotation_level: "failure" | "warning" | "notice";
  title: string;
  message: string;
}

export function renderPlanAnnotations(
  plan: Plan,
  options: { pathPrefix?: string } = {},
): Annotation[] {
  const prefix = options.pathPrefix ?? "";
  const out: Annotation[] = [];
  const seen = new Set<string>();
  const at = (key: string, fallback: string) =>
    plan.locations.grants[key] ?? plan.locations.resources[fallback];
  const push = (
    loc: ReturnType<typeof at>,
    a: Omit<Annotation, "path" | "start_line" | "end_line">,
  ) => {
    if (!loc) return;
    const key = `${loc.file}:${loc.line}:${a.annotation_level}:${a.title}`;
    if (seen.has(key)) return;
    seen.add(key);
    const ann: Annotation = {
      path: `${prefix}${loc.file}`,
      start_line: loc.line,
      end_line: loc.endLine,
      ...a,
    };
    if (loc.line === loc.endLine) {
      ann.start_column = loc.column;
      ann.end_column = Math.max(loc.column, loc.endColumn - 1);
    }
    out.push(ann);
  };

  for (const v of plan.policy_violations) {
    push(at(`${agentAddress(v.agent)} ${v.tool}`, agentAddress(v.agent)), {
      annotation_level: "failure",
      title:
        v.rule === "forbid"
          ? `Forbidden effect: ${t(v.effect)}`
          : `Approval required: ${t(v.effect)}`,
      message: t(v.message.replace(/`/g, "")),
    });
  }
  for (const delta of plan.effect_bounds) {
    for (const e of delta.added) {
      push(at(`${delta.address} ${e.tool}`, delta.address), {
        annotation_level: e.mode === "autonomous" ? "warning" : "notice",
        title:
          e.mode === "autonomous"
            ? `Authority WIDENED: ${t(delta.address)}`
            : `Gated authority added: ${t(delta.address)}`,
        message: `[${e.severity}] effect_bound: ${t(e.effect)} ${e.mode} ${t(delta.address)} may select ${t(e.tool)}`,
      });
    }
  }
  for (const cap of plan.capability_delta) {
    for (const m of cap.mode_changes.filter((c) => c.to === "autonomous")) {
      push(at(`${cap.address} ${m.tool}`, cap.address), {
        annotation_level: "warning",
        title: `Authority WIDENED: ${t(cap.address)}`,
        message: `${t(m.tool)} no longer requires approval (gated -> autonomous)`,
      });
    }
  }
  // A host configuration's widened rule or key, on its own line of its file.
  for (const h of plan.hosts ?? []) {
    for (const c of h.changes) {
      if (c.direction !== "widened") continue;
      // A removed rule's line is the base's: on the head's file, its first line; a deleted
      // file has no line left (the comment lists the change).
      if (!h.files.includes(c.file)) continue;
      const line = c.change === "removed" ? 1 : c.line;
      push(
        { file: c.file, line, column: 1, endLine: line, endColumn: 1 },
        {
          annotation_level: "warning",
          title: `Authority WIDENED: ${t(h.agent)}`,
          message: `${c.change} ${t(hostChangeSubject(c))}: ${t(c.reason)}`,
        },
      );
    }
  }
  // A relaxed guard widens as surely as a grant: on the declaration it is about, when the head
  // still has one (a deleted policy or test has no line left to annotate; the comment lists it).
  for (const g of plan.guards_relaxed) {
    push(plan.locations.resources[g.address], {
      annotation_level: "warning",
      title: `Guard relaxed (WIDENED): ${t(g.kind)}`,
      message: t(g.reason),
    });
  }
  const rank = { failure: 0, warning: 1, notice: 2 };
  return out.sort((a, b) => rank[a.annotation_level] - rank[b.annotation_level]);
}

/** What one project's report annotates: blocking errors, failing capability tests, the plan. */
export function projectAnnotations(input: {
  path: string;
  blocking: readonly {
    code: string;
    message: string;
    span: { file: string; line: number; endLine: number };
  }[];
  tests: {
    results: readonly {
      passed: boolean;
      kind: string;
      text: string;
      reason?: string;
      culprit?: { file: string; line: number; endLine: number };
    }[];
  };
  plan?: Plan;
}): Annotation[] {
  const prefix = input.path === "." ? "" : `${input.path}/`;
  const out: Annotation[] = [];
  for (const d of input.blocking) {
    out.push({
      path: `${prefix}${d.span.file}`,
      start_line: d.span.line,
      end_line: d.span.endLine,
      annotation_level: "failure",
      title: t(d.code),
      message: plainText(d.message, { multiline: true }),
    });
  }
  for (const r of input.tests.results) {
    if (r.passed || !r.culprit) continue;
    out.push({
      path: `${prefix}${r.culprit.file}`,
      start_line: r.culprit.line,
      end_line: r.culprit.endLine,
      annotation_level: "failure",
      title: `Capability test failed: ${t(r.kind)}`,
      message: `${t(r.text)}: ${t(r.reason ?? "")}`,
    });
  }
  if (input.plan) out.push(...renderPlanAnnotations(input.plan, { pathPrefix: prefix }));
  const rank = { failure: 0, warning: 1, notice: 2 };
  return out.sort((a, b) => rank[a.annotation_level] - rank[b.annotation_level]);
}

/**
 * Annotations as workflow commands (which need no token, so they work on forks): GitHub shows
 * at most 10 per level per step, so the first 10 of each level in severity order, and one
 * line saying how many more there are and where they are.
 */
export function capWorkflowAnnotations(
  annotations: readonly Annotation[],
  perLevel = 10,
): { shown: Annotation[]; omitted: number } {
  const count = { failure: 0, warning: 0, notice: 0 };
  const rank = { failure: 0, warning: 1, notice: 2 };
  const shown: Annotation[] = [];
  let omitted = 0;
  for (const a of [...annotations].sort(
    (x, y) => rank[x.annotation_level] - rank[y.annotation_level],
  )) {
    if (count[a.annotation_level] < perLevel) {
      count[a.annotation_level]++;
      shown.push(a);
    } else omitted++;
  }
  return { shown, omitted };
}
