/**
 * claude-code-action steps in a repository's GitHub workflows (`.github/workflows/*.yml`): each
 * workflow file with such a step is the agent `Workflow/claude-code-action/<file>`, whose
 * authority is what its steps let Claude do and what the job's token may write. Read as the
 * action reads its inputs: `claude_args` split as a shell would (shell-quote, lines starting
 * with `#` dropped), `--allowedTools`/`--allowed-tools` and `--disallowedTools`/
 * `--disallowed-tools` taking every value up to the next flag, each split on commas, together
 * with the `allowed_tools`/`disallowed_tools` inputs; `--permission-mode`, and
 * `--dangerously-skip-permissions` as `bypassPermissions`. The workflow itself is YAML (the
 * `yaml` package, with lines).
 *
 * A change is ordered, never compared as text: rules by containment (claude-rules.ts), the mode
 * by the modes' order, the job's `permissions` scope by scope (`none` < `read` < `write`; no
 * `permissions` at all is the repository's default token, taken as write-all), the events that
 * start it (an event added widens), a step added (widens) or removed (narrows); inputs that only
 * shape the conversation (`prompt`, `model`, triggers' phrases, …) are neutral, and any other
 * input changed widens: Terfyn cannot show it does not. Pure.
 */

import { parse as parseShell } from "shell-quote";
import {
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  parseDocument,
  type YAMLMap,
} from "yaml";
import type { EffectBoundEntry } from "../analysis/effect-bound.ts";
import { type Diagnostic, diagnostic, type Span } from "../diagnostics.ts";
import type { GrantMode } from "../model/project.ts";
import {
  type ClaudeRule,
  parseClaudeRule,
  type RuleList,
  ruleChanges,
  splitToolList,
} from "./claude-rules.ts";
import { type HostChange, MODE_RANK } from "./claude-settings.ts";
import { effectOfTool, type HostAgent } from "./host-agents.ts";
import type { HostFile } from "./json-nodes.ts";
import { own } from "./json-nodes.ts";

export const ACTION_AGENT_PREFIX = "Workflow/claude-code-action/";

export const actionAgentName = (path: string) =>
  `${ACTION_AGENT_PREFIX}${path.slice(path.lastIndexOf("/") + 1)}`;

interface Located<T> {
  value: T;
  line: number;
}

export interface ActionStep {
  /** `jobs.<job>.steps.<id, name or index>`. */
  key: string;
  line: number;
  rules: Record<RuleList, (ClaudeRule & { line: number })[]>;
  mode: Located<string> | undefined;
  /** Every other input, as written. */
  inputs: Map<string, Located<string>>;
  /** The job's token scopes (`contents` → `write`), or undefined for the default token. */
  permissions: Map<string, Located<string>> | undefined;
  permissionsLine: number;
}

export interface ActionWorkflow {
  path: string;
  steps: ActionStep[];
  /** The events that start the workflow. */
  events: Map<string, number>;
  /** Each event's filter as written (`types`, `branches`, …), as JSON; null for none. */
  filters: Map<string, string>;
  diagnostics: Diagnostic[];
}

const NEUTRAL_INPUTS = new Set([
  "prompt",
  "direct_prompt",
  "override_prompt",
  "custom_instructions",
  "model",
  "fallback_model",
  "anthropic_model",
  "trigger_phrase",
  "assignee_trigger",
  "label_trigger",
  "branch_prefix",
  "base_branch",
  "use_sticky_comment",
  "track_progress",
  "timeout_minutes",
  "max_turns",
  "anthropic_api_key",
  "claude_code_oauth_token",
  "use_bedrock",
  "use_vertex",
  "use_foundry",
  "show_full_output",
  "display_report",
  "use_commit_signing",
]);

