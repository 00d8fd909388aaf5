/**
 * What a `terfyn run` directory's state.json holds: status, cursor, what it awaits, and the
 * environment the run was started in (so a resume runs what was approved). Types only; the
 * fs adapter (src/adapters/fs/run-store.ts) reads and writes them. Review runs keep their own
 * phase cursor (src/core/review/ports.ts) and share the lock, placement and drift checks here.
 */
import type { ApprovalSubject } from "../render/approval-text.ts";
import type { RunEnvironment } from "./run-environment.ts";

export type RunStatus =
  | "running"
  | "awaiting-approval"
  | "completed"
  | "failed"
  | "in-doubt"
  /** Stopped by SIGINT/SIGTERM; `terfyn run --resume` continues it. */
  | "interrupted";

/** Where a run is: the iteration and the step path the interpreter last reached. */
export interface RunCursor {
  iteration: number;
  cursor: string;
}

export interface RunState extends RunCursor {
  run_id: string;
  workflow: string;
  /** Absolute path of the project the run belongs to. */
  project: string;
  ir_hash: string;
  status: RunStatus;
  /** Set while awaiting approval: what to approve. */
  awaiting?: {
    hash: string;
    step: string;
    label: string;
    kind: "approve" | "gated-grant";
    /** Exactly what is approved, in full (absent in runs paused before it was recorded). */
    subject?: ApprovalSubject;
  };
  model_script?: string;
  /**
   * The resolved workspace roots, test commands and tool declarations the run started with; a
   * resume where any differs is refused. Absent in runs started before it was recorded.
   */
  environment?: RunEnvironment;
  /** Some session ran the run's commands without the sandbox (`--unconfined`). */
  unconfined?: true;
  /** The run's model budgets over all its sessions (--max-model-calls, --max-tokens). */
  budget?: { calls?: number; tokens?: number };
  /** What the run's model calls spent so far, in words, with the estimated cost. */
  spend?: string;
  result?: unknown;
  error?: string;
  started_at: string;
  updated_at: string;
}
