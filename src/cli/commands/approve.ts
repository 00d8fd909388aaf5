/**
 * `terfyn approve --run DIR --hash H`: records an approval for what a paused run awaits.
 * Only the exact hash the run is waiting for is recorded; anything else records nothing.
 */
import { existsSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { ReviewRunStore } from "../../adapters/fs/review-run-store.ts";
import { RunStore } from "../../adapters/fs/run-store.ts";
import { renderApprovalSubject } from "../../core/render/approval-text.ts";
import { escapeTerminalText } from "../../core/render/terminal-text.ts";
import { parseFlags } from "../args.ts";
import { type CliIo, UsageError, UserError } from "../io.ts";
import { takeRunLock } from "./run-directory.ts";

export const APPROVE_HELP = `Usage: terfyn approve --run RUN_DIR --hash sha256:…

Approve what a paused run is waiting for (a gated tool call, or an approve statement's value),
named by its content hash as \`terfyn run\` printed it. The approval is appended to the run's
approvals.jsonl only when the hash is exactly the one awaited; then resume with
\`terfyn run --resume RUN_DIR\`.

Options:
  --run RUN_DIR   the run directory
  --hash HASH     the hash printed when the run paused
  -h, --help      show this help
`;

export async function approveCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags("approve", argv, {
    run: { type: "string" },
    hash: { type: "string" },
  });
  if (values.help) {
    io.stdout(APPROVE_HELP);
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError(`approve: unexpected argument \`${positionals[0]}\``);
  if (values.run === undefined || values.hash === undefined)
    throw new UsageError("approve: --run RUN_DIR and --hash HASH are both required");
  const dir = resolve(io.cwd, values.run as string);
  // Refused early (no lock file created) when the directory is not a run of either kind.
  if (!existsSync(join(dir, "run.json"))) await new RunStore(dir).readState();
  // Recorded only while no other process works on the run: the lock is held for the check and
  // the append, so an approval cannot land under a run that is still deciding what it awaits.
  const lock = takeRunLock(io, dir, "terfyn approve");
  try {
    return await approveLocked(dir, values.hash as string, io, () => lock.verify());
  } finally {
    lock.release();
  }
}

async function approveLocked(
  dir: string,
  hash: string,
  io: CliIo,
  guard: () => void,
): Promise<number> {
  const review = await approveReviewGate(dir, hash, io);
  if (review !== undefined) return review;
  const store = new RunStore(dir);
  store.guard = guard;
  const state = await store.readState();
  if (state.status !== "awaiting-approval" || !state.awaiting) {
    throw new UserError(
      `run ${state.run_id} is not awaiting approval (its status is ${state.status}); nothing recorded`,
    );
  }
  if (hash !== state.awaiting.hash) {
    throw new UserError(
      `run ${state.run_id} awaits ${state.awaiting.hash}, not ${hash}; nothing recorded`,
    );
  }
  await store.appendApproval({
    hash,
    approved_at: (io.now?.() ?? new Date()).toISOString(),
    by: io.env.USER ?? io.env.USERNAME ?? "unknown",
  });
  const shown = relative(io.cwd, dir) || dir;
  const subject = state.awaiting.subject
    ? renderApprovalSubject(state.awaiting.subject, { runDir: shown })
        .map((l) => `${l}\n`)
        .join("")
    : "";
  io.stdout(
    `approved ${escapeTerminalText(state.awaiting.label)} (${hash}) in run ${escapeTerminalText(state.run_id)}\n${subject}resume with: terfyn run --resume ${escapeTerminalText(shown)}\n`,
  );
  return 0;
}

/** A review run's gates: approve exactly the hash the paused gate awaits, or record nothing. */
async function approveReviewGate(
  dir: string,
  hash: string,
  io: CliIo,
): Promise<number | undefined> {
  if (!existsSync(join(dir, "run.json"))) return undefined;
  const store = await ReviewRunStore.open(dir);
  const state = await store.readState();
  if (state?.status !== "awaiting-approval" || !state.awaiting) {
    throw new UserError(
      `the review run is not waiting at a gate (status ${state?.status ?? "none"}); nothing recorded`,
    );
  }
  if (hash !== state.awaiting.hash) {
    throw new UserError(
      `gate ${state.awaiting.gate} awaits ${state.awaiting.hash} (${state.awaiting.artifact}), not ${hash}; nothing recorded`,
    );
  }
  await store.appendApproval({
    gate: state.awaiting.gate,
    hash,
    approved_at: (io.now?.() ?? new Date()).toISOString(),
    by: io.env.USER ?? io.env.USERNAME ?? "unknown",
  });
  const shown = relative(io.cwd, dir) || dir;
  io.stdout(
    `approved gate ${state.awaiting.gate}: ${state.awaiting.artifact} (${hash})\nresume with: terfyn review --resume ${shown}\n`,
  );
  return 0;
}
