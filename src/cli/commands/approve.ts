/**
 * `terfyn approve --run DIR --hash H [--by NAME]`: records an approval for what a paused run
 * awaits; `--deny --reason TEXT` records a refusal of it (a review run then ends not-approved).
 * Only the exact hash the run is waiting for is recorded; anything else records nothing. Who
 * approved: `--by`, else the git identity of the current directory, else the OS user.
 */
import { existsSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { ReviewRunStore } from "../../adapters/fs/review-run-store.ts";
import { runGitProcess } from "../../adapters/git/git-process.ts";
import { renderApprovalSubject } from "../../core/render/approval-text.ts";
import { escapeTerminalText } from "../../core/render/terminal-text.ts";
import { parseFlags } from "../args.ts";
import { refuseStdinDirectories } from "../file-args.ts";
import { type CliIo, UsageError, UserError } from "../io.ts";
import { takeRunLock } from "./run-directory.ts";

export const APPROVE_HELP = `Usage: terfyn approve --run RUN_DIR --hash sha256:… [--by NAME]
       terfyn approve --deny --reason TEXT --run RUN_DIR --hash sha256:… [--by NAME]

Approve what a paused run is waiting for (a gated tool call, an approve statement's value, or a
review run's gate), named by its content hash as \`terfyn run\` or \`terfyn review\` printed it.
The approval is appended to the run's approvals.jsonl only when the hash is exactly the one
awaited; then resume with \`terfyn run --resume RUN_DIR\` (or \`terfyn review --resume\`).
With --deny a review run's gate is refused instead: the resumed run ends not-approved and
publishes nothing.

The approval records who gave it: --by NAME, else the git identity of the current directory
(git config user.name and user.email), else the OS user. The review report shows it.

Options:
  --run RUN_DIR   the run directory
  --hash HASH     the hash printed when the run paused
  --by NAME       who approves (default: the git identity, else the OS user)
  --deny          refuse what the review gate awaits (needs --reason)
  --reason TEXT   why it is refused
  -h, --help      show this help
`;

/**
 * `git config KEY` in `cwd`, run without a shell (the CLI's environment decides which config
 * files git reads); undefined when unset or git is missing.
 */
async function gitConfig(io: CliIo, key: string): Promise<string | undefined> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...io.env }))
    if (v !== undefined) env[k] = v;
  try {
    const r = await runGitProcess(["config", "--get", key], { cwd: io.cwd, env });
    const v = r.stdout.toString("utf8").trim();
    return v === "" ? undefined : v;
  } catch {
    return undefined;
  }
}

/** Who approves: --by, else `Name <email>` from git config in the current directory, else the OS user. */
export async function approver(io: CliIo, by: string | undefined): Promise<string> {
  if (by !== undefined) {
    if (by.trim() === "") throw new UsageError("approve: --by needs a name");
    return by.trim();
  }
  const [name, email] = await Promise.all([
    gitConfig(io, "user.name"),
    gitConfig(io, "user.email"),
  ]);
  if (name !== undefined) return email !== undefined ? `${name} <${email}>` : name;
  if (email !== undefined) return email;
  return io.env.USER ?? io.env.USERNAME ?? "unknown";
}

/**
 * The store of a `terfyn run` run, imported only for one: approving a review run's gate does
 * not load it, nor the journal's zod schemas it validates with (~20 ms of CPU per process).
 */
async function engineRunStore() {
  return (await import("../../adapters/fs/run-store.ts")).RunStore;
}

interface Verdict {
  by: string;
  deny?: string;
}

export async function approveCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags("approve", argv, {
    run: { type: "string" },
    hash: { type: "string" },
    by: { type: "string" },
    deny: { type: "boolean" },
    reason: { type: "string" },
  });
  if (values.help) {
    io.stdout(APPROVE_HELP);
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError(`approve: unexpected argument \`${positionals[0]}\``);
  if (values.run === undefined || values.hash === undefined)
    throw new UsageError("approve: --run RUN_DIR and --hash HASH are both required");
  if (values.deny && (values.reason === undefined || (values.reason as string).trim() === ""))
    throw new UsageError("approve: --deny needs --reason TEXT (why the gate is refused)");
  if (!values.deny && values.reason !== undefined)
    throw new UsageError("approve: --reason goes with --deny");
  const verdict: Verdict = {
    by: await approver(io, values.by as string | undefined),
    ...(values.deny ? { deny: (values.reason as string).trim() } : {}),
  };
  refuseStdinDirectories("approve", {
    "--run": { value: values.run, what: "the run directory of the paused run" },
  });
  const dir = resolve(io.cwd, values.run as string);
  // Refused early (no lock file created) when the directory is not a run of either kind.
  if (!existsSync(join(dir, "run.json"))) await new (await engineRunStore())(dir).readState();
  // Recorded only while no other process works on the run: the lock is held for the check and
  // the append, so an approval cannot land under a run that is still deciding what it awaits.
  const lock = takeRunLock(io, dir, "terfyn approve");
  try {
    return await approveLocked(dir, values.hash as string, verdict, io, () => lock.verify());
  } finally {
    lock.release();
  }
}

async function approveLocked(
  dir: string,
  hash: string,
  verdict: Verdict,
  io: CliIo,
  guard: () => void,
): Promise<number> {
  const review = await approveReviewGate(dir, hash, verdict, io, guard);
  if (review !== undefined) return review;
  if (verdict.deny !== undefined)
    throw new UserError(
      "--deny refuses a review run's gate; an agent run's approval is simply not given",
    );
  const store = new (await engineRunStore())(dir);
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
    by: verdict.by,
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
  verdict: Verdict,
  io: CliIo,
  guard: () => void,
): Promise<number | undefined> {
  if (!existsSync(join(dir, "run.json"))) return undefined;
  const store = await ReviewRunStore.open(dir);
  store.guard = guard;
  // A damaged log is refused here too (a located message), before anything is appended to it.
  await store.approvals();
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
    by: verdict.by,
    ...(verdict.deny !== undefined ? { decision: "deny" as const, reason: verdict.deny } : {}),
  });
  const shown = relative(io.cwd, dir) || dir;
  io.stdout(
    `${verdict.deny !== undefined ? "refused" : "approved"} gate ${state.awaiting.gate}: ${state.awaiting.artifact} (${hash}) by ${escapeTerminalText(verdict.by)}\n${verdict.deny !== undefined ? "the resumed run ends not-approved: " : "resume with: "}terfyn review --resume ${escapeTerminalText(shown)}\n`,
  );
  return 0;
}
