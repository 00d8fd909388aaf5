/**
 * Property-based robustness tests for the pure core's entry points: the `.agent` parser
 * (`parseAgentFile`), the YAML resource loader (`loadResources`) and the whole pipeline
 * (`validateProject`).
 *
 * The contract under test (DESIGN.md, "Architecture"): parsers and checkers never throw on user
 * input; they return diagnostics, each with a stable `TFnnnn` code, a severity, a message and a
 * span inside the file it talks about. Valid input yields no error diagnostics.
 *
 * Runs are reproducible: every property uses a fixed seed (override with `FC_SEED=<int>`); scale
 * the number of runs with `FC_SCALE=<factor>` for a longer fuzzing session, e.g.
 * `FC_SCALE=20 FC_SEED=$RANDOM npx vitest run __tests__/property-parser.test.ts`.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { loadResources } from "../src/core/config/load-resources.ts";
import { DIAGNOSTIC_CODES } from "../src/core/diagnostics.ts";
import { parseAgentFile } from "../src/core/language/parser.ts";
import { SourceText } from "../src/core/source.ts";
import { validateProject } from "../src/core/validate.ts";

// ── reproducibility ─────────────────────────────────────────────────────────────────────────────

const SEED =
  process.env.FC_SEED === undefined ? 0x7e2f1a05 : Number.parseInt(process.env.FC_SEED, 10);
const SCALE = Number(process.env.FC_SCALE ?? "1") > 0 ? Number(process.env.FC_SCALE ?? "1") : 1;

/** Planned runs per property, so a test can check the total stays at or above 10,000. */
const plannedRuns: Record<string, number> = {};

function runs(name: string, numRuns: number): { numRuns: number; seed: number } {
  plannedRuns[name] = numRuns;
  // Each property gets its own seed derived from the base seed, so they explore different inputs.
  let h = SEED | 0;
  for (let i = 0; i < name.length; i++) h = (Math.imul(h, 31) + name.charCodeAt(i)) | 0;
  return { numRuns: Math.max(1, Math.round(numRuns * SCALE)), seed: h };
}

// ── the example project ─────────────────────────────────────────────────────────────────────────

const EXAMPLE_DIR = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "examples",
  "implement-review-loop",
);
const EXAMPLE_PATHS = [
  "main.agent",
  "terfyn.yaml",
  "tools.yaml",
  "schemas.yaml",
  "policies.yaml",
  "tests/capabilities.yaml",
] as const;
const EXAMPLE_FILES = EXAMPLE_PATHS.map((path) => ({
  path,
  text: readFileSync(join(EXAMPLE_DIR, path), "utf8"),
}));
const EXAMPLE_AGENT = EXAMPLE_FILES.filter((f) => f.path.endsWith(".agent"));
const EXAMPLE_YAML = EXAMPLE_FILES.filter((f) => !f.path.endsWith(".agent"));

// ── result-shape checks ─────────────────────────────────────────────────────────────────────────

const SEVERITIES = new Set(["error", "warning", "info"]);
const DECL_KINDS = new Set(["defaults", "provider", "tool", "agent", "workflow"]);
const RESOURCE_KINDS = ["Project", "Tool", "Schema", "Policy", "CapabilityTest"] as const;

function fail(message: string, value: unknown): never {
  let shown: string;
  try {
    shown = JSON.stringify(value);
  } catch {
    shown = String(value);
  }
  throw new Error(`${message}: ${shown}`);
}

function isPositiveInt(n: unknown): n is number {
  return typeof n === "number" && Number.isInteger(n) && n >= 1;
}

/** Line lengths (UTF-16 code units, `\r` included) of a text split at `\n`, as SourceText counts. */
function lineLengths(text: string): number[] {
  return text.split("\n").map((l) => l.length);
}

/** Checks one span against the texts it may point into (file path → text). */
function checkSpan(span: unknown, texts: ReadonlyMap<string, number[]>, what: unknown): void {
  if (span === null || typeof span !== "object") fail("span is not an object", what);
  const s = span as Record<string, unknown>;
  const lines = typeof s.file === "string" ? texts.get(s.file) : undefined;
  if (lines === undefined) fail(`span.file ${JSON.stringify(s.file)} is not an input path`, what);
  const { line, column, endLine, endColumn } = s;
  if (
    !isPositiveInt(line) ||
    !isPositiveInt(column) ||
    !isPositiveInt(endLine) ||
    !isPositiveInt(endColumn)
  ) {
    fail("span positions must be integers >= 1", what);
  }
  if (endLine < line) fail("span ends before it starts (endLine < line)", what);
  if (endLine === line && endColumn < column)
    fail("span ends before it starts (endColumn < column)", what);
  if (line > lines.length + 1 || endLine > lines.length + 1)
    fail(`span line beyond the text (${lines.length} lines)`, what);
  const startLen = lines[line - 1];
  if (startLen !== undefined && column > startLen + 1)
    fail(`span column beyond its line (length ${startLen})`, what);
  const endLen = lines[endLine - 1];
  if (endLen !== undefined && endColumn > endLen + 1)
    fail(`span endColumn beyond its line (length ${endLen})`, what);
}

function checkDiagnostics(diagnostics: unknown, texts: ReadonlyMap<string, number[]>): void {
  if (!Array.isArray(diagnostics)) fail("diagnostics is not an array", diagnostics);
  for (const d of diagnostics as unknown[]) {
    if (d === null || typeof d !== "object") fail("diagnostic is not an object", d);
    const diag = d as Record<string, unknown>;
    if (typeof diag.code !== "string" || !/^TF\d{4}$/.test(diag.code))
      fail("diagnostic code must match /^TF\\d{4}$/", d);
    if (!Object.hasOwn(DIAGNOSTIC_CODES, diag.code))
      fail("diagnostic code is not in DIAGNOSTIC_CODES", d);
    if (typeof diag.severity !== "string" || !SEVERITIES.has(diag.severity))
      fail("bad severity", d);
    if (typeof diag.message !== "string" || diag.message.trim() === "") fail("empty message", d);
    if (diag.hint !== undefined && (typeof diag.hint !== "string" || diag.hint.trim() === ""))
      fail("bad hint", d);
    checkSpan(diag.span, texts, d);
    if (diag.related !== undefined) {
      if (!Array.isArray(diag.related)) fail("related is not an array", d);
      for (const r of diag.related as { span: unknown; message: unknown }[]) {
        checkSpan(r.span, texts, d);
        if (typeof r.message !== "string" || r.message.trim() === "")
          fail("related without message", d);
      }
    }
  }
}

function errorsOf<D extends { severity: string }>(diagnostics: readonly D[]): D[] {
  return diagnostics.filter((d) => d.severity === "error");
}

