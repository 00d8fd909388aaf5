/**
 * A repository's `.codex/config.toml` (OpenAI Codex's project configuration), read with
 * Codex's own semantics as the agent `Host/codex`, and its changes ordered, never compared as
 * text. Parsed with a real TOML parser (smol-toml); each key is then located at its line.
 *
 * What bears on authority, and which way a change goes:
 * - `sandbox_mode`: `read-only` < `workspace-write` < `danger-full-access` (absent: Codex's
 *   default for a trusted project, `workspace-write`);
 * - `approval_policy`: `untrusted` < `on-failure`, `on-request` (not ordered between them) <
 *   `never` (absent: `on-request`);
 * - `[sandbox_workspace_write]`: `network_access = true` and each added `writable_roots` entry
 *   widen; `exclude_tmpdir_env_var` / `exclude_slash_tmp` set true narrow;
 * - `[mcp_servers.<name>]`: a server added or changed widens (it runs a program or calls a URL),
 *   removed or `enabled = false` narrows; its `disabled_tools` growing narrows;
 * - web search (`tools.web_search`, `web_search`, `features.web_search_request`) turned on widens;
 * - `notify` (a command Codex runs), `shell_environment_policy` (what reaches commands),
 *   `model_providers` and `model_provider` (where prompts go), `projects` trust and `profile`:
 *   every change widens, since none can be ordered;
 * - `[profiles.<name>]` holds the same keys for that profile, with the same order;
 * - settings known not to bear on authority (the model, reasoning, display) are neutral; a key
 *   Terfyn does not know is a widening: it cannot show that it is not one.
 * Pure.
 */

import { parse, TomlError } from "smol-toml";
import type { EffectBoundEntry } from "../analysis/effect-bound.ts";
import { type Diagnostic, diagnostic, type Span } from "../diagnostics.ts";
import type { GrantMode } from "../model/project.ts";
import { bashGlobs, literalPrefix, parseClaudeRule } from "./claude-rules.ts";
import type { HostChange } from "./claude-settings.ts";
import { type HostAgent, modeByBound, type UseMode } from "./host-agents.ts";
import { CODEX_CONFIG, roleOf } from "./host-paths.ts";
import type { HostFile } from "./json-nodes.ts";
import { keyLine, own } from "./json-nodes.ts";

export { CODEX_CONFIG } from "./host-paths.ts";
export const CODEX_AGENT = "Host/codex";

type Toml = Record<string, unknown>;

export interface CodexConfig {
  /** The parsed document, or undefined when Codex would refuse the file. */
  doc?: Toml;
  /** Each dotted key's line (`sandbox_workspace_write.network_access` → 7). */
  lines: Map<string, number>;
  path: string;
  diagnostics: Diagnostic[];
}

const isTable = (v: unknown): v is Toml =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Date);

export function readCodexConfig(file: HostFile): CodexConfig {
  const diagnostics: Diagnostic[] = [];
  const lines = keyLines(file.text);
  try {
    const doc = parse(file.text) as Toml;
    return { doc, lines, path: file.path, diagnostics };
  } catch (e) {
    const line = e instanceof TomlError ? e.line : 1;
    const column = e instanceof TomlError ? e.column : 1;
    const what = e instanceof Error ? e.message.split("\n")[0] : String(e);
    diagnostics.push(
      diagnostic(
        "TF6001",
        { file: file.path, line, column, endLine: line, endColumn: column + 1 },
        `${file.path} is not valid TOML (${what}): Codex refuses to start with it, and a plan cannot say what it allows`,
        { hint: "fix the TOML; `codex` reports the same error" },
      ),
    );
    return { lines, path: file.path, diagnostics };
  }
}

/**
 * Where each key is written: table headers (`[a.b]`, `[[a]]`) set the prefix, `key = …` lines
 * (bare, quoted or dotted keys) add to it. The parse itself is smol-toml's; this only finds
 * lines for the keys it returned, so a key it cannot place gets its table's line.
 */
