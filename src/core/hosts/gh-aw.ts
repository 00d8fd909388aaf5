/**
 * GitHub Agentic Workflows (gh-aw): a `.github/workflows/<name>.md` whose front matter says
 * what its agent may do is the agent `Workflow/gh-aw/<name>`. The front matter is found by
 * gh-aw's own rule (the first line and the closing line are `---` once trimmed) and read as
 * YAML (the `yaml` package, with lines). Every key is ordered by what gh-aw does with it, never compared as text:
 *
 * - `tools.bash`: each entry a command pattern (`git log:*` a prefix, `:*` or `*` every
 *   command), ordered by containment as Claude Code's `Bash(…)` rules are; absent or empty-valued
 *   is gh-aw's default set of read-only commands;
 * - `tools.github.allowed` (absent: every GitHub tool), `tools.<mcp>.allowed` and
 *   `mcp-servers.<name>.allowed`: tools added widen, removed narrow; a tool or server added
 *   widens, removed narrows, any other change widens;
 * - `tools.edit`, `tools.web-fetch`, `tools.web-search`, `tools.playwright`: present widens;
 * - `network`: `defaults` (also when absent), `{}` (nothing) or `allowed` domains and
 *   ecosystems: an entry added widens, removed narrows (`*` holds every one);
 * - `safe-outputs.<output>`: an output added widens, removed narrows; its `max` raised widens,
 *   lowered narrows; any other change of it widens;
 * - `permissions` scope by scope (`none` < `read` < `write`; absent: taken as write-all),
 *   `on` (an event added widens), `roles` (a role added, or `all`, widens), `strict` turned off
 *   widens;
 * - `imports`: the local files imported are read and merged (gh-aw-imports.ts); a change of the
 *   list itself widens;
 * - `engine`, `steps`, `post-steps`, `imports`, `env`, `secrets`, `runtimes`, `container`,
 *   `services`, `sandbox`, `if`: every change widens (a removal narrows);
 * - `name`, `description`, `timeout-minutes`, `concurrency`, `source`, `run-name`, `labels`:
 *   neutral; any other key widens: Terfyn cannot show it does not.
 * Pure.
 */

import { isMap, LineCounter, type Node, parseDocument } from "yaml";
import type { EffectBoundEntry } from "../analysis/effect-bound.ts";
import { type Diagnostic, diagnostic } from "../diagnostics.ts";
import { type ClaudeRule, parseClaudeRule, ruleChanges } from "./claude-rules.ts";
import type { HostChange } from "./claude-settings.ts";
import { importChanges, importClosure, mergedFront } from "./gh-aw-imports.ts";
import type { HostAgent } from "./host-agents.ts";
import { isGhAwPath, roleOf } from "./host-paths.ts";
import type { HostPlan } from "./host-plan.ts";
import type { HostFile } from "./json-nodes.ts";
import { keyLine, own } from "./json-nodes.ts";

export const GH_AW_PREFIX = "Workflow/gh-aw/";

export const ghAwAgentName = (path: string) =>
  `${GH_AW_PREFIX}${path.slice(path.lastIndexOf("/") + 1).replace(/\.md$/, "")}`;

/** gh-aw's read-only commands when `tools.bash` names none. */
const DEFAULT_BASH = [
  "echo",
  "ls",
  "pwd",
  "cat",
  "head",
  "tail",
  "grep",
  "wc",
  "sort",
  "uniq",
  "date",
  "printf",
  "yq",
];

