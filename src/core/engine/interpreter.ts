/**
 * The execir interpreter: runs a compiled workflow, invoking agents through a tool-use loop in
 * which every tool call is resolved at one boundary that checks the agent's grants.
 *
 * Durability is by deterministic replay: a resumed run executes the program again from the
 * start, but every step, model turn and effect already in the journal is taken from it instead
 * of being repeated. An effect with an intent and no result is re-issued only when its
 * operation is idempotent; otherwise the run stops `in-doubt`, naming it. Pure over ports.
 */
import type { JsonSchemaNode } from "../config/schemas.ts";
import { sha256 } from "../plan/canonical-hash.ts";
import type { ApprovalSubject } from "../render/approval-text.ts";
import type { IrExpr, IrNode, IrProgram } from "./ir.ts";
import type { JournalEvent, ModelResponse } from "./journal.ts";
import {
  type ConversationMessage,
  type EnginePorts,
  ModelUnavailable,
  type ToolSpec,
} from "./ports.ts";
import type { RuntimeAgent, RuntimeProject } from "./runtime-project.ts";
import { deepEqual, getField, schemaIssues } from "./values.ts";

export interface RunContext {
  runId: string;
  /** What the run reads of the project: a `ResolvedProject` is one. */
  project: RuntimeProject;
  program: IrProgram;
  input: unknown;
  /** Events journaled by earlier sessions of this run. */
  history: readonly JournalEvent[];
  /** Approval hashes granted so far (the run's approvals log). */
  approvals: ReadonlySet<string>;
  ports: EnginePorts;
  /** Corrective turns allowed when an agent's output does not match its schema. */
  maxOutputCorrections?: number;
  /**
   * Set when the run is being stopped (SIGINT, SIGTERM). The run stops at the next boundary
   * (before a model turn or tool call; after a tool call, whose result is then not journaled,
   * because a killed call's partial outcome is not its result) as `interrupted`.
   */
  signal?: AbortSignal;
}

export type RunOutcome =
  | { status: "completed"; result: unknown }
  | {
      status: "awaiting-approval";
      hash: string;
      step: string;
      label: string;
      kind: "approve" | "gated-grant";
      /** Exactly what is approved: the gated call's agent, operation and full input, or the value. */
      subject: ApprovalSubject;
    }
  | { status: "failed"; error: string }
  | { status: "in-doubt"; key: string; tool: string; step: string; error: string }
  | {
      status: "interrupted";
      step: string;
      in_flight?: InFlightCall;
      /** Not a signal: the model's API could not answer (ModelUnavailable); what it said. */
      unavailable?: string;
    };

/** A tool call that was running when the run was interrupted: its intent has no result. */
export interface InFlightCall {
  key: string;
  tool: string;
  idempotent: boolean;
}

class Pause {
  constructor(readonly outcome: Extract<RunOutcome, { status: "awaiting-approval" }>) {}
}
class InDoubt {
  constructor(readonly outcome: Extract<RunOutcome, { status: "in-doubt" }>) {}
}
class Interrupted {
  constructor(readonly outcome: Extract<RunOutcome, { status: "interrupted" }>) {}
}
class StepFailure {
  constructor(readonly message: string) {}
}
class Return {
  constructor(readonly value: unknown) {}
}

/** Cap on what a tool result shows the model, so one huge file cannot flood the context. */
const MAX_TOOL_RESULT_CHARS = 32_000;

export async function runProgram(ctx: RunContext): Promise<RunOutcome> {
  const r = new Interpreter(ctx);
  return r.run();
}

/**
 * One agent invocation as a step of its own (a review run's judgment steps): the same tool
 * boundary, journal and replay as inside a workflow, with no workflow around it. `ctx.program`
 * is not used and may be an empty program.
 */
export async function runAgentStep(
  ctx: RunContext & { agent: string; step: string },
): Promise<RunOutcome> {
  const r = new Interpreter(ctx);
  return r.runAgent(ctx.agent, ctx.input, ctx.step);
}

class Interpreter {
  private readonly stepOutputs = new Map<string, unknown>();
  private readonly startedSteps = new Set<string>();
  private readonly turns = new Map<string, ModelResponse>();
  private readonly results = new Map<string, { ok: boolean; result: unknown }>();
  private readonly intents = new Set<string>();
  private readonly denied = new Set<string>();
  private readonly requested = new Set<string>();
  private readonly granted = new Set<string>();
  private readonly agentTurns = new Map<string, number>();
  /** Model turns recorded per step, so a replayed step still advances its agent's turn count. */
  private readonly stepTurns = new Map<string, number>();
  private readonly corrections: number;

