/**
 * Capability tests: `CapabilityTest` assertions checked statically over the effect bound and
 * workflow bounds, with no model. A failing assertion names the grant (or loop) and the
 * `.agent` line responsible. Pure.
 */
import type { AnalysedProject } from "../analysis/analysis.ts";
import { boundLookup } from "../analysis/effect-bound.ts";
import type { Assertion } from "../config/schemas.ts";
import type { Span } from "../diagnostics.ts";
import { modeByBound } from "../hosts/host-agents.ts";
import { agentAddress, effectReaches, hasAgent } from "../model/agent-names.ts";

export interface AssertionResult {
  /** The CapabilityTest's name. */
  test: string;
  /** The assertion's kind: forbidEffect, allowEffect, … */
  kind: string;
  /** The assertion as one line: `forbidEffect { agent: Reviewer, effect: workspace.write }`. */
  text: string;
  passed: boolean;
  /** For a failure: what reaches, or what is missing (locations are in `culprit`). */
  reason?: string;
  /** For a failure: the `.agent` location responsible (a grant or a loop), when there is one. */
  culprit?: Span;
  /** Where the assertion is written. */
  span: Span;
}

export interface CapabilityTestReport {
  results: AssertionResult[];
  passed: number;
  failed: number;
}

export function describeAssertion(a: Assertion): { kind: string; text: string } {
  const [kind, body] = Object.entries(a)[0] as [string, Record<string, unknown>];
  const fields = Object.entries(body).map(
    ([k, v]) => `${k}: ${Array.isArray(v) ? `[${v.join(", ")}]` : String(v)}`,
  );
  return { kind, text: `${kind} { ${fields.join(", ")} }` };
}

export function runCapabilityTests({ project, analysis }: AnalysedProject): CapabilityTestReport {
  const boundOf = boundLookup(analysis.bounds);
  const workflowBounds = analysis.workflowBounds;
  const results: AssertionResult[] = [];

  for (const test of project.capabilityTests) {
    for (const [i, assertion] of test.value.spec.assertions.entries()) {
      const { kind, text } = describeAssertion(assertion);
      const base = { test: test.name, kind, text, span: test.spanOf(["spec", "assertions", i]) };
      const fail = (reason: string, culprit?: Span): AssertionResult =>
        culprit ? { ...base, passed: false, reason, culprit } : { ...base, passed: false, reason };
      const pass: AssertionResult = { ...base, passed: true };
      const noAgent = (name: string) => fail(`no agent named ${name} in this project`);
      const noWorkflow = (name: string) => fail(`no workflow named ${name} in this project`);

      if ("forbidEffect" in assertion) {
        const { agent, effect } = assertion.forbidEffect;
        if (!hasAgent(project, agent)) {
          results.push(noAgent(agent));
          continue;
        }
        const reaching = boundOf(agent).filter((e) => effectReaches(e.effect, effect));
        const first = reaching[0];
        results.push(
          first
            ? fail(
                `${agentAddress(agent)} reaches ${effect} through ${reaching.map((e) => `${e.tool} (${e.mode})`).join(", ")}`,
                first.span,
              )
            : pass,
        );
      } else if ("allowEffect" in assertion) {
        const { agent, effect, mode = "any" } = assertion.allowEffect;
        if (!hasAgent(project, agent)) {
          results.push(noAgent(agent));
          continue;
        }
        const reaching = boundOf(agent).filter((e) => effectReaches(e.effect, effect));
        if (reaching.some((e) => mode === "any" || e.mode === mode)) results.push(pass);
        else if (reaching.length > 0) {
          results.push(
            fail(
              `${agentAddress(agent)} reaches ${effect} only ${reaching[0]?.mode} (through ${reaching.map((e) => e.tool).join(", ")}), not ${mode}`,
              reaching[0]?.span,
            ),
          );
        } else {
          results.push(
            fail(
              `${agentAddress(agent)} holds no grant that reaches ${effect}`,
              project.agents.get(agent)?.span ?? project.hostAgents?.get(agent)?.bound[0]?.span,
            ),
          );
        }
      } else if ("maxIterations" in assertion) {
        const { workflow, limit } = assertion.maxIterations;
        const b = workflowBounds.get(workflow);
        if (!b) {
          results.push(noWorkflow(workflow));
          continue;
        }
        if (b.maxIterations <= limit) results.push(pass);
        else {
          const wf = project.workflows.get(workflow);
          const loop = wf?.loops.reduce<(typeof wf.loops)[number] | undefined>(
            (m, l) => (m === undefined || l.limit > m.limit ? l : m),
            undefined,
          );
          results.push(
            fail(
              `Workflow/${workflow} may run up to ${b.maxIterations} iterations${loop ? ` (its largest loop has limit ${loop.limit})` : ""}`,
              loop?.limitSpan ?? wf?.span,
            ),
          );
        }
      } else if ("workflowEffects" in assertion) {
        const { workflow, equals } = assertion.workflowEffects;
        const b = workflowBounds.get(workflow);
        if (!b) {
          results.push(noWorkflow(workflow));
          continue;
        }
        const want = new Set(equals);
        const missing = [...want].filter((e) => !b.effects.includes(e)).sort();
        const extra = b.effects.filter((e) => !want.has(e));
        if (missing.length === 0 && extra.length === 0) results.push(pass);
        else {
          const parts = [`Workflow/${workflow} reaches [${b.effects.join(", ")}]`];
          if (extra.length > 0) parts.push(`not expected: ${extra.join(", ")}`);
          if (missing.length > 0) parts.push(`expected but unreachable: ${missing.join(", ")}`);
          results.push(fail(parts.join("; "), project.workflows.get(workflow)?.span));
        }
      } else if ("requiresApproval" in assertion) {
        const { agent, tool } = assertion.requiresApproval;
        const host = project.hostAgents?.get(agent);
        if (host) {
          // Every use the rule names is asked (or refused), by the host's own precedence.
          const m = host.modeOf?.(tool) ?? modeByBound(host, tool);
          if (m.mode === "unreadable") results.push(fail(`${tool}: ${m.because}`));
          else if (m.mode === "autonomous")
            results.push(fail(`${agent} runs ${tool} without asking (${m.because})`, m.span));
          else results.push(pass);
          continue;
        }
        const a = project.agents.get(agent);
        if (!a) {
          results.push(noAgent(agent));
          continue;
        }
        const grant = a.grants.find((g) => g.ref === tool);
        if (!grant) results.push(fail(`Agent/${agent} holds no grant ${tool}`, a.span));
        else if (grant.mode === "gated") results.push(pass);
        else
          results.push(
            fail(`grant ${tool} is autonomous; write \`${tool} requires approval\``, grant.span),
          );
      }
    }
  }
  const failed = results.filter((r) => !r.passed).length;
  return { results, passed: results.length - failed, failed };
}
