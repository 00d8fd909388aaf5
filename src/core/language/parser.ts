/**
 * Recursive-descent parser for `.agent` files (grammar in docs/language.md).
 *
 * Errors are collected, not thrown to the caller: a syntax error abandons only the statement,
 * agent item or declaration it occurs in, and parsing resumes at the next boundary (a line at
 * the same brace depth, or a declaration keyword), so one run reports every independent error.
 */
import { type Diagnostic, type DiagnosticCode, diagnostic } from "../diagnostics.ts";
import type { Range, SourceText } from "../source.ts";
import { didYouMean } from "../suggest.ts";
import type {
  AgentDecl,
  AgentFile,
  Block,
  DecimalLiteral,
  Decl,
  DefaultsDecl,
  EffectRef,
  Expr,
  Identifier,
  IntLiteral,
  Param,
  ProviderDecl,
  Statement,
  StringLiteral,
  ToolDecl,
  WorkflowDecl,
} from "./ast.ts";
import { lex } from "./lexer.ts";
import { describeToken, type Token, type TokenKind } from "./tokens.ts";

export interface ParseResult {
  file: AgentFile;
  diagnostics: Diagnostic[];
}

/** The language's words by where they may stand (the parser's, and completion's). */
export const DECL_KEYWORDS = ["defaults", "provider", "tool", "agent", "workflow"];
export const AGENT_ITEMS = [
  "model",
  "input",
  "output",
  "instructions",
  "maxTurns",
  "maxTokens",
  "temperature",
  "grants",
];
export const DEFAULTS_ITEMS = ["model", "maxTurns", "maxTokens", "temperature"];
export const STATEMENT_KEYWORDS = ["while", "if", "approve", "return"];

/** Deepest nesting of blocks, parentheses, calls and `!` the parser accepts. */
export const MAX_NESTING = 100;
/** Most operators (`&&`, `||`, `==`, `!=`, `!`) in one statement's expressions. */
export const MAX_OPERATORS = 500;

/** Thrown inside the parser only, to unwind to the nearest recovery point. */
class Abandon {
  readonly at: number;
  constructor(at: number) {
    this.at = at;
  }
}

export function parseAgentFile(source: SourceText): ParseResult {
  const lexed = lex(source);
  const parser = new Parser(
    source,
    lexed.tokens,
    lexed.diagnostics.some((d) => d.code === "TF1002"),
  );
  const decls = parser.parseFile();
  return {
    file: { path: source.path, decls },
    diagnostics: [...lexed.diagnostics, ...parser.diagnostics],
  };
}

class Parser {
  readonly diagnostics: Diagnostic[] = [];
  private pos = 0;
  private nesting = 0;
  private operators = 0;
  /** Brace depth before each token, for recovery. */
  private readonly depth: number[];
  private readonly lineStartColumnOne: boolean[];

