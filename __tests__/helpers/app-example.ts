/**
 * The review-fix example (examples/review-fix) as GitHub serves it, offline: the example's
 * repository built with a bare remote on disk, its review threads as GraphQL reviewThreads
 * (replies added by the mutation listed from then on), the compare API, and issues for tickets;
 * the shipped review-response agents and the example's model script. Shared by the App's
 * runner tests and the Action's review-fix tests.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nock from "nock";
import { expect } from "vitest";
import { readProjectDirectory } from "../../src/adapters/fs/read-project.ts";
import { ModelRouter } from "../../src/adapters/models/model-router.ts";
import { ScriptedModel } from "../../src/adapters/models/model-script.ts";
import { agentsProjectDir } from "../../src/app/review-runner.ts";
import { validateProject } from "../../src/core/validate.ts";
import { API, OWNER, REPO } from "./action-harness.ts";

export const EXAMPLE = join(import.meta.dirname, "..", "..", "examples", "review-fix");
export const SLUG = "terfyn-test";
export const APP = `${SLUG}[bot]`;
export const T0 = "2026-12-01T10:00:00Z";
export const LATER = "2026-12-01T11:00:00Z";

export interface Example {
  repo: string;
  origin: string;
  request: string;
  head: string;
  base: string;
  older: string;
}

export function build(): Example {
  const out = join(mkdtempSync(join(tmpdir(), "terfyn-app-runner-")), "repo");
  return JSON.parse(
    execFileSync(process.execPath, [join(EXAMPLE, "build-repo.mjs"), out], { encoding: "utf8" }),
  ) as Example;
}

export const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

interface RequestThread {
  id: string;
  path: string;
  original_line: number | null;
  line: number | null;
  original_commit: string;
  outdated: boolean;
  resolved: boolean;
  comments: { id: string; author: string; body: string; created_at: string; commit: string }[];
}

/**
 * GitHub's GraphQL side: the example's threads as reviewThreads, replies added by the mutation
 * (authored by the App's Bot) and listed in their thread from then on.
 */
export function fakeGraphql(
  ex: Example,
  opts: {
    failThreads?: number;
    /** Issues disabled on the repository: every issues request answers 410. */
    issuesGone?: boolean;
    /** A reply to this thread answers this HTTP status. */
    failReply?: { thread: string; status: number };
    /** Whose replies and tickets these are (default the test App's). */
    slug?: string;
  } = {},
) {
  const slug = opts.slug ?? SLUG;
  const request = JSON.parse(readFileSync(ex.request, "utf8")) as { threads: RequestThread[] };
  const replies: { threadId: string; body: string }[] = [];
  const issues: { title: string; body: string; author?: string }[] = [];
  const comment = (c: RequestThread["comments"][number], t: RequestThread) => ({
    id: `PRRC_${c.id}`,
    fullDatabaseId: c.id,
    author: { login: c.author, __typename: "User" },
    body: c.body,
    createdAt: c.created_at,
    lastEditedAt: null,
    commit: { oid: c.commit },
    originalCommit: { oid: t.original_commit },
    diffHunk: "@@ -1,3 +1,3 @@",
  });
  const threads = () =>
    request.threads.map((t) => ({
      id: t.id,
      isResolved: t.resolved,
      isOutdated: t.outdated,
      path: t.path,
      line: t.line,
      originalLine: t.original_line,
      diffSide: "RIGHT",
      comments: {
        pageInfo: { hasNextPage: false, endCursor: null },
        nodes: [
          ...t.comments.map((c) => comment(c, t)),
          ...replies
            .filter((r) => r.threadId === t.id)
            .map((r, i) => ({
              ...comment(
                { id: `9${i}`, author: slug, body: r.body, created_at: LATER, commit: ex.head },
                t,
              ),
              author: { login: slug, __typename: "Bot" },
            })),
        ],
      },
    }));
  nock(API)
    .persist()
    .post("/graphql")
    .reply((_u, body) => {
      const b = body as { query: string; variables: Record<string, unknown> };
      if (b.query.includes("TerfynThreadReply")) {
        if (opts.failReply && opts.failReply.thread === b.variables.threadId)
          return [opts.failReply.status, { message: "Resource not accessible by integration" }];
        replies.push({ threadId: String(b.variables.threadId), body: String(b.variables.body) });
        return [
          200,
          {
            data: {
              addPullRequestReviewThreadReply: { comment: { id: `R${replies.length}`, url: "u" } },
            },
          },
        ];
      }
      if (opts.failThreads)
        return [opts.failThreads, { message: "Resource not accessible by integration" }];
      return [
        200,
        {
          data: {
            repository: {
              pullRequest: {
                number: 7,
                headRefName: "fix-add",
                headRefOid: ex.head,
                baseRefOid: ex.base,
                isCrossRepository: false,
                reviewThreads: {
                  pageInfo: { hasNextPage: false, endCursor: null },
                  nodes: threads(),
                },
              },
            },
          },
        },
      ];
    })
    .get(new RegExp(`^/repos/${OWNER}/${REPO}/compare/[0-9a-f]{40}\\.\\.\\.[0-9a-f]{40}`))
    .reply((uri) => {
      const [from, to] = decodeURIComponent(uri.split("/compare/")[1]!.split("?")[0]!).split("...");
      const ahead = Number(git(ex.origin, "rev-list", "--count", `${from}..${to}`));
      return [200, { ahead_by: ahead, behind_by: 0, status: "ahead" }];
    })
    .get(`/repos/${OWNER}/${REPO}/issues`)
    .query(true)
    .reply((uri) => {
      if (opts.issuesGone) return [410, { message: "Issues are disabled for this repo" }];
      const q = new URL(uri, API).searchParams;
      // GitHub's filters: issues by `creator`, in any state with state=all.
      const listed = issues
        .map((i, n) => ({ ...i, number: 101 + n, author: i.author ?? `${slug}[bot]` }))
        .filter((i) => !q.get("creator") || i.author === q.get("creator"));
      return [
        200,
        listed.map((i) => ({
          id: i.number,
          number: i.number,
          title: i.title,
          body: i.body,
          state: "open",
          user: { login: i.author, type: i.author.endsWith("[bot]") ? "Bot" : "User" },
          html_url: `https://github.com/${OWNER}/${REPO}/issues/${i.number}`,
        })),
      ];
    })
    .post(`/repos/${OWNER}/${REPO}/issues`)
    .reply((_u, body) => {
      if (opts.issuesGone) return [410, { message: "Issues are disabled for this repo" }];
      issues.push(body as { title: string; body: string });
      return [
        201,
        { number: 100 + issues.length, html_url: `https://github.com/${OWNER}/${REPO}/issues/1` },
      ];
    });
  return { replies, issues };
}

export async function agents() {
  const v = validateProject((await readProjectDirectory(agentsProjectDir())).files);
  expect(v.ok).toBe(true);
  return v.project;
}

export const model = async () =>
  new ModelRouter({
    script: await ScriptedModel.load(join(EXAMPLE, "model-script.yaml")),
    forceScript: true,
    env: {},
  });
