/**
 * `terfyn runs list|show`: the runs under a project's runs directory, and one run's state and
 * journal at a glance.
 */
import { readdir } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { RunStore } from "../../adapters/fs/run-store.ts";
import { parseFlags } from "../args.ts";
import { type CliIo, UsageError } from "../io.ts";
import { loadProject } from "./project-context.ts";

export const RUNS_HELP = `Usage: terfyn runs list [--project DIR]
       terfyn runs show RUN_DIR

list: every run under the project's runs directory: id, workflow, status, iteration, start.
show: one run's state (status, iteration, cursor, what it awaits) and a count of its journal
events by type, then its last events.

Options:
  --project DIR   the directory holding terfyn.yaml (default: .)
  -h, --help      show this help
`;

export async function runsCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags("runs", argv, { project: { type: "string" } });
  if (values.help || positionals.length === 0) {
    io.stdout(RUNS_HELP);
    return values.help ? 0 : 1;
  }
  const [sub, arg] = positionals;
  if (sub === "list") {
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
    if (names.length === 0) {
      io.stdout(`no runs in ${relative(io.cwd, root) || root}\n`);
      return 0;
    }
    for (const name of names) {
      try {
        const s = await new RunStore(join(root, name)).readState();
        io.stdout(
          `${s.run_id}  ${s.workflow}  ${s.status}  iteration ${s.iteration}  started ${s.started_at}\n`,
        );
      } catch {
        io.stdout(`${name}  (not a run directory)\n`);
      }
    }
    return 0;
  }
  if (sub === "show") {
    if (arg === undefined) throw new UsageError("runs show: name the run directory");
    const store = new RunStore(resolve(io.cwd, arg));
    const s = await store.readState();
    const events = await store.readJournal();
    const counts = new Map<string, number>();
    for (const e of events) counts.set(e.type, (counts.get(e.type) ?? 0) + 1);
    const lines = [
      `run ${s.run_id}: workflow ${s.workflow}`,
      `status: ${s.status}`,
      `iteration: ${s.iteration}`,
      `cursor: ${s.cursor || "(start)"}`,
      `ir: ${s.ir_hash}`,
      `started: ${s.started_at}; updated: ${s.updated_at}`,
    ];
    if (s.awaiting) lines.push(`awaiting approval: ${s.awaiting.label} (${s.awaiting.hash})`);
    if (s.error) lines.push(`error: ${s.error}`);
    lines.push(
      `journal: ${events.length} events (${[...counts].map(([t, n]) => `${t} ${n}`).join(", ")})`,
    );
    for (const e of events.slice(-8)) lines.push(`  ${JSON.stringify(e).slice(0, 160)}`);
    io.stdout(`${lines.join("\n")}\n`);
    return 0;
  }
  throw new UsageError(`runs: unknown subcommand \`${sub}\` (list or show)`);
}