function keyLines(text: string): Map<string, number> {
  const out = new Map<string, number>();
  let prefix: string[] = [];
  const parts = (s: string) =>
    [...s.matchAll(/\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*(?:\.|$)/g)].map(
      (m) => m[1] ?? m[2] ?? m[3] ?? "",
    );
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    const header = /^\[\[?([^\]]+)\]\]?\s*(#.*)?$/.exec(line);
    if (header?.[1] !== undefined) {
      prefix = parts(header[1]);
      const key = prefix.join(".");
      if (!out.has(key)) out.set(key, i + 1);
      return;
    }
    const kv = /^((?:"(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_.\s-])+?)\s*=/.exec(line);
    if (kv?.[1] !== undefined) {
      const key = [...prefix, ...parts(kv[1])].join(".");
      if (!out.has(key)) out.set(key, i + 1);
    }
  });
  return out;
}

/** The line of a key, else of the nearest table above it that has one, else 1. */
function lineOf(config: CodexConfig, key: string): number {
  return keyLine(config.lines, key);
}

const SANDBOX_RANK: Record<string, number> = {
  "read-only": 0,
  "workspace-write": 1,
  "danger-full-access": 2,
};
const APPROVAL_RANK: Record<string, number> = {
  untrusted: 0,
  "on-failure": 1,
  "on-request": 1,
  never: 2,
};
const DEFAULT_SANDBOX = "workspace-write";
const DEFAULT_APPROVAL = "on-request";

/** Settings that decide nothing about what the agent may reach. */
const NEUTRAL_KEYS = new Set([
  "model",
  "review_model",
  "model_reasoning_effort",
  "model_reasoning_summary",
  "model_verbosity",
  "model_context_window",
  "model_max_output_tokens",
  "model_auto_compact_token_limit",
  "model_supports_reasoning_summaries",
  "hide_agent_reasoning",
  "show_raw_agent_reasoning",
  "disable_response_storage",
  "file_opener",
  "tui",
  "history",
  "project_doc_max_bytes",
  "project_doc_fallback_filenames",
  "instructions",
  "experimental_instructions_file",
  "chatgpt_base_url",
  "preferred_auth_method",
]);

type Flat = Map<string, unknown>;

/** The document as dotted keys to leaf values (arrays are leaves). */
function flatten(doc: Toml | undefined, prefix = "", out: Flat = new Map()): Flat {
  for (const [k, v] of Object.entries(doc ?? {})) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (isTable(v) && Object.keys(v).length > 0) flatten(v, key, out);
    else out.set(key, v);
  }
  return out;
}

const show = (v: unknown) => (v === undefined ? "(unset)" : JSON.stringify(v));

/** The key without a profile's prefix: `profiles.ci.sandbox_mode` → `sandbox_mode`. */
function unprofiled(key: string): string {
  return key.startsWith("profiles.") ? key.split(".").slice(2).join(".") : key;
}

type Verdict = { direction: HostChange["direction"]; reason: string };

function ranked(
  rank: Record<string, number>,
  dflt: string,
  before: unknown,
  after: unknown,
  words: { wider: string; narrower: string },
): Verdict {
  const a = typeof before === "string" ? before : before === undefined ? dflt : "?";
  const b = typeof after === "string" ? after : after === undefined ? dflt : "?";
  const ra = own(rank, a);
  const rb = own(rank, b);
  if (ra === undefined || rb === undefined)
    return {
      direction: "widened",
      reason: "a value Codex does not document: it cannot be ordered",
    };
  if (a === b) return { direction: "neutral", reason: `the same as Codex's default (${dflt})` };
  if (ra === rb) return { direction: "widened", reason: "the two are not ordered" };
  return rb < ra
    ? { direction: "narrowed", reason: words.narrower }
    : { direction: "widened", reason: words.wider };
}

const truthy = (v: unknown) => v === true || v === "live" || v === "cached" || v === "enabled";

