/**
 * The `.agent` syntax tree. Every node carries the offset range it was parsed from; offsets
 * become line:column only when a diagnostic or annotation is shown.
 */
import type { Range } from "../source.ts";

export interface Identifier {
  name: string;
  range: Range;
}

export interface StringLiteral {
  kind: "string";
  value: string;
  range: Range;
}

export interface IntLiteral {
  kind: "int";
  value: number;
  range: Range;
}

export interface BoolLiteral {
  kind: "bool";
  value: boolean;
  range: Range;
}

/** A number with a fraction or without (`0.2`, `1`): settings such as `temperature`. */
export interface DecimalLiteral {
  kind: "decimal";
  value: number;
  range: Range;
}

export interface DefaultsDecl {
  kind: "defaults";
  model?: StringLiteral;
  maxTurns?: IntLiteral;
  maxTokens?: IntLiteral;
  temperature?: DecimalLiteral;
  range: Range;
}

export interface ProviderDecl {
  kind: "provider";
  name: Identifier;
  settings: { key: Identifier; value: StringLiteral }[];
  range: Range;
}

export interface ToolDecl {
  kind: "tool";
  name: Identifier;
  workspace?: { root?: StringLiteral; testCommand?: StringLiteral; range: Range };
  range: Range;
}

/** `tool.<tool>.<operation> [requires approval]` */
export interface Grant {
  tool: Identifier;
  operation: Identifier;
  requiresApproval: boolean;
  range: Range;
}

export interface AgentDecl {
  kind: "agent";
  name: Identifier;
  model?: StringLiteral;
  input?: Identifier;
  output?: Identifier;
  instructions?: StringLiteral;
  maxTurns?: IntLiteral;
  maxTokens?: IntLiteral;
  temperature?: DecimalLiteral;
  grants: Grant[];
  range: Range;
}

export interface Param {
  name: Identifier;
  type: Identifier;
}

export interface EffectRef {
  name: string;
  range: Range;
}

export interface WorkflowDecl {
  kind: "workflow";
  name: Identifier;
  params: Param[];
  returns: Identifier;
  effects: EffectRef[];
  /** The range of the `effects { … }` clause, for diagnostics about the declaration as a whole. */
  effectsRange: Range;
  body: Block;
  range: Range;
}

export type Decl = DefaultsDecl | ProviderDecl | ToolDecl | AgentDecl | WorkflowDecl;

export interface Block {
  statements: Statement[];
  range: Range;
}

export interface AssignStmt {
  kind: "assign";
  target: Identifier;
  value: Expr;
  range: Range;
}

export interface WhileStmt {
  kind: "while";
  condition: Expr;
  /** Absent only in a file that also carries a TF1012 diagnostic. */
  limit?: IntLiteral;
  body: Block;
  range: Range;
}

export interface IfStmt {
  kind: "if";
  condition: Expr;
  then: Block;
  else?: Block;
  range: Range;
}

export interface ApproveStmt {
  kind: "approve";
  value: Expr;
  label?: StringLiteral;
  range: Range;
}

export interface ReturnStmt {
  kind: "return";
  value: Expr;
  range: Range;
}

export type Statement = AssignStmt | WhileStmt | IfStmt | ApproveStmt | ReturnStmt;

export interface BinaryExpr {
  kind: "binary";
  op: "&&" | "||" | "==" | "!=";
  left: Expr;
  right: Expr;
  range: Range;
}

export interface NotExpr {
  kind: "not";
  operand: Expr;
  range: Range;
}

export interface CallExpr {
  kind: "call";
  callee: Identifier;
  args: Expr[];
  range: Range;
}

/** A variable and optional field accesses: `state`, `state.approved`. */
export interface PathExpr {
  kind: "path";
  root: Identifier;
  fields: Identifier[];
  range: Range;
}

export type Expr =
  | BinaryExpr
  | NotExpr
  | CallExpr
  | PathExpr
  | StringLiteral
  | IntLiteral
  | BoolLiteral;

export interface AgentFile {
  path: string;
  decls: Decl[];
}
