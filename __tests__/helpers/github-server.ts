/**
 * A fake GitHub as a real HTTP server on 127.0.0.1, for the App's server and the Action run as
 * their own processes (nock cannot reach into another process). It speaks as GitHub Enterprise
 * does at `GHE_HOST`: REST under `/api/v3`, GraphQL at `/api/graphql`, git over smart HTTP at
 * `/{owner}/{repo}.git` (the real `git http-backend` on a bare repository). It implements App
 * authentication: `GET /app` and `POST /app/installations/{id}/access_tokens` need a JWT signed
 * with the App's key (verified against its public key), every other API request and every git
 * request needs the installation token it issued (or the workflow token given). Every REST
 * request is checked against GitHub's OpenAPI description, every GraphQL request against its
 * schema; what does not match is in `problems`.
 */
import { execFileSync, spawn } from "node:child_process";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { verifiedJwt } from "./app-key.ts";
import type { FakeComment } from "./fake-github.ts";
import { graphqlProblems, openApiProblems } from "./openapi.ts";

/** A comment as the API lists it: the nock fake's shape. */
export type ServerComment = FakeComment;

export interface GitHubServerOptions {
  owner: string;
  repo: string;
  /** The bare repository `/{owner}/{repo}.git` serves. */
  bare: string;
  appId: number;
  slug: string;
  installation: number;
  /** The App's public key (SPKI PEM): what JWTs are verified with. */
  publicKey: string;
  pull: { number: number; headRef: string; base: string; author: string };
  /** login → collaborator permission (default none). */
  roles: Record<string, string>;
  /** The review threads' nodes for the GraphQL query, given the replies so far. */
  threads: (replies: readonly { threadId: string; body: string }[]) => unknown[];
  /** Tokens accepted besides the installation tokens issued (a workflow's GITHUB_TOKEN). */
  tokens?: Record<string, string>;
}

export interface Seen {
  method: string;
  path: string;
  /** Who the request authenticated as: "jwt", "installation", a `tokens` name, or "none". */
  as: string;
  body: unknown;
}

export interface GitHubServer {
  host: string;
  origin: string;
  comments: ServerComment[];
  reactions: string[];
  checkRuns: { id: number; body: Record<string, unknown>; updates: Record<string, unknown>[] }[];
  replies: { threadId: string; body: string }[];
  issues: { title: string; body: string }[];
  dispatches: { workflow: string; body: Record<string, unknown> }[];
  seen: Seen[];
  problems: string[];
  /** Installation tokens issued, in order. */
  issued: string[];
  /** The head of the pull request's branch in the bare repository now. */
  head(): string;
  /** A person's comment on the pull request, as the API will list it from now on. */
  comment(login: string, body: string): ServerComment;
  /**
   * Holds the next request `match` accepts without answering it (the test kills the process
   * that sent it); resolves with it once it arrives.
   */
  hold(match: (s: Seen) => boolean): Promise<Seen>;
  close(): Promise<void>;
}

type Reply = [number, unknown] | [number, unknown, Record<string, string>];

