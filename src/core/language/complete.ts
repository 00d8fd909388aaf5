/**
 * Completion for the language server: what may be written at the cursor, from the text before
 * it and the project's names. In an `.agent` file: declarations at the top level, an agent's
 * or the defaults' items, grants (`tool.<tool>.<operation>`, each with its effects), schema
 * names after `input`/`output`/`:`/`->`, effects inside `effects { … }`, agents and workflows
 * in a workflow's body. In a YAML resource: the kinds after `kind:`, effects after `effect:`,
 * agents after `agent:`, grants after `holding:`/`tool:`. Pure.
 */

import { RESOURCE_KINDS } from "../config/schemas.ts";
import { agentAddress } from "../model/agent-names.ts";
import type { ResolvedProject } from "../model/project.ts";
import { SourceText } from "../source.ts";
import { lex } from "./lexer.ts";
import { AGENT_ITEMS, DECL_KEYWORDS, DEFAULTS_ITEMS, STATEMENT_KEYWORDS } from "./parser.ts";

export interface Completion {
  label: string;
  kind: "keyword" | "agent" | "workflow" | "tool" | "operation" | "schema" | "effect" | "kind";
  detail?: string;
}

const words = (list: readonly string[], kind: Completion["kind"]): Completion[] =>
  list.map((label) => ({ label, kind }));

/** Every effect the project's operations declare, sorted. */
function effectsOf(project: ResolvedProject): Completion[] {
  const all = new Set<string>();
  for (const t of project.tools.values())
    for (const op of t.operations.values()) for (const e of op.effects) all.add(e);
  return [...all].sort().map((label) => ({ label, kind: "effect" }));
}

function grantsOf(project: ResolvedProject): Completion[] {
  return [...project.tools.values()].flatMap((t) =>
    [...t.operations.values()].map((op) => ({
      label: `tool.${t.name}.${op.name}`,
      kind: "operation" as const,
      detail: op.effects.join(", "),
    })),
  );
}

/**
 * The innermost `{` still open in `text`, by the first word of its line (`agent`, `grants`,
 * `effects`, `while`, `else` after a `}`, …; `workflow` for a body whose brace follows `-> T`
 * or the closed effects clause), and how many are open. Read off the lexer's tokens, so braces
 * in strings and comments do not count.
 */
function enclosing(text: string): { depth: number; opener?: string } {
  const tokens = lex(new SourceText("completion.agent", text)).tokens;
  const stack: string[] = [];
  tokens.forEach((t, i) => {
    if (t.kind === "}") stack.pop();
    if (t.kind !== "{") return;
    const prev = tokens[i - 1];
    if (prev?.kind === "}" || (prev?.kind === "ident" && tokens[i - 2]?.kind === "->")) {
      stack.push("workflow");
      return;
    }
    let first = i;
    while (first > 0 && !tokens[first]?.newlineBefore) first--;
    while (first < i && tokens[first]?.kind === "}") first++;
    const head = tokens[first];
    stack.push(head?.kind === "ident" ? head.text : "");
  });
  return { depth: stack.length, opener: stack.at(-1) };
}

const BODY_OPENERS = new Set(["workflow", "while", "if", "else"]);

export function completionsAt(
  project: ResolvedProject,
  file: string,
  text: string,
  offset: number,
): Completion[] {
  const before = text.slice(0, offset);
  const line = before.slice(before.lastIndexOf("\n") + 1);
  if (file.endsWith(".yaml") || file.endsWith(".yml")) {
    if (/^\s*kind:\s*\w*$/.test(line)) return words(RESOURCE_KINDS, "kind");
    if (/\beffect:\s*[\w.*]*$/.test(line)) return effectsOf(project);
    if (/\bagent:\s*[\w/]*$/.test(line))
      return [...project.agents.keys()].map((a) => ({
        label: a,
        kind: "agent",
        detail: agentAddress(a),
      }));
    if (/\b(holding|tool):\s*[\w.]*$/.test(line)) return grantsOf(project);
    return [];
  }
  if (!file.endsWith(".agent")) return [];
  const op = /\btool\.(\w+)\.\w*$/.exec(line);
  if (op) {
    const tool = project.tools.get(op[1] ?? "");
    return tool
      ? [...tool.operations.values()].map((o) => ({
          label: o.name,
          kind: "operation",
          detail: o.effects.join(", "),
        }))
      : [];
  }
  if (/\btool\.\w*$/.test(line))
    return [...project.tools.keys()].map((t) => ({ label: t, kind: "tool" }));
  if (/\b(input|output)\s+\w*$|[(,]\s*\w+\s*:\s*\w*$|->\s*\w*$/.test(line))
    return [...project.schemas.keys()].map((s) => ({ label: s, kind: "schema" }));
  const { depth, opener } = enclosing(before);
  if (opener === "effects") return effectsOf(project);
  if (!/^\s*\w*$/.test(line) && !/=\s*\w*$/.test(line)) return [];
  if (depth === 0) return words(DECL_KEYWORDS, "keyword");
  if (opener === "agent") return words(AGENT_ITEMS, "keyword");
  if (opener === "defaults") return words(DEFAULTS_ITEMS, "keyword");
  if (opener === "grants") return grantsOf(project);
  if (!BODY_OPENERS.has(opener ?? "")) return [];
  // A workflow's body: statements, and what may be called.
  return [
    ...(/=\s*\w*$/.test(line) ? [] : words(STATEMENT_KEYWORDS, "keyword")),
    ...[...project.agents.keys()].map((a) => ({ label: a, kind: "agent" as const })),
    ...[...project.workflows.keys()].map((w) => ({ label: w, kind: "workflow" as const })),
  ];
}