/** Parses, asserting totality and a sane result; returns the result for further checks. */
function parseChecked(path: string, text: string) {
  const result = parseAgentFile(new SourceText(path, text));
  if (result === null || typeof result !== "object") fail("parse returned no result", result);
  if (result.file.path !== path)
    fail("AST file path differs from the input path", result.file.path);
  if (!Array.isArray(result.file.decls)) fail("decls is not an array", result.file);
  for (const decl of result.file.decls) {
    if (!DECL_KINDS.has(decl.kind)) fail("unknown decl kind", decl.kind);
    const { start, end } = decl.range;
    if (
      !(
        Number.isInteger(start) &&
        Number.isInteger(end) &&
        start >= 0 &&
        start <= end &&
        end <= text.length
      )
    ) {
      fail("decl range outside the text", decl.range);
    }
  }
  checkDiagnostics(result.diagnostics, new Map([[path, lineLengths(text)]]));
  return result;
}

/** Loads YAML resources, asserting totality and a sane result. */
function loadChecked(path: string, text: string) {
  const result = loadResources(path, text);
  if (result === null || typeof result !== "object")
    fail("loadResources returned no result", result);
  if (!Array.isArray(result.resources) || !Array.isArray(result.invalid))
    fail("resources/invalid not arrays", result);
  const texts = new Map([[path, lineLengths(text)]]);
  checkDiagnostics(result.diagnostics, texts);
  for (const r of result.resources) {
    if (!(RESOURCE_KINDS as readonly string[]).includes(r.kind))
      fail("unknown resource kind", r.kind);
    if (typeof r.name !== "string" || r.name === "") fail("resource without a name", r.name);
    if (r.file !== path) fail("resource file differs from the input path", r.file);
    checkSpan(r.span, texts, r.span);
    checkSpan(r.spanOf([]), texts, "spanOf([])");
    checkSpan(r.spanOf(["spec"]), texts, "spanOf(spec)");
    checkSpan(r.spanOf(["spec", "no", 3, "such"]), texts, "spanOf(missing)");
  }
  return result;
}

function validateChecked(files: readonly { path: string; text: string }[]) {
  const result = validateProject(files);
  const texts = new Map(files.map((f) => [f.path, lineLengths(f.text)]));
  // TF2005 (no project document) points at the root `terfyn.yaml`, which may not exist.
  if (!texts.has("terfyn.yaml")) texts.set("terfyn.yaml", [0]);
  checkDiagnostics(result.diagnostics, texts);
  const hasError = result.diagnostics.some((d) => d.severity === "error");
  if (result.ok === hasError)
    fail("ok disagrees with the error diagnostics", { ok: result.ok, hasError });
  return result;
}

// ── generator 1: grammar-aware `.agent` programs ────────────────────────────────────────────────

/** Words the grammar gives a meaning to somewhere. */
const KEYWORDS = [
  "defaults",
  "provider",
  "tool",
  "agent",
  "workflow",
  "model",
  "input",
  "output",
  "instructions",
  "maxTurns",
  "grants",
  "workspace",
  "root",
  "testCommand",
  "while",
  "limit",
  "if",
  "else",
  "approve",
  "return",
  "effects",
  "requires",
  "approval",
  "true",
  "false",
];
/** Words that cannot start an assignment or a path/call expression. */
const NOT_A_VARIABLE = new Set(["while", "if", "else", "approve", "return", "true", "false"]);

const rawIdent = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,10}$/);
/** A name usable as a variable, assignment target or callee. */
const varIdent = fc
  .oneof(
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        "state",
        "input",
        "x",
        "Implementer",
        "Reviewer",
        "_",
        "a1",
        "implementation",
      ),
    },
    { weight: 3, arbitrary: rawIdent },
    // contextual keywords that are still plain names where a variable is expected
    { weight: 1, arbitrary: fc.constantFrom(...KEYWORDS) },
  )
  .filter((s) => !NOT_A_VARIABLE.has(s));
/** A name in a position where the grammar accepts any identifier (decl names, types, fields). */
const anyIdent = fc.oneof(
  rawIdent,
  fc.constantFrom(...KEYWORDS),
  fc.constantFrom("CodingState", "workspace", "read_file"),
);

const comment = fc
  .string({ unit: "binary", maxLength: 20 })
  .map((s) => `//${s.replace(/[\n]/g, " ")}`);
/** Whitespace that keeps the next token on the same line. */
const inlineWs = fc.constantFrom(" ", "\t", "  ", " \t ", "\uFEFF ", " \r ", "    ");
/** Whitespace inside a declaration: never leaves a token at column 1 (where a declaration keyword would end the block). */
const sep = fc.oneof(
  { weight: 4, arbitrary: inlineWs },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.option(comment, { nil: "" }),
        fc.constantFrom("\n", "\r\n", "\n\n", "\n \n"),
        fc.constantFrom(" ", "  ", "\t", "    "),
      )
      .map(([c, nl, indent]) => `${c === "" ? "" : ` ${c}`}${nl}${indent}`),
  },
);
/** Whitespace between top-level declarations. */
const topSep = fc.oneof(
  sep,
  fc.constantFrom("\n", "\n\n", "\r\n", "\n// comment\n", "\n\t//\n\n"),
  comment.map((c) => `\n${c}\n`),
);

type Part = string | fc.Arbitrary<string>;
const toArb = (p: Part): fc.Arbitrary<string> => (typeof p === "string" ? fc.constant(p) : p);

/** Tokens separated by random whitespace (always at least one character). */
function seq(...parts: Part[]): fc.Arbitrary<string> {
  const arbs: fc.Arbitrary<string>[] = [];
  parts.forEach((p, i) => {
    if (i > 0) arbs.push(sep);
    arbs.push(toArb(p));
  });
  return fc.tuple(...arbs).map((xs) => xs.join(""));
}

/** `item sep item sep …` */
function many(
  item: fc.Arbitrary<string>,
  minLength: number,
  maxLength: number,
): fc.Arbitrary<string> {
  return fc
    .array(fc.tuple(sep, item), { minLength, maxLength })
    .map((xs) => xs.map(([s, x]) => s + x).join(""));
}

/** `item , item , …` with random whitespace; empty when `minLength` is 0 and none are drawn. */
function commaList(
  item: fc.Arbitrary<string>,
  minLength: number,
  maxLength: number,
): fc.Arbitrary<string> {
  return fc
    .array(fc.tuple(sep, item, sep), { minLength, maxLength })
    .map((xs) => xs.map(([a, x, b]) => a + x + b).join(","));
}

/** Optional items in a random order, each at most once, plus repeatable ones. */
function itemsInAnyOrder(
  once: fc.Arbitrary<string>[],
  repeatable?: fc.Arbitrary<string>,
): fc.Arbitrary<string> {
  return fc
    .tuple(
      fc.tuple(...once.map((a) => fc.option(a, { nil: undefined }))),
      repeatable ? fc.array(repeatable, { maxLength: 2 }) : fc.constant([]),
    )
    .chain(([opt, rep]) => {
      const present = [...opt.filter((x): x is string => x !== undefined), ...rep];
      return fc.shuffledSubarray(present, { minLength: present.length, maxLength: present.length });
    })
    .chain((items) =>
      fc.tuple(...items.map(() => sep)).map((seps) => items.map((x, i) => seps[i] + x).join("")),
    );
}

