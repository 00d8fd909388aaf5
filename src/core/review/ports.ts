/**
 * The ports of a review-response run (docs/review-doctrine.md, doctrine 9): the run directory, the state
 * file, the approval log, and the steps (judgment by fresh-context agents, effects on the
 * repository and the publisher). The orchestrator and its phases reach the world only through
 * these; the adapters (local files and git, or a live pull request) implement them. Pure types.
 */
import type {
  Decision,
  DoctrineProblem,
  DoctrineRepair,
  ReviewPlan,
  StandardsFinding,
} from "./doctrine.ts";
import type { ApprovalEntry, GateName } from "./gates.ts";
import type { Phase, TerminalState } from "./phases.ts";
import type { RefereeLimits, Verdict } from "./referee.ts";
import type { ReviewRequest } from "./request.ts";

export interface ReviewRunState {
  run_id: string;
  /** The next phase to run (the cursor); absent once the run has ended. */
  phase?: Phase;
  /**
   * `interrupted`: stopped at `phase` by something outside the run (the model's API, a signal;
   * `reason` says which); resuming runs that phase again.
   */
  status: "running" | "awaiting-approval" | "interrupted" | "ended";
  terminal?: TerminalState;
  /** What a paused gate waits for. */
  awaiting?: { gate: GateName; hash: string; artifact: string };
  build: { iteration: number; identical_retries: number; escalations: number };
  reason?: string;
  updated_at: string;
}

export interface PublishArtifact {
  commit_message: string;
  /** Files the commit changes (must all be in the approved plan). */
  files: string[];
  replies: { item: string; body: string }[];
  tickets: { item: string; title: string; body: string }[];
  /** Each committed file's content hash (null: deleted): the approval binds these bytes. */
  content?: { path: string; sha256: string | null }[];
  /** The change as a unified diff against the head, for the person at the gate. */
  diff?: string;
}

export interface StandardsReview {
  /** The files the change touches, as the reviewer was shown them. */
  files: string[];
  findings: StandardsFinding[];
  skipped?: string;
}

export interface Published {
  commit?: string;
  replies: number;
  tickets: number;
}

/** What a build pass is told besides the plan. */
export interface BuildContext {
  decisions: readonly Decision[];
  redTests: readonly TestResult<"failed">[];
  /** The last pass of this run, when it failed. */
  previous?: Verdict;
}

/** One test's run: its outcome, whether the output shows it ran, and that evidence. */
export type TestResult<K extends "failed" | "passed"> = {
  test: string;
  ran?: boolean;
  evidence?: string;
} & {
  [k in K]: boolean;
};

/** The run directory, as the orchestrator sees it. Adapters refuse writes to reserved names. */
export interface RunFiles {
  read(name: string): Promise<string | undefined>;
  write(name: string, text: string): Promise<void>;
  size(name: string): Promise<number | undefined>;
}

