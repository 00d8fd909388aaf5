/**
 * What the App's webhook handlers hand a review run to: the runner port. The in-process runner
 * (review-runner.ts) implements it; the App's Actions placement dispatches instead. Types only.
 */

import type { Ledger } from "../../core/app/triggers.ts";
import type { GitHubGateway, RepoRef } from "../github/gateway.ts";
import type { RunReporter } from "../github/status-reporter.ts";

export type { RunReporter };

export interface RunJob {
  repo: RepoRef;
  pullRequest: number;
  head: string;
  run: string;
  /** The label event's time: the intake's snapshot. */
  triggerAt: string;
  gateway: GitHubGateway;
  /** The pull request's branch (known at the label; a resumed run reads it from its own files). */
  branch?: string;
  /** The installation token, for git (the runner's clone and push); fresh on every call. */
  token?: () => Promise<string>;
  /** The App's installation (the runner keeps it, to reach GitHub again after a restart). */
  installation?: number;
}

/** A run the runner may resume after a restart: what it kept about the job. */
export interface InterruptedRun {
  repo: RepoRef;
  pullRequest: number;
  head: string;
  run: string;
  triggerAt: string;
  branch: string;
  installation?: number;
}

/** Executes review runs; `start` must return at once (the work continues outside the request). */
export interface ReviewRunner {
  start(job: RunJob, reporter: RunReporter): void;
  approve(
    job: RunJob,
    ledger: Ledger,
    by: { login: string; role: string },
    reporter: RunReporter,
  ): void;
  stop(job: RunJob, ledger: Ledger, reason: string, reporter: RunReporter): void;
  /**
   * A run the ledger says is working (not ended, not at a gate), on an event for its pull
   * request: nothing when a session has it; else resumed, or reported as it is.
   */
  recover?(job: RunJob, ledger: Ledger, reporter: RunReporter): void;
  /**
   * Holds `key` (a pull request head) across processes while a label event is handled;
   * undefined when another process holds it. Synchronous.
   */
  claim?(key: string): { release(): void } | undefined;
  /** Runs left `running` by a process that is gone (read at startup). */
  interrupted?(): Promise<InterruptedRun[]>;
}
