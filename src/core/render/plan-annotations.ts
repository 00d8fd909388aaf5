/**
 * The plan as GitHub check-run annotations: a failure on the grant line of every policy
 * violation, a warning on every grant that widened an agent's autonomous authority, a notice on
 * every new gated grant. Errors first. Paths are prefixed to be relative to the repository.
 */
import type { Plan } from "../plan/plan.ts";

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
    push(at(`Agent/${v.agent} ${v.tool}`, `Agent/${v.agent}`), {
      annotation_level: "failure",
      title:
        v.rule === "forbid" ? `Forbidden effect: ${v.effect}` : `Approval required: ${v.effect}`,
      message: v.message.replace(/`/g, ""),
    });
  }
  for (const delta of plan.effect_bounds) {
    for (const e of delta.added) {
      push(at(`${delta.address} ${e.tool}`, delta.address), {
        annotation_level: e.mode === "autonomous" ? "warning" : "notice",
        title:
          e.mode === "autonomous"
            ? `Authority WIDENED: ${delta.address}`
            : `Gated authority added: ${delta.address}`,
        message: `[${e.severity}] effect_bound: ${e.effect} ${e.mode} ${delta.address} may select ${e.tool}`,
      });
    }
  }
  for (const cap of plan.capability_delta) {
    for (const m of cap.mode_changes.filter((c) => c.to === "autonomous")) {
      push(at(`${cap.address} ${m.tool}`, cap.address), {
        annotation_level: "warning",
        title: `Authority WIDENED: ${cap.address}`,
        message: `${m.tool} no longer requires approval (gated -> autonomous)`,
      });
    }
  }
  const rank = { failure: 0, warning: 1, notice: 2 };
  return out.sort((a, b) => rank[a.annotation_level] - rank[b.annotation_level]);
}