  constructor(private readonly ctx: RunContext) {
    this.corrections = ctx.maxOutputCorrections ?? 2;
    for (const e of ctx.history) {
      switch (e.type) {
        case "step.start":
          this.startedSteps.add(e.step);
          break;
        case "step.end":
          this.stepOutputs.set(e.step, e.output);
          break;
        case "model.turn":
          this.turns.set(`${e.step}#${e.turn}`, e.response);
          this.stepTurns.set(e.step, (this.stepTurns.get(e.step) ?? 0) + 1);
          break;
        case "effect.intent":
          this.intents.add(e.key);
          break;
        case "effect.result":
          this.results.set(e.key, { ok: e.ok, result: e.result });
          break;
        case "tool.denied":
          this.denied.add(e.key);
          break;
        case "approval.requested":
          this.requested.add(`${e.step}|${e.hash}`);
          break;
        case "approval.granted":
          this.granted.add(`${e.step}|${e.hash}`);
          break;
      }
    }
  }

  private get ports(): EnginePorts {
    return this.ctx.ports;
  }

  run(): Promise<RunOutcome> {
    return this.settle(() => this.callWorkflow(this.ctx.program.entry, [this.ctx.input], ""));
  }

  runAgent(agent: string, input: unknown, step: string): Promise<RunOutcome> {
    return this.settle(() => this.invokeAgent(agent, input, step, 0));
  }

  /** Turns how a run stopped (a result, a pause, an in-doubt effect, a failure) into its outcome. */
  private async settle(work: () => Promise<unknown>): Promise<RunOutcome> {
    try {
      return { status: "completed", result: await work() };
    } catch (e) {
      if (e instanceof Pause) return e.outcome;
      if (e instanceof InDoubt) return e.outcome;
      if (e instanceof Interrupted) return e.outcome;
      if (e instanceof StepFailure) return { status: "failed", error: e.message };
      throw e;
    }
  }

  // ── workflows ─────────────────────────────────────────────────────────────

  private async callWorkflow(name: string, args: unknown[], prefix: string): Promise<unknown> {
    const wf = this.ctx.program.workflows[name];
    if (!wf) throw new StepFailure(`workflow ${name} is not part of the compiled program`);
    const env = new Map<string, unknown>();
    for (const [i, p] of wf.params.entries()) env.set(p.name, args[i]);
    try {
      await this.block(wf.body, env, prefix, []);
    } catch (e) {
      if (e instanceof Return) return e.value;
      throw e;
    }
    throw new StepFailure(`workflow ${name} ended without returning a value`);
  }

  private async block(
    nodes: IrNode[],
    env: Map<string, unknown>,
    prefix: string,
    iters: number[],
  ): Promise<void> {
    for (const node of nodes) {
      switch (node.op) {
        case "assign":
          env.set(node.target, await this.eval(node.value, env, prefix, iters));
          break;
        case "loop": {
          let i = 0;
          while (
            i < node.limit &&
            this.truthy(await this.eval(node.condition, env, prefix, iters), "while condition")
          ) {
            i++;
            this.stopIfInterrupted(`${prefix}${node.id}@${[...iters, i].join(".")}`);
            this.ports.progress(`iteration ${i}/${node.limit} (line ${node.line})`);
            await this.ports.checkpoint({
              iteration: i,
              cursor: `${prefix}${node.id}@${[...iters, i].join(".")}`,
            });
            await this.block(node.body, env, prefix, [...iters, i]);
          }
          break;
        }
        case "branch": {
          const c = this.truthy(
            await this.eval(node.condition, env, prefix, iters),
            "if condition",
          );
          await this.block(c ? node.thenBody : node.elseBody, env, prefix, iters);
          break;
        }
        case "approve": {
          const value = await this.eval(node.value, env, prefix, iters);
          const step = `${prefix}${node.id}@${iters.join(".")}`;
          const hash = sha256(value);
          const label = node.label ?? `approve at line ${node.line}`;
          await this.requireApproval(step, hash, "approve", label, {
            kind: "approve",
            label,
            value,
          });
          break;
        }
        case "return":
          throw new Return(await this.eval(node.value, env, prefix, iters));
      }
    }
  }

  private truthy(v: unknown, what: string): boolean {
    if (typeof v !== "boolean")
      throw new StepFailure(
        `the ${what} is ${v === undefined ? "missing (a field the output did not set)" : JSON.stringify(v)}, not a boolean`,
      );
    return v;
  }