/** Which way one key's change goes (the module's note). */
function verdict(key: string, before: unknown, after: unknown): Verdict {
  const k = unprofiled(key);
  if (k === "sandbox_mode")
    return ranked(SANDBOX_RANK, DEFAULT_SANDBOX, before, after, {
      wider: "a looser sandbox: commands may reach more",
      narrower: "a stricter sandbox",
    });
  if (k === "approval_policy")
    return ranked(APPROVAL_RANK, DEFAULT_APPROVAL, before, after, {
      wider: "Codex asks a person less often",
      narrower: "Codex asks a person more often",
    });
  if (k === "sandbox_workspace_write.network_access" || /(^|\.)web_search(_request)?$/.test(k)) {
    const was = truthy(before);
    const now = truthy(after);
    if (was === now) return { direction: "neutral", reason: `stays ${now ? "on" : "off"}` };
    return now
      ? { direction: "widened", reason: "the agent may now reach the network" }
      : { direction: "narrowed", reason: "the agent may no longer reach the network this way" };
  }
  if (
    k === "sandbox_workspace_write.exclude_tmpdir_env_var" ||
    k === "sandbox_workspace_write.exclude_slash_tmp"
  ) {
    const was = before === true;
    const now = after === true;
    if (was === now) return { direction: "neutral", reason: "unchanged" };
    return now
      ? { direction: "narrowed", reason: "a temporary directory is no longer writable" }
      : { direction: "widened", reason: "a temporary directory is writable again" };
  }
  if (k === "sandbox_workspace_write.writable_roots") {
    const was = new Set(Array.isArray(before) ? before.map(String) : []);
    const now = Array.isArray(after) ? after.map(String) : [];
    const added = now.filter((r) => !was.has(r));
    if (added.length > 0)
      return { direction: "widened", reason: `writable outside the project: ${added.join(", ")}` };
    return { direction: "narrowed", reason: "fewer directories outside the project are writable" };
  }
  const mcp = /^mcp_servers\.[^.]+\.(.+)$/.exec(k)?.[1];
  if (mcp === "enabled") {
    if (after === false && before !== false)
      return { direction: "narrowed", reason: "the server no longer starts" };
    return { direction: "widened", reason: "the server starts" };
  }
  if (mcp === "disabled_tools") {
    const now = new Set(Array.isArray(after) ? after.map(String) : []);
    const lost = (Array.isArray(before) ? before.map(String) : []).filter((t) => !now.has(t));
    return lost.length === 0
      ? { direction: "narrowed", reason: "more of the server's tools are disabled" }
      : { direction: "widened", reason: `tools no longer disabled: ${lost.join(", ")}` };
  }
  // Any other change of a server (its program, URL, environment, `enabled_tools` list, even a
  // key removed: an `enabled_tools` gone enables every tool) cannot be ordered.
  if (k.startsWith("mcp_servers."))
    return {
      direction: "widened",
      reason:
        "an MCP server's program, URL, environment or tool list changed: what it reaches changed",
    };
  const top = k.split(".")[0] ?? k;
  if (NEUTRAL_KEYS.has(top) || NEUTRAL_KEYS.has(k))
    return { direction: "neutral", reason: "does not bear on what the agent may reach" };
  if (top === "notify")
    return after === undefined
      ? { direction: "narrowed", reason: "no command runs on the agent's events" }
      : { direction: "widened", reason: "a command runs on the agent's events" };
  const why: Record<string, string> = {
    shell_environment_policy: "what of the environment reaches the agent's commands",
    model_providers: "where the agent's prompts and the repository's text are sent",
    model_provider: "where the agent's prompts and the repository's text are sent",
    projects: "which directories Codex trusts",
    profile: "which profile's settings apply",
    features: "a feature switch",
    otel: "where the agent's telemetry (prompts too, with log_user_prompt) is exported",
    sandbox_workspace_write: "the workspace sandbox",
  };
  return {
    direction: "widened",
    reason: `${own(why, top) ?? "a setting Terfyn does not know"} changed: it cannot be ordered`,
  };
}

/** Each changed key of `.codex/config.toml`, with its direction. */
export function codexChanges(
  base: CodexConfig | undefined,
  head: CodexConfig | undefined,
): HostChange[] {
  const a = flatten(base?.doc);
  const b = flatten(head?.doc);
  const out: HostChange[] = [];
  // A removed server is one change (narrowed), not one per key.
  const servers = (f: Flat) =>
    new Set([...f.keys()].flatMap((k) => /^(mcp_servers\.[^.]+)\./.exec(k)?.[1] ?? []));
  const goneServers = [...servers(a)].filter((s) => !servers(b).has(s));
  const newServers = [...servers(b)].filter((s) => !servers(a).has(s));
  for (const s of goneServers)
    out.push({
      direction: "narrowed",
      key: s,
      change: "removed",
      file: base?.path ?? CODEX_CONFIG,
      line: base ? lineOf(base, s) : 1,
      reason: "the MCP server no longer runs",
    });
  for (const s of newServers)
    out.push({
      direction: "widened",
      key: s,
      change: "added",
      file: head?.path ?? CODEX_CONFIG,
      line: head ? lineOf(head, s) : 1,
      reason: "a new MCP server: a program Codex starts, or a URL it calls",
    });
  const inServer = (k: string, set: readonly string[]) => set.some((s) => k.startsWith(`${s}.`));
  const keys = [...new Set([...a.keys(), ...b.keys()])].sort();
  for (const key of keys) {
    if (inServer(key, goneServers) || inServer(key, newServers)) continue;
    const before = a.get(key);
    const after = b.get(key);
    if (JSON.stringify(before) === JSON.stringify(after)) continue;
    const v = verdict(key, before, after);
    const from = after === undefined ? base : head;
    out.push({
      direction: v.direction,
      key,
      change: before === undefined ? "added" : after === undefined ? "removed" : "changed",
      file: from?.path ?? CODEX_CONFIG,
      line: from ? lineOf(from, key) : 1,
      reason: `${show(before)} -> ${show(after)}: ${v.reason}`,
    });
  }
  return out;
}

