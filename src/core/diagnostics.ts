/**
 * Diagnostics: problems in user input, as data.
 *
 * Owns the closed set of diagnostic codes, their default severities and the `Span` every
 * diagnostic carries. Parsers and checkers return these; they never throw on user input.
 * Codes are stable: tests and users key on them, so a code is never reused for another meaning.
 */

export type Severity = "error" | "warning" | "info";

/** A source range, 1-based lines and columns; `end*` is exclusive. `file` is project-relative. */
export interface Span {
  file: string;
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
}

/** The closed set of codes. TF1xxx syntax, TF2xxx resources, TF3xxx names, TF4xxx types, TF5xxx effects and policy, TF6xxx host configurations. */
export const DIAGNOSTIC_CODES = {
  TF1001: { severity: "error", title: "unexpected character" },
  TF1002: { severity: "error", title: "unterminated string" },
  TF1003: { severity: "error", title: "invalid escape sequence" },
  TF1004: { severity: "error", title: "integer out of range" },
  TF1005: { severity: "error", title: "nesting too deep" },
  TF1010: { severity: "error", title: "unexpected token" },
  TF1011: { severity: "error", title: "unknown item" },
  TF1012: { severity: "error", title: "loop without limit" },
  TF1013: { severity: "error", title: "unknown declaration" },
  TF2001: { severity: "error", title: "YAML syntax error" },
  TF2002: { severity: "error", title: "invalid resource field" },
  TF2003: { severity: "error", title: "unknown resource kind" },
  TF2004: { severity: "error", title: "unsupported apiVersion" },
  TF2005: { severity: "error", title: "missing project document" },
  TF2006: { severity: "error", title: "more than one project document" },
  TF2007: { severity: "error", title: "duplicate resource" },
  TF2008: { severity: "error", title: "unreadable file" },
  TF2009: { severity: "error", title: "not a UTF-8 text file" },
  TF2010: { severity: "error", title: "unsafe file name" },
  TF2011: { severity: "error", title: "invalid command tool" },
  TF2012: { severity: "error", title: "invalid http URL template" },
  TF2013: { severity: "error", title: "adapter settings missing or misplaced" },
  TF2014: { severity: "error", title: "unsafe http header" },
  TF2015: { severity: "error", title: "name not writable in .agent" },
  TF2016: { severity: "error", title: "operation effects do not match its adapter" },
  TF3001: { severity: "error", title: "unknown agent or workflow" },
  TF3002: { severity: "error", title: "unknown tool" },
  TF3003: { severity: "error", title: "unknown tool operation" },
  TF3004: { severity: "error", title: "unknown schema" },
  TF3005: { severity: "error", title: "unknown variable" },
  TF3006: { severity: "error", title: "duplicate declaration" },
  TF3007: { severity: "error", title: "unknown model provider" },
  TF3008: { severity: "error", title: "duplicate item" },
  TF3009: { severity: "error", title: "unknown model" },
  TF3010: { severity: "error", title: "tool binding mismatch" },
  // An error, not a warning: a policy or test naming an agent that does not exist (a rename, a
  // typo) protects nothing, and a pull request could escape a guard that way.
  TF3011: { severity: "error", title: "unknown name in policy or test" },
  // Warnings: the provider decides what it serves; the installed SDK's list may lag behind it.
  TF3012: { severity: "warning", title: "deprecated model" },
  TF3013: { severity: "warning", title: "model unknown to the provider's SDK" },
  // Errors: a model Terfyn cannot call fails every run; a setting it does not read is not applied.
  TF3014: { severity: "error", title: "model provider without an adapter" },
  TF3015: { severity: "error", title: "invalid provider setting" },
  TF4001: { severity: "error", title: "argument type mismatch" },
  TF4002: { severity: "error", title: "wrong number of arguments" },
  TF4003: { severity: "error", title: "assignment type mismatch" },
  TF4004: { severity: "error", title: "unknown field" },
  TF4005: { severity: "error", title: "condition is not boolean" },
  TF4006: { severity: "error", title: "return type mismatch" },
  TF4007: { severity: "error", title: "missing return" },
  TF4008: { severity: "error", title: "agent lacks input or output schema" },
  TF4009: { severity: "error", title: "operand type mismatch" },
  TF4010: { severity: "warning", title: "unreachable statement" },
  TF4011: { severity: "error", title: "value is not callable" },
  TF5001: { severity: "error", title: "loop limit above policy maximum" },
  TF5002: { severity: "error", title: "loop limit below one" },
  TF5003: { severity: "error", title: "undeclared reachable effect" },
  TF5004: { severity: "warning", title: "declared effect is unreachable" },
  TF5005: { severity: "error", title: "recursion between workflows" },
  TF5006: { severity: "error", title: "forbidden effect reachable" },
  TF5007: { severity: "error", title: "effect requires approval" },
  TF5008: { severity: "error", title: "invalid number" },
  // Host configurations (Claude Code settings, …): a file the host refuses applies none of its
  // rules, so it is an error; a rule the host reads but never consults, or that allows more
  // than it looks, is a warning at its line.
  TF6001: { severity: "error", title: "host configuration is not valid" },
  TF6002: { severity: "error", title: "host configuration key has the wrong type" },
  // A warning: the host skips an entry that is not a rule (real files hold "// comment" strings).
  TF6003: { severity: "warning", title: "not a permission rule" },
  TF6004: { severity: "warning", title: "rule never consulted" },
  TF6005: { severity: "warning", title: "rule allows more than it looks" },
  TF6006: { severity: "warning", title: "colon taken literally" },
  TF6007: { severity: "warning", title: "rule shadowed by a deny" },
  // The host's schema rejects the file's `permissions` and it ignores them: its denies are gone.
  TF6008: { severity: "error", title: "host ignores this file's permissions" },
} as const satisfies Record<string, { severity: Severity; title: string }>;

export type DiagnosticCode = keyof typeof DIAGNOSTIC_CODES;

/** A secondary location that explains a diagnostic (the earlier declaration, the grant that reaches). */
export interface RelatedInformation {
  span: Span;
  message: string;
}

export interface Diagnostic {
  code: DiagnosticCode;
  severity: Severity;
  message: string;
  span: Span;
  /** What to do about it, when there is something specific to say ("did you mean …?"). */
  hint?: string;
  related?: RelatedInformation[];
}

export function diagnostic(
  code: DiagnosticCode,
  span: Span,
  message: string,
  extra: { hint?: string; related?: RelatedInformation[]; severity?: Severity } = {},
): Diagnostic {
  const d: Diagnostic = {
    code,
    severity: extra.severity ?? DIAGNOSTIC_CODES[code].severity,
    message,
    span,
  };
  if (extra.hint !== undefined) d.hint = extra.hint;
  if (extra.related !== undefined && extra.related.length > 0) d.related = extra.related;
  return d;
}

export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === "error");
}

/** Orders diagnostics by file, then position, then code, so output is stable. */
export function sortDiagnostics(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  return [...diagnostics].sort(
    (a, b) =>
      (a.span.file < b.span.file ? -1 : a.span.file > b.span.file ? 1 : 0) ||
      a.span.line - b.span.line ||
      a.span.column - b.span.column ||
      (a.code < b.code ? -1 : a.code > b.code ? 1 : 0),
  );
}