interface StrPiece {
  raw: string;
  value: string;
}
const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");
const strPiece: fc.Arbitrary<StrPiece> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .string({ unit: "binary", minLength: 1, maxLength: 1 })
      .filter((c) => c !== '"' && c !== "\\" && c !== "\n")
      .map((c) => ({ raw: c, value: c })),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom<StrPiece>(
      { raw: "\\n", value: "\n" },
      { raw: "\\t", value: "\t" },
      { raw: "\\r", value: "\r" },
      { raw: '\\"', value: '"' },
      { raw: "\\\\", value: "\\" },
      { raw: "\\0", value: "\0" },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.integer({ min: 0, max: 0x10ffff }), fc.boolean()).map(([cp, upper]) => {
      const h = cp.toString(16);
      return { raw: `\\u{${upper ? h.toUpperCase() : h}}`, value: String.fromCodePoint(cp) };
    }),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 0, max: 0xffff })
      .map((cu) => ({ raw: `\\u${hex(cu, 4)}`, value: String.fromCharCode(cu) })),
  },
);
/** A `"…"` literal and the value it decodes to. */
const quotedString = fc.array(strPiece, { maxLength: 12 }).map((ps) => ({
  raw: `"${ps.map((p) => p.raw).join("")}"`,
  value: ps.map((p) => p.value).join(""),
}));
/** A `"""…"""` literal: any text that does not contain the closing quotes or end in a quote. */
const tripleString = fc
  .array(
    fc.oneof(
      fc.string({ unit: "binary", maxLength: 12 }),
      fc.constantFrom("\n", "\n    ", "\r\n  ", '"', '""', "\\", "\\n", "    ", "\t"),
    ),
    { maxLength: 10 },
  )
  .map((xs) => xs.join(""))
  .filter((s) => !s.includes('"""') && !s.endsWith('"'))
  .map((s) => `"""${s}"""`);
const stringLit = fc.oneof(
  { weight: 3, arbitrary: quotedString.map((s) => s.raw) },
  { weight: 1, arbitrary: tripleString },
);
const intLit = fc.oneof(
  fc.nat({ max: 20 }).map(String),
  fc.bigInt({ min: 0n, max: BigInt(Number.MAX_SAFE_INTEGER) }).map(String),
  fc.nat({ max: 999 }).map((n) => `00${n}`),
);

interface GeneratedDecl {
  kind: "defaults" | "provider" | "tool" | "agent" | "workflow";
  text: string;
}
/** Names the generated programs use: variables/callees, any other name, and string literals. */
interface Vocabulary {
  variable: fc.Arbitrary<string>;
  name: fc.Arbitrary<string>;
  string: fc.Arbitrary<string>;
}

/** Syntactically valid `.agent` files (and the kinds of their declarations, in order) over a vocabulary. */
function agentPrograms({ variable: varIdent, name: anyIdent, string: stringLit }: Vocabulary) {
  const lang = fc.letrec<{
    expr: string;
    atom: string;
    call: string;
    paren: string;
    not: string;
    binary: string;
    stmt: string;
    while: string;
    if: string;
    block: string;
  }>((tie) => ({
    expr: fc.oneof(
      { maxDepth: 4, depthIdentifier: "expr" },
      tie("atom"),
      tie("atom"),
      tie("call"),
      tie("paren"),
      tie("not"),
      tie("binary"),
    ),
    atom: fc.oneof(
      {
        weight: 4,
        arbitrary: fc
          .tuple(varIdent, fc.array(fc.tuple(sep, sep, anyIdent), { maxLength: 3 }))
          .map(([root, fields]) => root + fields.map(([a, b, f]) => `${a}.${b}${f}`).join("")),
      },
      { weight: 1, arbitrary: stringLit },
      { weight: 1, arbitrary: intLit },
      { weight: 1, arbitrary: fc.constantFrom("true", "false") },
    ),
    call: fc
      .tuple(varIdent, sep, commaList(tie("expr"), 0, 3))
      .map(([f, s, args]) => `${f}${s}(${args})`),
    paren: seq("(", tie("expr"), ")"),
    not: seq("!", tie("expr")),
    binary: seq(tie("expr"), fc.constantFrom("&&", "||", "==", "!="), tie("expr")),
    stmt: fc.oneof(
      { maxDepth: 3, depthIdentifier: "stmt" },
      { weight: 4, arbitrary: seq(varIdent, "=", tie("expr")) },
      { weight: 1, arbitrary: seq("return", tie("expr")) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(
            seq("approve", tie("expr")),
            fc.option(fc.tuple(inlineWs, stringLit), { nil: undefined }),
          )
          .map(([a, label]) => (label === undefined ? a : a + label[0] + label[1])),
      },
      { weight: 2, arbitrary: tie("while") },
      { weight: 2, arbitrary: tie("if") },
    ),
    while: seq("while", tie("expr"), "limit", intLit, tie("block")),
    if: fc
      .tuple(
        seq("if", tie("expr"), tie("block")),
        fc.option(seq("else", tie("block")), { nil: undefined }),
        sep,
      )
      .map(([i, e, s]) => (e === undefined ? i : i + s + e)),
    block: fc.tuple(many(tie("stmt"), 0, 4), sep).map(([stmts, s]) => `{${stmts}${s}}`),
  }));

  const decl = (kind: GeneratedDecl["kind"], text: fc.Arbitrary<string>) =>
    text.map((t): GeneratedDecl => ({ kind, text: t }));

  const defaultsDecl = decl(
    "defaults",
    fc
      .tuple(sep, itemsInAnyOrder([seq("model", stringLit), seq("maxTurns", intLit)]), sep)
      .map(([s, items, e]) => `defaults${s}{${items}${e}}`),
  );
  const providerDecl = decl(
    "provider",
    fc
      .tuple(
        anyIdent,
        fc.uniqueArray(anyIdent, { maxLength: 4 }),
        fc.array(fc.tuple(sep, sep, stringLit), { maxLength: 4 }),
        sep,
      )
      .map(([name, keys, values, e]) => {
        const settings = keys.map((k, i) => {
          const [s1, s2, v] = values[i] ?? [" ", " ", '""'];
          return `${s1}${k}${s2}${v}`;
        });
        return `provider ${name} {${settings.join("")}${e}}`;
      }),
  );
  const toolDecl = decl(
    "tool",
    fc
      .tuple(
        anyIdent,
        fc.option(
          fc
            .tuple(itemsInAnyOrder([seq("root", stringLit), seq("testCommand", stringLit)]), sep)
            .map(([items, e]) => `workspace {${items}${e}}`),
          { nil: undefined },
        ),
        sep,
      )
      .map(([name, ws, e]) => `tool ${name} {${ws === undefined ? "" : e + ws}${e}}`),
  );
  const grant = fc
    .tuple(anyIdent, anyIdent, fc.boolean(), sep)
    .map(
      ([tool, op, approval, s]) =>
        `tool.${tool}.${op}${approval ? `${s}requires${s}approval` : ""}`,
    );
  const agentDecl = decl(
    "agent",
    fc
      .tuple(
        anyIdent,
        itemsInAnyOrder(
          [
            seq("model", stringLit),
            seq("input", anyIdent),
            seq("output", anyIdent),
            seq("instructions", stringLit),
            seq("maxTurns", intLit),
          ],
          fc.tuple(many(grant, 0, 4), sep).map(([g, e]) => `grants {${g}${e}}`),
        ),
        sep,
      )
      .map(([name, items, e]) => `agent ${name} {${items}${e}}`),
  );
  const param = seq(anyIdent, ":", anyIdent);
  const effect = fc
    .tuple(anyIdent, fc.array(fc.tuple(sep, anyIdent), { maxLength: 3 }))
    .map(([first, rest]) => first + rest.map(([s, x]) => `.${s}${x}`).join(""));
  const workflowDecl = decl(
    "workflow",
    seq(
      "workflow",
      anyIdent,
      fc
        .oneof(
          { weight: 4, arbitrary: commaList(param, 1, 3) },
          { weight: 1, arbitrary: fc.constant("") }, // the parser also accepts an empty parameter list
        )
        .map((ps) => `(${ps})`),
      "->",
      anyIdent,
      "effects",
      fc
        .oneof(
          { weight: 4, arbitrary: commaList(effect, 1, 4) },
          { weight: 1, arbitrary: fc.constant("") },
        )
        .map((e) => `{${e}}`),
      lang.block,
    ),
  );

  const program = fc
    .tuple(
      fc.constantFrom("", "\uFEFF", "// header\n", "\n\n"),
      fc.array(
        fc.tuple(
          topSep,
          fc.oneof(defaultsDecl, providerDecl, toolDecl, agentDecl, {
            weight: 3,
            arbitrary: workflowDecl,
          }),
        ),
        { maxLength: 6 },
      ),
      fc.oneof(fc.constantFrom("", "\n", " "), comment),
    )
    .map(([head, decls, tail]) => ({
      text: head + decls.map(([s, d]) => s + d.text).join("") + tail,
      kinds: decls.map(([, d]) => d.kind),
    }));
  return program;
}

