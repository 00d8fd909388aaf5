/**
 * Workflow body checking: variables, calls, field access and types, loop limits, returns.
 *
 * Fills each workflow's call sites, loops and approval points (used by effect analysis and the
 * plan) while it checks. Pure; reports diagnostics, never throws on input.
 */
import { type Diagnostic, diagnostic, type Span } from "../diagnostics.ts";
import type { Block, Expr, Statement } from "../language/ast.ts";
import type { SourceText } from "../source.ts";
import { didYouMean } from "../suggest.ts";
import { plural } from "../words.ts";
import type { ResolvedProject, ResolvedWorkflow } from "./project.ts";
import {
  BOOLEAN,
  describeType,
  INTEGER,
  isAssignable,
  isComparable,
  missingRequiredFields,
  STRING,
  type Type,
  UNKNOWN,
} from "./types.ts";

export function checkWorkflows(project: ResolvedProject): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (const wf of project.workflows.values()) {
    const source = project.sources.get(wf.span.file);
    if (!source) continue;
    new WorkflowChecker(project, wf, source, diagnostics).check();
  }
  return diagnostics;
}

interface Variable {
  type: Type;
  span: Span;
}

class WorkflowChecker {
  private readonly vars = new Map<string, Variable>();
  /** Variables assigned on every path to the current statement (definite assignment). */
  private definite = new Set<string>();
  private readonly loopStack: number[] = [];

  constructor(
    private readonly project: ResolvedProject,
    private readonly wf: ResolvedWorkflow,
    private readonly source: SourceText,
    private readonly diagnostics: Diagnostic[],
  ) {}

  private span(range: { start: number; end: number }): Span {
    return this.source.span(range);
  }

  private schemaType(name: string): Type {
    return this.project.schemas.get(name)?.type ?? UNKNOWN;
  }

  check(): void {
    for (const p of this.wf.decl.params) {
      this.vars.set(p.name.name, {
        type: this.schemaType(p.type.name),
        span: this.span(p.name.range),
      });
      this.definite.add(p.name.name);
    }
    const returns = this.block(this.wf.decl.body);
    if (!returns) {
      this.diagnostics.push(
        diagnostic(
          "TF4007",
          this.wf.span,
          `workflow \`${this.wf.name}\` may end without \`return\``,
          {
            hint: `end every path with \`return <${this.wf.returns}>\``,
          },
        ),
      );
    }
  }

  /** Checks a block; returns whether it always ends in `return`. */
  private block(block: Block): boolean {
    let returned = false;
    for (const stmt of block.statements) {
      if (returned) {
        this.diagnostics.push(
          diagnostic(
            "TF4010",
            this.span(stmt.range),
            "this statement is never reached: the block already returned",
          ),
        );
        break;
      }
      returned = this.statement(stmt);
    }
    return returned;
  }

  private statement(stmt: Statement): boolean {
    switch (stmt.kind) {
      case "assign": {
        const t = this.expr(stmt.value);
        const existing = this.vars.get(stmt.target.name);
        if (existing) {
          if (!isAssignable(t, existing.type)) {
            this.diagnostics.push(
              diagnostic(
                "TF4003",
                this.span(stmt.value.range),
                `cannot assign a ${describeType(t)} to \`${stmt.target.name}\`, which holds a ${describeType(existing.type)}${missingNote(t, existing.type)}`,
                {
                  related: [
                    { span: existing.span, message: `\`${stmt.target.name}\` first assigned here` },
                  ],
                },
              ),
            );
          }
        } else {
          this.vars.set(stmt.target.name, { type: t, span: this.span(stmt.target.range) });
        }
        this.definite.add(stmt.target.name);
        return false;
      }
      case "while": {
        this.condition(stmt.condition, "while");
        let limit = 1;
        if (stmt.limit) {
          limit = stmt.limit.value;
          const limitSpan = this.span(stmt.limit.range);
          if (limit < 1) {
            this.diagnostics.push(
              diagnostic("TF5002", limitSpan, `loop limit ${limit} would never run the body`, {
                hint: "use a limit of at least 1",
              }),
            );
          }
          const max = this.project.maxLoopLimit;
          if (max && limit > max.limit) {
            this.diagnostics.push(
              diagnostic(
                "TF5001",
                limitSpan,
                `loop limit ${limit} is above the policy maximum of ${max.limit}`,
                {
                  hint: `lower the limit to at most ${max.limit}`,
                  related: [{ span: max.span, message: "maxLoopLimit set here" }],
                },
              ),
            );
          }
          this.wf.loops.push({
            limit,
            enclosingLimits: [...this.loopStack],
            span: this.span(stmt.range),
            limitSpan,
          });
        }
        // The body may run zero times: what it assigns is not assigned after the loop.
        const before = new Set(this.definite);
        this.loopStack.push(Math.max(limit, 0));
        this.block(stmt.body);
        this.loopStack.pop();
        this.definite = before;
        return false;
      }
      case "if": {
        this.condition(stmt.condition, "if");
        const before = new Set(this.definite);
        const a = this.block(stmt.then);
        const afterThen = this.definite;
        this.definite = new Set(before);
        const b = stmt.else ? this.block(stmt.else) : false;
        const afterElse = this.definite;
        if (!stmt.else) this.definite = before;
        else if (a) this.definite = afterElse;
        else if (!b) this.definite = new Set([...afterThen].filter((v) => afterElse.has(v)));
        else this.definite = afterThen;
        return a && b;
      }
      case "approve": {
        this.expr(stmt.value);
        const point: ResolvedWorkflow["approvals"][number] = {
          span: this.span(stmt.range),
          loopLimits: [...this.loopStack],
        };
        if (stmt.label) point.label = stmt.label.value;
        this.wf.approvals.push(point);
        return false;
      }
      case "return": {
        const t = this.expr(stmt.value);
        const want = this.schemaType(this.wf.returns);
        if (!isAssignable(t, want)) {
          this.diagnostics.push(
            diagnostic(
              "TF4006",
              this.span(stmt.value.range),
              `workflow \`${this.wf.name}\` returns ${this.wf.returns}, but this is a ${describeType(t)}${missingNote(t, want)}`,
            ),
          );
        }
        return true;
      }
    }
  }

