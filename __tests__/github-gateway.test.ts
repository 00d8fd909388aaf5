/**
 * The GitHub gateway cannot send a dangerous request: every merge, delete, resolve, minimize or
 * ref update is refused by a request hook before fetch is called, and only the allowlisted
 * routes pass.
 */
import { describe, expect, it } from "vitest";
import { createGitHubClient } from "../src/adapters/github/client.ts";
import {
  ALLOWED_ROUTES,
  ForbiddenRequestError,
  guardClient,
  refusal,
} from "../src/adapters/github/gateway.ts";
import { GRAPHQL_DOCUMENTS } from "../src/adapters/github/graphql-documents.ts";

function guarded() {
  const calls: string[] = [];
  const fetch = (async (input: string | URL | Request) => {
    calls.push(String(input instanceof Request ? input.url : input));
    return new Response(JSON.stringify({}), {
      status: 200,
      headers: { "content-type": "application/json" },
    });
  }) as typeof globalThis.fetch;
  return { client: guardClient(createGitHubClient("t", { fetch, retries: 0 })), calls };
}

describe("the gateway's request hook", () => {
  const forbidden: [string, Record<string, unknown>][] = [
    ["DELETE /repos/{owner}/{repo}/issues/comments/{comment_id}", { comment_id: 1 }],
    ["DELETE /repos/{owner}/{repo}/git/refs/{ref}", { ref: "heads/main" }],
    ["PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge", { pull_number: 7 }],
    ["POST /repos/{owner}/{repo}/merges", { base: "main", head: "x" }],
    ["PATCH /repos/{owner}/{repo}/git/refs/{ref}", { ref: "heads/main", sha: "a", force: true }],
    ["PATCH /repos/{owner}/{repo}/pulls/{pull_number}", { pull_number: 7, state: "closed" }],
    [
      "DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
      { issue_number: 7, name: "x" },
    ],
  ];
  for (const [route, params] of forbidden) {
    it(`refuses ${route} before it leaves the process`, async () => {
      const { client, calls } = guarded();
      await expect(
        client.request(route, { owner: "o", repo: "r", ...params }),
      ).rejects.toBeInstanceOf(ForbiddenRequestError);
      expect(calls).toEqual([]);
    });
  }
  for (const mutation of [
    "resolveReviewThread",
    "unresolveReviewThread",
    "minimizeComment",
    "mergePullRequest",
    "updateRef",
  ]) {
    it(`refuses the GraphQL mutation ${mutation}`, async () => {
      const { client, calls } = guarded();
      await expect(
        client.graphql(`mutation { ${mutation}(input: {threadId: "x"}) { clientMutationId } }`),
      ).rejects.toBeInstanceOf(ForbiddenRequestError);
      expect(calls).toEqual([]);
    });
  }
  it("sends only the known GraphQL documents, byte for byte", () => {
    for (const doc of GRAPHQL_DOCUMENTS)
      expect(refusal("POST", "/graphql", { query: doc })).toBeUndefined();
    expect(refusal("POST", "/graphql", { query: "query { viewer { login } }" })).toMatch(
      /does not send/,
    );
    expect(refusal("POST", "/graphql", { query: `${GRAPHQL_DOCUMENTS[0]} ` })).toMatch(
      /does not send/,
    );
  });

  it("lets the allowlisted routes through", async () => {
    const { client, calls } = guarded();
    await client.request("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", {
      owner: "o",
      repo: "r",
      issue_number: 7,
      body: "x",
    });
    expect(calls).toHaveLength(1);
    for (const route of ALLOWED_ROUTES.filter((r) => r !== "POST /graphql")) {
      const [method, template] = route.split(" ") as [string, string];
      expect(refusal(method, template.replace(/\{[^}]+\}/g, "x"))).toBeUndefined();
    }
  });
});