/** Random names everywhere: checks that the parser accepts the grammar. */
const agentProgram = agentPrograms({ variable: varIdent, name: anyIdent, string: stringLit });

/** A small vocabulary that resolves against the example's resources, so the checkers get deep. */
const VOCAB_CALLABLES = ["Implementer", "Reviewer", "ImplementAndReview", "W1", "W2"];
const projectProgram = agentPrograms({
  variable: fc.constantFrom("state", "input", "x", "y", ...VOCAB_CALLABLES),
  name: fc.constantFrom(
    ...VOCAB_CALLABLES,
    "CodingState",
    "workspace",
    "read_file",
    "write_file",
    "run_tests",
    "approved",
    "task",
    "feedback",
    "read",
    "write",
    "process",
    "exec",
    "network",
    "egress",
    "input",
  ),
  string: fc.constantFrom(
    '"mock/gpt-4"',
    '"mock/script"',
    '"anthropic/claude"',
    '"nope/x"',
    '"x"',
    '"""\n  hi\n  """',
  ),
});

// ── generator 2: mutations ──────────────────────────────────────────────────────────────────────

const WEIRD = [
  "\u202E", // right-to-left override
  "\u202D",
  "\u2066", // bidi isolates
  "\u2067",
  "\u2068",
  "\u2069",
  "\u200F",
  "\u200B",
  "\u0000",
  "\u0007",
  "\u007F",
  "😀",
  "🏳️‍🌈",
  "\uD800", // lone surrogates
  "\uDFFF",
  "\r",
  "\r\n",
  "\n\r",
  "\uFEFF",
  "\u2028",
  "\u2029",
  "\u0085",
  "\u00A0",
  "\t",
];
const PUNCT = [
  "{",
  "}",
  "(",
  ")",
  "[",
  "]",
  '"',
  '"""',
  "'",
  "\\",
  ":",
  ",",
  ".",
  "=",
  "!",
  "&",
  "|",
  "-",
  ">",
  "#",
  "%",
  "@",
  "`",
  "*",
  "&a",
  "*a",
  "? ",
  "- ",
  "---\n",
  "...\n",
  "//",
  "/*",
];
const AGENT_TOKENS = [
  ...KEYWORDS,
  "->",
  "&&",
  "||",
  "==",
  "!=",
  "tool.workspace.read_file",
  "requires approval",
  "limit 3",
  "99999999999999999999",
  "3x",
  '"\\q"',
  '"\\u{110000}"',
  '"\\uZZ"',
  "CodingState",
  "state.approved",
];
const YAML_TOKENS = [
  "apiVersion: terfyn.dev/v1\n",
  "apiVersion: terfyn.dev/v2\n",
  "kind: Tool\n",
  "kind: Policy\n",
  "kind: Bogus\n",
  "metadata: { name: x }\n",
  "spec:\n",
  "  rules:\n    - forbid: { agent: A, effect: e }\n",
  "  - maxLoopLimit: 0\n",
  "__proto__: {}\n",
  "<<: *a\n",
  "&a ",
  "!!binary ",
  "!!set ",
  "!!timestamp ",
  "!custom ",
  "|\n",
  ">-\n",
  "%YAML 1.2\n",
  "%TAG ! tag:x,2000:\n",
  "null",
  "~",
  ".inf",
  "0x1F",
  "1e400",
];
const INSERTIONS = [...WEIRD, ...PUNCT, ...AGENT_TOKENS, ...YAML_TOKENS];