/** The steps: judgment (fresh-context agents) and effects (repository, publisher). */
export interface ReviewSteps {
  intake(): Promise<ReviewRequest>;
  /** Decisions from an earlier run on the same pull request: each matching item must be reaffirmed or reversed. */
  priorDecisions?(): Promise<Decision[]>;
  /** Files the repository protects (its AGENTS.md): paths, globs or directories, never changed, whatever the plan says. */
  protectedFiles?(): Promise<string[]>;
  /** Extend-only files (AGENTS.md) the change did anything to other than append at the end. */
  extendOnlyViolations?(): Promise<string[]>;
  /** The commit the branch is at now: a run that waited at a gate checks nobody moved it. */
  currentHead?(): Promise<string>;
  /**
   * The Decider's decisions; with `repair`, its one repair turn: its first decisions and each
   * rule they broke are its input, in a fresh context.
   */
  decide(request: ReviewRequest, repair?: DoctrineRepair<Decision[]>): Promise<Decision[]>;
  /** Decisions claiming `executed` that the Decider's journals show nothing ran for. */
  executionProblems?(decisions: readonly Decision[]): DoctrineProblem[];
  /** What a plan breaks that only the repository's facts show (the conventions it names). */
  planProblems?(plan: ReviewPlan): Promise<DoctrineProblem[]>;
  /**
   * A plan for the `fix` decisions. `round` counts planning rounds (2 after the first re-plan);
   * a re-plan is given the failure that escalated it and is planned afresh.
   */
  plan(
    request: ReviewRequest,
    decisions: readonly Decision[],
    round?: { n: number; failure?: Verdict },
    /** The Planner's one repair turn: its plan and each rule it broke. */
    repair?: DoctrineRepair<ReviewPlan>,
  ): Promise<{ plan: ReviewPlan; markdown: string }>;
  /**
   * Writes the planned tests and runs them: each must fail before any implementation. The
   * TestWriter is shown the decisions of the plan's items: the reason each test must fail.
   */
  writeRedTests(
    plan: ReviewPlan,
    round?: number,
    context?: { decisions: readonly Decision[] },
  ): Promise<TestResult<"failed">[]>;
  /**
   * Puts every file the run changed back as the head has it (an escalation re-plans from the
   * head, so red tests are written and must fail against the old code again). Returns them.
   */
  resetWork?(): Promise<string[]>;
  /**
   * One implement → validate pass. The Builder is shown what it builds toward: the decisions of
   * the plan's items, how the red tests failed, and (after a failed pass) why that pass failed.
   */
  build(plan: ReviewPlan, iteration: number, context?: BuildContext): Promise<Verdict>;
  /** Files whose content differs from what a composed publish artifact bound (edited since). */
  changedSinceComposed?(artifact: PublishArtifact): Promise<string[]>;
  /** Files changed so far, relative to the repository. */
  changedFiles(): Promise<string[]>;
  /** Reverts the production files only, runs the new tests, restores: each result with the change reverted. */
  prove(plan: ReviewPlan): Promise<TestResult<"passed">[]>;
  /**
   * The standards lane (principle 18): a fresh-context reviewer reads the change the commit
   * would make (the planned files as they are now) against the repository's conventions. With
   * `repair`, its one repair turn. `skipped`: AGENTS.md declares no convention, protected or
   * extend-only file, so there is nothing to review against and no reviewer is asked.
   */
  standards(
    plan: ReviewPlan,
    repair?: DoctrineRepair<StandardsFinding[]>,
  ): Promise<StandardsReview>;
  /** The commit, replies and tickets; `proof`: the prover's results, which the replies to fixes report. */
  compose(
    decisions: readonly Decision[],
    plan: ReviewPlan | undefined,
    proof?: readonly TestResult<"passed">[],
  ): Promise<PublishArtifact>;
  /**
   * The run has ended in a terminal state: free what it held (local mode: its own worktree).
   * Called on every terminal end, and again when an ended run is resumed; must be idempotent.
   */
  release?(): Promise<void>;
  /** Publishes; the adapter must itself call the publish gate check (see gates.assertGate). */
  publish(
    artifact: PublishArtifact,
    artifactText: string,
    approvals: readonly ApprovalEntry[],
  ): Promise<Published>;
}

export interface ReviewPorts {
  /** The run's id; in local mode its directory, as `terfyn approve --run` takes it. */
  runId: string;
  files: RunFiles;
  readState(): Promise<ReviewRunState | undefined>;
  writeState(state: ReviewRunState): Promise<void>;
  approvals(): Promise<ApprovalEntry[]>;
  steps: ReviewSteps;
  now(): string;
  progress(line: string): void;
  limits?: RefereeLimits;
  /**
   * Said first in every report of the run (report.md at a gate and at the end): how its
   * commands were confined when that is not the sandbox, e.g. that they ran unconfined.
   */
  notice?: string;
  /**
   * Aborted when the process is told to stop (SIGINT/SIGTERM): the run pauses at the phase it
   * is in instead of trusting what that phase made of its killed commands and calls.
   */
  signal?: AbortSignal;
  /** The run's model spend so far, in one sentence: every report says it. */
  spend?: () => string;
}

export type ReviewOutcome =
  | { status: "ended"; terminal: TerminalState; reason: string }
  | { status: "awaiting-approval"; gate: GateName; hash: string; artifact: string }
  | { status: "interrupted"; phase: Phase; reason: string };