export interface GhAwWorkflow {
  path: string;
  /** The front matter, or undefined when the file has none (not an agentic workflow). */
  front?: Record<string, unknown>;
  /** Each dotted key's line in the file. */
  lines: Map<string, number>;
  diagnostics: Diagnostic[];
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

export function readGhAw(file: HostFile): GhAwWorkflow {
  const out: GhAwWorkflow = { path: file.path, lines: new Map(), diagnostics: [] };
  // gh-aw's own rule: the first line, trimmed, is `---`; the front matter ends at the next line
  // that, trimmed, is `---` (indented or not).
  const lines = file.text.split(/\r?\n/);
  if (lines[0]?.trim() !== "---") return out;
  const close = lines.findIndex((l, i) => i > 0 && l.trim() === "---");
  if (close < 0) {
    out.diagnostics.push(
      diagnostic(
        "TF6001",
        { file: file.path, line: 1, column: 1, endLine: 1, endColumn: 4 },
        `${file.path}'s front matter is never closed (no line \`---\` after the first): gh-aw will not compile it, and a plan cannot say what its agent may do`,
      ),
    );
    return out;
  }
  // The YAML starts on the line after the opening `---`.
  const offset = 1;
  const lc = new LineCounter();
  const doc = parseDocument(lines.slice(1, close).join("\n"), {
    lineCounter: lc,
    uniqueKeys: true,
  });
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    const line = (e?.linePos?.[0]?.line ?? 1) + offset;
    out.diagnostics.push(
      diagnostic(
        "TF6001",
        { file: file.path, line, column: e?.linePos?.[0]?.col ?? 1, endLine: line, endColumn: 2 },
        `${file.path}'s front matter is not valid YAML (${e?.message.split("\n")[0]}): gh-aw will not compile it, and a plan cannot say what its agent may do`,
      ),
    );
    return out;
  }
  const js = doc.toJS() as unknown;
  out.front = isObject(js) ? js : {};
  const walk = (n: unknown, prefix: string) => {
    if (!isMap(n)) return;
    for (const p of n.items) {
      const k = isObject(p.key) && "value" in p.key ? String(p.key.value) : String(p.key);
      const key = prefix ? `${prefix}.${k}` : k;
      const range = (p.key as Node | null)?.range;
      if (range) out.lines.set(key, lc.linePos(range[0]).line + offset);
      walk(p.value, key);
    }
  };
  walk(doc.contents, "");
  return out;
}

function lineOf(wf: GhAwWorkflow | undefined, key: string): number {
  return keyLine(wf?.lines, key);
}

/** `tools.bash` as Bash rules: `git log:*` is `Bash(git log:*)`, `:*` and `*` every command. */
function bashRules(front: Record<string, unknown> | undefined): ClaudeRule[] {
  const tools = isObject(front?.tools) ? front.tools : {};
  const v = tools.bash;
  const entries =
    v === true
      ? ["*"]
      : Array.isArray(v)
        ? v.map(String)
        : v === false
          ? []
          : Object.hasOwn(tools, "bash") || v === undefined
            ? DEFAULT_BASH
            : ["*"];
  return entries.flatMap((e) => {
    const text = e === ":*" || e === "*" ? "Bash" : `Bash(${e})`;
    const r = parseClaudeRule(text);
    return "problem" in r ? [{ text, tool: "Bash", specifier: e }] : [r];
  });
}

const set = (v: unknown): Set<string> => new Set(Array.isArray(v) ? v.map(String) : []);

const RANK: Record<string, number> = { none: 0, read: 1, write: 2 };

function scopes(v: unknown): Map<string, string> | undefined {
  if (v === undefined) return undefined;
  const out = new Map<string, string>();
  if (typeof v === "string") {
    const level = v === "write-all" ? "write" : v === "read-all" ? "read" : "none";
    for (const s of [
      "actions",
      "checks",
      "contents",
      "discussions",
      "issues",
      "pull-requests",
      "statuses",
      "packages",
      "pages",
      "deployments",
      "security-events",
      "id-token",
    ])
      out.set(s, level);
  } else if (isObject(v)) for (const [k, x] of Object.entries(v)) out.set(k, String(x));
  return out;
}

/** The network entries: `defaults` when absent. */
function networkOf(front: Record<string, unknown> | undefined): Set<string> {
  const n = front?.network;
  if (n === undefined || n === "defaults") return new Set(["defaults"]);
  if (isObject(n)) return set(n.allowed);
  return new Set(["*"]);
}