export async function startGitHubServer(o: GitHubServerOptions): Promise<GitHubServer> {
  const R = `/repos/${o.owner}/${o.repo}`;
  let nextId = 5000;
  const issued: string[] = [];
  const holds: { match: (s: Seen) => boolean; arrived: (s: Seen) => void }[] = [];
  const git = (...args: string[]) =>
    execFileSync("git", ["--git-dir", o.bare, ...args], { encoding: "utf8" }).trim();
  const s: Omit<GitHubServer, "host" | "origin" | "close" | "hold"> = {
    comments: [],
    reactions: [],
    checkRuns: [],
    replies: [],
    issues: [],
    dispatches: [],
    seen: [],
    problems: [],
    issued,
    head: () => git("rev-parse", `refs/heads/${o.pull.headRef}`),
    comment(login, body) {
      const at = new Date().toISOString();
      const c = {
        id: ++nextId,
        body,
        user: { login, type: login.endsWith("[bot]") ? "Bot" : "User" },
        created_at: at,
        updated_at: at,
        html_url: `https://github.example${R}/pull/${o.pull.number}#issuecomment-${nextId}`,
      };
      s.comments.push(c);
      return c;
    },
  };
  const me = `${o.slug}[bot]`;

  const jwtValid = (token: string): boolean => {
    const claims = verifiedJwt(token, o.publicKey);
    return String(claims?.iss) === String(o.appId) && (claims?.exp ?? 0) * 1000 > Date.now();
  };

  const who = (req: IncomingMessage): string => {
    const header = String(req.headers.authorization ?? "");
    const bearer = /^bearer (.+)$/i.exec(header)?.[1];
    if (bearer && bearer.split(".").length === 3) return jwtValid(bearer) ? "jwt" : "bad-jwt";
    const basic = /^basic (.+)$/i.exec(header)?.[1];
    const token =
      /^(?:token|bearer) (.+)$/i.exec(header)?.[1] ??
      (basic
        ? Buffer.from(basic, "base64")
            .toString("utf8")
            .replace(/^x-access-token:/, "")
        : "");
    if (issued.includes(token)) return "installation";
    const named = Object.entries(o.tokens ?? {}).find(([, t]) => t === token);
    return named ? named[0] : header ? "bad-token" : "none";
  };

  const pull = () => ({
    number: o.pull.number,
    state: "open",
    head: {
      sha: s.head(),
      ref: o.pull.headRef,
      repo: { full_name: `${o.owner}/${o.repo}` },
    },
    base: { sha: o.pull.base, ref: "main", repo: { full_name: `${o.owner}/${o.repo}` } },
    user: { login: o.pull.author, type: "User" },
    merge_commit_sha: null,
    labels: [{ name: "terfyn:review-fix" }],
    commits: 1,
  });

  const rest = (method: string, path: string, body: unknown, as: string): Reply => {
    const b = (body ?? {}) as Record<string, unknown>;
    if (path === "/app" && method === "GET")
      return as === "jwt"
        ? [200, { id: o.appId, slug: o.slug, name: "Terfyn test", owner: { login: o.owner } }]
        : [401, { message: "A JSON web token could not be decoded" }];
    const tokenRoute = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(path);
    if (tokenRoute && method === "POST") {
      if (as !== "jwt") return [401, { message: "A JSON web token could not be decoded" }];
      if (Number(tokenRoute[1]) !== o.installation) return [404, { message: "Not Found" }];
      const token = `ghs_${String(issued.length + 1).padStart(36, "0")}`;
      issued.push(token);
      return [
        201,
        {
          token,
          expires_at: new Date(Date.now() + 3_600_000).toISOString(),
          permissions: { pull_requests: "write", contents: "write", issues: "write" },
          repository_selection: "selected",
        },
      ];
    }
    if (as === "jwt" || as === "none" || as.startsWith("bad"))
      return [401, { message: "Bad credentials" }];
    if (path === "/user") return [403, { message: "Resource not accessible by integration" }];
    if (!path.startsWith(`${R}/`)) return [404, { message: "Not Found" }];
    const p = path.slice(R.length);
    const at = new Date().toISOString();
    const identity = as === "installation" ? me : "github-actions[bot]";
    let m: string[] = [];
    const on = (verb: string, re: RegExp) => {
      m = (verb === method ? re.exec(p) : null) ?? [];
      return m.length > 0;
    };
    if (on("GET", /^\/collaborators\/([^/]+)\/permission$/)) {
      const login = decodeURIComponent(m[1] as string);
      const permission = o.roles[login] ?? "none";
      return [200, { permission, role_name: permission, user: { login } }];
    }
    if (method === "GET" && /^\/issues\/\d+\/comments$/.test(p)) return [200, s.comments];
    if (method === "POST" && /^\/issues\/\d+\/comments$/.test(p))
      return [201, s.comment(identity, String(b.body))];
    if (on("PATCH", /^\/issues\/comments\/(\d+)$/)) {
      const c = s.comments.find((x) => x.id === Number(m?.[1]));
      if (!c) return [404, { message: "Not Found" }];
      if (c.user.login !== identity) return [403, { message: "Must have admin rights" }];
      c.body = String(b.body);
      c.updated_at = at;
      return [200, c];
    }
    if (method === "POST" && /^\/issues\/\d+\/reactions$/.test(p)) {
      s.reactions.push(String(b.content));
      return [201, { id: ++nextId, content: b.content }];
    }
    if (method === "POST" && p === "/check-runs") {
      const id = ++nextId;
      s.checkRuns.push({ id, body: b, updates: [] });
      return [
        201,
        { id, html_url: `https://github.example${R}/runs/${id}`, app: { slug: o.slug } },
      ];
    }
    if (on("PATCH", /^\/check-runs\/(\d+)$/)) {
      s.checkRuns.find((c) => c.id === Number(m?.[1]))?.updates.push(b);
      return [200, { id: Number(m[1]) }];
    }
    if (method === "POST" && /^\/statuses\/[0-9a-f]{40}$/.test(p)) return [201, { id: ++nextId }];
    if (method === "GET" && /^\/commits\/[^/]+\/statuses$/.test(p)) return [200, []];
    if (method === "GET" && /^\/commits\/[0-9a-f]{40}\/pulls$/.test(p)) return [200, [pull()]];
    if (method === "GET" && p === `/pulls/${o.pull.number}`) return [200, pull()];
    if (method === "GET" && p === `/pulls/${o.pull.number}/commits`)
      return [
        200,
        [
          {
            sha: s.head(),
            commit: { message: "change", author: { name: "a" }, committer: { name: "c" } },
            author: { login: o.pull.author, type: "User" },
            committer: { login: "web-flow", type: "User" },
          },
        ],
      ];
    if (on("GET", /^\/compare\/([0-9a-f]{40})\.\.\.([0-9a-f]{40})$/)) {
      const ahead = Number(git("rev-list", "--count", `${m[1]}..${m[2]}`));
      const behind = Number(git("rev-list", "--count", `${m[2]}..${m[1]}`));
      return [
        200,
        {
          ahead_by: ahead,
          behind_by: behind,
          status: behind ? (ahead ? "diverged" : "behind") : ahead ? "ahead" : "identical",
        },
      ];
    }
    if (method === "GET" && p === "/issues")
      return [
        200,
        s.issues.map((i, n) => ({
          id: 101 + n,
          number: 101 + n,
          title: i.title,
          body: i.body,
          state: "open",
          user: { login: identity, type: "Bot" },
          html_url: `https://github.example${R}/issues/${101 + n}`,
        })),
      ];
    if (method === "POST" && p === "/issues") {
      s.issues.push({ title: String(b.title), body: String(b.body) });
      const n = 100 + s.issues.length;
      return [201, { number: n, html_url: `https://github.example${R}/issues/${n}` }];
    }
    if (method === "PUT" && /^\/issues\/\d+\/labels$/.test(p))
      return [200, ((b.labels as string[]) ?? []).map((name) => ({ name }))];
    if (on("POST", /^\/actions\/workflows\/([^/]+)\/dispatches$/)) {
      s.dispatches.push({ workflow: decodeURIComponent(m[1] as string), body: b });
      return [204, ""];
    }
    return [404, { message: "Not Found" }];
  };

  const graphql = (body: unknown, as: string): Reply => {
    if (as !== "installation" && !Object.hasOwn(o.tokens ?? {}, as))
      return [401, { message: "Bad credentials" }];
    const b = body as { query: string; variables: Record<string, unknown> };
    if (b.query.includes("TerfynThreadReply")) {
      s.replies.push({ threadId: String(b.variables.threadId), body: String(b.variables.body) });
      return [
        200,
        {
          data: {
            addPullRequestReviewThreadReply: { comment: { id: `R${s.replies.length}`, url: "u" } },
          },
        },
      ];
    }
    return [
      200,
      {
        data: {
          repository: {
            pullRequest: {
              number: o.pull.number,
              headRefName: o.pull.headRef,
              headRefOid: s.head(),
              baseRefOid: o.pull.base,
              isCrossRepository: false,
              reviewThreads: {
                pageInfo: { hasNextPage: false, endCursor: null },
                nodes: o.threads(s.replies),
              },
            },
          },
        },
      },
    ];
  };

  /** Git's smart HTTP through `git http-backend` (CGI), for the installation's token only. */
  const gitHttp = (req: IncomingMessage, res: ServerResponse, url: URL, as: string) => {
    if (as === "none") {
      res.writeHead(401, { "www-authenticate": 'Basic realm="GitHub"' });
      res.end();
      return;
    }
    if (as !== "installation" && !Object.hasOwn(o.tokens ?? {}, as)) {
      res.writeHead(403);
      res.end();
      return;
    }
    const prefix = `/${o.owner}/${o.repo}.git`;
    const cgi = spawn("git", ["http-backend"], {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        GIT_PROJECT_ROOT: o.bare,
        GIT_HTTP_EXPORT_ALL: "1",
        PATH_INFO: url.pathname.slice(prefix.length) || "/",
        QUERY_STRING: url.search.replace(/^\?/, ""),
        REQUEST_METHOD: req.method ?? "GET",
        CONTENT_TYPE: String(req.headers["content-type"] ?? ""),
        REMOTE_USER: "x-access-token",
        REMOTE_ADDR: "127.0.0.1",
        ...(req.headers["git-protocol"]
          ? { GIT_PROTOCOL: String(req.headers["git-protocol"]) }
          : {}),
      },
    });
    req.pipe(cgi.stdin);
    const out: Buffer[] = [];
    cgi.stdout.on("data", (c: Buffer) => out.push(c));
    cgi.on("close", () => {
      const all = Buffer.concat(out);
      const split = all.indexOf("\r\n\r\n");
      const head = all.subarray(0, split).toString("utf8");
      const headers: Record<string, string> = {};
      let status = 200;
      for (const line of head.split("\r\n")) {
        const i = line.indexOf(":");
        const k = line.slice(0, i).toLowerCase();
        const v = line.slice(i + 1).trim();
        if (k === "status") status = Number(v.split(" ")[0]);
        else headers[k] = v;
      }
      res.writeHead(status, headers);
      res.end(all.subarray(split + 4));
    });
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const as = who(req);
    if (url.pathname.startsWith(`/${o.owner}/${o.repo}.git/`)) {
      s.seen.push({ method: req.method ?? "", path: `git ${url.pathname}`, as, body: undefined });
      gitHttp(req, res, url, as);
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = text;
      }
      const method = req.method ?? "GET";
      const isGraphql = url.pathname === "/api/graphql";
      let path = url.pathname;
      if (!isGraphql) {
        if (!path.startsWith("/api/v3/")) {
          s.problems.push(`${method} ${path}: not under GitHub Enterprise's /api/v3`);
          res.writeHead(404).end();
          return;
        }
        path = path.slice("/api/v3".length);
      }
      const seen: Seen = { method, path: isGraphql ? "/graphql" : path, as, body };
      s.seen.push(seen);
      // The App's own routes are not in the description fixture (Terfyn's gateway never sends
      // them; Octokit's App auth does), so they are checked here by their JWT instead.
      if (!path.startsWith("/app"))
        s.problems.push(
          ...(isGraphql
            ? graphqlProblems(body)
            : openApiProblems({ method, path: `${path}${url.search}`, body })),
        );
      const held = holds.findIndex((h) => h.match(seen));
      if (held >= 0) {
        const [h] = holds.splice(held, 1);
        h?.arrived(seen);
        return; // never answered: the sender is about to be killed
      }
      const [status, answer, headers] = isGraphql
        ? graphql(body, as)
        : rest(method, path, body, as);
      res.writeHead(status, { "content-type": "application/json", ...(headers ?? {}) });
      res.end(status === 204 ? undefined : JSON.stringify(answer));
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(s, {
    host: `127.0.0.1:${port}`,
    origin: `http://127.0.0.1:${port}`,
    hold: (match: (x: Seen) => boolean) =>
      new Promise<Seen>((arrived) => holds.push({ match, arrived })),
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  });
}
