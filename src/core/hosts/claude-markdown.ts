/**
 * The Markdown files through which a repository gives Claude Code authority outside its
 * settings, read from their YAML front matter:
 *
 * - slash commands (`.claude/commands/**\/*.md`) and skills (`.claude/skills/<name>/SKILL.md`):
 *   `allowed-tools` pre-approves its tools while the command or skill runs (it restricts
 *   nothing), so each is an allow rule of the agent, at its line;
 * - subagents (`.claude/agents/*.md`): `permissionMode` is the mode the subagent's tool uses
 *   run in (ordered as the session's modes are), and its `hooks` and `mcpServers` run programs.
 *   Its `tools` list only restricts what the subagent inherits, so it widens nothing.
 *
 * The front matter is the YAML between a first line `---` and the next `---` line, parsed with
 * a real YAML parser. Pure.
 */
import { isMap, isScalar, isSeq, LineCounter, parseDocument } from "yaml";
import { type Diagnostic, diagnostic, type Span } from "../diagnostics.ts";
import { splitToolList } from "./claude-rules.ts";
import { isClaudeAgentPath } from "./host-paths.ts";
import { type HostFile, lineSpan } from "./json-nodes.ts";

export interface MarkdownAuthority {
  /** Allow rules the file pre-approves (`allowed-tools`), each where it is written. */
  allow: { text: string; span: Span }[];
  /** A subagent's `permissionMode` as written (`subagents.<name>.permissionMode`), and its line. */
  mode?: { key: string; value: unknown; span: Span };
  /** A subagent's hooks and MCP servers, by key, with their JSON and line. */
  settings: { key: string; json: string; span: Span }[];
  diagnostics: Diagnostic[];
}

const at = lineSpan;

/** The subagent's name as its file gives it (`.claude/agents/reviewer.md` → `reviewer`). */
const agentName = (path: string) => path.slice(path.lastIndexOf("/") + 1).replace(/\.md$/, "");

export function readClaudeMarkdown(file: HostFile, role: string): MarkdownAuthority {
  const out: MarkdownAuthority = { allow: [], settings: [], diagnostics: [] };
  const lines = file.text.replace(/^\uFEFF/, "").split(/\r?\n/);
  if (lines[0]?.trim() !== "---") return out;
  const close = lines.findIndex((l, i) => i > 0 && l.trim() === "---");
  if (close < 0) return out;
  const yaml = lines.slice(1, close).join("\n");
  const counter = new LineCounter();
  const doc = parseDocument(yaml, { lineCounter: counter, uniqueKeys: false });
  // Front matter line n is the file's line n + 1 (the opening fence is line 1).
  const lineOf = (offset: number | undefined) => counter.linePos(offset ?? 0).line + 1;
  if (doc.errors.length > 0 || !isMap(doc.contents)) {
    const e = doc.errors[0];
    out.diagnostics.push(
      diagnostic(
        "TF6002",
        at(file.path, e ? lineOf(e.pos[0]) : 2),
        `the front matter of ${file.path} is not a YAML mapping${e ? ` (${(e.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, "")})` : ""}: what it pre-approves cannot be read`,
      ),
    );
    return out;
  }
  for (const pair of doc.contents.items) {
    if (!isScalar(pair.key)) continue;
    const key = String(pair.key.value);
    const keyLine = lineOf(pair.key.range?.[0]);
    const value = pair.value;
    if (key === "allowed-tools" && !isClaudeAgentPath(role)) {
      if (isScalar(value) && typeof value.value === "string")
        for (const t of splitToolList(value.value))
          out.allow.push({ text: t, span: at(file.path, keyLine) });
      else if (isSeq(value))
        for (const item of value.items) {
          if (isScalar(item) && typeof item.value === "string")
            for (const t of splitToolList(item.value))
              out.allow.push({ text: t, span: at(file.path, lineOf(item.range?.[0])) });
          else
            out.diagnostics.push(
              diagnostic(
                "TF6002",
                at(file.path, keyLine),
                "an entry of `allowed-tools` must be a tool rule written as a string",
              ),
            );
        }
      else if (value !== null && !(isScalar(value) && value.value === null))
        out.diagnostics.push(
          diagnostic(
            "TF6002",
            at(file.path, keyLine),
            "`allowed-tools` must be a list of tool rules or one comma-separated string",
          ),
        );
    }
    if (!isClaudeAgentPath(role)) continue;
    const written = value === null ? null : (value as { toJSON(): unknown }).toJSON();
    const at_ = { key: `subagents.${agentName(role)}.${key}`, span: at(file.path, keyLine) };
    if (key === "permissionMode") out.mode = { ...at_, value: written };
    else if (key === "hooks" || key === "mcpServers")
      out.settings.push({ ...at_, json: JSON.stringify(written) });
  }
  return out;
}
