/**
 * What an event asks the Action to plan, resolved to git objects:
 * - `pull_request`: the merge result (GitHub's test merge commit when it is exactly base + head,
 *   else a merge computed from git objects) against the base tip;
 * - `merge_group`: the queue's commit against the queue's base;
 * - `push`: the pushed commit against the commit before it (nothing, for a new branch).
 * Event payloads are hostile data: every commit id is checked to be hex before git sees it.
 */
import { ensureCommit } from "../adapters/git/ensure-commit.ts";
import { mergeResult } from "../adapters/git/merge-result.ts";
import { PUSH_ACTIONS } from "../core/approvals/changers.ts";
import type { Revisions } from "../core/render/pr-report.ts";

export interface PlanTarget {
  revisions: Revisions;
  /** The commit or tree to plan. */
  current: string;
  /** The commit it is planned against; undefined plans everything as new. */
  prior?: string;
  /** The commit check runs and statuses are set on. */
  statusSha: string;
  conflicts: string[];
  pullRequest?: {
    number: number;
    /** The head commit (its commits' authors and its pusher may not approve). */
    headSha: string;
    author: string;
    labels: string[];
    /** "owner/name" of the head repository; differs from the base's on a fork. */
    headRepo?: string;
    /** How many commits the pull request has, as GitHub reported it. */
    commits?: number;
    /** Who pushed the head: the sender of an `opened`, `synchronize` or `reopened` event. */
    pusher?: string;
  };
}

const SHA = /^[0-9a-f]{40}$/;
const ZERO = /^0{40}$/;

export class EventError extends Error {}

function sha(value: unknown, what: string): string {
  if (typeof value !== "string" || !SHA.test(value))
    throw new EventError(`the event payload's ${what} is not a commit id`);
  return value;
}

export async function pullRequestTarget(
  repoRoot: string,
  pr: {
    number: number;
    headSha: string;
    baseSha: string;
    author: string;
    labels: string[];
    headRepo?: string;
    commits?: number;
    pusher?: string;
    mergeCandidates: (string | undefined)[];
  },
  log: (m: string) => void,
): Promise<PlanTarget> {
  const head = sha(pr.headSha, "pull_request.head.sha");
  const base = sha(pr.baseSha, "pull_request.base.sha");
  await ensureCommit(repoRoot, head, log);
  await ensureCommit(repoRoot, base, log);
  // GitHub's test merge commits, when this clone has them or can fetch them.
  const present: string[] = [];
  for (const candidate of pr.mergeCandidates) {
    if (!candidate || !SHA.test(candidate)) continue;
    try {
      await ensureCommit(repoRoot, candidate, () => {});
      present.push(candidate);
    } catch {
      // Not fetchable: the merge is computed instead.
    }
  }
  const merge = await mergeResult(repoRoot, base, head, present);
  return {
    revisions: {
      event: "pull_request",
      base,
      head,
      merge: { id: merge.id, computed: merge.computed },
    },
    current: merge.tree,
    prior: base,
    statusSha: head,
    conflicts: merge.conflicts,
    pullRequest: {
      number: pr.number,
      headSha: head,
      author: pr.author,
      labels: pr.labels,
      ...(pr.headRepo ? { headRepo: pr.headRepo } : {}),
      ...(typeof pr.commits === "number" ? { commits: pr.commits } : {}),
      ...(pr.pusher ? { pusher: pr.pusher } : {}),
    },
  };
}

/**
 * Who pushed the head a `pull_request` event brings: its sender when the event is `opened`,
 * `synchronize` or `reopened` (another action, e.g. `labeled`, pushed nothing). The
 * `issue_comment` job reads it back from the sticky comment (core/approvals/changers.ts).
 */
export function pusherOf(payload: Record<string, unknown>): string | undefined {
  const sender = (payload.sender as { login?: unknown } | null | undefined)?.login;
  return PUSH_ACTIONS.includes(String(payload.action)) && typeof sender === "string" && sender
    ? sender
    : undefined;
}

/** A pull request read from the API (never from an artifact), planned as `pull_request` is. */
export function pullRequestTargetFromApi(
  repoRoot: string,
  number: number,
  pr: {
    headSha: string;
    baseSha: string;
    author: string;
    labels: string[];
    headRepo?: string;
    mergeCommitSha?: string;
    commits?: number;
  },
  log: (m: string) => void,
): Promise<PlanTarget> {
  return pullRequestTarget(
    repoRoot,
    {
      number,
      headSha: pr.headSha,
      baseSha: pr.baseSha,
      author: pr.author,
      labels: pr.labels,
      ...(pr.headRepo ? { headRepo: pr.headRepo } : {}),
      ...(typeof pr.commits === "number" ? { commits: pr.commits } : {}),
      mergeCandidates: [pr.mergeCommitSha],
    },
    log,
  );
}

export async function mergeGroupTarget(
  repoRoot: string,
  group: { head_sha?: unknown; base_sha?: unknown },
  log: (m: string) => void,
): Promise<PlanTarget> {
  const head = sha(group.head_sha, "merge_group.head_sha");
  const base = sha(group.base_sha, "merge_group.base_sha");
  await ensureCommit(repoRoot, head, log);
  await ensureCommit(repoRoot, base, log);
  return {
    revisions: { event: "merge_group", base, head },
    current: head,
    prior: base,
    statusSha: head,
    conflicts: [],
  };
}

export async function pushTarget(
  repoRoot: string,
  push: { before?: unknown; after?: unknown },
  log: (m: string) => void,
): Promise<PlanTarget> {
  const after = sha(push.after, "after");
  await ensureCommit(repoRoot, after, log);
  let before: string | undefined;
  if (typeof push.before === "string" && SHA.test(push.before) && !ZERO.test(push.before)) {
    before = push.before;
    await ensureCommit(repoRoot, before, log);
  }
  return {
    revisions: { event: "push", ...(before ? { base: before } : {}), head: after },
    current: after,
    ...(before ? { prior: before } : {}),
    statusSha: after,
    conflicts: [],
  };
}
