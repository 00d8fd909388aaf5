/**
 * One sticky comment per project on a pull request, found by a hidden marker naming the project
 * path: created once, updated in place, left alone when the body is unchanged. Never deletes.
 */
import type { GitHubClient } from "./client.ts";

export interface IssueComment {
  id: number;
  body: string;
  author: string;
  authorType: string;
  createdAt: string;
  updatedAt: string;
}

export function stickyMarker(projectPath: string): string {
  return `<!-- terfyn:plan project=${encodeURIComponent(projectPath)} -->`;
}

export async function listIssueComments(
  client: GitHubClient,
  repo: { owner: string; repo: string },
  issue: number,
): Promise<IssueComment[]> {
  const items = await client.paginate(client.rest.issues.listComments, {
    ...repo,
    issue_number: issue,
    per_page: 100,
  });
  return items.map((c) => ({
    id: c.id,
    body: c.body ?? "",
    author: c.user?.login ?? "",
    authorType: c.user?.type ?? "",
    createdAt: c.created_at,
    updatedAt: c.updated_at,
  }));
}

export type UpsertResult = { action: "created" | "updated" | "unchanged"; id: number };

export async function upsertStickyComment(
  client: GitHubClient,
  repo: { owner: string; repo: string },
  issue: number,
  projectPath: string,
  body: string,
  existing: readonly IssueComment[],
): Promise<UpsertResult> {
  const marker = stickyMarker(projectPath);
  const full = `${marker}\n${body}`;
  const mine = existing.find((c) => c.body.startsWith(marker));
  if (mine) {
    if (mine.body === full) return { action: "unchanged", id: mine.id };
    await client.rest.issues.updateComment({ ...repo, comment_id: mine.id, body: full });
    return { action: "updated", id: mine.id };
  }
  const created = await client.rest.issues.createComment({
    ...repo,
    issue_number: issue,
    body: full,
  });
  return { action: "created", id: created.data.id };
}