  constructor(
    private readonly source: SourceText,
    private readonly tokens: Token[],
    /** An unterminated string ran to the end of the file; the braces it swallowed are not news. */
    private readonly swallowedByString = false,
  ) {
    this.depth = new Array(tokens.length);
    this.lineStartColumnOne = new Array(tokens.length);
    let d = 0;
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i] as Token;
      if (t.kind === "}") d = Math.max(0, d - 1);
      this.depth[i] = d;
      if (t.kind === "{") d++;
      const prev = source.text.charCodeAt(t.start - 1);
      this.lineStartColumnOne[i] = t.start === 0 || prev === 10;
    }
  }

  // ── token access ──────────────────────────────────────────────────────────

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.pos + offset, this.tokens.length - 1)] as Token;
  }

  private next(): Token {
    const t = this.peek();
    if (this.pos < this.tokens.length - 1) this.pos++;
    return t;
  }

  private at(kind: TokenKind, text?: string): boolean {
    const t = this.peek();
    return t.kind === kind && (text === undefined || t.text === text);
  }

  private atWord(word: string): boolean {
    return this.at("ident", word);
  }

  private report(code: DiagnosticCode, range: Range, message: string, hint?: string): void {
    this.diagnostics.push(
      diagnostic(code, this.source.span(range), message, hint === undefined ? {} : { hint }),
    );
  }

  /** Runs one level of nesting; past MAX_NESTING it reports TF1005 and abandons the statement. */
  private nested<T>(parse: () => T): T {
    if (this.nesting >= MAX_NESTING) {
      this.report(
        "TF1005",
        this.peek(),
        `nesting deeper than ${MAX_NESTING} levels`,
        "split the logic into smaller workflows",
      );
      throw new Abandon(this.pos);
    }
    this.nesting++;
    try {
      return parse();
    } finally {
      this.nesting--;
    }
  }

  private countOperator(): void {
    if (++this.operators > MAX_OPERATORS) {
      this.report(
        "TF1005",
        this.peek(),
        `more than ${MAX_OPERATORS} operators in one statement`,
        "split the condition into named steps",
      );
      throw new Abandon(this.pos);
    }
  }

  private fail(expected: string, hint?: string): never {
    const t = this.peek();
    this.report("TF1010", t, `expected ${expected}, found ${describeToken(t)}`, hint);
    throw new Abandon(this.pos);
  }

  private expect(kind: TokenKind, what?: string): Token {
    if (this.at(kind)) return this.next();
    return this.fail(what ?? `\`${kind}\``);
  }

  private identifier(what: string): Identifier {
    const t = this.peek();
    if (t.kind !== "ident") this.fail(what);
    this.next();
    return { name: t.text, range: { start: t.start, end: t.end } };
  }

  private stringLiteral(what: string): StringLiteral {
    const t = this.peek();
    if (t.kind !== "string") this.fail(what);
    this.next();
    return { kind: "string", value: t.value, range: { start: t.start, end: t.end } };
  }

  /** A number with or without a fraction. */
  private decimalLiteral(what: string): DecimalLiteral {
    const t = this.peek();
    if (t.kind !== "int" && t.kind !== "decimal") this.fail(what);
    this.next();
    return { kind: "decimal", value: Number(t.text), range: { start: t.start, end: t.end } };
  }

  private intLiteral(what: string): IntLiteral {
    const t = this.peek();
    if (t.kind !== "int") this.fail(what);
    this.next();
    const value = Number(t.value);
    if (!Number.isSafeInteger(value)) {
      this.report(
        "TF1004",
        t,
        `${t.text} is too large for an integer`,
        `use a value up to ${Number.MAX_SAFE_INTEGER}`,
      );
    }
    return {
      kind: "int",
      value: Number.isSafeInteger(value) ? value : Number.MAX_SAFE_INTEGER,
      range: { start: t.start, end: t.end },
    };
  }

  private rangeFrom(start: number): Range {
    const prev = this.tokens[Math.max(0, this.pos - 1)] as Token;
    return { start, end: Math.max(start, prev.end) };
  }

  // ── recovery ──────────────────────────────────────────────────────────────

  private looksLikeDecl(i: number): boolean {
    const t = this.tokens[i] as Token;
    const after = this.tokens[i + 1];
    if (t.kind !== "ident" || !DECL_KEYWORDS.includes(t.text)) return false;
    if (t.text === "defaults") return after?.kind === "{";
    return after?.kind === "ident";
  }

  /** Skips to the next token that can start a declaration at top level. */
  private syncToDecl(start: number, errorAt: number): void {
    this.pos = errorAt;
    if (errorAt <= start && this.peek().kind !== "eof") this.pos = start + 1;
    while (this.peek().kind !== "eof") {
      const i = this.pos;
      if (this.looksLikeDecl(i) && ((this.depth[i] as number) === 0 || this.lineStartColumnOne[i]))
        return;
      this.pos++;
    }
  }

  /**
   * Skips to the next line that starts at `depth` (a new statement or item) or to the `}` that
   * closes the enclosing block. Stops at a top-level declaration, so a missing `}` cannot swallow
   * the rest of the file.
   */
  private syncInBlock(start: number, errorAt: number, depth: number): void {
    this.pos = errorAt;
    if (
      errorAt <= start &&
      this.peek().kind !== "eof" &&
      !(this.at("}") && this.depth[this.pos] === depth - 1)
    ) {
      this.pos = start + 1;
    }
    while (this.peek().kind !== "eof") {
      const i = this.pos;
      const t = this.tokens[i] as Token;
      const d = this.depth[i] as number;
      if (t.kind === "}" && d === depth - 1) return;
      if (t.newlineBefore && d === depth && t.kind === "ident") return;
      if (d < depth - 1) return;
      if (this.lineStartColumnOne[i] && this.looksLikeDecl(i)) return;
      this.pos++;
    }
  }

  /** Closes a block: expects `}`, or reports it missing when a declaration follows instead. */
  private closeBrace(openedAt: Range, what: string): void {
    if (this.at("}")) {
      this.next();
      return;
    }
    if (this.swallowedByString && this.at("eof")) return;
    this.report(
      "TF1010",
      openedAt,
      `\`{\` of this ${what} is never closed`,
      "add the matching `}`",
    );
  }

  // ── declarations ──────────────────────────────────────────────────────────

  parseFile(): Decl[] {
    const decls: Decl[] = [];
    while (!this.at("eof")) {
      const start = this.pos;
      try {
        const t = this.peek();
        if (t.kind !== "ident" || !DECL_KEYWORDS.includes(t.text)) {
          const hint = t.kind === "ident" ? didYouMean(t.text, DECL_KEYWORDS) : undefined;
          this.report(
            "TF1013",
            t,
            `expected a declaration (${DECL_KEYWORDS.join(", ")}), found ${describeToken(t)}`,
            hint,
          );
          throw new Abandon(this.pos);
        }
        decls.push(this.parseDecl());
      } catch (e) {
        if (!(e instanceof Abandon)) throw e;
        this.syncToDecl(start, e.at);
      }
    }
    return decls;
  }

  private parseDecl(): Decl {
    const word = this.peek().text;
    switch (word) {
      case "defaults":
        return this.parseDefaults();
      case "provider":
        return this.parseProvider();
      case "tool":
        return this.parseTool();
      case "agent":
        return this.parseAgent();
      default:
        return this.parseWorkflow();
    }
  }

  /** Parses `{ (key value)* }` where each item is dispatched by its leading word. */
  private parseItems(what: string, known: readonly string[], item: (word: Token) => void): Range {
    const open = this.expect("{");
    const depth = (this.depth[this.pos] as number) ?? 0;
    while (!this.at("}") && !this.at("eof")) {
      const start = this.pos;
      if (this.lineStartColumnOne[this.pos] && this.looksLikeDecl(this.pos)) break;
      try {
        const t = this.peek();
        if (t.kind !== "ident" || !known.includes(t.text)) {
          this.report(
            "TF1011",
            t,
            t.kind === "ident"
              ? `unknown ${what} item \`${t.text}\`; expected one of: ${known.join(", ")}`
              : `expected a ${what} item (${known.join(", ")}), found ${describeToken(t)}`,
            t.kind === "ident" ? didYouMean(t.text, known) : undefined,
          );
          throw new Abandon(this.pos);
        }
        this.next();
        item(t);
      } catch (e) {
        if (!(e instanceof Abandon)) throw e;
        this.syncInBlock(start, e.at, depth);
        if (this.lineStartColumnOne[this.pos] && this.looksLikeDecl(this.pos)) break;
      }
    }
    this.closeBrace(open, what);
    return { start: open.start, end: this.rangeFrom(open.start).end };
  }

  private once(seen: Map<string, Token>, word: Token, what: string): void {
    const prev = seen.get(word.text);
    if (prev !== undefined) {
      const p = this.source.position(prev.start);
      this.report(
        "TF3008",
        word,
        `\`${word.text}\` is given twice in this ${what} (first at line ${p.line})`,
        "keep one",
      );
    }
    seen.set(word.text, word);
  }

  private parseDefaults(): DefaultsDecl {
    const kw = this.next();
    const decl: DefaultsDecl = { kind: "defaults", range: { start: kw.start, end: kw.end } };
    const seen = new Map<string, Token>();
    this.parseItems("defaults", DEFAULTS_ITEMS, (word) => {
      this.once(seen, word, "defaults block");
      if (word.text === "model")
        decl.model = this.stringLiteral('a model name string such as "mock/gpt-4"');
      else if (word.text === "maxTokens") decl.maxTokens = this.intLiteral("an integer");
      else if (word.text === "temperature")
        decl.temperature = this.decimalLiteral("a number such as 0.2");
      else decl.maxTurns = this.intLiteral("an integer");
    });
    decl.range = this.rangeFrom(kw.start);
    return decl;
  }

  private parseProvider(): ProviderDecl {
    const kw = this.next();
    const name = this.identifier("a provider name");
    const decl: ProviderDecl = {
      kind: "provider",
      name,
      settings: [],
      range: { start: kw.start, end: kw.end },
    };
    const open = this.expect("{");
    const depth = this.depth[this.pos] as number;
    while (!this.at("}") && !this.at("eof")) {
      const start = this.pos;
      try {
        const key = this.identifier("a setting name");
        const value = this.stringLiteral(`a string value for \`${key.name}\``);
        if (decl.settings.some((s) => s.key.name === key.name)) {
          this.report(
            "TF3008",
            key.range,
            `setting \`${key.name}\` is given twice in provider \`${name.name}\``,
          );
        }
        decl.settings.push({ key, value });
      } catch (e) {
        if (!(e instanceof Abandon)) throw e;
        this.syncInBlock(start, e.at, depth);
      }
    }
    this.closeBrace(open, "provider");
    decl.range = this.rangeFrom(kw.start);
    return decl;
  }

  private parseTool(): ToolDecl {
    const kw = this.next();
    const name = this.identifier("a tool name");
    const decl: ToolDecl = { kind: "tool", name, range: { start: kw.start, end: kw.end } };
    const seen = new Map<string, Token>();
    this.parseItems("tool", ["workspace"], (word) => {
      this.once(seen, word, `tool \`${name.name}\``);
      const ws: NonNullable<ToolDecl["workspace"]> = {
        range: { start: word.start, end: word.end },
      };
      const wsSeen = new Map<string, Token>();
      this.parseItems("workspace", ["root", "testCommand"], (item) => {
        this.once(wsSeen, item, "workspace block");
        if (item.text === "root") ws.root = this.stringLiteral("a root path string");
        else ws.testCommand = this.stringLiteral("a test command string");
      });
      ws.range = this.rangeFrom(word.start);
      decl.workspace = ws;
    });
    decl.range = this.rangeFrom(kw.start);
    return decl;
  }

  private parseAgent(): AgentDecl {
    const kw = this.next();
    const name = this.identifier("an agent name");
    const decl: AgentDecl = {
      kind: "agent",
      name,
      grants: [],
      range: { start: kw.start, end: kw.end },
    };
    const seen = new Map<string, Token>();
    this.parseItems("agent", AGENT_ITEMS, (word) => {
      if (word.text !== "grants") this.once(seen, word, `agent \`${name.name}\``);
      switch (word.text) {
        case "model":
          decl.model = this.stringLiteral('a model name string such as "mock/gpt-4"');
          break;
        case "input":
          decl.input = this.identifier("a schema name");
          break;
        case "output":
          decl.output = this.identifier("a schema name");
          break;
        case "instructions":
          decl.instructions = this.stringLiteral('the instructions as a string ("…" or """…""")');
          break;
        case "maxTurns":
          decl.maxTurns = this.intLiteral("an integer");
          break;
        case "maxTokens":
          decl.maxTokens = this.intLiteral("an integer");
          break;
        case "temperature":
          decl.temperature = this.decimalLiteral("a number such as 0.2");
          break;
        default:
          this.parseGrants(decl);
      }
    });
    decl.range = this.rangeFrom(kw.start);
    return decl;
  }

  private parseGrants(decl: AgentDecl): void {
    const open = this.expect("{");
    const depth = this.depth[this.pos] as number;
    while (!this.at("}") && !this.at("eof")) {
      const start = this.pos;
      if (this.lineStartColumnOne[this.pos] && this.looksLikeDecl(this.pos)) break;
      try {
        const first = this.peek();
        if (!this.atWord("tool")) {
          this.fail(
            "a grant such as `tool.workspace.read_file`",
            "every grant names a tool operation: tool.<tool>.<operation>",
          );
        }
        this.next();
        this.expect(".", "`.` after `tool` (grants look like tool.<tool>.<operation>)");
        const tool = this.identifier("a tool name");
        this.expect(".", "`.` and an operation name (grants look like tool.<tool>.<operation>)");
        const operation = this.identifier("an operation name");
        let requiresApproval = false;
        if (this.atWord("requires")) {
          this.next();
          requiresApproval = true;
          if (this.atWord("approval")) this.next();
          else {
            // Keep the grant (as gated, which is what was meant) so one typo does not also
            // make its effects vanish from the project.
            const t = this.peek();
            const hint = t.kind === "ident" ? didYouMean(t.text, ["approval"]) : undefined;
            this.report(
              "TF1010",
              t,
              `expected \`approval\` after \`requires\`, found ${describeToken(t)}`,
              hint,
            );
            if (t.kind === "ident" && !t.newlineBefore) this.next();
          }
        }
        decl.grants.push({ tool, operation, requiresApproval, range: this.rangeFrom(first.start) });
      } catch (e) {
        if (!(e instanceof Abandon)) throw e;
        this.syncInBlock(start, e.at, depth);
      }
    }
    this.closeBrace(open, "grants block");
  }

  private parseWorkflow(): WorkflowDecl {
    const kw = this.next();
    const name = this.identifier("a workflow name");
    this.expect("(", "`(` and the workflow's parameters");
    const params: Param[] = [];
    if (!this.at(")")) {
      do {
        const pname = this.identifier("a parameter name");
        this.expect(":", "`:` and the parameter's schema");
        const type = this.identifier("a schema name");
        params.push({ name: pname, type });
      } while (this.at(",") && this.next());
    }
    this.expect(")", "`,` or `)`");
    this.expect("->", "`->` and the workflow's result schema");
    const returns = this.identifier("a schema name");
    const effectsKw = this.peek();
    if (!this.atWord("effects")) {
      this.fail(
        "`effects { … }`",
        "every workflow declares the effects it may reach, e.g. effects { workspace.read }",
      );
    }
    this.next();
    this.expect("{");
    const effects: EffectRef[] = [];
    if (!this.at("}")) {
      do {
        const first = this.identifier("an effect name such as `workspace.read`");
        let nameText = first.name;
        while (this.at(".")) {
          this.next();
          nameText += `.${this.identifier("an effect name segment").name}`;
        }
        effects.push({ name: nameText, range: this.rangeFrom(first.range.start) });
      } while (this.at(",") && this.next());
    }
    this.expect("}", "`,` or `}` after the effects");
    const effectsRange = this.rangeFrom(effectsKw.start);
    const body = this.parseBlock();
    return {
      kind: "workflow",
      name,
      params,
      returns,
      effects,
      effectsRange,
      body,
      range: this.rangeFrom(kw.start),
    };
  }

  // ── statements ────────────────────────────────────────────────────────────

  private parseBlock(): Block {
    return this.nested(() => this.parseBlockBody());
  }

  private parseBlockBody(): Block {
    const open = this.expect("{", "`{`");
    const depth = this.depth[this.pos] as number;
    const statements: Statement[] = [];
    while (!this.at("}") && !this.at("eof")) {
      const start = this.pos;
      if (this.lineStartColumnOne[this.pos] && this.looksLikeDecl(this.pos)) break;
      try {
        statements.push(this.parseStatement());
      } catch (e) {
        if (!(e instanceof Abandon)) throw e;
        this.syncInBlock(start, e.at, depth);
      }
    }
    this.closeBrace(open, "block");
    return { statements, range: this.rangeFrom(open.start) };
  }

  private parseStatement(): Statement {
    this.operators = 0;
    const t = this.peek();
    if (t.kind === "ident") {
      switch (t.text) {
        case "while": {
          this.next();
          const condition = this.parseExpr();
          let limit: IntLiteral | undefined;
          if (this.atWord("limit")) {
            this.next();
            limit = this.intLiteral("the loop's iteration limit (an integer)");
          } else if (this.at("{")) {
            this.report(
              "TF1012",
              { start: t.start, end: t.end },
              "a `while` loop must declare its bound with `limit N`",
              "write `while <condition> limit N { … }`; unbounded loops are not allowed",
            );
          } else {
            this.fail("`limit N` or `{`");
          }
          const body = this.parseBlock();
          const stmt: Statement = {
            kind: "while",
            condition,
            body,
            range: this.rangeFrom(t.start),
          };
          if (limit !== undefined) stmt.limit = limit;
          return stmt;
        }
        case "if": {
          this.next();
          const condition = this.parseExpr();
          const then = this.parseBlock();
          const stmt: Statement = { kind: "if", condition, then, range: this.rangeFrom(t.start) };
          if (this.atWord("else")) {
            this.next();
            stmt.else = this.parseBlock();
            stmt.range = this.rangeFrom(t.start);
          }
          return stmt;
        }
        case "approve": {
          this.next();
          const value = this.parseExpr();
          const stmt: Statement = { kind: "approve", value, range: this.rangeFrom(t.start) };
          if (this.at("string") && !this.peek().newlineBefore) {
            stmt.label = this.stringLiteral("a label");
            stmt.range = this.rangeFrom(t.start);
          }
          return stmt;
        }
        case "return": {
          this.next();
          const value = this.parseExpr();
          return { kind: "return", value, range: this.rangeFrom(t.start) };
        }
        default: {
          const target = this.identifier("a statement");
          if (!this.at("=")) {
            const hint = didYouMean(target.name, STATEMENT_KEYWORDS);
            this.fail(
              `\`=\` (a statement is \`name = expression\`, while, if, approve or return)`,
              hint,
            );
          }
          this.next();
          const value = this.parseExpr();
          return { kind: "assign", target, value, range: this.rangeFrom(t.start) };
        }
      }
    }
    return this.fail("a statement (`name = …`, `while`, `if`, `approve` or `return`)");
  }

  // ── expressions: || < && < ==,!= < ! < primary ────────────────────────────

  private parseExpr(): Expr {
    return this.parseBinary(0);
  }

  private static readonly LEVELS: readonly (readonly string[])[] = [["||"], ["&&"], ["==", "!="]];

  private parseBinary(level: number): Expr {
    if (level >= Parser.LEVELS.length) return this.parseUnary();
    let left = this.parseBinary(level + 1);
    const ops = Parser.LEVELS[level] as readonly string[];
    while (ops.includes(this.peek().kind)) {
      const op = this.next().kind as "&&" | "||" | "==" | "!=";
      this.countOperator();
      const right = this.parseBinary(level + 1);
      left = {
        kind: "binary",
        op,
        left,
        right,
        range: { start: left.range.start, end: right.range.end },
      };
    }
    return left;
  }

  private parseUnary(): Expr {
    if (this.at("!")) {
      const bang = this.next();
      this.countOperator();
      const operand = this.nested(() => this.parseUnary());
      return { kind: "not", operand, range: { start: bang.start, end: operand.range.end } };
    }
    return this.parsePrimary();
  }

  private parsePrimary(): Expr {
    const t = this.peek();
    switch (t.kind) {
      case "(": {
        this.next();
        const inner = this.nested(() => this.parseExpr());
        this.expect(")", "`)`");
        return inner;
      }
      case "string":
        return this.stringLiteral("a string");
      case "int":
        return this.intLiteral("an integer");
      case "ident": {
        if (t.text === "true" || t.text === "false") {
          this.next();
          return { kind: "bool", value: t.text === "true", range: { start: t.start, end: t.end } };
        }
        const root = this.identifier("a name");
        if (this.at("(")) {
          this.next();
          const args: Expr[] = [];
          if (!this.at(")")) {
            do {
              args.push(this.nested(() => this.parseExpr()));
            } while (this.at(",") && this.next());
          }
          this.expect(")", "`,` or `)`");
          return { kind: "call", callee: root, args, range: this.rangeFrom(t.start) };
        }
        const fields: Identifier[] = [];
        while (this.at(".")) {
          this.next();
          fields.push(this.identifier("a field name"));
        }
        return { kind: "path", root, fields, range: this.rangeFrom(t.start) };
      }
      default:
        return this.fail("an expression");
    }
  }
}