/**
 * Codex's bound: commands run in its sandbox (autonomous, or gated under `untrusted`); writes
 * to the project autonomous unless the sandbox is read-only (then gated: an escalation asks,
 * unless the policy never asks); the network gated unless `network_access` or full access;
 * every MCP server and its tools autonomous (Codex starts them and does not ask per call).
 */
export function codexBound(config: CodexConfig): EffectBoundEntry[] {
  const out: EffectBoundEntry[] = [];
  const doc = config.doc ?? {};
  const at = (key: string): Span => {
    const line = lineOf(config, key);
    return { file: config.path, line, column: 1, endLine: line, endColumn: 1 };
  };
  const add = (effect: string, mode: GrantMode | undefined, tool: string, key: string) => {
    if (mode) out.push({ agent: CODEX_AGENT, effect, mode, tool, span: at(key) });
  };
  // The selected profile's keys override the top level's.
  const profileName = typeof doc.profile === "string" ? doc.profile : undefined;
  const profiles = isTable(doc.profiles) ? doc.profiles : {};
  const profile =
    profileName && isTable(profiles[profileName]) ? (profiles[profileName] as Toml) : {};
  const pick = (k: string): [unknown, string] =>
    profile[k] !== undefined ? [profile[k], `profiles.${profileName}.${k}`] : [doc[k], k];
  const [sandboxRaw, sandboxKey] = pick("sandbox_mode");
  const [approvalRaw, approvalKey] = pick("approval_policy");
  const sandbox = typeof sandboxRaw === "string" ? sandboxRaw : DEFAULT_SANDBOX;
  const approval = typeof approvalRaw === "string" ? approvalRaw : DEFAULT_APPROVAL;
  const full = own(SANDBOX_RANK, sandbox) === undefined || sandbox === "danger-full-access";
  const neverAsks = own(APPROVAL_RANK, approval) === undefined || approval === "never";
  const escalation: GrantMode | undefined = neverAsks ? undefined : "gated";
  const ww = isTable(doc.sandbox_workspace_write) ? doc.sandbox_workspace_write : {};
  add("workspace.read", "autonomous", `sandbox_mode ${sandbox}`, sandboxKey);
  add(
    "process.exec",
    approval === "untrusted" ? "gated" : "autonomous",
    `approval_policy ${approval}`,
    approvalKey,
  );
  add(
    "workspace.write",
    sandbox === "read-only" ? escalation : "autonomous",
    `sandbox_mode ${sandbox}`,
    sandboxKey,
  );
  for (const root of Array.isArray(ww.writable_roots) ? ww.writable_roots : [])
    add(
      "workspace.write",
      "autonomous",
      `writable_roots ${String(root)}`,
      "sandbox_workspace_write.writable_roots",
    );
  const net = full || (sandbox === "workspace-write" && ww.network_access === true);
  add(
    "network.egress",
    net ? "autonomous" : escalation,
    net
      ? full
        ? `sandbox_mode ${sandbox}`
        : "network_access true"
      : `approval_policy ${approval}`,
    net && !full ? "sandbox_workspace_write.network_access" : sandboxKey,
  );
  const tools = isTable(doc.tools) ? doc.tools : {};
  if (truthy(tools.web_search) || truthy(doc.web_search))
    add(
      "network.egress",
      "autonomous",
      "web_search",
      tools.web_search !== undefined ? "tools.web_search" : "web_search",
    );
  if (doc.notify !== undefined) add("process.exec", "autonomous", "notify", "notify");
  const servers = isTable(doc.mcp_servers) ? doc.mcp_servers : {};
  for (const [name, s] of Object.entries(servers)) {
    if (!isTable(s) || s.enabled === false) continue;
    const key = `mcp_servers.${name}`;
    add(typeof s.url === "string" ? "network.egress" : "process.exec", "autonomous", key, key);
    add(`mcp.${name}.*`, "autonomous", `${key} tools`, key);
  }
  return out;
}

