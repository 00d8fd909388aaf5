/**
 * `terfyn apply`: record the current resources and effect bounds in the state file.
 * Refuses (exit 1, state untouched) when the project has errors, the plan violates policy, or
 * `--plan-hash` names a different plan than the one recomputed now.
 */
import { relative } from "node:path";
import { writeStateFile } from "../../adapters/fs/state-file.ts";
import { buildState } from "../../core/plan/state.ts";
import { renderPlanText } from "../../core/render/plan-text.ts";
import { escapeTerminalText } from "../../core/render/terminal-text.ts";
import { plural } from "../../core/words.ts";
import { parseFlags } from "../args.ts";
import { refuseStdinDirectories, STDIN } from "../file-args.ts";
import { type CliIo, UsageError, UserError, useColor } from "../io.ts";
import { VERSION } from "../version.ts";
import {
  loadPrior,
  loadProject,
  planAgainst,
  printDiagnostics,
  statePath,
} from "./project-context.ts";

export const APPLY_HELP = `Usage: terfyn apply --project DIR [--auto-approve] [--plan-hash sha256:…] [--state FILE]

Record the project's resources and effect bounds in the state file, so later plans show what
changed since. Prints the plan first. Needs one of:
  --plan-hash H   apply only if the recomputed plan's hash is exactly H (from \`terfyn plan\`);
                  otherwise refuse and leave the state untouched
  --auto-approve  apply whatever the plan is
or, on a terminal, typing "yes" at the prompt.

Options:
  --project DIR   the directory holding terfyn.yaml (default: .)
  --state FILE    the state file (default: the project's spec.state, .terfyn/state.json)
  -h, --help      show this help
`;

export async function applyCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags("apply", argv, {
    project: { type: "string" },
    state: { type: "string" },
    "auto-approve": { type: "boolean" },
    "plan-hash": { type: "string" },
  });
  if (values.help) {
    io.stdout(APPLY_HELP);
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError(`apply: unexpected argument \`${positionals[0]}\` (use --project DIR)`);
  const wantedHash = values["plan-hash"] as string | undefined;
  if (wantedHash !== undefined && !/^sha256:[0-9a-f]{64}$/.test(wantedHash)) {
    throw new UsageError(
      "apply: --plan-hash takes a plan hash as printed by `terfyn plan`: sha256: and 64 hex digits",
    );
  }

  refuseStdinDirectories("apply", {
    "--project": { value: values.project, what: "the directory holding terfyn.yaml" },
  });
  // apply writes the state file it compares with: standard input cannot be written back.
  if (values.state === STDIN)
    throw new UsageError(
      "apply: --state -: apply reads the state file and then writes it, and standard input cannot be written; name the state file (`terfyn plan --state -` reads one from standard input)",
    );
  const ctx = await loadProject(io, values.project as string | undefined);
  const prior = await loadPrior(io, ctx, { state: values.state as string | undefined });
  const result = await planAgainst(io, ctx, prior);
  if (!result.ok) {
    printDiagnostics(io, ctx, ctx.diagnostics);
    io.stderr(
      `terfyn apply: ${escapeTerminalText(ctx.where)} has ${plural(result.blocking.length, "error")}; nothing was applied\n`,
    );
    return 1;
  }
  const plan = result.plan;
  io.stdout(renderPlanText(plan, { color: useColor(io), priorName: prior.name }));
  if (plan.summary.forbidden) {
    io.stderr("terfyn apply: the plan violates policy; nothing was applied\n");
    return 1;
  }
  if (wantedHash !== undefined && wantedHash !== plan.hash) {
    io.stderr(
      `terfyn apply: the plan changed since it was approved; nothing was applied\n  approved: ${wantedHash}\n  current:  ${plan.hash}\nReview the new plan and approve its hash.\n`,
    );
    return 1;
  }
  const path = statePath(io, ctx, values.state as string | undefined);
  if (!plan.summary.has_changes && prior.state) {
    io.stdout("\nApply complete: no changes; the state is up to date.\n");
    return 0;
  }
  if (wantedHash === undefined && !values["auto-approve"]) {
    if (!io.prompt) {
      throw new UserError(
        "no terminal to confirm on: pass --plan-hash with the hash you reviewed, or --auto-approve",
      );
    }
    const answer = await io.prompt("\nApply this plan? Only 'yes' is accepted: ");
    if (answer.trim() !== "yes") {
      io.stderr("terfyn apply: not applied\n");
      return 1;
    }
  }
  const state = buildState({
    project: plan.project,
    terfynVersion: VERSION,
    previousSerial: prior.state?.serial ?? 0,
    planHash: plan.hash,
    appliedAt: (io.now?.() ?? new Date()).toISOString(),
    resources: result.resources,
  });
  await writeStateFile(path, state);
  const s = plan.summary;
  io.stdout(
    `\nApply complete: ${s.add} added, ${s.change} changed, ${s.destroy} destroyed. State: ${relative(io.cwd, path) || path} (serial ${state.serial}).\n`,
  );
  return 0;
}
