/**
 * The effects of a review-response run, as small ports (docs/review-doctrine.md, doctrine 9): what
 * the world must do for a run, and nothing of what the run decides. Intake reads the request,
 * an agent port runs one fresh-context agent, a command port runs one of the repository's
 * commands, the work tree is the run's own checkout, and three publishers (commit, replies,
 * tickets) each publish one kind of thing, each re-checking the publish gate itself. The
 * doctrine that turns these into a run (steps.ts) is core; local mode (files and git) and the
 * GitHub App implement these ports and differ in nothing else. Pure types.
 */
import type { ApprovalEntry } from "./gates.ts";
import type { PublishArtifact } from "./ports.ts";

export interface IntakePort {
  /** The request as received: its text and a name for messages (a file, or the pull request). */
  receive(): Promise<{ text: string; source: string }>;
  /** Where a branch is now, or undefined when there is no such branch. */
  branchTip(branch: string): Promise<string | undefined>;
  /** Commits from `from` to `to`, or undefined when `from` is unknown. */
  commitsBetween(from: string, to: string): Promise<number | undefined>;
  /** An earlier run's decisions file (JSON text) on the same pull request, when one was named. */
  priorDecisions?(): Promise<{ text: string; source: string } | undefined>;
}

export interface AgentCall {
  agent: string;
  /** The step's name: its journal, and what progress lines say. */
  step: string;
  input: unknown;
  /** The only files the agent may write (anything else is denied at the tool boundary). */
  writable: readonly string[];
  /** The repository's test command, for the agent's run_tests tool. */
  testCommand?: string;
  /** Whether AGENTS.md lets the test command use the network. */
  testNetwork?: boolean;
  /** Variables of the run's environment the repository's commands may see, by name. */
  passEnv: readonly string[];
}

export interface AgentPort {
  /**
   * Runs one agent to completion; throws when it does not finish. `written`: what it wrote.
   * `operations`: the tool operations its journal shows it called and completed, in order (a
   * resumed step's earlier calls included), so the core can check a decision's `executed`
   * claim without reading the journal itself.
   */
  run(call: AgentCall): Promise<{ result: unknown; written: string[]; operations?: string[] }>;
}

export interface CommandResult {
  code: number;
  output: string;
  timedOut: boolean;
}

export interface CommandPort {
  /**
   * One of the repository's commands, in the run's work tree, inside the sandbox (only the
   * work tree writable; no network unless `network`; nothing outlives it), with a timeout and
   * the environment stripped to the base variables plus `passEnv`.
   */
  run(
    command: string,
    options: {
      env?: Record<string, string>;
      passEnv: readonly string[];
      /** Whether AGENTS.md lets this command use the network (`network:`). */
      network?: boolean;
    },
  ): Promise<CommandResult>;
}

/** The run's own checkout of the request's head. Never the user's files. */
export interface WorkTreePort {
  /**
   * Makes sure the work tree exists at `head` (idempotent); refuses one changed outside the run.
   * True when this call made it (a fresh checkout: nothing an install made is in it yet).
   */
  prepare(head: string): Promise<boolean>;
  /** Where the work tree is (taken out of failure texts, so two runs of a failure compare equal). */
  location(): string;
  /**
   * A file as the head commit has it (not as the work tree has it now, which agents may have
   * changed), or undefined when the head has no such file.
   */
  readAtHead(path: string): Promise<string | undefined>;
  /**
   * A file a command wrote in the work tree (a test report), read and then removed, so the next
   * run cannot be judged by it; undefined when there is none.
   */
  takeFile(path: string): Promise<string | undefined>;
  /** Tracked files whose content differs from the head. */
  trackedChanges(): Promise<string[]>;
  /** Which of `paths` exist in the work tree untracked (ignored or not). */
  untrackedAmong(paths: readonly string[]): Promise<string[]>;
  /** A file at the head and in the work tree (undefined where it does not exist). */
  fileVersions(path: string): Promise<{ head?: Uint8Array; worktree?: Uint8Array }>;
  /** Reverts `paths` to the head; the returned function puts them back as they were. */
  revert(paths: readonly string[]): Promise<() => Promise<void>>;
  /** Where the request's branch is now (where the run publishes). */
  currentHead(branch: string): Promise<string | undefined>;
  /** The run has ended: free the work tree. Idempotent. */
  release(): Promise<void>;
}

/** Publishers: each must check the publish gate against `artifactText` itself before acting. */
export interface CommitPublisher {
  publish(
    artifact: PublishArtifact,
    artifactText: string,
    approvals: readonly ApprovalEntry[],
    target: { branch: string; head: string },
  ): Promise<{ commit?: string }>;
}

export interface ReplyPublisher {
  publish(
    artifact: PublishArtifact,
    artifactText: string,
    approvals: readonly ApprovalEntry[],
  ): Promise<number>;
}

export interface TicketPublisher {
  publish(
    artifact: PublishArtifact,
    artifactText: string,
    approvals: readonly ApprovalEntry[],
  ): Promise<number>;
}

export interface ReviewEffects {
  intake: IntakePort;
  agents: AgentPort;
  commands: CommandPort;
  tree: WorkTreePort;
  commit: CommitPublisher;
  replies: ReplyPublisher;
  tickets: TicketPublisher;
  progress(line: string): void;
}