  private async eval(
    e: IrExpr,
    env: Map<string, unknown>,
    prefix: string,
    iters: number[],
  ): Promise<unknown> {
    switch (e.kind) {
      case "literal":
        return e.value;
      case "path": {
        if (!env.has(e.root)) throw new StepFailure(`variable ${e.root} is not assigned`);
        let v = env.get(e.root);
        for (const f of e.fields) v = getField(v, f);
        return v;
      }
      case "not":
        return !this.truthy(await this.eval(e.operand, env, prefix, iters), "operand of !");
      case "binary": {
        if (e.op === "&&") {
          return (
            this.truthy(await this.eval(e.left, env, prefix, iters), "left of &&") &&
            this.truthy(await this.eval(e.right, env, prefix, iters), "right of &&")
          );
        }
        if (e.op === "||") {
          return (
            this.truthy(await this.eval(e.left, env, prefix, iters), "left of ||") ||
            this.truthy(await this.eval(e.right, env, prefix, iters), "right of ||")
          );
        }
        const eq = deepEqual(
          await this.eval(e.left, env, prefix, iters),
          await this.eval(e.right, env, prefix, iters),
        );
        return e.op === "==" ? eq : !eq;
      }
      case "call": {
        const args: unknown[] = [];
        for (const a of e.args) args.push(await this.eval(a, env, prefix, iters));
        const step = `${prefix}${e.id}@${iters.join(".")}`;
        const iteration = iters.at(-1) ?? 0;
        if (e.target === "workflow") {
          if (this.stepOutputs.has(step)) return this.stepOutputs.get(step);
          if (!this.startedSteps.has(step)) {
            await this.journal({
              type: "step.start",
              step,
              kind: "workflow",
              name: e.callee,
              iteration,
            });
          }
          const out = await this.callWorkflow(e.callee, args, `${step}/`);
          await this.journal({
            type: "step.end",
            step,
            kind: "workflow",
            name: e.callee,
            output: out,
          });
          return out;
        }
        return this.invokeAgent(e.callee, args[0], step, iteration);
      }
    }
  }

  /** Stops the run here when it is being interrupted. */
  private stopIfInterrupted(step: string, inFlight?: InFlightCall): void {
    if (this.ctx.signal?.aborted)
      throw new Interrupted(
        inFlight
          ? { status: "interrupted", step, in_flight: inFlight }
          : { status: "interrupted", step },
      );
  }

  private async journal(event: JournalEvent): Promise<void> {
    await this.ports.journal.append(event);
  }

  // ── approvals ─────────────────────────────────────────────────────────────

  private async requireApproval(
    step: string,
    hash: string,
    kind: "approve" | "gated-grant",
    label: string,
    subject: ApprovalSubject,
  ): Promise<void> {
    const key = `${step}|${hash}`;
    if (this.granted.has(key)) return;
    if (this.ctx.approvals.has(hash)) {
      this.granted.add(key);
      await this.journal({ type: "approval.granted", hash, step });
      this.ports.progress(`approved: ${label} (${hash})`);
      return;
    }
    if (!this.requested.has(key)) {
      this.requested.add(key);
      await this.journal({ type: "approval.requested", hash, step, kind, label, subject });
    }
    this.ports.progress(`awaiting approval: ${label} (${hash})`);
    throw new Pause({ status: "awaiting-approval", hash, step, label, kind, subject });
  }

  // ── agents ────────────────────────────────────────────────────────────────

