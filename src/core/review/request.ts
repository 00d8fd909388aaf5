/**
 * `request.json`, the intake artifact of a review run: the pull request (or plain branch), its
 * head, and every unresolved review thread as data with provenance (docs/review-doctrine.md, doctrine 14):
 * the commit each comment was made against, how many commits behind the head that is, and
 * whether its anchor moved. The same shape comes from a live PR (the App's adapter) or from a
 * file (`terfyn review --request FILE`), so the phases cannot tell the difference. Pure.
 */
import { z } from "zod";
import { schemaProblems } from "./schema-problems.ts";

/** A commit id, abbreviated or full: hex only (it reaches git commands). */
const sha = z.string().regex(/^[0-9a-f]{7,64}$/, "a commit id: 7 to 64 lowercase hex digits");

export const threadCommentSchema = z.object({
  id: z.string().min(1),
  author: z.string(),
  /** The comment text, untrusted: it reaches agents only as a data block. */
  body: z.string(),
  created_at: z.string(),
  /** The commit the comment was written against. */
  commit: sha,
});

export const threadSchema = z.object({
  id: z.string().min(1),
  path: z.string().min(1),
  /** The line the thread is anchored to at `original_commit`, and now at head (null when it moved off). */
  original_line: z.number().int().positive().nullable(),
  line: z.number().int().positive().nullable(),
  original_commit: sha,
  /** GitHub's "outdated" signal: the anchor's hunk changed. Not the same as "no longer true". */
  outdated: z.boolean(),
  resolved: z.boolean().default(false),
  comments: z.array(threadCommentSchema).min(1),
});

export const requestSchema = z.object({
  format_version: z.literal("1"),
  repository: z.string().min(1),
  /** The pull request number, or null for a plain branch. */
  pull_request: z.number().int().positive().nullable(),
  branch: z.string().min(1),
  head: sha,
  base: sha,
  threads: z.array(threadSchema),
});

export type ReviewRequest = z.infer<typeof requestSchema>;

/**
 * A request from its text: the request, or short located problems (`threads[0].head: a commit
 * id: …`), never zod's dump. `file` names the source in the messages.
 */
export function parseRequest(
  text: string,
  file: string,
): { request: ReviewRequest; problems?: undefined } | { request?: undefined; problems: string[] } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { problems: [`${file} is not JSON: ${(e as Error).message}`] };
  }
  const parsed = requestSchema.safeParse(raw);
  if (parsed.success) return { request: parsed.data };
  return { problems: schemaProblems(parsed.error).map((p) => `${file}: ${p}`) };
}
export type ReviewThread = z.infer<typeof threadSchema>;

export interface Provenance {
  thread: string;
  /** The commit the thread's first comment was made against. */
  made_against: string;
  /** Commits between that commit and the head (0: made against the head). */
  commits_behind: number;
  /** Whether the anchor line moved or vanished since (a platform signal, not a verdict). */
  anchor_moved: boolean;
}

/**
 * Provenance per unresolved thread. `distance` answers "how many commits from `sha` to head"
 * (the adapter asks git); unknown commits count as `null` distance and are flagged by the caller.
 */
export function provenance(
  request: ReviewRequest,
  distance: (sha: string) => number | null,
): Provenance[] {
  return request.threads
    .filter((t) => !t.resolved)
    .map((t) => {
      const made = t.comments[0]?.commit ?? t.original_commit;
      return {
        thread: t.id,
        made_against: made,
        commits_behind: distance(made) ?? -1,
        anchor_moved:
          t.outdated || t.line === null || (t.original_line !== null && t.line !== t.original_line),
      };
    });
}
