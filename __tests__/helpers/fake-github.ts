/**
 * A stateful fake of the GitHub REST routes the Action uses, on nock (no network): issue
 * comments, check runs, commit statuses, collaborator roles, the pull request and its commits,
 * labels. Tests
 * set the state, run the bundled Action, and read what it did. Every request is also checked
 * against the OpenAPI fixture by the harness.
 */
import nock from "nock";
import { API, OWNER, REPO } from "./action-harness.ts";

export interface FakeComment {
  id: number;
  body: string;
  user: { login: string; type: string };
  created_at: string;
  updated_at: string;
  html_url: string;
}

export interface FakeState {
  comments: FakeComment[];
  checkRuns: { id: number; body: Record<string, unknown>; updates: Record<string, unknown>[] }[];
  statuses: { sha: string; state: string; context: string; description?: string }[];
  /** login → the collaborator-permission answer. */
  roles: Record<string, { role_name: string; permission: string }>;
  labels: string[];
  pr?: { headSha: string; baseSha: string; author: string; mergeSha?: string; headRef?: string };
  /** Other pull requests by number (GET pulls/{n} answers `pr` for any number not here). */
  prs: Record<
    number,
    { headSha: string; baseSha: string; author: string; baseRef: string; state?: string }
  >;
  /**
   * The pull request's commits as GET …/pulls/{n}/commits lists them (logins, or null when
   * GitHub maps none). Default: one commit, the head, by the PR's author, committed by web-flow.
   */
  prCommits?: { sha: string; author: string | null; committer: string | null }[];
  /** The `commits` count GET …/pulls/{n} reports; default: the length of the commit list. */
  prCommitCount?: number;
  /** The token's identity (the author of what the Action posts). */
  me: string;
  /** Status codes to answer instead, per route key (e.g. "POST comments"). */
  fail: Record<string, number>;
  requests: string[];
  /** Every body a comment was created or edited with, in order. */
  bodies: string[];
}

let nextId = 1000;