  private async invokeAgent(
    name: string,
    input: unknown,
    step: string,
    iteration: number,
  ): Promise<unknown> {
    const agent = this.ctx.project.agents.get(name);
    if (!agent) throw new StepFailure(`agent ${name} is not declared`);
    if (this.stepOutputs.has(step)) {
      this.agentTurns.set(name, (this.agentTurns.get(name) ?? 0) + (this.stepTurns.get(step) ?? 0));
      this.ports.progress(`${name}: done earlier (replayed from the journal)`);
      return this.stepOutputs.get(step);
    }
    if (!this.startedSteps.has(step)) {
      this.startedSteps.add(step);
      await this.journal({ type: "step.start", step, kind: "agent", name, iteration });
    }
    await this.ports.checkpoint({ iteration, cursor: step });
    const outputSchema = agent.output
      ? this.ctx.project.schemas.get(agent.output)?.schema
      : undefined;
    const inputSchema = agent.input ? this.ctx.project.schemas.get(agent.input)?.schema : undefined;
    if (inputSchema) {
      const issues = schemaIssues(inputSchema, input);
      if (issues.length > 0)
        throw new StepFailure(
          `the input to agent ${name} does not match ${agent.input}: ${issues.join("; ")}`,
        );
    }
    const tools = this.toolSpecs(agent);
    const messages: ConversationMessage[] = [
      { role: "user", content: JSON.stringify(input, null, 2) },
    ];
    let corrections = 0;
    for (let turn = 0; turn < agent.maxTurns; turn++) {
      const ordinal = this.agentTurns.get(name) ?? 0;
      this.agentTurns.set(name, ordinal + 1);
      const turnKey = `${step}#${turn}`;
      let response = this.turns.get(turnKey);
      if (!response) {
        this.stopIfInterrupted(step);
        this.ports.progress(`${name}: turn ${turn + 1}/${agent.maxTurns}`);
        let answer: Awaited<ReturnType<EnginePorts["model"]["turn"]>>;
        try {
          const request = {
            agent: name,
            model: agent.model,
            system: agent.instructions,
            messages: [...messages],
            tools,
            ordinal,
            step,
            ...(agent.maxTokens !== undefined ? { maxTokens: agent.maxTokens } : {}),
            ...(agent.temperature !== undefined ? { temperature: agent.temperature } : {}),
            ...(this.ctx.signal ? { signal: this.ctx.signal } : {}),
          };
          answer = await this.ports.model.turn(
            outputSchema ? { ...request, outputSchema } : request,
          );
        } catch (e) {
          this.stopIfInterrupted(step);
          // An outage is not the agent's failure: the run stops here, resumable at this step.
          if (e instanceof ModelUnavailable || (e as Error)?.name === "ModelUnavailable")
            throw new Interrupted({
              status: "interrupted",
              step,
              unavailable: `agent ${name}, turn ${turn + 1}: ${(e as Error).message}`,
            });
          throw new StepFailure(
            `agent ${name}, turn ${turn + 1}: the model failed: ${(e as Error).message}`,
          );
        }
        this.stopIfInterrupted(step);
        response = answer.response;
        this.turns.set(turnKey, response);
        const event: JournalEvent = { type: "model.turn", step, agent: name, turn, response };
        if (answer.usage) event.usage = answer.usage;
        if (answer.usage) event.model = answer.model ?? agent.model;
        await this.journal(event);
      }
      messages.push({ role: "assistant", response });
      if (response.kind === "output") {
        const issues = outputSchema ? schemaIssues(outputSchema, response.output) : [];
        if (issues.length === 0) {
          this.stepOutputs.set(step, response.output);
          await this.journal({
            type: "step.end",
            step,
            kind: "agent",
            name,
            output: response.output,
          });
          return response.output;
        }
        corrections++;
        if (corrections > this.corrections) {
          throw new StepFailure(
            `agent ${name}'s output does not match ${agent.output} after ${this.corrections} corrections: ${issues.join("; ")}`,
          );
        }
        messages.push({ role: "user", content: correction(response, agent.output, issues) });
        continue;
      }
      if (response.early)
        this.ports.progress(
          `${name}: an output given with tool calls in one turn is not taken before their results`,
        );
      const results: Extract<ConversationMessage, { role: "tool_results" }>["results"] = [];
      for (const [i, call] of response.calls.entries()) {
        const key = `${this.ctx.runId}:${step}:t${turn}:c${i}`;
        const r = await this.resolveToolCall(agent, call.tool, call.input, key, step);
        results.push({ id: call.id, tool: call.tool, ok: r.ok, content: r.content });
      }
      messages.push({ role: "tool_results", results });
    }
    throw new StepFailure(
      `agent ${name} used all ${agent.maxTurns} turns without giving its output`,
    );
  }

  private toolSpecs(agent: RuntimeAgent): ToolSpec[] {
    return agent.grants.map((g) => {
      const op = this.ctx.project.tools.get(g.tool)?.operations.get(g.operation);
      return {
        name: g.ref,
        description: `${op?.description ?? `${g.operation} on ${g.tool}`}${g.mode === "gated" ? " (each call waits for a human's approval)" : ""}`,
        inputSchema: op?.input ?? { type: "object", properties: {} },
      };
    });
  }

