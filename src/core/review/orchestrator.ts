/**
 * The thin orchestrator of a review-response run (docs/review-doctrine.md, doctrines 1–5, 10): a short loop
 * over the phase table (phase-table.ts). For the phase at the cursor: guard the seam (every
 * input it needs exists and is non-empty), run it, save the cursor. What a phase does is its
 * own file; what it reads and writes is its table entry. The run directory is the only channel,
 * the state file holds the cursor (re-entry resumes where it stopped and never repeats a
 * completed phase or asks for an approval twice), and a report is written on every exit and at
 * every gate pause. Pure over ports; the adapters (local files and git, or a live pull
 * request) supply them.
 */
import { readArtifact } from "./artifacts.ts";
import { type PhaseContext, phaseContext, RunEnd, RunPaused } from "./phase.ts";
import { PHASE_TABLE } from "./phase-table.ts";
import {
  describeSeamViolation,
  guardSeam,
  nextPhase,
  PHASES,
  type TerminalState,
} from "./phases.ts";
import type { ReviewOutcome, ReviewPorts, ReviewRunState } from "./ports.ts";
import { DEFAULT_LIMITS } from "./referee.ts";
import {
  composeGateReport,
  composePausedReport,
  composeReport,
  readRunArtifacts,
} from "./report.ts";

export type {
  PublishArtifact,
  Published,
  ReviewOutcome,
  ReviewPorts,
  ReviewRunState,
  ReviewSteps,
  RunFiles,
} from "./ports.ts";

/**
 * A failure of the run directory itself (a write refused, a lock lost, a disk gone): the run
 * cannot record anything, so it is not turned into a terminal state; the error goes up as is.
 */
class RunDirectoryFailure extends Error {
  constructor(readonly original: unknown) {
    super((original as Error)?.message ?? String(original));
  }
}

/** The ports with the run directory's failures marked, so the loop can tell them from a step's. */
function markDirectoryFailures(ports: ReviewPorts): ReviewPorts {
  const mark =
    <A extends unknown[], R>(f: (...a: A) => Promise<R>) =>
    async (...a: A): Promise<R> => {
      try {
        return await f(...a);
      } catch (e) {
        throw e instanceof RunEnd ? e : new RunDirectoryFailure(e);
      }
    };
  const { files, notice } = ports;
  // Every report says first what the reader must know before anything else in it.
  const said = (n: string, t: string) =>
    notice !== undefined && n === "report.md" ? `> **${notice}**\n\n${t}` : t;
  return {
    ...ports,
    files: {
      read: mark((n: string) => files.read(n)),
      write: mark((n: string, t: string) => files.write(n, said(n, t))),
      size: mark((n: string) => files.size(n)),
    },
    readState: mark(() => ports.readState()),
    writeState: mark((s: ReviewRunState) => ports.writeState(s)),
    approvals: mark(() => ports.approvals()),
  };
}

export async function runReview(unmarked: ReviewPorts): Promise<ReviewOutcome> {
  const ports = markDirectoryFailures(unmarked);
  try {
    return await loop(ports);
  } catch (e) {
    throw e instanceof RunDirectoryFailure ? e.original : e;
  }
}

/** The state of a run that has not written one yet: at its first phase. */
function freshState(ports: ReviewPorts): ReviewRunState {
  return {
    run_id: ports.runId,
    phase: PHASES[0],
    status: "running",
    build: { iteration: 0, identical_retries: 0, escalations: 0 },
    updated_at: ports.now(),
  };
}

/**
 * Stops a run that is paused at a gate or not running (`terfyn review --stop`): it ends stuck
 * with `reason`, on the same path as every other end (a report, the ended state, its resources
 * released). A run that has already ended is left exactly as it is: `stopped: false`.
 */
