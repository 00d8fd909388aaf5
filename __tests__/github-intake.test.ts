/**
 * Intake from GitHub into request.json: review threads and their comments paginated past 100,
 * a trigger-time snapshot, commits behind head from the compare API. Every GraphQL request is
 * validated against GitHub's schema (the pruned fixture) and every REST one against OpenAPI.
 */

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { buildSchema, parse, validate } from "graphql";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createGateway } from "../src/adapters/github/gateway.ts";
import { GRAPHQL_DOCUMENTS } from "../src/adapters/github/graphql-documents.ts";
import { readReviewRequest } from "../src/adapters/github/review-threads.ts";
import { recordRequests } from "./helpers/action-harness.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

const HEAD = "c".repeat(40);
const OLD = "a".repeat(40);
const TRIGGER = "2026-12-01T10:00:00Z";

function comment(n: number, extra: Record<string, unknown> = {}) {
  return {
    id: `PRRC_${n}`,
    fullDatabaseId: String(9_000_000_000 + n),
    author: { login: `reviewer${n % 3}`, __typename: "User" },
    body: `comment ${n}`,
    createdAt: "2026-12-01T09:00:00Z",
    lastEditedAt: null,
    commit: { oid: n % 2 ? OLD : HEAD },
    originalCommit: { oid: OLD },
    diffHunk: "@@ -1 +1 @@",
    ...extra,
  };
}

function thread(i: number, comments: unknown[], more = false) {
  return {
    id: `PRRT_${i}`,
    isResolved: i === 3,
    isOutdated: i === 1,
    path: `src/f${i}.py`,
    line: i === 1 ? null : 10,
    originalLine: 10,
    diffSide: "RIGHT",
    comments: { pageInfo: { hasNextPage: more, endCursor: more ? "c1" : null }, nodes: comments },
  };
}

describe("the App's intake", () => {
  it("validates every document against GitHub's schema", () => {
    const schema = buildSchema(
      readFileSync(
        join(import.meta.dirname, "fixtures", "github", "graphql-schema.graphql"),
        "utf8",
      ),
    );
    for (const doc of GRAPHQL_DOCUMENTS) expect(validate(schema, parse(doc))).toEqual([]);
  });

  it("reads threads past 100 and comments past 100, snapshots at the trigger, and counts commits behind", async () => {
    const page1 = Array.from({ length: 100 }, (_, i) => thread(i, [comment(i)]));
    page1[5] = thread(
      5,
      Array.from({ length: 100 }, (_, k) => comment(1000 + k)),
      true,
    );
    page1[7] = thread(7, [comment(7), comment(8, { createdAt: "2026-12-01T10:30:00Z" })]);
    page1[8] = thread(8, [comment(9, { lastEditedAt: "2026-12-01T10:01:00Z" })]);
    const page2 = [thread(100, [comment(100)])];
    const pr = (nodes: unknown[], hasNextPage: boolean) => ({
      data: {
        repository: {
          pullRequest: {
            number: 7,
            headRefName: "fix",
            headRefOid: HEAD,
            baseRefOid: "b".repeat(40),
            isCrossRepository: false,
            reviewThreads: {
              pageInfo: { hasNextPage, endCursor: hasNextPage ? "p1" : null },
              nodes,
            },
          },
        },
      },
    });
    const graphqlBodies: { query: string; variables: Record<string, unknown> }[] = [];
    const scope = nock("https://api.github.com")
      .post("/graphql")
      .times(3)
      .reply(200, (_u, body) => {
        const b = body as { query: string; variables: Record<string, unknown> };
        graphqlBodies.push(b);
        if (b.query.includes("TerfynThreadComments"))
          return {
            data: {
              node: {
                comments: {
                  pageInfo: { hasNextPage: false, endCursor: null },
                  nodes: Array.from({ length: 50 }, (_, k) => comment(2000 + k)),
                },
              },
            },
          };
        return b.variables.after ? pr(page2, false) : pr(page1, true);
      })
      .get(`/repos/o/r/compare/${OLD}...${HEAD}`)
      .query(true)
      .reply(200, { ahead_by: 4, behind_by: 0, status: "ahead" });
    const rec = recordRequests();
    let intake: Awaited<ReturnType<typeof readReviewRequest>>;
    try {
      const gateway = createGateway(
        "t",
        { owner: "o", repo: "r" },
        { fetch: globalThis.fetch, retries: 0 },
      );
      intake = await readReviewRequest(gateway, { owner: "o", repo: "r" }, 7, TRIGGER);
    } finally {
      rec.stop();
    }
    expect(scope.isDone()).toBe(true);
    expect(rec.problems).toEqual([]);
    expect(graphqlBodies.map((b) => b.variables.after ?? null)).toEqual([null, "p1", "c1"]);
    const r = intake.request;
    expect(r.threads).toHaveLength(100); // 101 threads, one (PRRT_8) has no comment left in the snapshot
    expect(r.threads.find((t) => t.id === "PRRT_5")?.comments).toHaveLength(150);
    expect(r.threads.find((t) => t.id === "PRRT_7")?.comments.map((c) => c.id)).toEqual([
      String(9_000_000_007),
    ]);
    expect(intake.leftOut).toEqual([
      {
        thread: "PRRT_7",
        comment: String(9_000_000_008),
        author: "reviewer2",
        reason: "created after the trigger",
      },
      {
        thread: "PRRT_8",
        comment: String(9_000_000_009),
        author: "reviewer0",
        reason: "edited after the trigger",
      },
    ]);
    expect(r.threads.find((t) => t.id === "PRRT_1")).toMatchObject({ outdated: true, line: null });
    expect(r.threads.find((t) => t.id === "PRRT_3")?.resolved).toBe(true);
    expect(intake.commitsBehind).toEqual({ [OLD]: 4, [HEAD]: 0 });
    expect(r).toMatchObject({ repository: "o/r", pull_request: 7, branch: "fix", head: HEAD });
  });

  it("refuses what GitHub returns when it is not a request (a non-hex commit), naming the field", async () => {
    nock("https://api.github.com")
      .post("/graphql")
      .reply(200, {
        data: {
          repository: {
            pullRequest: {
              number: 7,
              headRefName: "fix",
              headRefOid: "$(rm -rf /)",
              baseRefOid: "b".repeat(40),
              isCrossRepository: false,
              reviewThreads: { pageInfo: { hasNextPage: false, endCursor: null }, nodes: [] },
            },
          },
        },
      });
    const gateway = createGateway(
      "t",
      { owner: "o", repo: "r" },
      { fetch: globalThis.fetch, retries: 0 },
    );
    await expect(readReviewRequest(gateway, { owner: "o", repo: "r" }, 7, TRIGGER)).rejects.toThrow(
      /head: a commit id/,
    );
  });
});