const PERMISSION_RANK: Record<string, number> = { none: 0, read: 1, write: 2 };
const SCOPES = [
  "actions",
  "attestations",
  "checks",
  "contents",
  "deployments",
  "discussions",
  "id-token",
  "issues",
  "models",
  "packages",
  "pages",
  "pull-requests",
  "repository-projects",
  "security-events",
  "statuses",
];

/** Whether a step runs claude-code-action (or its base action), at any ref. */
const isClaudeStep = (uses: unknown) =>
  typeof uses === "string" && /^anthropics\/claude-code(-base)?-action(@|\/|$)/i.test(uses.trim());

export function readActionWorkflow(file: HostFile): ActionWorkflow {
  const lc = new LineCounter();
  const doc = parseDocument(file.text, { lineCounter: lc, uniqueKeys: true });
  const out: ActionWorkflow = {
    path: file.path,
    steps: [],
    events: new Map(),
    filters: new Map(),
    diagnostics: [],
  };
  const lineOf = (n: Node | null | undefined) => (n?.range ? lc.linePos(n.range[0]).line : 1);
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    const line = e?.linePos?.[0]?.line ?? 1;
    out.diagnostics.push(
      diagnostic(
        "TF6001",
        { file: file.path, line, column: e?.linePos?.[0]?.col ?? 1, endLine: line, endColumn: 2 },
        `${file.path} is not valid YAML (${e?.message.split("\n")[0]}): GitHub will not run it, and a plan cannot say what its steps allow`,
      ),
    );
    return out;
  }
  const root = doc.contents;
  if (!isMap(root)) return out;
  // GitHub resolves anchors and aliases: a value given through `*name` is that value.
  const deref = (n: unknown): unknown => (isAlias(n) ? n.resolve(doc) : n);
  const str = (x: unknown): string | undefined => {
    const n = deref(x);
    return isScalar(n) &&
      (typeof n.value === "string" || typeof n.value === "number" || typeof n.value === "boolean")
      ? String(n.value)
      : undefined;
  };
  const get = (x: unknown, key: string): Node | undefined => {
    const m = deref(x);
    return isMap(m) ? (deref((m as YAMLMap).get(key, true)) as Node | undefined) : undefined;
  };
  // `on` is read by YAML 1.1 parsers as true; GitHub reads it as a key.
  const on =
    get(root, "on") ??
    (root.items.find((p) => isScalar(p.key) && p.key.value === true)?.value as Node | undefined);
  if (isScalar(on)) out.events.set(String(on.value), lineOf(on));
  else if (isSeq(on)) for (const e of on.items) out.events.set(String(str(e)), lineOf(e as Node));
  else if (isMap(on))
    for (const p of on.items) {
      out.events.set(String(str(p.key)), lineOf(p.key as Node));
      const v = deref(p.value);
      out.filters.set(
        String(str(p.key)),
        JSON.stringify(isMap(v) ? (v as YAMLMap).toJSON() : null),
      );
    }
  const workflowPermissions = get(root, "permissions");
  const jobs = get(root, "jobs");
  if (!isMap(jobs)) return out;
  for (const job of jobs.items) {
    const jobName = String(str(job.key));
    const steps = get(job.value, "steps");
    if (!isSeq(steps)) continue;
    const permNode = get(job.value, "permissions") ?? workflowPermissions;
    // Only an `id` is unique in a job: a name met again is told apart by its order.
    const names = new Map<string, number>();
    steps.items.forEach((item, i) => {
      const s = deref(item);
      const uses = str(get(s, "uses"));
      if (!isClaudeStep(uses)) return;
      const name = str(get(s, "name"));
      const seen = name === undefined ? 0 : (names.get(name) ?? 0);
      if (name !== undefined) names.set(name, seen + 1);
      const id =
        str(get(s, "id")) ??
        (name !== undefined ? (seen > 0 ? `${name}#${seen + 1}` : name) : String(i));
      // Before v1 the action read `allowed_tools` and `disallowed_tools`; from v1 on it ignores
      // them. An allow it may read counts (fail closed); a deny counts only where it is read.
      const legacy = /@(v0([.]|$)|beta$)/i.test(uses ?? "");
      const step: ActionStep = {
        key: `jobs.${jobName}.steps.${id}`,
        line: lineOf(get(s, "uses")),
        rules: { allow: [], ask: [], deny: [] },
        mode: undefined,
        inputs: new Map(),
        permissions: permissionsOf(permNode, str, lineOf),
        permissionsLine: lineOf(permNode),
      };
      // What gates the step or shapes its environment: compared as inputs Terfyn cannot order.
      for (const [what, node] of [
        ["(job if)", get(job.value, "if")],
        ["(step if)", get(s, "if")],
        ["(step env)", get(s, "env")],
        ["(job env)", get(job.value, "env")],
      ] as const)
        if (node !== undefined)
          step.inputs.set(what, {
            value: JSON.stringify(isMap(node) ? (node as YAMLMap).toJSON() : (str(node) ?? null)),
            line: lineOf(node),
          });
      const withNode = get(s, "with");
      if (isMap(withNode))
        for (const p of withNode.items) {
          const key = String(str(p.key));
          const value = str(p.value) ?? "";
          const line = lineOf(p.value as Node) || lineOf(p.key as Node);
          if (key === "claude_args")
            readClaudeArgs(value, line, file.text, step, out.diagnostics, file.path);
          else if (key === "allowed_tools" || (key === "disallowed_tools" && legacy))
            for (const t of value
              .split(/[,\n]/)
              .map((x) => x.trim())
              .filter(Boolean))
              addRule(
                step,
                key === "allowed_tools" ? "allow" : "deny",
                t,
                lineAt(file.text, line, t),
                out.diagnostics,
                file.path,
              );
          else step.inputs.set(key, { value, line });
        }
      out.steps.push(step);
    });
  }
  return out;
}

