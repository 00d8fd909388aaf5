/**
 * The bundled Action (dist/index.js), run as the runner runs it, against real git repositories
 * with base and head commits; the GitHub API is nock (no network) and every request is checked
 * against GitHub's OpenAPI description.
 */
import { join } from "node:path";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  API,
  commitAll,
  copyInto,
  fixture,
  git,
  newRepo,
  OWNER,
  REPO,
  runAction,
} from "./helpers/action-harness.ts";
import { EXAMPLE, edit, grant, write } from "./helpers/example-project.ts";

const R = `/repos/${OWNER}/${REPO}`;

beforeAll(() => {
  nock.disableNetConnect();
});
afterEach(() => {
  nock.cleanAll();
});

function prRepo(change: (project: string) => void, before?: (project: string) => void) {
  const repo = newRepo();
  copyInto(EXAMPLE, repo, "agents");
  write(repo, "README.md", "agents\n");
  if (before) before(join(repo, "agents"));
  const base = commitAll(repo, "base");
  change(join(repo, "agents"));
  const head = commitAll(repo, "head");
  return { repo, base, head };
}

function prPayload(head: string, base: string, author = "alice") {
  // biome-ignore lint/suspicious/noExplicitAny: webhook example payloads are loose JSON, adapted field by field
  const p = fixture("pull_request.opened") as Record<string, any>;
  p.number = 7;
  p.pull_request.number = 7;
  p.pull_request.head.sha = head;
  p.pull_request.base.sha = base;
  p.pull_request.user.login = author;
  p.repository.name = REPO;
  p.repository.owner.login = OWNER;
  p.repository.full_name = `${OWNER}/${REPO}`;
  return p;
}

function commentPayload(opts: {
  body: string;
  user: string;
  type?: string;
  action?: string;
  edited?: boolean;
}) {
  const name = opts.action === "edited" ? "issue_comment.edited" : "issue_comment.created";
  // biome-ignore lint/suspicious/noExplicitAny: webhook example payloads are loose JSON, adapted field by field
  const p = fixture(name) as Record<string, any>;
  p.action = opts.action ?? "created";
  p.issue.number = 7;
  p.issue.pull_request = { url: `${API}${R}/pulls/7` };
  p.comment.body = opts.body;
  p.comment.user.login = opts.user;
  p.comment.user.type = opts.type ?? "User";
  p.comment.created_at = "2026-11-29T10:00:00Z";
  p.comment.updated_at = opts.edited ? "2026-11-29T10:05:00Z" : "2026-11-29T10:00:00Z";
  p.repository.name = REPO;
  p.repository.owner.login = OWNER;
  return p;
}

const inputs = (extra: Record<string, string> = {}) => ({ project: "agents", ...extra });