export function fakeGitHub(initial: Partial<FakeState> = {}): FakeState & { done: () => void } {
  const s: FakeState = {
    comments: [],
    checkRuns: [],
    statuses: [],
    roles: {},
    prs: {},
    labels: [],
    me: "github-actions[bot]",
    fail: {},
    requests: [],
    bodies: [],
    ...initial,
  };
  const R = `/repos/${OWNER}/${REPO}`;
  const failing = (key: string) => s.fail[key];
  const commitsOf = () =>
    s.prCommits ??
    (s.pr ? [{ sha: s.pr.headSha, author: s.pr.author, committer: "web-flow" }] : []);
  const user = (login: string | null) => (login ? { login, type: "User" } : null);
  const scope = nock(API)
    .persist()
    .get(new RegExp(`^${R}/issues/\\d+/comments`))
    .reply(() => {
      s.requests.push("GET comments");
      return failing("GET comments")
        ? [failing("GET comments")!, { message: "denied" }]
        : [200, s.comments];
    })
    .post(new RegExp(`^${R}/issues/\\d+/comments$`))
    .reply((_u, body) => {
      s.requests.push("POST comments");
      if (failing("POST comments"))
        return [failing("POST comments")!, { message: "Resource not accessible by integration" }];
      const c: FakeComment = {
        id: ++nextId,
        body: (body as { body: string }).body,
        user: { login: s.me, type: s.me.endsWith("[bot]") ? "Bot" : "User" },
        created_at: "2026-12-01T10:00:00Z",
        updated_at: "2026-12-01T10:00:00Z",
        html_url: `https://github.com/${OWNER}/${REPO}/pull/7#issuecomment-${nextId}`,
      };
      s.comments.push(c);
      s.bodies.push(c.body);
      return [201, c];
    })
    .patch(new RegExp(`^${R}/issues/comments/\\d+$`))
    .reply((uri, body) => {
      s.requests.push("PATCH comment");
      const id = Number(uri.split("/").pop());
      const c = s.comments.find((x) => x.id === id);
      if (!c) return [404, { message: "Not Found" }];
      c.body = (body as { body: string }).body;
      s.bodies.push(c.body);
      return [200, c];
    })
    .post(`${R}/check-runs`)
    .reply((_u, body) => {
      s.requests.push("POST check-runs");
      if (failing("POST check-runs"))
        return [failing("POST check-runs")!, { message: "Resource not accessible by integration" }];
      const id = ++nextId;
      s.checkRuns.push({ id, body: body as Record<string, unknown>, updates: [] });
      return [
        201,
        {
          id,
          html_url: `https://github.com/${OWNER}/${REPO}/runs/${id}`,
          app: { slug: s.me.replace(/\[bot\]$/, "") },
        },
      ];
    })
    .patch(new RegExp(`^${R}/check-runs/\\d+$`))
    .reply((uri, body) => {
      s.requests.push("PATCH check-runs");
      const id = Number(uri.split("/").pop());
      s.checkRuns.find((c) => c.id === id)?.updates.push(body as Record<string, unknown>);
      return [200, { id }];
    })
    .post(new RegExp(`^${R}/statuses/[0-9a-f]{40}$`))
    .reply((uri, body) => {
      s.requests.push("POST status");
      if (failing("POST status")) return [failing("POST status")!, { message: "denied" }];
      s.statuses.push({
        sha: uri.split("/").pop()!,
        ...(body as { state: string; context: string }),
      });
      return [201, { id: ++nextId }];
    })
    .get(new RegExp(`^${R}/collaborators/[^/]+/permission$`))
    .reply((uri) => {
      s.requests.push("GET permission");
      const login = decodeURIComponent(uri.split("/").slice(-2)[0]!);
      const r = s.roles[login] ?? { role_name: "none", permission: "none" };
      return [200, { ...r, user: { login } }];
    })
    .get(new RegExp(`^${R}/commits/[0-9a-f]{40}/pulls`))
    .reply(() => {
      s.requests.push("GET commit pulls");
      if (failing("GET commit pulls")) return [failing("GET commit pulls")!, { message: "denied" }];
      const all = [
        ...(s.pr ? [{ number: 7, ...s.pr, baseRef: "main", state: "open" }] : []),
        ...Object.entries(s.prs).map(([n, p]) => ({ number: Number(n), state: "open", ...p })),
      ];
      return [
        200,
        all.map((p) => ({
          number: p.number,
          state: p.state,
          head: { sha: p.headSha, ref: "shared" },
          base: { sha: p.baseSha, ref: p.baseRef },
        })),
      ];
    })
    .get(new RegExp(`^${R}/pulls/\\d+$`))
    .reply((uri) => {
      s.requests.push("GET pull");
      const n = Number(uri.split("/").at(-1));
      const other = s.prs[n];
      if (other)
        return [
          200,
          {
            number: n,
            head: { sha: other.headSha, ref: "shared", repo: { full_name: `${OWNER}/${REPO}` } },
            base: { sha: other.baseSha, ref: other.baseRef },
            user: { login: other.author },
            merge_commit_sha: null,
            labels: [],
          },
        ];
      const pr = s.pr;
      if (!pr) return [404, { message: "Not Found" }];
      return [
        200,
        {
          number: 7,
          head: {
            sha: pr.headSha,
            ref: pr.headRef ?? "fix-add",
            repo: { full_name: `${OWNER}/${REPO}` },
          },
          base: { sha: pr.baseSha },
          user: { login: pr.author },
          merge_commit_sha: pr.mergeSha ?? null,
          labels: s.labels.map((name) => ({ name })),
          commits: s.prCommitCount ?? commitsOf().length,
        },
      ];
    })
    .get(new RegExp(`^${R}/pulls/\\d+/commits(\\?.*)?$`))
    .reply(() => {
      s.requests.push("GET pull commits");
      if (failing("GET pull commits")) return [failing("GET pull commits")!, { message: "boom" }];
      if (!s.pr) return [404, { message: "Not Found" }];
      // GitHub lists at most 250 commits, oldest first.
      return [
        200,
        commitsOf()
          .slice(0, 250)
          .map((c) => ({
            sha: c.sha,
            commit: { message: "change", author: { name: "x" }, committer: { name: "y" } },
            author: user(c.author),
            committer: user(c.committer),
          })),
      ];
    })
    .put(new RegExp(`^${R}/issues/\\d+/labels$`))
    .reply((_u, body) => {
      s.requests.push("PUT labels");
      s.labels = (body as { labels: string[] }).labels;
      return [200, s.labels.map((name) => ({ name }))];
    })
    .post(new RegExp(`^${R}/issues/\\d+/reactions$`))
    .reply((_u, body) => {
      s.requests.push(`POST reaction ${(body as { content: string }).content}`);
      return [201, { id: ++nextId, content: (body as { content: string }).content }];
    })
    .get("/user")
    .reply(() => {
      s.requests.push("GET user");
      // An installation token cannot read /user; a personal token reads its own login.
      return s.me.endsWith("[bot]")
        ? [403, { message: "Resource not accessible by integration" }]
        : [200, { login: s.me, type: "User" }];
    });
  return Object.assign(s, {
    done: () => {
      scope.persist(false);
      nock.cleanAll();
    },
  });
}

/** A human's comment as the API lists it. */
export function humanComment(login: string, body: string, edited = false): FakeComment {
  return {
    id: ++nextId,
    body,
    user: { login, type: "User" },
    created_at: "2026-12-01T09:00:00Z",
    updated_at: edited ? "2026-12-01T09:05:00Z" : "2026-12-01T09:00:00Z",
    html_url: `https://github.com/${OWNER}/${REPO}/pull/7#issuecomment-${nextId}`,
  };
}