function permissionsOf(
  n: Node | undefined,
  str: (n: unknown) => string | undefined,
  lineOf: (n: Node | null | undefined) => number,
): Map<string, Located<string>> | undefined {
  if (n === undefined) return undefined;
  const out = new Map<string, Located<string>>();
  const all = str(n);
  if (all !== undefined) {
    const level = all === "write-all" ? "write" : all === "read-all" ? "read" : "none";
    for (const s of SCOPES) out.set(s, { value: level, line: lineOf(n) });
    return out;
  }
  if (isMap(n))
    for (const p of n.items)
      out.set(String(str(p.key)), { value: String(str(p.value)), line: lineOf(p.key as Node) });
  return out;
}

/** The line at or after `from` whose text holds `needle` (a rule inside a block scalar). */
function lineAt(text: string, from: number, needle: string): number {
  const lines = text.split("\n");
  for (let i = from - 1; i < lines.length && i < from + 200; i++)
    if (lines[i]?.includes(needle)) return i + 1;
  return from;
}

function addRule(
  step: ActionStep,
  list: RuleList,
  text: string,
  line: number,
  diagnostics: Diagnostic[],
  path: string,
) {
  const r = parseClaudeRule(text);
  if ("problem" in r) {
    diagnostics.push(
      diagnostic(
        "TF6003",
        { file: path, line, column: 1, endLine: line, endColumn: 2 },
        `${r.problem}; claude-code-action passes it to Claude Code, which skips it`,
      ),
    );
    return;
  }
  step.rules[list].push({ ...r, line });
}

const ACCUMULATING = new Map<string, RuleList>([
  ["allowedTools", "allow"],
  ["allowed-tools", "allow"],
  ["disallowedTools", "deny"],
  ["disallowed-tools", "deny"],
]);

/** The shell's operator characters and the private-use characters they stand in for. */
const META = [..."()|&;<>"].map((c, i) => [c, String.fromCharCode(0xe000 + i)] as const);
const META_HIDE = new Map<string, string>(META);
const META_SHOW = new Map<string, string>(META.map(([c, p]) => [p, c]));