export async function stopReview(
  unmarked: ReviewPorts,
  reason: string,
): Promise<{ stopped: true; outcome: ReviewOutcome } | { stopped: false; state: ReviewRunState }> {
  const ports = markDirectoryFailures(unmarked);
  try {
    const state = (await ports.readState()) ?? freshState(ports);
    if (state.status === "ended") return { stopped: false, state };
    return { stopped: true, outcome: await end(ports, state, "stuck", reason) };
  } catch (e) {
    throw e instanceof RunDirectoryFailure ? e.original : e;
  }
}

async function loop(ports: ReviewPorts): Promise<ReviewOutcome> {
  let state: ReviewRunState = (await ports.readState()) ?? freshState(ports);
  if (state.status === "ended" && state.terminal) {
    await release(ports);
    return { status: "ended", terminal: state.terminal, reason: state.reason ?? "" };
  }
  const save = async (patch: Partial<ReviewRunState>) => {
    state = { ...state, ...patch, updated_at: ports.now() };
    await ports.writeState(state);
  };
  const limits = ports.limits ?? DEFAULT_LIMITS;
  // A run stopped from outside goes on at the phase it was in.
  if (state.status === "interrupted") await save({ status: "running", reason: undefined });

  try {
    while (state.phase !== undefined) {
      const phase = PHASE_TABLE[state.phase];
      const sizes = new Map<string, number | undefined>();
      for (const file of phase.reads) sizes.set(file, await ports.files.size(file));
      const violations = guardSeam(phase.name, (f) => sizes.get(f));
      if (violations.length > 0)
        throw new RunEnd("stuck", violations.map(describeSeamViolation).join("; "));
      ports.progress(`phase ${phase.name}`);
      const ctx: PhaseContext = phaseContext(phase, ports, limits, () => state, save);
      const result = await phase.run(ctx);
      // Told to stop while the phase ran: what it made of its killed commands and aborted calls
      // is not trusted; the phase runs again on resume (a gate it reached stands).
      if (ports.signal?.aborted && !(result && "await" in result)) throw stopped(ports.signal);
      if (result && "end" in result) throw new RunEnd(result.end, result.reason);
      if (result && "await" in result) {
        const { gate, hash, artifact } = result.await;
        const decisions = (await readArtifact(ports.files, "decisions.json").catch(() => undefined))
          ?.decisions;
        await ports.files.write(
          "report.md",
          composeGateReport({
            gate,
            hash,
            artifact,
            run: ports.runId,
            ...(decisions ? { decisions } : {}),
            artifacts: await readRunArtifacts(ports.files, () => ports.approvals()),
            ...spendOf(ports),
          }),
        );
        await save({ status: "awaiting-approval", awaiting: { gate, hash, artifact } });
        ports.progress(`gate ${gate}: waiting for approval of ${artifact} (${hash})`);
        return { status: "awaiting-approval", gate, hash, artifact };
      }
      const next = result?.next ?? nextPhase(phase.name);
      await save({ status: "running", awaiting: undefined, phase: next });
    }
    throw new RunEnd("stuck", "the run ran out of phases without a report");
  } catch (e) {
    if (e instanceof RunDirectoryFailure) throw e;
    // Told to stop, whatever the phase made of it (a killed command, an aborted call): paused.
    if (ports.signal?.aborted) return pause(ports, state, stopped(ports.signal).reason);
    if (e instanceof RunPaused) return pause(ports, state, e.reason);
    // Every other failure (a git refusal, a command that could not start, a bug) is still an
    // end with a report, never an "internal error" that leaves the run in between.
    if (!(e instanceof RunEnd))
      return end(
        ports,
        state,
        "stuck",
        `phase ${state.phase ?? "?"} failed: ${(e as Error)?.message ?? String(e)}`,
      );
    return end(ports, state, e.terminal, e.reason);
  }
}

/** The run's spend for a report, when the ports know it. */
function spendOf(ports: ReviewPorts): { spend?: string } {
  const spend = ports.spend?.();
  return spend ? { spend } : {};
}