/**
 * Commands Codex runs unasked even under `approval_policy = "untrusted"` (its known-safe set:
 * read-only commands; `git` and `cargo` only with the subcommands listed). Kept broad on
 * purpose: a command that may be in it is never called "asked", so a larger set only makes
 * fewer claims.
 */
const KNOWN_SAFE: ReadonlyMap<string, ReadonlySet<string> | undefined> = new Map([
  ...[
    "cat",
    "cd",
    "echo",
    "false",
    "grep",
    "head",
    "ls",
    "nl",
    "pwd",
    "tail",
    "true",
    "wc",
    "which",
    "find",
    "rg",
    "sed",
    "base64",
    "cut",
    "expr",
    "numfmt",
    "paste",
    "rev",
    "seq",
    "sort",
    "tac",
    "tr",
    "uniq",
    "stat",
    "file",
    "du",
    "df",
    "tree",
    "date",
    "whoami",
    "id",
    "uname",
    "env",
    "printenv",
    "diff",
    "cmp",
    "md5sum",
    "sha256sum",
    "bash",
    "sh",
    "zsh",
  ].map((c) => [c, undefined] as const),
  ["git", new Set(["status", "log", "diff", "show", "branch", "grep", "ls-files", "rev-parse"])],
  ["cargo", new Set(["check"])],
]);

/**
 * Whether a command pattern (Claude Code's grammar, read by bashGlobs) may match a command
 * Codex knows to be safe: only the words of a glob's literal opening that a space (or the end
 * of a glob without a wildcard) closes are sure.
 */
function maySeemSafe(specifier: string | undefined): boolean {
  if (specifier === undefined) return true;
  return bashGlobs(specifier.trim()).some((g) => {
    const opening = literalPrefix(g);
    const words = opening.split(/\s+/).filter((w) => w !== "");
    const closed = !g.includes("*") || /\s$/.test(opening);
    const sure = (i: number) => i < words.length - 1 || (i === words.length - 1 && closed);
    const cmd = words[0];
    if (cmd === undefined || !sure(0)) return true;
    const name = cmd.replace(/^.*\//, "");
    if (!KNOWN_SAFE.has(name)) return false;
    const subs = KNOWN_SAFE.get(name);
    const sub = words[1];
    return (
      subs === undefined || sub === undefined || sub.startsWith("-") || !sure(1) || subs.has(sub)
    );
  });
}

/**
 * How Codex decides every use the rule `text` names: by its bound (see modeByBound). A command
 * (`Bash(…)`) is decided by the approval policy alone (a server's or `notify`'s program is the
 * host's own, not a use the agent asks for), and under `untrusted` a command Codex may take for
 * known-safe runs unasked, so a rule is asked only when its command's first word is literal
 * and outside that set.
 */
function codexUseMode(agent: HostAgent, text: string): UseMode {
  const rule = parseClaudeRule(text);
  if ("problem" in rule || rule.tool !== "Bash") return modeByBound(agent, text);
  const m = modeByBound(
    { ...agent, bound: agent.bound.filter((e) => e.tool.startsWith("approval_policy ")) },
    text,
  );
  if (m.mode !== "gated") return m;
  if (!maySeemSafe(rule.specifier)) return m;
  return {
    mode: "autonomous",
    because: `${m.because}, but Codex runs commands known to be safe (ls, cat, git status, …) unasked, and this rule may name one`,
    span: m.span,
  };
}

/** Codex as an agent, from a project's `.codex/config.toml`. */
export function codexAgent(files: readonly HostFile[]): HostAgent | undefined {
  const file = files.find((f) => roleOf(f) === CODEX_CONFIG);
  if (!file) return undefined;
  const config = readCodexConfig(file);
  const agent: HostAgent = {
    name: CODEX_AGENT,
    files: [file],
    bound: config.doc ? codexBound(config) : [],
    diagnostics: config.diagnostics,
  };
  return { ...agent, modeOf: (text) => codexUseMode(agent, text) };
}