  /** The one boundary every tool call passes: grant check, input check, approval, effect. */
  private async resolveToolCall(
    agent: RuntimeAgent,
    tool: string,
    input: unknown,
    key: string,
    step: string,
  ): Promise<{ ok: boolean; content: string }> {
    const grant = agent.grants.find((g) => g.ref === tool);
    if (!grant) {
      const reason = `${tool} is not granted to agent ${agent.name}`;
      if (!this.denied.has(key)) {
        this.denied.add(key);
        await this.journal({
          type: "tool.denied",
          key,
          step,
          agent: agent.name,
          tool: String(tool),
          reason,
        });
      }
      this.ports.progress(`denied: ${agent.name} -> ${tool} (not granted)`);
      return {
        ok: false,
        content: `denied: ${reason}. Only these tools are available: ${agent.grants.map((g) => g.ref).join(", ") || "(none)"}.`,
      };
    }
    const op = this.ctx.project.tools.get(grant.tool)?.operations.get(grant.operation);
    if (!op) return { ok: false, content: `error: ${tool} is not defined` };
    const inputIssues = op.input ? schemaIssues(op.input as JsonSchemaNode, input) : [];
    if (inputIssues.length > 0) {
      this.ports.progress(
        `refused: ${agent.name} -> ${tool} (its input does not match the operation's input schema: ${inputIssues.join("; ")})`,
      );
      return { ok: false, content: `error: invalid input for ${tool}: ${inputIssues.join("; ")}` };
    }
    if (grant.mode === "gated") {
      const hash = sha256({ agent: agent.name, tool, input, call: key });
      // The label names the call; the subject carries all of it (nothing is cut: the hash
      // binds the full input, and the person approving sees every field of it).
      await this.requireApproval(step, hash, "gated-grant", `${agent.name} -> ${tool}`, {
        kind: "gated-grant",
        agent: agent.name,
        tool,
        input,
      });
    }
    const done = this.results.get(key);
    if (done) return { ok: done.ok, content: render(done.result) };
    this.stopIfInterrupted(step);
    if (this.intents.has(key) && !op.idempotent) {
      throw new InDoubt({
        status: "in-doubt",
        key,
        tool,
        step,
        error: `effect ${key} (${tool}, not idempotent) was started but its result was never recorded; it may or may not have happened. Check it by hand, then start a new run.`,
      });
    }
    if (!this.intents.has(key)) {
      this.intents.add(key);
      await this.journal({
        type: "effect.intent",
        key,
        step,
        agent: agent.name,
        tool,
        input,
        idempotent: op.idempotent,
      });
    } else {
      this.ports.progress(
        `re-issuing idempotent effect ${key} (${tool}) whose result was not recorded`,
      );
    }
    this.ports.progress(`${agent.name} -> ${tool}`);
    const inFlight: InFlightCall = { key, tool, idempotent: op.idempotent };
    let outcome: { ok: boolean; result: unknown; summary?: string };
    try {
      outcome = await this.ports.tools.execute({
        tool: grant.tool,
        operation: grant.operation,
        input,
        idempotencyKey: key,
      });
    } catch (e) {
      this.stopIfInterrupted(step, inFlight);
      outcome = { ok: false, result: { error: (e as Error).message } };
    }
    // A call cut short by the interruption has no result to journal: its intent stays open,
    // so resume re-issues it when idempotent and stops in doubt when not.
    this.stopIfInterrupted(step, inFlight);
    this.ports.progress(
      `${agent.name} -> ${tool}: ${outcome.summary ?? (outcome.ok ? "ok" : `failed: ${clip(render(outcome.result), 300)}`)}`,
    );
    this.results.set(key, outcome);
    await this.journal({ type: "effect.result", key, ok: outcome.ok, result: outcome.result });
    return { ok: outcome.ok, content: render(outcome.result) };
  }
}

/** `text` up to `max` characters, marked when cut. */
function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text;
}

function render(result: unknown): string {
  const text = typeof result === "string" ? result : JSON.stringify(result);
  return text.length > MAX_TOOL_RESULT_CHARS
    ? `${text.slice(0, MAX_TOOL_RESULT_CHARS)}… (truncated)`
    : text;
}

/**
 * What an agent is told when its output is not taken: why (cut off at the output limit, given
 * as text instead of through the output call, or not matching its schema) and what to do.
 */
function correction(
  response: Extract<ModelResponse, { kind: "output" }>,
  schema: string | undefined,
  issues: readonly string[],
): string {
  if (response.stop === "max_tokens")
    return `Your reply was cut off at the output token limit (max_tokens) before it was complete, so it was not taken. Give the output again, shorter: call the output tool with it, and nothing else.`;
  const how =
    response.id === undefined && typeof response.output === "string"
      ? " It came as text: give the output as the input of the output tool (submit_output), not as prose."
      : "";
  return `Your output does not match the ${schema} schema: ${issues.join("; ")}.${how} Give the output again, corrected.`;
}