/** What a GitHub expression stands in for until the runner substitutes it. */
const EXPRESSION = "(a value the workflow computes at run time)";

function readClaudeArgs(
  value: string,
  line: number,
  text: string,
  step: ActionStep,
  diagnostics: Diagnostic[],
  path: string,
) {
  // GitHub substitutes `${{ … }}` before the action runs: words nobody can read here (a
  // commenter's text, perhaps). The step is then bounded by nothing: its mode is unknown.
  if (value.includes("${{")) {
    step.mode = { value: EXPRESSION, line: lineAt(text, line, "${{") };
    step.inputs.set("claude_args (a GitHub expression)", { value, line });
  }
  const uncommented = value
    .replace(/\$\{\{[\s\S]*?\}\}/g, "\uE010")
    .split("\n")
    .filter((l) => !l.trim().startsWith("#"))
    .join("\n");
  // As the action does: the shell's operator characters stand in for private-use characters
  // while the words are split (so `Bash(git:*)` stays one word, quoted or not) and are put
  // back after; a glob word is kept as its text.
  let parsed: ReturnType<typeof parseShell>;
  try {
    parsed = parseShell(uncommented.replace(/[()|&;<>]/g, (c) => META_HIDE.get(c) as string));
  } catch (e) {
    step.mode = { value: EXPRESSION, line };
    diagnostics.push(
      diagnostic(
        "TF6001",
        { file: path, line, column: 1, endLine: line, endColumn: 2 },
        `claude_args cannot be split into words (${e instanceof Error ? e.message : String(e)}): what the step allows cannot be known, so it is taken as allowing everything`,
      ),
    );
    return;
  }
  const restore = (w: string) => w.replace(/[\uE000-\uE006]/g, (c) => META_SHOW.get(c) as string);
  const args = parsed.flatMap((a) =>
    typeof a === "string"
      ? [restore(a)]
      : typeof a === "object" && a !== null && "pattern" in a && typeof a.pattern === "string"
        ? [restore(a.pattern)]
        : [],
  );
  let skip = false;
  for (let i = 0; i < args.length; i++) {
    const raw = args[i] as string;
    if (!raw.startsWith("--")) continue;
    // `--flag=value` is `--flag value` to the CLI the action hands the flags to.
    const eq = raw.indexOf("=");
    const flag = eq > 2 ? raw.slice(2, eq) : raw.slice(2);
    const inline = eq > 2 ? raw.slice(eq + 1) : undefined;
    const next = args[i + 1];
    const takesNext =
      inline === undefined && next !== undefined && next !== "" && !next.startsWith("--");
    const list = ACCUMULATING.get(flag);
    if (list) {
      const values: string[] = [];
      if (inline !== undefined) values.push(inline);
      else if (takesNext)
        while (i + 1 < args.length && !(args[i + 1] as string).startsWith("--")) {
          i++;
          values.push(args[i] as string);
        }
      // A word the runner fills in is no rule anyone can read (the mode says so already).
      for (const v of values)
        for (const t of splitToolList(v))
          if (!t.includes("\uE010"))
            addRule(step, list, t, lineAt(text, line, t), diagnostics, path);
    } else if (flag === "permission-mode") {
      const v = inline ?? (takesNext ? next : undefined);
      if (v !== undefined && step.mode?.value !== EXPRESSION)
        step.mode = { value: v, line: lineAt(text, line, "--permission-mode") };
      if (takesNext) i++;
    } else if (flag === "dangerously-skip-permissions") {
      skip = true;
      if (step.mode?.value !== EXPRESSION)
        step.mode = {
          value: "bypassPermissions",
          line: lineAt(text, line, "--dangerously-skip-permissions"),
        };
    } else {
      // Every word up to the next flag: the action accumulates --mcp-config, and the CLI takes
      // several values for --add-dir; a value nobody reads is still compared.
      const values = inline !== undefined ? [inline] : [];
      if (takesNext)
        while (i + 1 < args.length && !(args[i + 1] as string).startsWith("--")) {
          i++;
          values.push(args[i] as string);
        }
      const prior = step.inputs.get(`claude_args --${flag}`)?.value;
      step.inputs.set(`claude_args --${flag}`, {
        value: `${prior !== undefined ? `${prior}\u0000` : ""}${values.join("\u0000")}`,
        line: lineAt(text, line, `--${flag}`),
      });
    }
  }
  // Claude Code gives the skip flag priority over any --permission-mode, wherever it is.
  if (skip && step.mode?.value !== EXPRESSION)
    step.mode = {
      value: "bypassPermissions",
      line: lineAt(text, line, "--dangerously-skip-permissions"),
    };
}

