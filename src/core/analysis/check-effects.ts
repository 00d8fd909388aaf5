/**
 * Effect and policy rules: undeclared reachable effects, declared-but-unreachable effects,
 * recursion between workflows, policy `forbid` and `requireApproval`, and names in policies and
 * capability tests that match nothing. Pure.
 */
import { type Diagnostic, diagnostic } from "../diagnostics.ts";
import { agentNames, effectReaches, hasAgent } from "../model/agent-names.ts";
import type { ResolvedProject } from "../model/project.ts";
import { didYouMean } from "../suggest.ts";
import type { ProjectAnalysis } from "./analysis.ts";
import { findWorkflowCycles } from "./effect-bound.ts";

export function checkEffects(project: ResolvedProject, analysis: ProjectAnalysis): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];

  for (const { cycle, span } of findWorkflowCycles(project)) {
    diagnostics.push(
      diagnostic("TF5005", span, `recursion between workflows: ${cycle.join(" -> ")}`, {
        hint: "workflows may not call themselves, directly or indirectly; use a bounded `while … limit N` loop",
      }),
    );
  }

  const reach = analysis.workflowEffects;
  // When every grant resolved, no workflow calls an unresolved one: no walk per workflow.
  const anyUnresolved = [...project.agents.values()].some((a) => a.grants.some((g) => !g.resolved));
  for (const wf of project.workflows.values()) {
    const reachable = reach.get(wf.name) ?? new Map();
    const declared = new Set(wf.declaredEffects.map((e) => e.name));
    for (const [effect, w] of [...reachable].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (declared.has(effect)) continue;
      const through =
        w.via.length > 1
          ? ` through ${w.via
              .slice(1)
              .map((v: string) => `workflow ${v}`)
              .join(" -> ")}`
          : "";
      diagnostics.push(
        diagnostic(
          "TF5003",
          wf.effectsSpan,
          `workflow \`${wf.name}\` can reach \`${effect}\` (Agent/${w.agent} holds ${w.tool}${through}) but does not declare it`,
          {
            hint: `add \`${effect}\` to its effects { … }, or remove the grant`,
            related: [{ span: w.grantSpan, message: `grant ${w.tool} reaches ${effect}` }],
          },
        ),
      );
    }
    const incomplete = anyUnresolved && callsUnresolvedGrant(project, wf.name);
    for (const e of wf.declaredEffects) {
      if (!incomplete && !reachable.has(e.name)) {
        diagnostics.push(
          diagnostic(
            "TF5004",
            e.span,
            `workflow \`${wf.name}\` declares \`${e.name}\` but nothing it calls can reach it`,
            {
              hint: "remove it to keep the declaration tight",
            },
          ),
        );
      }
    }
  }

  const names = agentNames(project);
  for (const p of project.policies) {
    if (!("forbid" in p.rule)) continue;
    const { effect } = p.rule.forbid;
    const ref = p.rule.forbid.holding;
    if (ref !== undefined) {
      const [, tool, op] = ref.split(".");
      if (!project.tools.get(tool ?? "")?.operations.has(op ?? ""))
        diagnostics.push(
          diagnostic(
            "TF3011",
            p.span,
            `Policy/${p.policy} forbids \`${effect}\` for every agent holding \`${ref}\`, which no tool of this project has: it would guard nothing`,
            { hint: "name a grant as agents write it, `tool.<tool>.<operation>`" },
          ),
        );
      continue;
    }
    const who = p.rule.forbid.agent ?? "*";
    if (who !== "*" && !hasAgent(project, who)) {
      const hint = didYouMean(who, names);
      diagnostics.push(
        diagnostic(
          "TF3011",
          p.span,
          `Policy/${p.policy} forbids \`${effect}\` for agent \`${who}\`, which is not declared`,
          hint ? { hint } : {},
        ),
      );
    }
  }
  diagnostics.push(...unknownEffects(project));
  for (const v of analysis.violations) {
    diagnostics.push(
      diagnostic(v.code, v.grantSpan, v.message, {
        hint:
          hostRuleHint(v) ??
          (v.rule === "forbid"
            ? `remove the grant ${v.tool}, or change the policy`
            : `write \`${v.tool} requires approval\``),
        related: [{ span: v.ruleSpan, message: `${v.rule} rule in Policy/${v.policy}` }],
      }),
    );
  }

  const workflowNames = [...project.workflows.keys()];
  for (const test of project.capabilityTests) {
    test.value.spec.assertions.forEach((a, i) => {
      const span = test.spanOf(["spec", "assertions", i]);
      const body = Object.values(a)[0] as { agent?: string; workflow?: string };
      if (body.agent !== undefined && !hasAgent(project, body.agent)) {
        const hint = didYouMean(body.agent, names);
        diagnostics.push(
          diagnostic(
            "TF3011",
            span,
            `CapabilityTest/${test.name} names agent \`${body.agent}\`, which is not declared; the assertion will fail`,
            hint ? { hint } : {},
          ),
        );
      }
      if (body.workflow !== undefined && !project.workflows.has(body.workflow)) {
        const hint = didYouMean(body.workflow, workflowNames);
        diagnostics.push(
          diagnostic(
            "TF3011",
            span,
            `CapabilityTest/${test.name} names workflow \`${body.workflow}\`, which is not declared; the assertion will fail`,
            hint ? { hint } : {},
          ),
        );
      }
    });
  }
  return diagnostics;
}