const TOKEN_RE = /[A-Za-z_][A-Za-z0-9_]*|\d+|"""|"(?:[^"\\\n]|\\.)*"?|->|&&|\|\||==|!=|\s+|\S/g;

interface Mutation {
  op: number;
  a: number;
  b: number;
  payload: string;
}
const N_OPS = 14;
const mutation: fc.Arbitrary<Mutation> = fc.record({
  op: fc.nat({ max: N_OPS - 1 }),
  a: fc.nat(),
  b: fc.nat(),
  payload: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...INSERTIONS) },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 4 }) },
    {
      weight: 1,
      arbitrary: fc
        .array(fc.constantFrom(...WEIRD, ...PUNCT), { minLength: 1, maxLength: 6 })
        .map((xs) => xs.join("")),
    },
  ),
});

function applyMutation(text: string, m: Mutation): string {
  const n = text.length;
  const at = (x: number, len: number) => (len === 0 ? 0 : x % (len + 1));
  const lines = () => text.split("\n");
  const tokens = () => text.match(TOKEN_RE) ?? [];
  switch (m.op) {
    case 0: {
      const i = at(m.a, n - 1);
      return text.slice(0, i) + text.slice(i + 1);
    }
    case 1: {
      const i = at(m.a, n);
      return text.slice(0, i) + m.payload + text.slice(i);
    }
    case 2: {
      const i = at(m.a, n - 1);
      return text.slice(0, i) + m.payload + text.slice(i + 1);
    }
    case 3: {
      const i = at(m.a, n);
      return text.slice(0, i) + text.slice(i + (m.b % 24));
    }
    case 4: {
      const i = at(m.a, n);
      const chunk = text.slice(i, i + (m.b % 48));
      return text.slice(0, i) + chunk + chunk + text.slice(i + chunk.length);
    }
    case 5: {
      if (n < 2) return text;
      const i = m.a % n;
      const j = m.b % n;
      const cs = [...text.split("")];
      [cs[i], cs[j]] = [cs[j] as string, cs[i] as string];
      return cs.join("");
    }
    case 6: {
      const ls = lines();
      ls.splice(m.a % ls.length, 1);
      return ls.join("\n");
    }
    case 7: {
      const ls = lines();
      const i = m.a % ls.length;
      ls.splice(i, 0, ls[i] as string);
      return ls.join("\n");
    }
    case 8: {
      const ls = lines();
      const i = m.a % ls.length;
      const j = m.b % ls.length;
      [ls[i], ls[j]] = [ls[j] as string, ls[i] as string];
      return ls.join("\n");
    }
    case 9: {
      const ts = tokens();
      if (ts.length === 0) return text;
      ts.splice(m.a % ts.length, 1);
      return ts.join("");
    }
    case 10: {
      const ts = tokens();
      ts.splice(at(m.a, ts.length), 0, m.payload);
      return ts.join("");
    }
    case 11: {
      const ts = tokens();
      if (ts.length < 2) return text;
      const i = m.a % ts.length;
      const j = m.b % ts.length;
      [ts[i], ts[j]] = [ts[j] as string, ts[i] as string];
      return ts.join("");
    }
    case 12:
      return text.slice(0, at(m.a, n));
    default: {
      const ls = lines();
      const [moved] = ls.splice(m.a % ls.length, 1);
      ls.splice(at(m.b, ls.length), 0, moved as string);
      return ls.join("\n");
    }
  }
}

const mutations = fc.array(mutation, { minLength: 1, maxLength: 6 });
const mutate = (text: string, ms: readonly Mutation[]) => ms.reduce(applyMutation, text);

// ── generators 3 and 4: random strings and random YAML ─────────────────────────────────────────

const randomText = fc.oneof(
  fc.string({ unit: "binary", maxLength: 400, size: "medium" }),
  fc.string({ unit: "binary-ascii", maxLength: 400, size: "medium" }),
  fc.string({ unit: "grapheme", maxLength: 300, size: "medium" }),
  fc.string({ unit: fc.constantFrom(...WEIRD, ...PUNCT), maxLength: 300, size: "medium" }),
);
const agentSoup = fc.string({
  unit: fc.oneof(
    {
      weight: 6,
      arbitrary: fc.constantFrom(
        ...AGENT_TOKENS,
        "{",
        "}",
        "(",
        ")",
        ",",
        ".",
        ":",
        "=",
        "!",
        '"x"',
        '"""\n a\n"""',
        "1",
      ),
    },
    { weight: 6, arbitrary: fc.constantFrom(" ", "\n", "\n  ", "\t") },
    { weight: 1, arbitrary: fc.constantFrom(...WEIRD, ...PUNCT) },
  ),
  maxLength: 400,
  size: "medium",
});
const yamlSoup = fc.string({
  unit: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...YAML_TOKENS) },
    {
      weight: 6,
      arbitrary: fc.constantFrom(
        "\n",
        "  ",
        "- ",
        ": ",
        "a",
        "name",
        "spec",
        "rules",
        "operations",
        "effects",
        "[",
        "]",
        "{",
        "}",
        ",",
        "'",
        '"',
        "#",
        "---\n",
        "? ",
        "*a",
        "&a ",
        "1",
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom(...WEIRD) },
  ),
  maxLength: 200,
  size: "medium",
});

/** Field names and values from the resource schemas, so random documents get deep into validation. */
const SCHEMA_KEYS = [
  "apiVersion",
  "kind",
  "metadata",
  "name",
  "labels",
  "spec",
  "state",
  "runs",
  "exclude",
  "modelScript",
  "adapter",
  "operations",
  "effects",
  "idempotent",
  "input",
  "description",
  "type",
  "title",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "enum",
  "default",
  "rules",
  "forbid",
  "requireApproval",
  "risk",
  "maxLoopLimit",
  "agent",
  "effect",
  "level",
  "assertions",
  "forbidEffect",
  "allowEffect",
  "maxIterations",
  "workflowEffects",
  "requiresApproval",
  "workflow",
  "limit",
  "equals",
  "mode",
  "tool",
  "__proto__",
  "constructor",
  "toString",
  "",
];
const SCHEMA_VALUES = [
  "object",
  "array",
  "string",
  "integer",
  "boolean",
  "workspace",
  "external",
  "high",
  "critical",
  "autonomous",
  "gated",
  "workspace.read",
  "network.egress",
  "*",
  "Reviewer",
  "tool.workspace.read_file",
  "read_file",
  "bad name!",
  "",
];
const schemaKey = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...SCHEMA_KEYS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
);
const nearValue = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { maxDepth: 4, depthIdentifier: "near" },
    fc.constantFrom<unknown>(...SCHEMA_VALUES, 0, -1, 1, 3, 10, 1.5, true, false, null),
    fc.jsonValue({ maxDepth: 1 }),
    fc.dictionary(schemaKey, tie("node"), { maxKeys: 4 }),
    fc.array(tie("node"), { maxLength: 3 }),
    fc.array(fc.dictionary(schemaKey, tie("node"), { minKeys: 1, maxKeys: 2 }), { maxLength: 3 }),
  ),
})).node;

const kindArb = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom<unknown>(...RESOURCE_KINDS) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>("tool", "Polcy", "", 3, null, ["Tool"]) },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
);
const apiVersionArb = fc.oneof(
  { weight: 5, arbitrary: fc.constant<unknown>("terfyn.dev/v1") },
  { weight: 1, arbitrary: fc.constantFrom<unknown>("terfyn.dev/v2", "terfyn.dev/", "v1", 1, null) },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
);
const nameArb = fc.oneof(
  fc.constantFrom("x", "CodingState", "workspace", "a-b.c", "bad name", ""),
  fc.string({ maxLength: 6 }),
);
const resourceDoc = fc.record(
  {
    apiVersion: apiVersionArb,
    kind: kindArb,
    metadata: fc.oneof(
      { weight: 4, arbitrary: fc.record({ name: nameArb }) },
      { weight: 1, arbitrary: fc.record({ name: nameArb, labels: nearValue }) },
      { weight: 1, arbitrary: nearValue },
    ),
    spec: fc.oneof(
      { weight: 3, arbitrary: nearValue },
      { weight: 1, arbitrary: fc.jsonValue() },
      { weight: 1, arbitrary: fc.anything() },
    ),
  },
  { requiredKeys: ["kind"] },
);
const yamlValue = fc.oneof(
  { weight: 1, arbitrary: fc.jsonValue() },
  { weight: 1, arbitrary: fc.anything() },
  { weight: 4, arbitrary: resourceDoc },
);
const stringifyOptions = fc.constantFrom<Parameters<typeof stringify>[2]>(
  {},
  { collectionStyle: "flow" },
  { defaultStringType: "QUOTE_DOUBLE" },
  { defaultStringType: "QUOTE_SINGLE" },
  { defaultStringType: "BLOCK_LITERAL" },
  { indent: 4 },
  { aliasDuplicateObjects: false },
);
function safeStringify(
  value: unknown,
  options: Parameters<typeof stringify>[2],
): string | undefined {
  try {
    const s = stringify(value, null, options);
    return typeof s === "string" ? s : undefined;
  } catch {
    return undefined;
  }
}
const yamlFile = fc
  .tuple(
    fc.array(fc.tuple(yamlValue, stringifyOptions), { minLength: 1, maxLength: 4 }),
    fc.constantFrom("---\n", "\n---\n", "...\n---\n", "--- # next\n"),
    fc.constantFrom("", "%YAML 1.2\n---\n", "# comment\n", "---\n"),
  )
  .map(([docs, separator, head]) => {
    const texts = docs.map(([v, o]) => safeStringify(v, o));
    return {
      text: head + texts.map((t) => t ?? "").join(separator),
      /** Documents that stringified and look like Terfyn resources by their `kind`. */
      terfynDocs: docs.filter(
        ([v], i) =>
          texts[i] !== undefined &&
          v !== null &&
          typeof v === "object" &&
          !Array.isArray(v) &&
          (RESOURCE_KINDS as readonly unknown[]).includes((v as { kind?: unknown }).kind),
      ).length,
    };
  });

/** A YAML node written in flow style with anchors and aliases, so documents may share or nest themselves. */
type YamlNode =
  | { t: "scalar"; v: string }
  | { t: "alias"; n: number }
  | { t: "map"; anchor: number | undefined; entries: [string, YamlNode][] }
  | { t: "seq"; anchor: number | undefined; items: YamlNode[] };
const ANCHOR_KEYS = [
  "type",
  "properties",
  "required",
  "items",
  "enum",
  "description",
  "additionalProperties",
  "task",
  "approved",
  "next",
  "adapter",
  "operations",
  "read_file",
  "effects",
  "idempotent",
  "input",
  "rules",
  "forbid",
  "maxLoopLimit",
  "agent",
  "effect",
];
const anchorId = fc.nat({ max: 3 });
const yamlNode = fc.letrec<{ node: YamlNode; map: YamlNode }>((tie) => ({
  node: fc.oneof(
    { maxDepth: 4, depthIdentifier: "yaml-node" },
    fc
      .constantFrom(
        "object",
        "array",
        "string",
        "boolean",
        "workspace",
        "external",
        "workspace.read",
        "true",
        "1",
        "[]",
        "{}",
        "[task]",
        "''",
      )
      .map((v): YamlNode => ({ t: "scalar", v })),
    anchorId.map((n): YamlNode => ({ t: "alias", n })),
    tie("map"),
    fc
      .record({
        anchor: fc.option(anchorId, { nil: undefined }),
        items: fc.array(tie("node"), { maxLength: 3 }),
      })
      .map((r): YamlNode => ({ t: "seq", ...r })),
  ),
  map: fc
    .record({
      anchor: fc.option(anchorId, { nil: undefined }),
      entries: fc.uniqueArray(fc.tuple(fc.constantFrom(...ANCHOR_KEYS), tie("node")), {
        maxLength: 4,
        selector: ([k]) => k,
      }),
    })
    .map((r): YamlNode => ({ t: "map", ...r })),
}));
function emitYaml(node: YamlNode): string {
  const anchor = (a: number | undefined) => (a === undefined ? "" : `&a${a} `);
  switch (node.t) {
    case "scalar":
      return node.v;
    case "alias":
      return `*a${node.n} `;
    case "map":
      return `${anchor(node.anchor)}{${node.entries.map(([k, v]) => `${k}: ${emitYaml(v)}`).join(", ")}}`;
    default:
      return `${anchor(node.anchor)}[${node.items.map(emitYaml).join(", ")}]`;
  }
}
/** JSON-Schema-shaped nodes (what a `Schema` accepts), with anchors and aliases. */
const schemaNode = fc.letrec<{ schema: YamlNode; properties: YamlNode }>((tie) => ({
  schema: fc.oneof(
    { maxDepth: 4, depthIdentifier: "schema-node" },
    anchorId.map((n): YamlNode => ({ t: "alias", n })),
    fc
      .record({
        anchor: fc.option(anchorId, { nil: undefined }),
        entries: fc.uniqueArray(
          fc.oneof(
            fc.tuple(
              fc.constant("type"),
              fc
                .constantFrom("object", "array", "string", "boolean", "integer")
                .map((v): YamlNode => ({ t: "scalar", v })),
            ),
            fc.tuple(fc.constant("items"), tie("schema")),
            fc.tuple(fc.constant("properties"), tie("properties")),
            fc.constant<[string, YamlNode]>(["required", { t: "scalar", v: "[task]" }]),
            fc.constant<[string, YamlNode]>(["description", { t: "scalar", v: "x" }]),
          ),
          { maxLength: 4, selector: ([k]) => k },
        ),
      })
      .map((r): YamlNode => ({ t: "map", ...r })),
  ),
  properties: fc
    .record({
      anchor: fc.option(anchorId, { nil: undefined }),
      entries: fc.uniqueArray(
        fc.tuple(fc.constantFrom("task", "approved", "next"), tie("schema")),
        {
          maxLength: 3,
          selector: ([k]) => k,
        },
      ),
    })
    .map((r): YamlNode => ({ t: "map", ...r })),
})).schema;

/** A resource document whose `spec` is built with anchors and aliases (possibly cyclic). */
const aliasedResource = fc
  .oneof(
    fc.tuple(
      fc.constantFrom("Schema", "Tool", "Policy", "CapabilityTest", "Project"),
      yamlNode.map,
    ),
    fc.tuple(fc.constant("Schema"), schemaNode),
  )
  .chain(([kind, spec]) =>
    fc
      .constantFrom("CodingState", "Other")
      .map(
        (name) =>
          `apiVersion: terfyn.dev/v1\nkind: ${kind}\nmetadata: { name: ${name} }\nspec: ${emitYaml(spec)}\n`,
      ),
  );

const agentPath = fc.constantFrom("main.agent", "dir/sub/ünïcode 😀.agent", "a.agent");
const yamlPath = fc.constantFrom("terfyn.yaml", "tests/capabilities.yaml", "dir/ü.yml");

// ── the properties ──────────────────────────────────────────────────────────────────────────────

describe("property: the .agent parser accepts the grammar", () => {
  it("generated valid programs parse with no error diagnostics and every declaration", () => {
    fc.assert(
      fc.property(agentProgram, agentPath, ({ text, kinds }, path) => {
        const result = parseChecked(path, text);
        const errors = errorsOf(result.diagnostics);
        if (errors.length > 0) fail("valid program produced errors", errors);
        expect(result.file.decls.map((d) => d.kind)).toEqual(kinds);
      }),
      runs("grammar programs", 1200),
    );
  });

  it('"…" literals decode their escapes', () => {
    fc.assert(
      fc.property(quotedString, quotedString, ({ raw, value }, model) => {
        const text = `agent A {\n  model ${model.raw}\n  instructions ${raw}\n}\n`;
        const result = parseChecked("a.agent", text);
        expect(result.diagnostics).toEqual([]);
        const agent = result.file.decls[0];
        if (agent?.kind !== "agent") fail("no agent", result.file.decls);
        expect(agent.instructions?.value).toBe(value);
        expect(agent.model?.value).toBe(model.value);
      }),
      runs("string literals", 1000),
    );
  });
});

describe("property: parser and loader are total on mutated example files", () => {
  it("mutated main.agent", () => {
    fc.assert(
      fc.property(fc.constantFrom(...EXAMPLE_AGENT), mutations, (file, ms) => {
        const text = mutate(file.text, ms);
        parseChecked(file.path, text);
      }),
      runs("mutated .agent", 1500),
    );
  });

  it("mutated YAML resources", () => {
    fc.assert(
      fc.property(fc.constantFrom(...EXAMPLE_YAML), mutations, (file, ms) => {
        const text = mutate(file.text, ms);
        loadChecked(file.path, text);
        parseChecked("from-yaml.agent", text);
      }),
      runs("mutated YAML", 1500),
    );
  });
});

describe("property: parser and loader are total on random text", () => {
  it("random binary / unicode / grapheme strings", () => {
    fc.assert(
      fc.property(randomText, agentPath, yamlPath, (text, ap, yp) => {
        parseChecked(ap, text);
        loadChecked(yp, text);
      }),
      runs("random strings", 2000),
    );
  });

  it("random .agent token soup", () => {
    fc.assert(
      fc.property(agentSoup, (text) => {
        parseChecked("soup.agent", text);
      }),
      runs("agent token soup", 2000),
    );
  });

  it("random YAML token soup", () => {
    fc.assert(
      fc.property(yamlSoup, (text) => {
        loadChecked("soup.yaml", text);
      }),
      runs("YAML token soup", 1500),
    );
  });
});

describe("property: the loader is total on random YAML documents", () => {
  it("stringified random values and near-resources, single and multi-document", () => {
    fc.assert(
      fc.property(yamlFile, yamlPath, ({ text, terfynDocs }, path) => {
        const result = loadChecked(path, text);
        // A document that declares a Terfyn kind is either loaded or diagnosed, never dropped.
        if (terfynDocs > 0 && result.resources.length + result.diagnostics.length === 0) {
          fail("a Terfyn resource document was silently ignored", text);
        }
      }),
      runs("random YAML documents", 1500),
    );
  });
});

describe("property: validateProject is total on the example with one file mutated", () => {
  it("one mutated file", () => {
    fc.assert(
      fc.property(fc.nat({ max: EXAMPLE_FILES.length - 1 }), mutations, (index, ms) => {
        const files = EXAMPLE_FILES.map((f, i) =>
          i === index ? { path: f.path, text: mutate(f.text, ms) } : f,
        );
        validateChecked(files);
      }),
      runs("mutated project", 400),
    );
  });
});

describe("property: validateProject is total on generated programs over the example's resources", () => {
  it("a generated main.agent (replacing or appended to the example's), with an extra random YAML file", () => {
    fc.assert(
      fc.property(
        projectProgram,
        fc.boolean(),
        fc.option(yamlFile, { nil: undefined }),
        ({ text }, append, extra) => {
          const main = append ? `${EXAMPLE_AGENT[0]?.text ?? ""}\n${text}` : text;
          const files = [...EXAMPLE_YAML, { path: "main.agent", text: main }];
          if (extra !== undefined) files.push({ path: "extra.yaml", text: extra.text });
          const result = validateChecked(files);
          const syntax = result.diagnostics.filter(
            (d) => d.span.file === "main.agent" && d.code.startsWith("TF1"),
          );
          if (syntax.length > 0) fail("a generated program has syntax diagnostics", syntax);
        },
      ),
      runs("generated project", 600),
    );
  });
});

describe("property: validateProject is total with YAML anchors and aliases", () => {
  it("resources whose spec shares or contains itself through aliases", () => {
    fc.assert(
      fc.property(aliasedResource, fc.boolean(), (doc, replace) => {
        loadChecked("schemas.yaml", doc);
        const files = EXAMPLE_FILES.map((f) =>
          f.path === "schemas.yaml"
            ? { path: f.path, text: replace ? doc : `${f.text}---\n${doc}` }
            : f,
        );
        validateChecked(files);
      }),
      runs("aliased resources", 600),
    );
  });
});

describe("the property suite", () => {
  it("feeds at least 10,000 inputs in total", () => {
    const total = Object.values(plannedRuns).reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThanOrEqual(10_000);
  });

  it("the unmutated example is valid (the baseline the mutations start from)", () => {
    for (const f of EXAMPLE_AGENT) expect(parseChecked(f.path, f.text).diagnostics).toEqual([]);
    for (const f of EXAMPLE_YAML) expect(loadChecked(f.path, f.text).diagnostics).toEqual([]);
    expect(
      validateChecked(EXAMPLE_FILES).diagnostics.filter((d) => d.severity === "error"),
    ).toEqual([]);
  });
});

// ── error recovery ──────────────────────────────────────────────────────────────────────────────

describe("parser error recovery", () => {
  it("reports three independent broken statements, each on its own line, and keeps the good ones", () => {
    const text = [
      "workflow W(input: CodingState) -> CodingState", // 1
      "effects { workspace.read }", // 2
      "{", // 3
      "  a = )", // 4  broken
      "  ok1 = input", // 5
      "  b = Implementer(,)", // 6  broken
      "  ok2 = input", // 7
      "  c input", // 8  broken
      "  return input", // 9
      "}", // 10
    ].join("\n");
    const result = parseChecked("recovery.agent", text);
    const errors = errorsOf(result.diagnostics);
    expect(errors.length).toBeGreaterThanOrEqual(3);
    const lines = new Set(errors.map((d) => d.span.line));
    for (const line of [4, 6, 8]) expect(lines, `an error on line ${line}`).toContain(line);
    for (const line of lines) expect([4, 6, 8]).toContain(line);
    const wf = result.file.decls[0];
    if (wf?.kind !== "workflow") fail("the workflow was lost", result.file.decls);
    const kept = wf.body.statements.map((s) => (s.kind === "assign" ? s.target.name : s.kind));
    expect(kept).toEqual(expect.arrayContaining(["ok1", "ok2", "return"]));
  });

  it("reports errors in different declarations of one file and keeps every declaration", () => {
    const text = [
      "agent A {", // 1
      "  input CodingState", // 2
      '  modle "mock/gpt-4"', // 3  unknown item
      "  grants {", // 4
      "    tool workspace.write_file", // 5  grant without its first `.`
      "    tool.workspace.read_file", // 6
      "  }", // 7
      "}", // 8
      "", // 9
      "agent B {", // 10
      "  maxTurns x", // 11 not an integer
      "  output CodingState", // 12
      "}", // 13
      "", // 14
      "workflow W(input: CodingState) -> CodingState", // 15
      "effects { workspace.read }", // 16
      "{", // 17
      "  while input.approved {", // 18 loop without limit
      "    x = A(input)", // 19
      "  }", // 20
      "  return 'input'", // 21 single quotes
      "}", // 22
    ].join("\n");
    const result = parseChecked("recovery2.agent", text);
    const errors = errorsOf(result.diagnostics);
    const lines = new Set(errors.map((d) => d.span.line));
    for (const line of [3, 5, 11, 18, 21])
      expect(lines, `an error on line ${line}`).toContain(line);
    expect(result.file.decls.map((d) => d.kind)).toEqual(["agent", "agent", "workflow"]);
    const a = result.file.decls[0];
    if (a?.kind !== "agent") fail("agent A lost", a);
    expect(a.grants.map((g) => g.operation.name)).toContain("read_file");
    const b = result.file.decls[1];
    if (b?.kind !== "agent") fail("agent B lost", b);
    expect(b.output?.name).toBe("CodingState");
  });
});

// ── regressions found by this suite (minimal reproducers) ──────────────────────────────────────
//
// Deep nesting overflowed the call stack (at HEAD before the TF1005 nesting limit): the
// recursive-descent parser and the workflow checker recursed once per nesting level and let the
// RangeError escape, so a file that is valid by the grammar crashed `terfyn validate` with a
// stack trace instead of returning diagnostics. Thresholds on Node 20 with the default stack:
// ~1,500 nested `(`, ~1,500 nested calls, ~2,800 nested blocks, ~11,000 `!`; in validateProject
// ~3,600 operands of one flat `&&` chain, ~2,200 nested `if`s. The inputs use 20,000 levels so
// they would fail regardless of stack size or JIT state. The tests only require totality (a
// nesting-limit diagnostic is a fine answer).

const DEPTH = 20_000;
const nestedWorkflow = (body: string) =>
  `workflow W(input: CodingState) -> CodingState\neffects { workspace.read }\n{\n${body}\n  return input\n}\n`;

describe("regression: deep nesting must not throw", () => {
  it("parser: 20,000 nested parentheses", () => {
    const text = nestedWorkflow(`  x = ${"(".repeat(DEPTH)}input${")".repeat(DEPTH)}`);
    expect(() => parseChecked("deep.agent", text)).not.toThrow();
  });

  it("parser: 20,000 unclosed parentheses", () => {
    expect(() =>
      parseChecked("deep.agent", `workflow W() -> S effects {} { x = ${"(".repeat(DEPTH)} }`),
    ).not.toThrow();
  });

  it("parser: 20,000 nested calls", () => {
    const text = nestedWorkflow(`  x = ${"Implementer(".repeat(DEPTH)}input${")".repeat(DEPTH)}`);
    expect(() => parseChecked("deep.agent", text)).not.toThrow();
  });

  it("parser: 20,000 nested if blocks", () => {
    const text = nestedWorkflow(`${"  if true {\n".repeat(DEPTH)}${"  }\n".repeat(DEPTH)}`);
    expect(() => parseChecked("deep.agent", text)).not.toThrow();
  });

  it("parser: 20,000 nested while blocks", () => {
    const text = nestedWorkflow(
      `${"  while true limit 1 {\n".repeat(DEPTH)}${"  }\n".repeat(DEPTH)}`,
    );
    expect(() => parseChecked("deep.agent", text)).not.toThrow();
  });

  it("parser: 100,000 `!`", () => {
    const text = nestedWorkflow(`  x = ${"!".repeat(100_000)}input.approved`);
    expect(() => parseChecked("deep.agent", text)).not.toThrow();
  });

  it("validateProject: a flat chain of 20,000 `&&` operands", () => {
    const chain = Array.from({ length: DEPTH }, () => "input.approved").join(" && ");
    const files = EXAMPLE_FILES.map((f) =>
      f.path === "main.agent"
        ? { path: f.path, text: `${f.text}\n${nestedWorkflow(`  x = ${chain}`)}` }
        : f,
    );
    expect(() => validateChecked(files)).not.toThrow();
  });

  it("validateProject: 20,000 `!` on one value", () => {
    const files = EXAMPLE_FILES.map((f) =>
      f.path === "main.agent"
        ? {
            path: f.path,
            text: `${f.text}\n${nestedWorkflow(`  x = ${"!".repeat(DEPTH)}input.approved`)}`,
          }
        : f,
    );
    expect(() => validateChecked(files)).not.toThrow();
  });
});

// A YAML alias can make a resource contain itself. At HEAD the loader accepted such a `Schema`
// without a diagnostic and `typeFromSchema` (src/core/model/types.ts) recursed forever:
// validateProject threw RangeError on this four-line file. Found by the "anchors and aliases"
// property above.

describe("regression: self-referential YAML aliases must not throw", () => {
  it("validateProject: a Schema that is its own `items` (`spec: &s {items: *s}`)", () => {
    const text =
      "apiVersion: terfyn.dev/v1\nkind: Schema\nmetadata: {name: S}\nspec: &s {items: *s}\n";
    expect(() => validateChecked([{ path: "s.yaml", text }])).not.toThrow();
  });

  it("validateProject: the example's CodingState with a property that is CodingState itself", () => {
    const text = [
      "apiVersion: terfyn.dev/v1",
      "kind: Schema",
      "metadata: { name: CodingState }",
      "spec: &s",
      "  type: object",
      "  required: [task, approved]",
      "  properties:",
      "    task: { type: string }",
      "    approved: { type: boolean }",
      "    previous: *s",
      "",
    ].join("\n");
    const files = EXAMPLE_FILES.map((f) =>
      f.path === "schemas.yaml" ? { path: f.path, text } : f,
    );
    expect(() => validateChecked(files)).not.toThrow();
  });
});
