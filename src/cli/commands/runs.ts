/**
 * `terfyn runs list|show`: the runs under a project's runs directory, and one run's state and
 * journal at a glance; `--format json` (or `--json`) for the same as a versioned document.
 * Everything printed as text comes from the run (model output, tool input) and is escaped.
 */
import { readdir } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { RunStore } from "../../adapters/fs/run-store.ts";
import type { JournalEvent } from "../../core/engine/journal.ts";
import { renderApprovalSubject } from "../../core/render/approval-text.ts";
import { escapeTerminalText } from "../../core/render/terminal-text.ts";
import { parseFlags } from "../args.ts";
import { refuseStdinDirectories } from "../file-args.ts";
import { type CliIo, UsageError } from "../io.ts";
import { loadProject } from "./project-context.ts";

export const RUNS_HELP = `Usage: terfyn runs list [--project DIR] [--format text|json]
       terfyn runs show RUN_DIR [--format text|json]

list: every run under the project's runs directory: id, workflow, status, iteration, start.
show: one run's state (status, iteration, cursor), what it awaits shown whole (a gated call's
operation and every input field; an approve statement's value; a long value folded with its
size and sha256), a count of its journal events by type, then its last events.
With --format json: the same as a document with format_version "1"; show's holds the state,
the awaited item and every journal event in full.

Options:
  --project DIR     the directory holding terfyn.yaml (default: .)
  --format FORMAT   text (default) or json
  --json            same as --format json
  -h, --help        show this help
`;

/** Journal events shown at the end of `runs show`, and how much of each. */
const TAIL_EVENTS = 8;
const TAIL_EVENT_CHARS = 160;

export async function runsCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags("runs", argv, {
    project: { type: "string" },
    format: { type: "string" },
    json: { type: "boolean" },
  });
  if (values.help || positionals.length === 0) {
    io.stdout(RUNS_HELP);
    return values.help ? 0 : 1;
  }
  const format = values.json ? "json" : ((values.format as string | undefined) ?? "text");
  if (format !== "text" && format !== "json")
    throw new UsageError(`runs: --format must be text or json, not \`${format}\``);
  const [sub, arg, extra] = positionals;
  refuseStdinDirectories(`runs ${sub}`, {
    "--project": { value: values.project, what: "the directory holding terfyn.yaml" },
    RUN_DIR: { value: sub === "show" ? arg : undefined, what: "the run directory to show" },
  });
  if (sub === "list") {
    if (arg !== undefined) throw new UsageError(`runs list: unexpected argument \`${arg}\``);
    const ctx = await loadProject(io, values.project as string | undefined);
    const root = resolve(ctx.root, ctx.validation.project.settings.runsPath);
    let names: string[] = [];
    try {
      names = (await readdir(root, { withFileTypes: true }))
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort();
    } catch {
      names = [];
    }
    const runs: Record<string, unknown>[] = [];
    const others: string[] = [];
    for (const name of names) {
      try {
        const s = await new RunStore(join(root, name)).readState();
        runs.push({
          dir: join(root, name),
          run_id: s.run_id,
          workflow: s.workflow,
          status: s.status,
          iteration: s.iteration,
          started_at: s.started_at,
          updated_at: s.updated_at,
          ...(s.awaiting ? { awaiting: { hash: s.awaiting.hash, label: s.awaiting.label } } : {}),
          ...(s.error ? { error: s.error } : {}),
        });
      } catch {
        others.push(join(root, name));
      }
    }
    if (format === "json") {
      io.stdout(
        `${JSON.stringify({ format_version: "1", runs_dir: root, runs, not_runs: others }, null, 2)}\n`,
      );
      return 0;
    }
    if (names.length === 0) {
      io.stdout(`no runs in ${escapeTerminalText(relative(io.cwd, root) || root)}\n`);
      return 0;
    }
    for (const r of runs) {
      io.stdout(
        `${escapeTerminalText(`${r.run_id}  ${r.workflow}  ${r.status}  iteration ${r.iteration}  started ${r.started_at}`)}\n`,
      );
    }
    for (const o of others)
      io.stdout(`${escapeTerminalText(relative(root, o))}  (not a run directory)\n`);
    return 0;
  }
  if (sub === "show") {
    if (arg === undefined) throw new UsageError("runs show: name the run directory");
    if (extra !== undefined) throw new UsageError(`runs show: unexpected argument \`${extra}\``);
    const dir = resolve(io.cwd, arg);
    const store = new RunStore(dir);
    const s = await store.readState();
    const events = await store.readJournal();
    const counts = new Map<string, number>();
    for (const e of events) counts.set(e.type, (counts.get(e.type) ?? 0) + 1);
    const awaited = s.awaiting
      ? (s.awaiting.subject ?? subjectFromJournal(events, s.awaiting))
      : undefined;
    if (format === "json") {
      io.stdout(
        `${JSON.stringify(
          {
            format_version: "1",
            dir,
            state: s,
            awaiting: s.awaiting
              ? { ...s.awaiting, ...(awaited ? { subject: awaited } : {}) }
              : null,
            journal: { events: events.length, by_type: Object.fromEntries(counts) },
            events,
          },
          null,
          2,
        )}\n`,
      );
      return 0;
    }
    const shownDir = relative(io.cwd, dir) || dir;
    const lines = [
      ...(s.unconfined
        ? [
            "UNCONFINED: a session of this run ran its tools' commands without the sandbox (--unconfined), with the user's own powers, files and network",
          ]
        : []),
      `run ${s.run_id}: workflow ${s.workflow}`,
      `status: ${s.status}`,
      `iteration: ${s.iteration}`,
      `cursor: ${s.cursor || "(start)"}`,
      `ir: ${s.ir_hash}`,
      `started: ${s.started_at}; updated: ${s.updated_at}`,
    ].map((l) => escapeTerminalText(l));
    if (s.awaiting) {
      lines.push(
        `awaiting approval: ${escapeTerminalText(s.awaiting.label)} (${escapeTerminalText(s.awaiting.hash)})`,
      );
      if (awaited) lines.push(...renderApprovalSubject(awaited, { runDir: shownDir }));
      else
        lines.push(
          "  (this run was paused before Terfyn recorded what is awaited; see its journal)",
        );
      lines.push(
        `  approve with: terfyn approve --run ${escapeTerminalText(shownDir)} --hash ${escapeTerminalText(s.awaiting.hash)}`,
      );
    }
    if (s.error) lines.push(`error: ${escapeTerminalText(s.error)}`);
    lines.push(
      `journal: ${events.length} events (${escapeTerminalText([...counts].map(([t, n]) => `${t} ${n}`).join(", "))})`,
    );
    for (const e of events.slice(-TAIL_EVENTS)) {
      const text = JSON.stringify(e);
      lines.push(
        `  ${escapeTerminalText(text.slice(0, TAIL_EVENT_CHARS))}${text.length > TAIL_EVENT_CHARS ? `… (${text.length - TAIL_EVENT_CHARS} more characters: --format json shows every event whole)` : ""}`,
      );
    }
    io.stdout(`${lines.join("\n")}\n`);
    return 0;
  }
  throw new UsageError(`runs: unknown subcommand \`${sub}\` (list or show)`);
}

/** The subject of the last matching approval request, for a state written without one. */
function subjectFromJournal(
  events: readonly JournalEvent[],
  awaiting: { hash: string; step: string },
) {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e?.type === "approval.requested" && e.hash === awaiting.hash && e.step === awaiting.step)
      return e.subject;
  }
  return undefined;
}