/** The effect classes every project knows, whether or not one of its tools has them yet. */
export const STANDARD_EFFECTS = [
  "workspace.read",
  "workspace.write",
  "process.exec",
  "network.egress",
] as const;

/**
 * Effects named by a policy rule or a test assertion that neither the standard classes nor any
 * operation of the project has: a misspelling (`workspace.writes`) would make a `forbid` or a
 * `forbidEffect` hold trivially, guarding nothing. An error, like an unknown agent.
 */
function unknownEffects(project: ResolvedProject): Diagnostic[] {
  const known = new Set<string>(STANDARD_EFFECTS);
  for (const tool of project.tools.values())
    for (const op of tool.operations.values()) for (const e of op.effects) known.add(e);
  // A host agent's effects (`mcp.github.create_issue`, `claude-code.Foo`) are known as it has
  // them, and an MCP effect may be guarded before any server has it (`forbid … mcp.*`).
  const hostEffects = [...(project.hostAgents?.values() ?? [])].flatMap((h) =>
    h.bound.map((e) => e.effect),
  );
  const out: Diagnostic[] = [];
  const check = (effect: string, span: Diagnostic["span"], where: string) => {
    if (
      known.has(effect) ||
      /^mcp\.[^.]+(\.[^.]+)?$|^mcp\.\*$/.test(effect) ||
      hostEffects.some((e) => effectReaches(e, effect))
    )
      return;
    const hint = didYouMean(effect, known);
    out.push(
      diagnostic(
        "TF3011",
        span,
        `${where} names the effect \`${effect}\`, which no tool of this project has and is not a standard effect (${STANDARD_EFFECTS.join(", ")}); it guards nothing`,
        hint ? { hint } : { hint: "name an effect an operation declares" },
      ),
    );
  };
  for (const p of project.policies) {
    const r = p.rule;
    const effect =
      "forbid" in r
        ? r.forbid.effect
        : "requireApproval" in r
          ? r.requireApproval.effect
          : "risk" in r
            ? r.risk.effect
            : undefined;
    if (effect !== undefined) check(effect, p.span, `Policy/${p.policy}`);
  }
  for (const test of project.capabilityTests) {
    test.value.spec.assertions.forEach((a, i) => {
      const body = Object.values(a)[0] as { effect?: string; equals?: string[] };
      const span = test.spanOf(["spec", "assertions", i]);
      for (const e of [...(body.effect !== undefined ? [body.effect] : []), ...(body.equals ?? [])])
        check(e, span, `CapabilityTest/${test.name}`);
    });
  }
  return out;
}

/** Whether a workflow (transitively) calls an agent whose grants did not all resolve. */
function callsUnresolvedGrant(
  project: ResolvedProject,
  name: string,
  seen = new Set<string>(),
): boolean {
  if (seen.has(name)) return false;
  seen.add(name);
  const wf = project.workflows.get(name);
  if (!wf) return false;
  return wf.calls.some((c) =>
    c.kind === "agent"
      ? (project.agents.get(c.callee)?.grants.some((g) => !g.resolved) ?? false)
      : callsUnresolvedGrant(project, c.callee, seen),
  );
}

/** What to do about a host agent's violation: its rule, or the mode behind it, in its own file. */
function hostRuleHint(v: ProjectAnalysis["violations"][number]): string | undefined {
  if (!v.agent.startsWith("Host/")) return undefined;
  const rule = /^(allow|ask) (.*)$/s.exec(v.tool);
  // A command's, skill's or workflow step's pre-approved tools live in its own list.
  if (rule && v.grantSpan.file.endsWith(".md"))
    return `remove \`${rule[2]}\` from allowed-tools in ${v.grantSpan.file}, or change the policy`;
  if (rule)
    return v.rule === "forbid"
      ? `remove \`${rule[2]}\` from permissions.${rule[1]} in ${v.grantSpan.file}, or change the policy`
      : `move \`${rule[2]}\` from permissions.allow to permissions.ask in ${v.grantSpan.file}`;
  const mode = /^(?:defaultMode \S+|default mode): (\S+)$/.exec(v.tool);
  if (mode)
    return `the permission mode lets ${mode[1]} run${v.mode === "gated" ? " when someone approves it" : ""}: add \`${mode[1]}\` to permissions.deny in ${v.grantSpan.file}, or change the policy`;
  return `remove ${v.tool} from ${v.grantSpan.file}, or change the policy`;
}