const NEUTRAL = new Set([
  "name",
  "description",
  "timeout-minutes",
  "timeout_minutes",
  "concurrency",
  "source",
  "run-name",
  "labels",
  "tracker-id",
]);
const WIDEN_ANY = new Set([
  "engine",
  "steps",
  "post-steps",
  "imports",
  "env",
  "secrets",
  "runtimes",
  "container",
  "services",
  "sandbox",
  "if",
  "runs-on",
  "cache",
  "jobs",
  "features",
]);

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Each change of a gh-aw workflow's front matter, with its direction. */
export function ghAwChanges(
  base: GhAwWorkflow | undefined,
  head: GhAwWorkflow | undefined,
): HostChange[] {
  const out: HostChange[] = [];
  const a = base?.front;
  const b = head?.front;
  const file = head?.path ?? base?.path ?? "";
  const row = (
    direction: HostChange["direction"],
    key: string,
    change: HostChange["change"],
    reason: string,
    side = b !== undefined && lineOf(head, key) !== 1 ? head : base,
  ) =>
    out.push({ direction, key, change, file: side?.path ?? file, line: lineOf(side, key), reason });
  if (a === undefined && b === undefined) return out;
  if (a === undefined) {
    row(
      "widened",
      "(front matter)",
      "added",
      "a new agentic workflow: its agent runs with every tool and output below",
      head,
    );
    return out;
  }
  if (b === undefined) {
    row("narrowed", "(front matter)", "removed", "the agentic workflow is gone", base);
    return out;
  }
  const change = (x: unknown, y: unknown): HostChange["change"] =>
    x === undefined ? "added" : y === undefined ? "removed" : "changed";
  // tools.bash by containment.
  for (const c of ruleChanges(
    { allow: bashRules(a), ask: [], deny: [] },
    { allow: bashRules(b), ask: [], deny: [] },
  )) {
    const side = c.change === "added" ? head : base;
    out.push({
      direction: c.direction,
      rule: c.rule,
      list: "allow",
      change: c.change,
      file: side?.path ?? file,
      line: lineOf(side, "tools.bash"),
      reason: `tools.bash: ${c.reason}`,
    });
  }
  const ta = isObject(a.tools) ? a.tools : {};
  const tb = isObject(b.tools) ? b.tools : {};
  const mcpLike = (
    x: Record<string, unknown>,
    y: Record<string, unknown>,
    prefix: string,
    names: string[],
  ) => {
    for (const name of names) {
      const key = `${prefix}.${name}`;
      const was = x[name];
      const now = y[name];
      if (same(was, now)) continue;
      if (was === undefined || now === undefined) {
        row(
          now === undefined ? "narrowed" : "widened",
          key,
          change(was, now),
          now === undefined ? "the tool is gone" : "a new tool the agent may call",
        );
        continue;
      }
      const wa = isObject(was) ? was : {};
      const na = isObject(now) ? now : {};
      const allowedA = wa.allowed === undefined ? new Set(["*"]) : set(wa.allowed);
      const allowedB = na.allowed === undefined ? new Set(["*"]) : set(na.allowed);
      const added = [...allowedB].filter((t) => !allowedA.has(t) && !allowedA.has("*"));
      const removed = [...allowedA].filter((t) => !allowedB.has(t));
      const restSame = same({ ...wa, allowed: undefined }, { ...na, allowed: undefined });
      if (!restSame)
        row("widened", key, "changed", "the tool's configuration changed: Terfyn cannot order it");
      else if (added.length > 0)
        row(
          "widened",
          `${key}.allowed`,
          change(wa.allowed, na.allowed),
          `tools the agent may call: ${added.join(", ")}`,
        );
      else if (removed.length > 0)
        row(
          "narrowed",
          `${key}.allowed`,
          change(wa.allowed, na.allowed),
          `tools no longer allowed: ${removed.join(", ")}`,
        );
    }
  };
  mcpLike(
    ta,
    tb,
    "tools",
    [...new Set([...Object.keys(ta), ...Object.keys(tb)])].filter((n) => n !== "bash").sort(),
  );
  const ma = isObject(a["mcp-servers"]) ? (a["mcp-servers"] as Record<string, unknown>) : {};
  const mb = isObject(b["mcp-servers"]) ? (b["mcp-servers"] as Record<string, unknown>) : {};
  mcpLike(ma, mb, "mcp-servers", [...new Set([...Object.keys(ma), ...Object.keys(mb)])].sort());
  // network
  const na = networkOf(a);
  const nb = networkOf(b);
  const netAdded = [...nb].filter((d) => !na.has(d) && !na.has("*"));
  const netRemoved = [...na].filter((d) => !nb.has(d));
  if (netAdded.length > 0)
    row(
      "widened",
      "network",
      change(a.network, b.network),
      `the agent may reach: ${netAdded.join(", ")}`,
    );
  else if (netRemoved.length > 0)
    row(
      "narrowed",
      "network",
      change(a.network, b.network),
      `the agent may no longer reach: ${netRemoved.join(", ")}`,
    );
  // Every other network setting (`blocked`, the firewall, …) cannot be ordered.
  const otherNet = (n: unknown) => (isObject(n) ? { ...n, allowed: undefined } : {});
  if (!same(otherNet(a.network), otherNet(b.network)))
    row(
      "widened",
      "network",
      change(a.network, b.network),
      "a network setting other than `allowed` changed: it cannot be ordered",
    );
  // safe outputs
  const sa = isObject(a["safe-outputs"]) ? (a["safe-outputs"] as Record<string, unknown>) : {};
  const sb = isObject(b["safe-outputs"]) ? (b["safe-outputs"] as Record<string, unknown>) : {};
  for (const name of [...new Set([...Object.keys(sa), ...Object.keys(sb)])].sort()) {
    const key = `safe-outputs.${name}`;
    const was = sa[name];
    const now = sb[name];
    if (same(was, now)) continue;
    const had = Object.hasOwn(sa, name);
    const has = Object.hasOwn(sb, name);
    if (!had || !has) {
      row(
        has ? "widened" : "narrowed",
        key,
        has ? "added" : "removed",
        has
          ? "a new kind of write the agent's output makes"
          : "the agent's output no longer makes it",
      );
      continue;
    }
    // A setting of safe-outputs itself (`staged`, `github-token`, …), or an output written
    // as a scalar: a change cannot be ordered.
    if (!isObject(was) && was !== null && was !== undefined) {
      row("widened", key, "changed", "a safe-outputs setting changed: it cannot be ordered");
      continue;
    }
    if (!isObject(now) && now !== null && now !== undefined) {
      row("widened", key, "changed", "a safe-outputs setting changed: it cannot be ordered");
      continue;
    }
    const wa = isObject(was) ? was : {};
    const wb = isObject(now) ? now : {};
    // No `max`: gh-aw's default for that output, which differs by output and version.
    const maxA = typeof wa.max === "number" ? wa.max : Number.POSITIVE_INFINITY;
    const maxB = typeof wb.max === "number" ? wb.max : Number.POSITIVE_INFINITY;
    if (!same({ ...wa, max: undefined }, { ...wb, max: undefined }))
      row("widened", key, "changed", "the output's settings changed: Terfyn cannot order them");
    else if (
      maxA !== maxB &&
      (maxA === Number.POSITIVE_INFINITY || maxB === Number.POSITIVE_INFINITY)
    )
      row(
        "widened",
        `${key}.max`,
        change(wa.max, wb.max),
        "a max set or removed against gh-aw's default for the output, which Terfyn cannot know",
      );
    else if (maxA !== maxB)
      row(
        maxB > maxA ? "widened" : "narrowed",
        `${key}.max`,
        "changed",
        `at most ${maxA} -> ${maxB} per run`,
      );
  }
  // permissions
  const pa = scopes(a.permissions);
  const pb = scopes(b.permissions);
  for (const s of [
    ...new Set([
      ...(pa?.keys() ?? []),
      ...(pb?.keys() ?? []),
      "contents",
      "issues",
      "pull-requests",
    ]),
  ].sort()) {
    const x = pa ? (pa.get(s) ?? "none") : "write";
    const y = pb ? (pb.get(s) ?? "none") : "write";
    if (x === y) continue;
    const narrowed =
      own(RANK, x) !== undefined &&
      own(RANK, y) !== undefined &&
      (own(RANK, y) as number) < (own(RANK, x) as number);
    row(
      narrowed ? "narrowed" : "widened",
      `permissions.${s}`,
      "changed",
      `the agent job's token: ${s} ${x} -> ${y}`,
    );
  }
  // events, roles, strict
  const events = (v: unknown) =>
    new Set(
      typeof v === "string"
        ? [v]
        : Array.isArray(v)
          ? v.map(String)
          : isObject(v)
            ? Object.keys(v)
            : [],
    );
  const ea = events(a.on);
  const eb = events(b.on);
  for (const e of eb)
    if (!ea.has(e)) row("widened", `on.${e}`, "added", "a new event starts the agent");
  for (const e of ea)
    if (!eb.has(e)) row("narrowed", `on.${e}`, "removed", "an event no longer starts it", base);
  // An event kept, but written differently (a filter dropped, `on: [issues]` for a map with
  // types): what starts it may have grown.
  const filterOf = (on: unknown, e: string) => (isObject(on) ? on[e] : null) ?? null;
  for (const e of eb)
    if (
      ea.has(e) &&
      !(isObject(a.on) && isObject(b.on)) &&
      !same(filterOf(a.on, e), filterOf(b.on, e))
    )
      row("widened", `on.${e}`, "changed", "what starts it changed: Terfyn cannot order it");
  if (isObject(a.on) && isObject(b.on))
    for (const e of eb)
      if (ea.has(e) && !same(a.on[e], b.on[e]))
        row("widened", `on.${e}`, "changed", "what starts it changed: Terfyn cannot order it");
  const roles = (v: unknown) =>
    v === "all"
      ? new Set(["all"])
      : v === undefined
        ? new Set(["admin", "maintainer", "write"])
        : set(v);
  const ra = roles(a.roles);
  const rb = roles(b.roles);
  const moreRoles = [...rb].filter((r) => !ra.has(r) && !ra.has("all"));
  if (moreRoles.length > 0)
    row(
      "widened",
      "roles",
      change(a.roles, b.roles),
      `who may start it: ${moreRoles.join(", ")} added`,
    );
  else if ([...ra].some((r) => !rb.has(r)))
    row("narrowed", "roles", change(a.roles, b.roles), "fewer roles may start it");
  if ((a.strict ?? true) !== (b.strict ?? true))
    row(
      b.strict === false ? "widened" : "narrowed",
      "strict",
      change(a.strict, b.strict),
      b.strict === false ? "strict mode off: gh-aw checks less" : "strict mode on",
    );
  // Everything else
  const handled = new Set([
    "tools",
    "mcp-servers",
    "network",
    "safe-outputs",
    "permissions",
    "on",
    "roles",
    "strict",
  ]);
  for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    if (handled.has(k) || same(a[k], b[k])) continue;
    if (NEUTRAL.has(k))
      row("neutral", k, change(a[k], b[k]), "does not bear on what the agent may do");
    else if (WIDEN_ANY.has(k) && b[k] === undefined)
      row("narrowed", k, "removed", "it no longer applies", base);
    else
      row(
        "widened",
        k,
        change(a[k], b[k]),
        WIDEN_ANY.has(k)
          ? `${k} changed: it decides what runs, and cannot be ordered`
          : "a key Terfyn does not know: it cannot show it does not widen",
      );
  }
  return out;
}

