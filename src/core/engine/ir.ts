/**
 * execir: a workflow compiled to an execution IR (assign, call, bounded loop, branch, approve,
 * return) with a stable id on every call, and the IR hash a run is pinned to. The hash covers
 * the IR and everything it can reach (agents' prompts, models, grants, tool operations with
 * their argv, URL templates, environment allowlists and headers, schemas), so resuming a run whose project changed underneath fails closed. Pure.
 */
import type { JsonSchemaNode } from "../config/schemas.ts";
import type { Expr, Statement } from "../language/ast.ts";
import type { ResolvedProject } from "../model/project.ts";
import { DEFAULT_MAX_TOKENS } from "../model/resolve-project.ts";
import { sha256 } from "../plan/canonical-hash.ts";

export type IrExpr =
  | { kind: "literal"; value: string | number | boolean }
  | { kind: "path"; root: string; fields: string[] }
  | { kind: "not"; operand: IrExpr }
  | { kind: "binary"; op: "&&" | "||" | "==" | "!="; left: IrExpr; right: IrExpr }
  /** `id` is unique within the workflow and stable across compilations of the same source. */
  | {
      kind: "call";
      id: string;
      callee: string;
      target: "agent" | "workflow";
      args: IrExpr[];
      line: number;
    };

export type IrNode =
  | { op: "assign"; target: string; value: IrExpr }
  | { op: "loop"; id: string; condition: IrExpr; limit: number; body: IrNode[]; line: number }
  | { op: "branch"; condition: IrExpr; thenBody: IrNode[]; elseBody: IrNode[] }
  | { op: "approve"; id: string; value: IrExpr; label?: string; line: number }
  | { op: "return"; value: IrExpr };

export interface IrWorkflow {
  name: string;
  params: { name: string; type: string }[];
  returns: string;
  body: IrNode[];
}

export interface IrProgram {
  entry: string;
  workflows: Record<string, IrWorkflow>;
  /** Every agent the program can call. */
  agents: string[];
  /** Hash of the program and everything it reaches; a run is pinned to it. */
  hash: string;
}

export function compileProgram(project: ResolvedProject, entry: string): IrProgram {
  const workflows: Record<string, IrWorkflow> = {};
  const agents = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const name = pending.pop() as string;
    if (workflows[name]) continue;
    const wf = project.workflows.get(name);
    if (!wf) continue;
    const source = project.sources.get(wf.span.file);
    const lineOf = (offset: number) => source?.position(offset).line ?? 0;
    let calls = 0;
    let loops = 0;
    let approvals = 0;
    const expr = (e: Expr): IrExpr => {
      switch (e.kind) {
        case "string":
        case "int":
        case "bool":
          return { kind: "literal", value: e.value };
        case "path":
          return { kind: "path", root: e.root.name, fields: e.fields.map((f) => f.name) };
        case "not":
          return { kind: "not", operand: expr(e.operand) };
        case "binary":
          return { kind: "binary", op: e.op, left: expr(e.left), right: expr(e.right) };
        case "call": {
          const id = `c${calls++}`;
          const target = project.agents.has(e.callee.name) ? "agent" : "workflow";
          if (target === "agent") agents.add(e.callee.name);
          else pending.push(e.callee.name);
          return {
            kind: "call",
            id,
            callee: e.callee.name,
            target,
            args: e.args.map(expr),
            line: lineOf(e.range.start),
          };
        }
      }
    };
    const block = (stmts: Statement[]): IrNode[] => stmts.map((s) => node(s));
    const node = (s: Statement): IrNode => {
      switch (s.kind) {
        case "assign":
          return { op: "assign", target: s.target.name, value: expr(s.value) };
        case "while":
          return {
            op: "loop",
            id: `l${loops++}`,
            condition: expr(s.condition),
            limit: s.limit?.value ?? 0,
            body: block(s.body.statements),
            line: lineOf(s.range.start),
          };
        case "if":
          return {
            op: "branch",
            condition: expr(s.condition),
            thenBody: block(s.then.statements),
            elseBody: s.else ? block(s.else.statements) : [],
          };
        case "approve": {
          const approve: IrNode = {
            op: "approve",
            id: `a${approvals++}`,
            value: expr(s.value),
            line: lineOf(s.range.start),
          };
          if (s.label) approve.label = s.label.value;
          return approve;
        }
        case "return":
          return { op: "return", value: expr(s.value) };
      }
    };
    workflows[name] = {
      name,
      params: wf.params,
      returns: wf.returns,
      body: block(wf.decl.body.statements),
    };
  }

  const reached = [...agents].sort().map((name) => {
    const a = project.agents.get(name);
    return {
      name,
      model: a?.model,
      instructions: a?.instructions,
      input: a?.input ?? null,
      output: a?.output ?? null,
      maxTurns: a?.maxTurns,
      // Only when said: a program that says neither keeps its hash.
      ...(a && a.maxTokens !== DEFAULT_MAX_TOKENS ? { maxTokens: a.maxTokens } : {}),
      ...(a?.temperature !== undefined ? { temperature: a.temperature } : {}),
      grants: a?.grants.map((g) => ({ ref: g.ref, mode: g.mode })),
    };
  });
  const tools = [...project.tools.values()]
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((t) => ({
      name: t.name,
      adapter: t.adapter,
      operations: [...t.operations.values()].map((o) => ({
        name: o.name,
        effects: o.effects,
        idempotent: o.idempotent,
        input: o.input ?? null,
        // Only command and http operations have a reach: workspace runs keep their hashes.
        ...(o.reach ? { reach: o.reach } : {}),
      })),
      ...(t.command ? { command: t.command } : {}),
      ...(t.http ? { http: t.http } : {}),
    }));
  const schemas: Record<string, JsonSchemaNode> = {};
  for (const s of [...project.schemas.values()].sort((a, b) => (a.name < b.name ? -1 : 1)))
    schemas[s.name] = s.schema;
  const hash = sha256({ entry, workflows, agents: reached, tools, schemas });
  return { entry, workflows, agents: [...agents].sort(), hash };
}