function stopped(signal: AbortSignal): RunPaused {
  const r: unknown = signal.reason;
  const why = typeof r === "string" ? r : r instanceof Error && r.message ? r.message : "a signal";
  return new RunPaused(`the process was told to stop (${why})`);
}

/**
 * Leaves the run resumable at the phase it is in: the state `interrupted` with the reason, and
 * a report that says what stopped it and how to go on. Nothing it did is lost: artifacts,
 * approvals and the agents' journals stay.
 */
async function pause(
  ports: ReviewPorts,
  state: ReviewRunState,
  reason: string,
): Promise<ReviewOutcome> {
  const phase = state.phase ?? PHASES[0];
  await ports.files.write(
    "report.md",
    composePausedReport({
      run: ports.runId,
      phase,
      reason,
      artifacts: await readRunArtifacts(ports.files, () => ports.approvals()),
      ...spendOf(ports),
    }),
  );
  const paused: ReviewRunState = {
    ...state,
    phase,
    status: "interrupted",
    reason,
    updated_at: ports.now(),
  };
  delete paused.awaiting;
  await ports.writeState(paused);
  ports.progress(`interrupted in phase ${phase}: ${reason}`);
  return { status: "interrupted", phase, reason };
}

async function end(
  ports: ReviewPorts,
  state: ReviewRunState,
  terminal: TerminalState,
  reason: string,
): Promise<ReviewOutcome> {
  // What the report shows of the artifacts; a malformed one is left out (the reason names it).
  const read = <N extends "decisions.json" | "proof.json" | "published.json">(name: N) =>
    readArtifact(ports.files, name).catch(() => undefined);
  const decisions = (await read("decisions.json"))?.decisions;
  const proof = await read("proof.json");
  const published = await read("published.json");
  const report = composeReport({
    terminal,
    reason,
    ...(state.phase ? { phase: state.phase } : {}),
    ...(decisions ? { decisions } : {}),
    ...(proof ? { vacuousTests: proof.vacuous } : {}),
    ...(published ? { published } : {}),
    proven: proof !== undefined && published?.commit !== undefined,
    artifacts: await readRunArtifacts(ports.files, () => ports.approvals()),
    ...spendOf(ports),
  });
  await ports.files.write("report.md", report);
  const ended: ReviewRunState = {
    ...state,
    status: "ended",
    terminal,
    reason,
    updated_at: ports.now(),
  };
  delete ended.phase;
  await ports.writeState(ended);
  await release(ports);
  ports.progress(`ended: ${terminal} (${reason})`);
  return { status: "ended", terminal, reason };
}

/** Frees what the run held; a failure is reported, never turned into a different ending. */
async function release(ports: ReviewPorts): Promise<void> {
  try {
    await ports.steps.release?.();
  } catch (e) {
    ports.progress(`could not release the run's resources: ${(e as Error).message}`);
  }
}

/** A run is abandoned when it is neither ended nor paused and its state has not moved for `maxIdleMs`. */
export function isAbandoned(state: ReviewRunState, nowMs: number, maxIdleMs: number): boolean {
  return state.status === "running" && nowMs - Date.parse(state.updated_at) > maxIdleMs;
}

/**
 * The sweeper's record of an abandoned run (docs/review-doctrine.md, doctrine 10: a run abandoned mid-flight
 * leaves nothing unless something else writes a record): the report and the ended state.
 */
export function abandonedRecord(
  state: ReviewRunState,
  now: string,
): { report: string; state: ReviewRunState } {
  const reason = `abandoned mid-flight in phase ${state.phase ?? "?"}: no progress since ${state.updated_at}; found by the sweeper`;
  const ended: ReviewRunState = {
    ...state,
    status: "ended",
    terminal: "stuck",
    reason,
    updated_at: now,
  };
  delete ended.phase;
  return {
    report: composeReport({
      terminal: "stuck",
      reason,
      ...(state.phase ? { phase: state.phase } : {}),
    }),
    state: ended,
  };
}