/** The GitHub area each safe output writes. */
const OUTPUT_AREA: Record<string, string[]> = {
  "create-issue": ["issues"],
  "add-comment": ["issues"],
  "update-issue": ["issues"],
  "close-issue": ["issues"],
  "add-labels": ["issues"],
  "create-pull-request": ["pull-requests", "contents"],
  "push-to-pull-request-branch": ["contents"],
  "create-pull-request-review-comment": ["pull-requests"],
  "create-discussion": ["discussions"],
  "create-code-scanning-alert": ["security-events"],
};

/** Each file read once per side: every shared file asks which workflows import it. */
const READ = new WeakMap<HostFile, GhAwWorkflow>();
const readOnce = (f: HostFile) => {
  let wf = READ.get(f);
  if (!wf) {
    wf = readGhAw(f);
    READ.set(f, wf);
  }
  return wf;
};

/**
 * The local files `wf` imports, directly or not, as read from `files` (by path; an import that
 * is not among them is not read).
 */
export function importsOf(wf: GhAwWorkflow, files: readonly HostFile[]): Map<string, GhAwWorkflow> {
  const byPath = new Map(files.map((f) => [f.path, f]));
  const read = (p: string) => {
    const f = byPath.get(p);
    return f ? readOnce(f) : undefined;
  };
  return new Map(
    importClosure(wf, read).flatMap((p) => {
      const r = read(p);
      return r ? [[p, r] as const] : [];
    }),
  );
}