  private condition(expr: Expr, what: string): void {
    const t = this.expr(expr);
    if (t.kind !== "boolean" && t.kind !== "unknown") {
      this.diagnostics.push(
        diagnostic(
          "TF4005",
          this.span(expr.range),
          `the \`${what}\` condition must be a boolean, but this is a ${describeType(t)}`,
        ),
      );
    }
  }

  private expr(expr: Expr): Type {
    switch (expr.kind) {
      case "string":
        return STRING;
      case "int":
        return INTEGER;
      case "bool":
        return BOOLEAN;
      case "not": {
        const t = this.expr(expr.operand);
        if (t.kind !== "boolean" && t.kind !== "unknown") {
          this.diagnostics.push(
            diagnostic(
              "TF4009",
              this.span(expr.operand.range),
              `\`!\` needs a boolean, but this is a ${describeType(t)}`,
            ),
          );
        }
        return BOOLEAN;
      }
      case "binary": {
        const l = this.expr(expr.left);
        const r = this.expr(expr.right);
        if (expr.op === "&&" || expr.op === "||") {
          for (const [side, t] of [
            [expr.left, l],
            [expr.right, r],
          ] as const) {
            if (t.kind !== "boolean" && t.kind !== "unknown") {
              this.diagnostics.push(
                diagnostic(
                  "TF4009",
                  this.span(side.range),
                  `\`${expr.op}\` needs booleans, but this is a ${describeType(t)}`,
                ),
              );
            }
          }
        } else if (!isComparable(l, r)) {
          this.diagnostics.push(
            diagnostic(
              "TF4009",
              this.span(expr.range),
              `cannot compare a ${describeType(l)} with a ${describeType(r)}`,
            ),
          );
        }
        return BOOLEAN;
      }
      case "path":
        return this.path(expr);
      case "call":
        return this.call(expr);
    }
  }

  private path(expr: Extract<Expr, { kind: "path" }>): Type {
    const name = expr.root.name;
    const v = this.vars.get(name);
    if (!v) {
      if (this.project.agents.has(name) || this.project.workflows.has(name)) {
        const what = this.project.agents.has(name) ? "an agent" : "a workflow";
        this.diagnostics.push(
          diagnostic("TF4011", this.span(expr.root.range), `\`${name}\` is ${what}, not a value`, {
            hint: `call it: ${name}(…)`,
          }),
        );
        return UNKNOWN;
      }
      const hint = didYouMean(name, this.vars.keys());
      this.diagnostics.push(
        diagnostic("TF3005", this.span(expr.root.range), `unknown variable \`${name}\``, {
          hint: hint ?? "assign it first (`name = …`) or declare it as a workflow parameter",
        }),
      );
      return UNKNOWN;
    }
    if (!this.definite.has(name)) {
      this.diagnostics.push(
        diagnostic(
          "TF3005",
          this.span(expr.root.range),
          `\`${name}\` may be used before it is assigned`,
          {
            hint: "it is assigned only inside a loop body or one branch of an `if`; assign it before them too",
            related: [{ span: v.span, message: `\`${name}\` assigned here` }],
          },
        ),
      );
      this.definite.add(name);
    }
    let t = v.type;
    let described = name;
    for (const field of expr.fields) {
      if (t.kind === "unknown") return UNKNOWN;
      if (t.kind !== "object") {
        this.diagnostics.push(
          diagnostic(
            "TF4004",
            this.span(field.range),
            `\`${described}\` is a ${describeType(t)} and has no field \`${field.name}\``,
          ),
        );
        return UNKNOWN;
      }
      const next = t.properties.get(field.name);
      if (!next) {
        const hint = didYouMean(field.name, t.properties.keys());
        this.diagnostics.push(
          diagnostic(
            "TF4004",
            this.span(field.range),
            `${describeType(t)} has no field \`${field.name}\``,
            {
              hint: hint ?? `its fields are: ${[...t.properties.keys()].join(", ") || "(none)"}`,
            },
          ),
        );
        return UNKNOWN;
      }
      described = `${described}.${field.name}`;
      t = next;
    }
    return t;
  }

