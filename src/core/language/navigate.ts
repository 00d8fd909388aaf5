/**
 * Go to definition and find references for the language server: what a name in an `.agent`
 * file stands for (an agent, a workflow, a tool, one of its operations, a schema), where it is
 * declared (the `.agent` declaration, or the YAML resource), and every place the `.agent` files
 * name it. Read off the tokens, so it works on any file that lexes. Pure.
 */
import type { Span } from "../diagnostics.ts";
import type { ResolvedProject } from "../model/project.ts";
import type { SourceText } from "../source.ts";
import { lex } from "./lexer.ts";
import type { Token } from "./tokens.ts";

export type NamedSymbol =
  | { kind: "agent" | "workflow" | "tool" | "schema"; name: string }
  | { kind: "operation"; tool: string; name: string };

const same = (a: NamedSymbol, b: NamedSymbol) =>
  a.kind === b.kind &&
  a.name === b.name &&
  (a.kind !== "operation" || (b.kind === "operation" && a.tool === b.tool));

/** What the identifier `tokens[i]` names in `project`, by its neighbours and the names declared. */
function classify(
  project: ResolvedProject,
  tokens: readonly Token[],
  i: number,
): NamedSymbol | undefined {
  const t = tokens[i];
  if (t?.kind !== "ident") return undefined;
  const at = (k: number) => tokens[i + k];
  const word = (k: number, text?: string) =>
    at(k)?.kind === "ident" && (text === undefined || at(k)?.text === text);
  // tool.<tool>.<operation>
  if (at(-1)?.kind === "." && word(-2, "tool") && at(1)?.kind === ".")
    return { kind: "tool", name: t.text };
  if (at(-1)?.kind === "." && word(-2) && at(-3)?.kind === "." && word(-4, "tool"))
    return { kind: "operation", tool: at(-2)?.text ?? "", name: t.text };
  if (at(-1)?.kind === ".") return undefined; // a field (`state.approved`)
  // `tool X {` binds a tool.
  if (word(-1, "tool") && project.tools.has(t.text)) return { kind: "tool", name: t.text };
  if (at(1)?.kind === "(") {
    if (project.agents.has(t.text)) return { kind: "agent", name: t.text };
    if (project.workflows.has(t.text)) return { kind: "workflow", name: t.text };
    return undefined;
  }
  if (project.schemas.has(t.text)) return { kind: "schema", name: t.text };
  if (project.agents.has(t.text)) return { kind: "agent", name: t.text };
  if (project.workflows.has(t.text)) return { kind: "workflow", name: t.text };
  return undefined;
}

/**
 * The names a YAML resource gives after a key that names one: `agent:` (an agent), `workflow:`
 * (a workflow), `holding:` or `tool:` (`tool.<tool>.<operation>`: the tool and the operation),
 * each with its 1-based line and its columns.
 */
function yamlNames(
  project: ResolvedProject,
  text: string,
): { symbol: NamedSymbol; line: number; start: number; end: number }[] {
  const out: { symbol: NamedSymbol; line: number; start: number; end: number }[] = [];
  text.split("\n").forEach((row, i) => {
    for (const m of row.matchAll(/\b(agent|workflow):\s*["']?([A-Za-z_]\w*)/g)) {
      const [whole, key, name = ""] = m;
      const end = (m.index ?? 0) + whole.length + 1;
      const known = key === "agent" ? project.agents.has(name) : project.workflows.has(name);
      if (known)
        out.push({
          symbol: { kind: key === "agent" ? "agent" : "workflow", name },
          line: i + 1,
          start: end - name.length,
          end,
        });
    }
    for (const m of row.matchAll(/\b(?:holding|tool):\s*["']?tool\.(\w+)\.(\w+)/g)) {
      const [whole, tool = "", operation = ""] = m;
      const end = (m.index ?? 0) + whole.length + 1;
      const opStart = end - operation.length;
      out.push({
        symbol: { kind: "tool", name: tool },
        line: i + 1,
        start: opStart - 1 - tool.length,
        end: opStart - 1,
      });
      out.push({
        symbol: { kind: "operation", tool, name: operation },
        line: i + 1,
        start: opStart,
        end,
      });
    }
  });
  return out;
}

/** The symbol at a 1-based line and column of an `.agent` file or YAML resource, if any. */
export function symbolAt(
  project: ResolvedProject,
  file: string,
  line: number,
  column: number,
): NamedSymbol | undefined {
  const source = project.sources.get(file);
  if (source && /\.ya?ml$/.test(file))
    return yamlNames(project, source.text).find(
      (n) => n.line === line && column >= n.start && column <= n.end,
    )?.symbol;
  if (!source || !file.endsWith(".agent")) return undefined;
  const offset = source.offset(line, column);
  const tokens = lex(source).tokens;
  const i = tokens.findIndex((t) => t.start <= offset && offset <= t.end && t.kind === "ident");
  return i < 0 ? undefined : classify(project, tokens, i);
}

/** Where a symbol is declared: the `.agent` declaration's name, or the YAML resource. */
export function definitionOf(project: ResolvedProject, s: NamedSymbol): Span | undefined {
  switch (s.kind) {
    case "agent": {
      const a = project.agents.get(s.name);
      return a ? nameSpan(project, a.span.file, a.decl.name.range) : undefined;
    }
    case "workflow": {
      const w = project.workflows.get(s.name);
      return w ? nameSpan(project, w.span.file, w.decl.name.range) : undefined;
    }
    case "tool":
      return project.tools.get(s.name)?.span;
    case "operation":
      return project.tools.get(s.tool)?.operations.get(s.name)?.span;
    case "schema":
      return project.schemas.get(s.name)?.span;
  }
}

function nameSpan(
  project: ResolvedProject,
  file: string,
  range: { start: number; end: number },
): Span | undefined {
  return project.sources.get(file)?.span(range);
}

/** The symbol's definition, and every other place an `.agent` file of the project names it. */
export function referencesOf(
  project: ResolvedProject,
  s: NamedSymbol,
): { definition?: Span; uses: Span[] } {
  const definition = definitionOf(project, s);
  const files = [...project.sources.entries()].filter(([p]) => p.endsWith(".agent"));
  files.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const uses = files.flatMap(([, source]) => namesIn(project, source, s, definition));
  const yaml = [...project.sources.entries()].filter(([p]) => /\.ya?ml$/.test(p));
  yaml.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [path, source] of yaml)
    for (const n of yamlNames(project, source.text))
      if (same(n.symbol, s))
        uses.push({ file: path, line: n.line, column: n.start, endLine: n.line, endColumn: n.end });
  return definition ? { definition, uses } : { uses };
}

function namesIn(
  project: ResolvedProject,
  source: SourceText,
  s: NamedSymbol,
  def: Span | undefined,
): Span[] {
  const tokens = lex(source).tokens;
  const out: Span[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const found = classify(project, tokens, i);
    if (!found || !same(found, s)) continue;
    const span = source.span(tokens[i] as Token);
    if (def && def.file === span.file && def.line === span.line && def.column === span.column)
      continue;
    out.push(span);
  }
  return out;
}