/** Each change of a workflow's claude-code-action steps, with its direction. */
export function actionChanges(
  base: ActionWorkflow | undefined,
  head: ActionWorkflow | undefined,
): HostChange[] {
  const out: HostChange[] = [];
  const path = head?.path ?? base?.path ?? "";
  const row = (
    direction: HostChange["direction"],
    key: string,
    change: HostChange["change"],
    line: number,
    reason: string,
    from = head ?? base,
  ) => out.push({ direction, key, change, file: from?.path ?? path, line, reason });
  const before = new Map((base?.steps ?? []).map((s) => [s.key, s]));
  const after = new Map((head?.steps ?? []).map((s) => [s.key, s]));
  for (const [key, s] of after)
    if (!before.has(key))
      row(
        "widened",
        key,
        "added",
        s.line,
        "a new claude-code-action step: Claude runs with its tools and the job's token",
      );
  for (const [key, s] of before)
    if (!after.has(key))
      row("narrowed", key, "removed", s.line, "the claude-code-action step no longer runs", base);
  for (const [key, h] of after) {
    const b = before.get(key);
    if (!b) continue;
    for (const c of ruleChanges(b.rules, h.rules)) {
      const from = c.change === "added" ? h : b;
      const line = from.rules[c.list].find((r) => r.text === c.rule)?.line ?? from.line;
      out.push({
        direction: c.direction,
        rule: c.rule,
        list: c.list,
        change: c.change,
        file: (c.change === "added" ? head : base)?.path ?? path,
        line,
        reason: `${key}: ${c.reason}`,
      });
    }
    const ma = b.mode?.value ?? "default";
    const mb = h.mode?.value ?? "default";
    if (ma !== mb) {
      const ra = own(MODE_RANK, ma);
      const rb = own(MODE_RANK, mb);
      const narrowed = ra !== undefined && rb !== undefined && rb < ra;
      row(
        narrowed ? "narrowed" : "widened",
        `${key} --permission-mode`,
        h.mode ? (b.mode ? "changed" : "added") : "removed",
        (h.mode ?? b.mode)?.line ?? h.line,
        `Claude runs in ${mb} instead of ${ma}`,
      );
    }
    for (const k of [...new Set([...b.inputs.keys(), ...h.inputs.keys()])].sort()) {
      const x = b.inputs.get(k);
      const y = h.inputs.get(k);
      if (x?.value === y?.value) continue;
      const name = k.replace(/^claude_args --/, "");
      const neutral =
        NEUTRAL_INPUTS.has(k) ||
        [
          "model",
          "max-turns",
          "system-prompt",
          "append-system-prompt",
          "fallback-model",
          "json-schema",
          "output-format",
          "verbose",
        ].includes(name);
      row(
        neutral ? "neutral" : "widened",
        `${key}.${k}`,
        y === undefined ? "removed" : x === undefined ? "added" : "changed",
        (y ?? x)?.line ?? h.line,
        neutral
          ? "shapes the conversation, not what Claude may do"
          : `${name} changed: Terfyn cannot show it does not widen what the step may do`,
        y ? head : base,
      );
    }
    // The job's token, scope by scope; no permissions block is the default token (write-all).
    const scopes = [
      ...new Set([...SCOPES, ...(b.permissions?.keys() ?? []), ...(h.permissions?.keys() ?? [])]),
    ].sort();
    for (const scope of scopes) {
      const x = b.permissions ? (b.permissions.get(scope)?.value ?? "none") : "write";
      const y = h.permissions ? (h.permissions.get(scope)?.value ?? "none") : "write";
      if (x === y) continue;
      const rx = own(PERMISSION_RANK, x);
      const ry = own(PERMISSION_RANK, y);
      const narrowed = rx !== undefined && ry !== undefined && ry < rx;
      row(
        narrowed ? "narrowed" : "widened",
        `${key} permissions.${scope}`,
        "changed",
        h.permissions?.get(scope)?.line ?? h.permissionsLine,
        `the job's token: ${scope} ${x} -> ${y}${h.permissions ? "" : " (no permissions block: the repository's default token)"}`,
      );
    }
  }
  if (head && head.steps.length > 0 && base && base.steps.length > 0) {
    for (const [event, line] of head.events)
      if (!base.events.has(event))
        row(
          "widened",
          `on.${event}`,
          "added",
          line,
          "a new event starts the workflow that runs Claude",
        );
    for (const [event, line] of head.events)
      if (
        base.events.has(event) &&
        (base.filters.get(event) ?? "null") !== (head.filters.get(event) ?? "null")
      )
        row(
          "widened",
          `on.${event}`,
          "changed",
          line,
          "what starts it changed (a filter added, dropped or changed): Terfyn cannot order it",
        );
    for (const [event, line] of base.events)
      if (!head.events.has(event))
        row("narrowed", `on.${event}`, "removed", line, "an event no longer starts it", base);
  }
  return out;
}

