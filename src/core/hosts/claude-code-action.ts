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
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument, type YAMLMap } from "yaml";
import type { EffectBoundEntry } from "../analysis/effect-bound.ts";
import { type Diagnostic, diagnostic, type Span } from "../diagnostics.ts";
import type { GrantMode } from "../model/project.ts";
import { type ClaudeRule, parseClaudeRule, type RuleList, ruleChanges } from "./claude-rules.ts";
import { type HostChange, MODE_RANK } from "./claude-settings.ts";
import { effectOfTool, type HostAgent } from "./host-agents.ts";
import type { HostFile } from "./json-nodes.ts";

export const ACTION_AGENT_PREFIX = "Workflow/claude-code-action/";

/** Whether a path is a GitHub workflow file (where claude-code-action steps live). */
export function isWorkflowPath(path: string): boolean {
  return /^\.github\/workflows\/[^/]+\.ya?ml$/.test(path);
}

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
  "github_token",
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
  typeof uses === "string" && /^anthropics\/claude-code(-base)?-action(@|\/|$)/.test(uses.trim());

export function readActionWorkflow(file: HostFile): ActionWorkflow {
  const lc = new LineCounter();
  const doc = parseDocument(file.text, { lineCounter: lc, uniqueKeys: true });
  const out: ActionWorkflow = { path: file.path, steps: [], events: new Map(), diagnostics: [] };
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
  const str = (n: unknown): string | undefined =>
    isScalar(n) &&
    (typeof n.value === "string" || typeof n.value === "number" || typeof n.value === "boolean")
      ? String(n.value)
      : undefined;
  const get = (m: unknown, key: string): Node | undefined =>
    isMap(m) ? ((m as YAMLMap).get(key, true) as Node | undefined) : undefined;
  // `on` is read by YAML 1.1 parsers as true; GitHub reads it as a key.
  const on =
    get(root, "on") ??
    (root.items.find((p) => isScalar(p.key) && p.key.value === true)?.value as Node | undefined);
  if (isScalar(on)) out.events.set(String(on.value), lineOf(on));
  else if (isSeq(on)) for (const e of on.items) out.events.set(String(str(e)), lineOf(e as Node));
  else if (isMap(on))
    for (const p of on.items) out.events.set(String(str(p.key)), lineOf(p.key as Node));
  const workflowPermissions = get(root, "permissions");
  const jobs = get(root, "jobs");
  if (!isMap(jobs)) return out;
  for (const job of jobs.items) {
    const jobName = String(str(job.key));
    const steps = get(job.value, "steps");
    if (!isSeq(steps)) continue;
    const permNode = get(job.value, "permissions") ?? workflowPermissions;
    steps.items.forEach((s, i) => {
      if (!isClaudeStep(str(get(s, "uses")))) return;
      const id = str(get(s, "id")) ?? str(get(s, "name")) ?? String(i);
      const step: ActionStep = {
        key: `jobs.${jobName}.steps.${id}`,
        line: lineOf(get(s, "uses")),
        rules: { allow: [], ask: [], deny: [] },
        mode: undefined,
        inputs: new Map(),
        permissions: permissionsOf(permNode, str, lineOf),
        permissionsLine: lineOf(permNode),
      };
      const withNode = get(s, "with");
      if (isMap(withNode))
        for (const p of withNode.items) {
          const key = String(str(p.key));
          const value = str(p.value) ?? "";
          const line = lineOf(p.value as Node) || lineOf(p.key as Node);
          if (key === "claude_args")
            readClaudeArgs(value, line, file.text, step, out.diagnostics, file.path);
          else if (key === "allowed_tools" || key === "disallowed_tools")
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

function readClaudeArgs(
  value: string,
  line: number,
  text: string,
  step: ActionStep,
  diagnostics: Diagnostic[],
  path: string,
) {
  const uncommented = value
    .split("\n")
    .filter((l) => !l.trim().startsWith("#"))
    .join("\n");
  const args = parseShell(uncommented).filter((a): a is string => typeof a === "string");
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (!arg.startsWith("--")) continue;
    const flag = arg.slice(2);
    const list = ACCUMULATING.get(flag);
    if (list) {
      while (i + 1 < args.length && !(args[i + 1] as string).startsWith("--")) {
        i++;
        for (const t of (args[i] as string)
          .split(",")
          .map((x) => x.trim())
          .filter(Boolean))
          addRule(step, list, t, lineAt(text, line, t), diagnostics, path);
      }
    } else if (flag === "permission-mode") {
      const next = args[i + 1];
      if (next !== undefined && !next.startsWith("--")) {
        step.mode = { value: next, line: lineAt(text, line, "--permission-mode") };
        i++;
      }
    } else if (flag === "dangerously-skip-permissions") {
      step.mode = {
        value: "bypassPermissions",
        line: lineAt(text, line, "--dangerously-skip-permissions"),
      };
    } else {
      const next = args[i + 1];
      const takes = next !== undefined && !next.startsWith("--");
      const prior = step.inputs.get(`claude_args --${flag}`)?.value;
      step.inputs.set(`claude_args --${flag}`, {
        value: `${prior !== undefined ? `${prior}\u0000` : ""}${takes ? next : ""}`,
        line: lineAt(text, line, `--${flag}`),
      });
      if (takes) i++;
    }
  }
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
      const ra = MODE_RANK[ma as keyof typeof MODE_RANK];
      const rb = MODE_RANK[mb as keyof typeof MODE_RANK];
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
      const rx = PERMISSION_RANK[x];
      const ry = PERMISSION_RANK[y];
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