  private call(expr: Extract<Expr, { kind: "call" }>): Type {
    const name = expr.callee.name;
    const argTypes = expr.args.map((a) => this.expr(a));
    const calleeSpan = this.span(expr.callee.range);
    const agent = this.project.agents.get(name);
    if (agent) {
      this.wf.calls.push({
        callee: name,
        kind: "agent",
        span: this.span(expr.range),
        loopLimits: [...this.loopStack],
      });
      if (expr.args.length !== 1) {
        this.diagnostics.push(
          diagnostic(
            "TF4002",
            this.span(expr.range),
            `agent \`${name}\` takes exactly one argument (its ${agent.input ?? "input"}), got ${expr.args.length}`,
          ),
        );
      }
      if (!agent.decl.input || !agent.decl.output) {
        const missing = [!agent.decl.input ? "`input`" : "", !agent.decl.output ? "`output`" : ""]
          .filter(Boolean)
          .join(" and ");
        this.diagnostics.push(
          diagnostic(
            "TF4008",
            calleeSpan,
            `agent \`${name}\` is called here but declares no ${missing} schema`,
            {
              hint: `add \`input <Schema>\` and \`output <Schema>\` to agent ${name}`,
              related: [{ span: agent.span, message: `agent ${name}` }],
            },
          ),
        );
      }
      const arg = expr.args[0];
      const argType = argTypes[0];
      if (arg && argType && agent.input) {
        const want = this.schemaType(agent.input);
        if (!isAssignable(argType, want)) {
          this.diagnostics.push(
            diagnostic(
              "TF4001",
              this.span(arg.range),
              `agent \`${name}\` takes a ${agent.input}, but this argument is a ${describeType(argType)}${missingNote(argType, want)}`,
            ),
          );
        }
      }
      return agent.output ? this.schemaType(agent.output) : UNKNOWN;
    }
    const wf = this.project.workflows.get(name);
    if (wf) {
      this.wf.calls.push({
        callee: name,
        kind: "workflow",
        span: this.span(expr.range),
        loopLimits: [...this.loopStack],
      });
      if (expr.args.length !== wf.params.length) {
        this.diagnostics.push(
          diagnostic(
            "TF4002",
            this.span(expr.range),
            `workflow \`${name}\` takes ${plural(wf.params.length, "argument")} (${wf.params.map((p) => `${p.name}: ${p.type}`).join(", ")}), got ${expr.args.length}`,
          ),
        );
      }
      wf.params.forEach((p, i) => {
        const arg = expr.args[i];
        const t = argTypes[i];
        if (!arg || !t) return;
        const want = this.schemaType(p.type);
        if (!isAssignable(t, want)) {
          this.diagnostics.push(
            diagnostic(
              "TF4001",
              this.span(arg.range),
              `parameter \`${p.name}\` of workflow \`${name}\` is a ${p.type}, but this argument is a ${describeType(t)}${missingNote(t, want)}`,
            ),
          );
        }
      });
      return this.schemaType(wf.returns);
    }
    if (this.vars.has(name)) {
      this.diagnostics.push(
        diagnostic("TF4011", calleeSpan, `\`${name}\` is a variable, not an agent or workflow`),
      );
      return UNKNOWN;
    }
    const hint = didYouMean(name, [
      ...this.project.agents.keys(),
      ...this.project.workflows.keys(),
    ]);
    this.diagnostics.push(
      diagnostic("TF3001", calleeSpan, `unknown agent or workflow \`${name}\``, {
        hint: hint ?? "declare it with `agent NAME { … }` or `workflow NAME(…) -> … { … }`",
      }),
    );
    return UNKNOWN;
  }
}

function missingNote(from: Type, to: Type): string {
  const missing = missingRequiredFields(from, to);
  return missing.length === 0
    ? ""
    : ` (missing required ${missing.map((m) => `\`${m}\``).join(", ")})`;
}