/** A workflow file's claude-code-action agent, or undefined when it runs no such step. */
export function actionAgent(file: HostFile): HostAgent | undefined {
  const wf = readActionWorkflow(file);
  if (wf.steps.length === 0 && wf.diagnostics.length === 0) return undefined;
  const name = actionAgentName(file.path);
  const bound: EffectBoundEntry[] = [];
  const span = (line: number): Span => ({
    file: file.path,
    line,
    column: 1,
    endLine: line,
    endColumn: 1,
  });
  const add = (effect: string | undefined, mode: GrantMode, tool: string, line: number) => {
    if (effect) bound.push({ agent: name, effect, mode, tool, span: span(line) });
  };
  for (const s of wf.steps) {
    const mode = s.mode?.value ?? "default";
    const all = !["plan", "default", "acceptEdits", "dontAsk"].includes(mode);
    for (const r of s.rules.allow)
      if (!s.rules.deny.some((d) => d.text === r.text))
        add(effectOfTool(r.tool), "autonomous", `${s.key} allow ${r.text}`, r.line);
    add("workspace.read", "autonomous", `${s.key} (reads)`, s.line);
    if (all || mode === "acceptEdits")
      add(
        "workspace.write",
        "autonomous",
        `${s.key} --permission-mode ${mode}`,
        s.mode?.line ?? s.line,
      );
    if (all) {
      add(
        "process.exec",
        "autonomous",
        `${s.key} --permission-mode ${mode}`,
        s.mode?.line ?? s.line,
      );
      add(
        "network.egress",
        "autonomous",
        `${s.key} --permission-mode ${mode}`,
        s.mode?.line ?? s.line,
      );
    }
    const perms =
      s.permissions ?? new Map(SCOPES.map((x) => [x, { value: "write", line: s.line }]));
    for (const [scope, p] of perms)
      if (p.value === "write")
        add(`github.${scope}.write`, "autonomous", `${s.key} permissions.${scope}: write`, p.line);
  }
  return { name, files: [file], bound, diagnostics: wf.diagnostics };
}