/** The agents of the workflows among `files` that import `path`, directly or not. */
export function ghAwImporters(path: string, files: readonly HostFile[]): string[] {
  return files
    .filter((f) => isGhAwPath(roleOf(f)) && importsOf(readOnce(f), files).has(path))
    .map((f) => ghAwAgentName(roleOf(f)));
}

/**
 * A gh-aw workflow as an agent, with the files it imports merged in (gh-aw-imports.ts; what
 * they add is placed at the workflow's `imports` line); undefined for a Markdown file without
 * front matter.
 */
export function ghAwAgent(file: HostFile, shared: readonly HostFile[] = []): HostAgent | undefined {
  const self = readOnce(file);
  if (!self.front && self.diagnostics.length === 0) return undefined;
  const imported = self.front ? importsOf(self, shared) : new Map<string, GhAwWorkflow>();
  const wf: GhAwWorkflow = {
    ...self,
    ...(self.front
      ? {
          front: mergedFront(
            self.front,
            [...imported.values()].map((w) => w.front),
          ),
        }
      : {}),
    diagnostics: [...self.diagnostics, ...[...imported.values()].flatMap((w) => w.diagnostics)],
  };
  const files = [file, ...shared.filter((f) => imported.has(f.path))];
  const name = ghAwAgentName(file.path);
  const bound: EffectBoundEntry[] = [];
  const add = (effect: string, tool: string, key: string) => {
    // A key the workflow does not write itself came from an import: the `imports` line.
    const written = wf.lines.has(key.split(".")[0] as string);
    const line = written || !wf.lines.has("imports") ? lineOf(wf, key) : lineOf(wf, "imports");
    bound.push({
      agent: name,
      effect,
      mode: "autonomous",
      tool,
      span: { file: file.path, line, column: 1, endLine: line, endColumn: 1 },
    });
  };
  const front = wf.front;
  if (!front) return { name, files, bound, diagnostics: wf.diagnostics };
  add("workspace.read", "(reads)", "on");
  for (const r of bashRules(front))
    add("process.exec", `tools.bash ${r.specifier ?? "*"}`, "tools.bash");
  const tools = isObject(front.tools) ? front.tools : {};
  if (Object.hasOwn(tools, "edit")) add("workspace.write", "tools.edit", "tools.edit");
  for (const t of ["web-fetch", "web-search", "playwright"])
    if (Object.hasOwn(tools, t)) add("network.egress", `tools.${t}`, `tools.${t}`);
  const servers = { ...tools, ...(isObject(front["mcp-servers"]) ? front["mcp-servers"] : {}) };
  for (const [server, cfg] of Object.entries(servers)) {
    if (["bash", "edit", "web-fetch", "web-search", "playwright", "cache-memory"].includes(server))
      continue;
    const allowed = isObject(cfg) && Array.isArray(cfg.allowed) ? cfg.allowed.map(String) : ["*"];
    for (const t of allowed) add(`mcp.${server}.${t}`, `${server} ${t}`, `tools.${server}`);
  }
  for (const d of networkOf(front)) add("network.egress", `network ${d}`, "network");
  const outputs = isObject(front["safe-outputs"]) ? front["safe-outputs"] : {};
  for (const o of Object.keys(outputs))
    for (const area of own(OUTPUT_AREA, o) ?? ["issues"])
      add(`github.${area}.write`, `safe-outputs.${o}`, `safe-outputs.${o}`);
  const perms = scopes(front.permissions);
  for (const [s, level] of perms ??
    new Map([
      ["contents", "write"],
      ["issues", "write"],
      ["pull-requests", "write"],
    ]))
    if (level === "write") add(`github.${s}.write`, `permissions.${s}: write`, `permissions.${s}`);
  return { name, files, bound, diagnostics: wf.diagnostics };
}

/**
 * A workflow's plan: its own front matter's changes, and those of every file either side
 * imports (each a change of this workflow, at the imported file's line).
 */
export function planGhAw(
  agent: string,
  base: readonly HostFile[],
  head: readonly HostFile[],
): HostPlan {
  const main = (files: readonly HostFile[]) => {
    const f = files.find((x) => isGhAwPath(roleOf(x)));
    return f ? readOnce(f) : undefined;
  };
  const before = main(base);
  const after = main(head);
  const sb = before ? importsOf(before, base) : new Map<string, GhAwWorkflow>();
  const sh = after ? importsOf(after, head) : new Map<string, GhAwWorkflow>();
  const shared = [...new Set([...sb.keys(), ...sh.keys()])].sort();
  return {
    agent,
    files: head.map((f) => f.path),
    changes: [
      ...ghAwChanges(before, after),
      ...shared.flatMap((p) => importChanges(sb.get(p), sh.get(p))),
    ],
    diagnostics: [...(after?.diagnostics ?? []), ...[...sh.values()].flatMap((w) => w.diagnostics)],
  };
}
