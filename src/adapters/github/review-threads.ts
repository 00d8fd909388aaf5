/**
 * Intake from GitHub: a pull request's review threads, read through GraphQL (`reviewThreads`,
 * 100 a page, and a thread's comments past its first 100), into the same `request.json` a
 * local run reads (core/review/request.ts), so the phases cannot tell where it came from.
 *
 * A snapshot at the trigger time: a comment created or edited after the trigger is left out and
 * listed, so what people approve at the plan gate is what was asked before the run started.
 * How far behind the head each comment's commit is comes from the compare API, asked once per
 * commit. Everything GitHub returns is hostile data: the result is validated with the request
 * schema and any problem is an error naming the field, never a silently short request.
 */
import { parseRequest, type ReviewRequest } from "../../core/review/request.ts";
import type { GitHubGateway, RepoRef } from "./gateway.ts";
import { REVIEW_THREADS_QUERY, THREAD_COMMENTS_QUERY } from "./graphql-documents.ts";

interface PageInfo {
  hasNextPage: boolean;
  endCursor: string | null;
}

interface CommentNode {
  id: string;
  fullDatabaseId: string | number | null;
  author: { login: string; __typename: string } | null;
  body: string;
  createdAt: string;
  lastEditedAt: string | null;
  commit: { oid: string } | null;
  originalCommit: { oid: string } | null;
  diffHunk: string;
}

interface ThreadNode {
  id: string;
  isResolved: boolean;
  isOutdated: boolean;
  path: string;
  line: number | null;
  originalLine: number | null;
  diffSide: string;
  comments: { pageInfo: PageInfo; nodes: CommentNode[] };
}

interface ThreadsAnswer {
  repository: {
    pullRequest: {
      number: number;
      headRefName: string;
      headRefOid: string;
      baseRefOid: string;
      isCrossRepository: boolean;
      reviewThreads: { pageInfo: PageInfo; nodes: ThreadNode[] };
    } | null;
  } | null;
}

/** Bounds on what one intake reads: beyond them the run stops and says so. */
export const MAX_THREAD_PAGES = 50;
export const MAX_COMMENT_PAGES = 20;

export class IntakeError extends Error {}

export interface LeftOut {
  thread: string;
  comment: string;
  author: string;
  reason: "created after the trigger" | "edited after the trigger";
}

export interface GitHubIntake {
  request: ReviewRequest;
  /** Comments not in the snapshot, for the report. */
  leftOut: LeftOut[];
  /** Commits between each comment's commit and the head (compare API), by commit id. */
  commitsBehind: Record<string, number>;
  crossRepository: boolean;
}

export async function readReviewRequest(
  gateway: GitHubGateway,
  repo: RepoRef,
  number: number,
  triggerAt: string,
): Promise<GitHubIntake> {
  const trigger = Date.parse(triggerAt);
  if (!Number.isFinite(trigger))
    throw new IntakeError(`the trigger time ${triggerAt} is not a date`);
  const threads: ThreadNode[] = [];
  let pr: NonNullable<NonNullable<ThreadsAnswer["repository"]>["pullRequest"]> | undefined;
  let after: string | null = null;
  for (let page = 0; ; page++) {
    if (page >= MAX_THREAD_PAGES)
      throw new IntakeError(
        `pull request #${number} has more than ${MAX_THREAD_PAGES * 100} review threads`,
      );
    const answer: ThreadsAnswer = await gateway.graphql<ThreadsAnswer>(REVIEW_THREADS_QUERY, {
      owner: repo.owner,
      repo: repo.repo,
      number,
      after,
    });
    const p = answer.repository?.pullRequest;
    if (!p)
      throw new IntakeError(`pull request #${number} was not found in ${repo.owner}/${repo.repo}`);
    pr = p;
    threads.push(...p.reviewThreads.nodes);
    if (!p.reviewThreads.pageInfo.hasNextPage) break;
    after = p.reviewThreads.pageInfo.endCursor;
  }
  if (!pr) throw new IntakeError(`pull request #${number} was not found`);

  for (const t of threads) {
    let info = t.comments.pageInfo;
    for (let page = 0; info.hasNextPage; page++) {
      if (page >= MAX_COMMENT_PAGES)
        throw new IntakeError(
          `review thread ${t.id} has more than ${(MAX_COMMENT_PAGES + 1) * 100} comments`,
        );
      const more = await gateway.graphql<{
        node: { comments: { pageInfo: PageInfo; nodes: CommentNode[] } } | null;
      }>(THREAD_COMMENTS_QUERY, { id: t.id, after: info.endCursor });
      if (!more.node) throw new IntakeError(`review thread ${t.id} vanished while it was read`);
      t.comments.nodes.push(...more.node.comments.nodes);
      info = more.node.comments.pageInfo;
    }
  }

  const leftOut: LeftOut[] = [];
  const requestThreads = [];
  for (const t of threads) {
    const kept: CommentNode[] = [];
    for (const c of t.comments.nodes) {
      const id = String(c.fullDatabaseId ?? c.id);
      const author = c.author?.login ?? "ghost";
      if (Date.parse(c.createdAt) > trigger)
        leftOut.push({ thread: t.id, comment: id, author, reason: "created after the trigger" });
      else if (c.lastEditedAt && Date.parse(c.lastEditedAt) > trigger)
        leftOut.push({ thread: t.id, comment: id, author, reason: "edited after the trigger" });
      else kept.push(c);
    }
    if (kept.length === 0) continue;
    const first = kept[0]!;
    requestThreads.push({
      id: t.id,
      path: t.path,
      original_line: t.originalLine,
      line: t.line,
      original_commit: first.originalCommit?.oid ?? first.commit?.oid ?? "",
      outdated: t.isOutdated,
      resolved: t.isResolved,
      comments: kept.map((c) => ({
        id: String(c.fullDatabaseId ?? c.id),
        author: c.author?.login ?? "ghost",
        body: c.body,
        created_at: c.createdAt,
        commit: c.commit?.oid ?? c.originalCommit?.oid ?? "",
      })),
    });
  }
  const parsed = parseRequest(
    JSON.stringify({
      format_version: "1",
      repository: `${repo.owner}/${repo.repo}`,
      pull_request: pr.number,
      branch: pr.headRefName,
      head: pr.headRefOid,
      base: pr.baseRefOid,
      threads: requestThreads,
    }),
    "GitHub's review threads",
  );
  if (!parsed.request) throw new IntakeError(parsed.problems.join("; "));

  const commitsBehind: Record<string, number> = {};
  const commits = new Set(
    parsed.request.threads
      .filter((t) => !t.resolved)
      .flatMap((t) => t.comments.map((c) => c.commit)),
  );
  for (const commit of commits) {
    if (commit === parsed.request.head) {
      commitsBehind[commit] = 0;
      continue;
    }
    try {
      commitsBehind[commit] = (await gateway.compareCommits(commit, parsed.request.head)).aheadBy;
    } catch {
      // A force-pushed-away commit cannot be compared: provenance marks it unknown (-1).
    }
  }
  return {
    request: parsed.request,
    leftOut,
    commitsBehind,
    crossRepository: pr.isCrossRepository,
  };
}