describe("pull_request: the seed's widening", () => {
  it("comments the WIDENED lines, annotates the Reviewer's write_file grant line as a failure, fails the check and the step", async () => {
    const { repo, base, head } = prRepo((p) => grant(p, "Reviewer", "tool.workspace.write_file"));
    let comment: { body: string } | undefined;
    let check:
      | {
          conclusion: string;
          head_sha: string;
          output: {
            annotations: {
              path: string;
              start_line: number;
              annotation_level: string;
              title: string;
            }[];
          };
        }
      | undefined;
    const scope = nock(API)
      .get(`${R}/issues/7/comments`)
      .query(true)
      .reply(200, [])
      .post(`${R}/issues/7/comments`)
      .reply(201, (_uri, body) => {
        comment = body as { body: string };
        return { id: 101, body: comment.body };
      })
      .post(`${R}/check-runs`)
      .reply(201, (_uri, body) => {
        check = body as typeof check;
        return { id: 55 };
      });
    const run = await runAction({
      event: "pull_request",
      payload: prPayload(head, base),
      workspace: repo,
      inputs: inputs(),
    });
    expect(scope.isDone()).toBe(true);
    expect(run.failed).toBe(true);
    expect(run.stdout).toContain("::error::terfyn: agents: ");
    expect(comment?.body).toContain("<!-- terfyn:plan project=agents -->");
    expect(comment?.body).toContain("| `Agent/Reviewer` | **WIDENED** | – |");
    expect(comment?.body).toContain(
      "- [high] effect_bound: workspace.write autonomous Agent/Reviewer may select tool.workspace.write_file",
    );
    expect(comment?.body).toContain("  autonomous -> WIDENED");
    expect(comment?.body).toContain("- [high] authority_widening: AUTONOMOUS authority WIDENED.");
    expect(check?.conclusion).toBe("failure");
    expect(check?.head_sha).toBe(head);
    const failure = check?.output.annotations.find((a) => a.annotation_level === "failure");
    expect(failure).toMatchObject({ path: "agents/main.agent", start_line: 58 });
    expect(git(repo, "show", `${head}:agents/main.agent`).split("\n")[57]).toBe(
      "    tool.workspace.write_file",
    );
    expect(run.outputs.widened).toBe("true");
    expect(run.outputs.forbidden).toBe("true");
    expect(run.outputs["plan-hash"]).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(JSON.parse(run.outputs["plan-json"] ?? "null").hash).toBe(run.outputs["plan-hash"]);
    expect(run.summary).toContain("autonomous -> WIDENED");
    expect(run.requests.length).toBeLessThanOrEqual(
      3 + Math.ceil((check?.output.annotations.length ?? 0) / 50),
    );
  });

  it("a second run updates the same comment in place; an identical third run leaves it alone", async () => {
    const { repo, base, head } = prRepo((p) => grant(p, "Reviewer", "tool.workspace.write_file"));
    let firstBody = "";
    nock(API)
      .get(`${R}/issues/7/comments`)
      .query(true)
      .reply(200, [])
      .post(`${R}/issues/7/comments`)
      .reply(201, (_u, b) => {
        firstBody = (b as { body: string }).body;
        return { id: 101 };
      })
      .post(`${R}/check-runs`)
      .reply(201, { id: 1 });
    await runAction({
      event: "pull_request",
      payload: prPayload(head, base),
      workspace: repo,
      inputs: inputs(),
    });

    edit(join(repo, "agents"), "main.agent", "limit 3", "limit 4");
    const head2 = commitAll(repo, "second push");
    const existing = [
      {
        id: 101,
        body: firstBody,
        user: { login: "github-actions[bot]", type: "Bot" },
        created_at: "2026-01-01T00:00:00Z",
        updated_at: "2026-01-01T00:00:00Z",
      },
    ];
    let patched: { body: string } | undefined;
    const second = nock(API)
      .get(`${R}/issues/7/comments`)
      .query(true)
      .reply(200, existing)
      .patch(`${R}/issues/comments/101`)
      .reply(200, (_u, b) => {
        patched = b as { body: string };
        return { id: 101 };
      })
      .post(`${R}/check-runs`)
      .reply(201, { id: 2 });
    await runAction({
      event: "pull_request",
      payload: prPayload(head2, base),
      workspace: repo,
      inputs: inputs(),
    });
    expect(second.isDone()).toBe(true);
    expect(patched?.body).toContain("loop_bound_raised");

    const third = nock(API)
      .get(`${R}/issues/7/comments`)
      .query(true)
      .reply(200, [{ ...existing[0], body: patched?.body }])
      .post(`${R}/check-runs`)
      .reply(201, { id: 3 });
    const run3 = await runAction({
      event: "pull_request",
      payload: prPayload(head2, base),
      workspace: repo,
      inputs: inputs(),
    });
    expect(third.isDone()).toBe(true);
    expect(run3.requests.map((r) => r.method)).toEqual(["GET", "POST"]);
  });

  it("a no-change pull request passes quietly with a brief comment and a successful check", async () => {
    const { repo, base, head } = prRepo((p) => write(p, "../README.md", "agents, documented\n"));
    let comment = "";
    let conclusion = "";
    nock(API)
      .get(`${R}/issues/7/comments`)
      .query(true)
      .reply(200, [])
      .post(`${R}/issues/7/comments`)
      .reply(201, (_u, b) => {
        comment = (b as { body: string }).body;
        return { id: 1 };
      })
      .post(`${R}/check-runs`)
      .reply(201, (_u, b) => {
        conclusion = (b as { conclusion: string }).conclusion;
        return { id: 1 };
      });
    const run = await runAction({
      event: "pull_request",
      payload: prPayload(head, base),
      workspace: repo,
      inputs: inputs(),
    });
    expect(run.failed).toBe(false);
    expect(conclusion).toBe("success");
    expect(comment).toContain("no changes");
    expect(comment.length).toBeLessThan(600);
    expect(run.outputs.widened).toBe("false");
  });

  it("with a read-only token (a fork), falls back to workflow-command annotations and keeps the plan in the summary", async () => {
    const { repo, base, head } = prRepo((p) => grant(p, "Reviewer", "tool.workspace.write_file"));
    nock(API)
      .get(`${R}/issues/7/comments`)
      .query(true)
      .reply(200, [])
      .post(`${R}/issues/7/comments`)
      .reply(403, { message: "Resource not accessible by integration" })
      .post(`${R}/check-runs`)
      .reply(403, { message: "Resource not accessible by integration" });
    const run = await runAction({
      event: "pull_request",
      payload: prPayload(head, base),
      workspace: repo,
      inputs: inputs(),
    });
    expect(run.failed).toBe(true);
    expect(run.stdout).toMatch(/::warning::.*fork's pull request gets a read-only token/);
    const error = run.stdout
      .split("\n")
      .find((l) => l.startsWith("::error ") && l.includes("Forbidden effect"));
    expect(error).toContain("file=agents/main.agent");
    expect(error).toContain("line=58");
    expect(run.summary).toContain("autonomous -> WIDENED");
    expect(run.outputs.forbidden).toBe("true");
  });
});

describe("approvals by comment", () => {
  // A widening no policy or capability test forbids: a new agent that may run the tests.
  const widened = () =>
    prRepo((p) =>
      write(
        p,
        "deployer.agent",
        "agent Deployer {\n  input CodingState\n  output CodingState\n  grants {\n    tool.workspace.run_tests\n  }\n}\n",
      ),
    );

  async function currentHash(repo: string, head: string, base: string): Promise<string> {
    nock(API)
      .get(`${R}/issues/7/comments`)
      .query(true)
      .reply(200, [])
      .post(`${R}/issues/7/comments`)
      .reply(201, { id: 1 })
      .post(`${R}/check-runs`)
      .reply(201, { id: 1 });
    const run = await runAction({
      event: "pull_request",
      payload: prPayload(head, base),
      workspace: repo,
      inputs: inputs({ "fail-on": "widening" }),
    });
    expect(run.failed).toBe(true);
    return run.outputs["plan-hash"] as string;
  }

  function commentScope(head: string, base: string, permission?: string) {
    const replies: string[] = [];
    const statuses: unknown[] = [];
    const scope = nock(API)
      .get(`${R}/pulls/7`)
      .reply(200, { number: 7, head: { sha: head }, base: { sha: base }, user: { login: "alice" } })
      .post(`${R}/issues/7/comments`)
      .reply(201, (_u, b) => {
        replies.push((b as { body: string }).body);
        return { id: 900 };
      });
    if (permission)
      scope
        .get(/\/repos\/octo-org\/agents\/collaborators\/[^/]+\/permission/)
        .reply(200, { permission });
    scope
      .post(`${R}/statuses/${head}`)
      .optionally()
      .reply(201, (_u, b) => {
        statuses.push(b);
        return { id: 1 };
      });
    return { scope, replies, statuses };
  }

  it("the right hash from a user with write permission approves the head and the widening then passes", async () => {
    const { repo, base, head } = widened();
    const hash = await currentHash(repo, head, base);
    const c = commentScope(head, base, "write");
    const run = await runAction({
      event: "issue_comment",
      payload: commentPayload({ body: `/terfyn approve ${hash}`, user: "bob" }),
      workspace: repo,
      inputs: inputs({ "fail-on": "widening" }),
    });
    expect(run.failed).toBe(false);
    expect(c.statuses).toEqual([
      expect.objectContaining({ state: "success", context: "terfyn/approval" }),
    ]);
    expect(c.replies[0]).toContain(`✅ Approved by @bob`);
    expect(c.replies[0]).toContain(hash);

    const approval = {
      id: 5,
      body: `/terfyn approve ${hash}`,
      user: { login: "bob", type: "User" },
      created_at: "2026-01-01T00:00:00Z",
      updated_at: "2026-01-01T00:00:00Z",
    };
    nock(API)
      .get(`${R}/issues/7/comments`)
      .query(true)
      .reply(200, [approval])
      .get(`${R}/collaborators/bob/permission`)
      .reply(200, { permission: "write" })
      .post(`${R}/issues/7/comments`)
      .reply(201, { id: 1 })
      .post(`${R}/check-runs`)
      .reply(201, { id: 1 });
    const rerun = await runAction({
      event: "pull_request",
      payload: prPayload(head, base),
      workspace: repo,
      inputs: inputs({ "fail-on": "widening" }),
    });
    expect(rerun.failed).toBe(false);
  });

  const refusals: {
    name: string;
    body: (hash: string) => string;
    user: string;
    type?: string;
    action?: string;
    edited?: boolean;
    permission?: string;
    expect: string;
  }[] = [
    {
      name: "a wrong hash, answered with both hashes",
      body: () => `/terfyn approve sha256:${"a".repeat(64)}`,
      user: "bob",
      expect: "that is not the plan the current head produces",
    },
    {
      name: "read permission",
      body: (h) => `/terfyn approve ${h}`,
      user: "carol",
      permission: "read",
      expect: "@carol has `read` permission",
    },
    {
      name: "a bot",
      body: (h) => `/terfyn approve ${h}`,
      user: "helper[bot]",
      type: "Bot",
      expect: "approvals from bots never count",
    },
    {
      name: "an edited comment",
      body: (h) => `/terfyn approve ${h}`,
      user: "bob",
      action: "edited",
      edited: true,
      expect: "an edited comment never counts",
    },
    {
      name: "the pull request's author",
      body: (h) => `/terfyn approve ${h}`,
      user: "alice",
      expect: "cannot approve its own plan",
    },
  ];
  for (const r of refusals) {
    it(`refuses ${r.name}, with a reply`, async () => {
      const { repo, base, head } = widened();
      const hash = await currentHash(repo, head, base);
      const c = commentScope(head, base, r.permission);
      const run = await runAction({
        event: "issue_comment",
        payload: commentPayload({
          body: r.body(hash),
          user: r.user,
          ...(r.type ? { type: r.type } : {}),
          ...(r.action ? { action: r.action } : {}),
          ...(r.edited ? { edited: true } : {}),
        }),
        workspace: repo,
        inputs: inputs({ "fail-on": "widening" }),
      });
      expect(run.failed).toBe(false);
      expect(c.statuses).toEqual([]);
      expect(c.replies).toHaveLength(1);
      expect(c.replies[0]).toContain("❌ Not approved");
      expect(c.replies[0]).toContain(r.expect);
      if (r.name.startsWith("a wrong hash")) {
        expect(c.replies[0]).toContain(`sha256:${"a".repeat(64)}`);
        expect(c.replies[0]).toContain(hash);
      }
    });
  }

  it("refuses a stale hash after a new push changed the plan, showing both hashes", async () => {
    const { repo, base, head } = widened();
    const old = await currentHash(repo, head, base);
    edit(join(repo, "agents"), "main.agent", "limit 3", "limit 4");
    const head2 = commitAll(repo, "new push");
    const c = commentScope(head2, base);
    await runAction({
      event: "issue_comment",
      payload: commentPayload({ body: `/terfyn approve ${old}`, user: "bob" }),
      workspace: repo,
      inputs: inputs(),
    });
    expect(c.statuses).toEqual([]);
    expect(c.replies[0]).toContain(`You approved: \`${old}\``);
    expect(c.replies[0]).toMatch(
      /The current head \([0-9a-f]{7}\) produces:\n- `agents`: `sha256:/,
    );
    expect(c.replies[0]).not.toContain(`agents\`: \`${old}\``);
  });

  it("ignores comments without a command, and quoted approvals", async () => {
    const { repo } = widened();
    const run = await runAction({
      event: "issue_comment",
      payload: commentPayload({
        body: `> /terfyn approve sha256:${"b".repeat(64)}\nlooks good`,
        user: "bob",
      }),
      workspace: repo,
      inputs: inputs(),
    });
    expect(run.requests).toEqual([]);
    expect(run.failed).toBe(false);
  });
});

describe("settings", () => {
  it("an invalid input fails the step with one line naming the input", async () => {
    const { repo, base, head } = prRepo((p) => grant(p, "Reviewer", "tool.workspace.write_file"));
    const run = await runAction({
      event: "pull_request",
      payload: prPayload(head, base),
      workspace: repo,
      inputs: inputs({ "fail-on": "sometimes" }),
    });
    expect(run.failed).toBe(true);
    expect(run.requests).toEqual([]);
    expect(run.stdout).toContain(
      "::error::terfyn: input `fail-on` must be forbidden, widening or any-change",
    );
  });

  it("a pattern that matches no project says so", async () => {
    const { repo, base, head } = prRepo((p) => grant(p, "Reviewer", "tool.workspace.write_file"));
    const run = await runAction({
      event: "pull_request",
      payload: prPayload(head, base),
      workspace: repo,
      inputs: { project: "nothing/*" },
    });
    expect(run.failed).toBe(true);
    expect(run.stdout).toMatch(
      /::error::terfyn: no Terfyn project .* matches input `project`: nothing\/\*/,
    );
  });
});
