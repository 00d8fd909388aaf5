/**
 * The App authenticates as GitHub Apps do (issue 23, item 1): Probot built with an App id and
 * a real RSA private key signs a JWT, asks `POST /app/installations/{id}/access_tokens` for an
 * installation token, and every handler's request carries that token. The gateway's guard
 * admits exactly that route (and still refuses every other one). On GitHub Enterprise
 * (`baseUrl` .../api/v3) paginated requests carry the `/api/v3` prefix and are judged without
 * it. Nothing is faked in the auth path: the JWT is verified against the public key.
 */
import nock from "nock";
import { Probot } from "probot";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ForbiddenRequestError, refusal } from "../src/adapters/github/gateway.ts";
import { type ReviewRunner, terfynApp } from "../src/app/app.ts";
import { fixture, OWNER, REPO } from "./helpers/action-harness.ts";
import { appKeyPair, verifiedJwt } from "./helpers/app-key.ts";
import { TestOctokit } from "./helpers/probot-octokit.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

const { privateKey, publicKey } = appKeyPair();
const INSTALLATION = 4242;
const TOKEN = "ghs_installationtoken0000000000000000";

function jwtValid(authorization: string | undefined): boolean {
  return String(verifiedJwt(authorization, publicKey)?.iss) === "123";
}

function labeled(): Record<string, unknown> {
  // biome-ignore lint/suspicious/noExplicitAny: a webhook example payload, adapted field by field
  const p = fixture("pull_request.labeled") as Record<string, any>;
  p.number = 7;
  p.pull_request.number = 7;
  p.pull_request.head.sha = "1".repeat(40);
  p.label = { ...(p.label ?? {}), name: "terfyn:review-fix" };
  p.sender = { ...p.sender, login: "maria", type: "User" };
  p.repository.name = REPO;
  p.repository.owner.login = OWNER;
  p.repository.full_name = `${OWNER}/${REPO}`;
  p.installation = { id: INSTALLATION, node_id: "x" };
  return p;
}

const runner: ReviewRunner = {
  start: () => {},
  approve: () => {},
  stop: () => {},
  recover: () => {},
};

describe("the App authenticates as a GitHub App", () => {
  for (const [where, base] of [
    ["github.com", "https://api.github.com"],
    ["GitHub Enterprise", "https://ghe.example/api/v3"],
  ] as const) {
    it(`on ${where}: a JWT, then an installation token that every handler request carries`, async () => {
      const seen: { route: string; auth: string | undefined }[] = [];
      const path = new URL(base).pathname.replace(/\/$/, "");
      const api = nock(new URL(base).origin)
        .persist()
        .post(`${path}/app/installations/${INSTALLATION}/access_tokens`)
        .reply(function () {
          seen.push({ route: "token", auth: this.req.headers.authorization as string });
          return [
            201,
            {
              token: TOKEN,
              expires_at: new Date(Date.now() + 3_600_000).toISOString(),
              permissions: { pull_requests: "write" },
              repository_selection: "selected",
            },
          ];
        })
        .get(new RegExp(`^${path}/repos/${OWNER}/${REPO}/collaborators/maria/permission$`))
        .reply(function () {
          seen.push({ route: "permission", auth: this.req.headers.authorization as string });
          return [200, { permission: "read", role_name: "triage", user: { login: "maria" } }];
        })
        .post(new RegExp(`^${path}/repos/${OWNER}/${REPO}/issues/7/comments$`))
        .reply(function () {
          seen.push({ route: "comment", auth: this.req.headers.authorization as string });
          return [201, { id: 1, html_url: "https://x/1" }];
        })
        .get(new RegExp(`^${path}/repos/${OWNER}/${REPO}/issues/7/comments`))
        .reply(function (uri) {
          seen.push({ route: "list", auth: this.req.headers.authorization as string });
          // Two pages: the second is asked for by its full URL, /api/v3 and all.
          if (!uri.includes("page=2"))
            return [
              200,
              [],
              { link: `<${base}/repos/${OWNER}/${REPO}/issues/7/comments?page=2>; rel="next"` },
            ];
          return [200, []];
        })
        // Whatever else the handler sends (reaction, check run, ...): recorded, answered.
        .post(/.*/)
        .reply(function (uri) {
          seen.push({ route: `POST ${uri}`, auth: this.req.headers.authorization as string });
          return [201, { id: 2, html_url: "https://x/2", content: "eyes" }];
        })
        .patch(/.*/)
        .reply(function (uri) {
          seen.push({ route: `PATCH ${uri}`, auth: this.req.headers.authorization as string });
          return [200, { id: 2, html_url: "https://x/2" }];
        })
        .get(/.*/)
        .reply(function (uri) {
          seen.push({ route: `GET ${uri}`, auth: this.req.headers.authorization as string });
          return [200, {}];
        });
      const probot = new Probot({
        appId: 123,
        privateKey,
        baseUrl: base,
        Octokit: TestOctokit,
        logLevel: "fatal",
      });
      probot.load(terfynApp({ appSlug: "terfyn-test", runner, now: () => new Date() }));
      await probot.receive({ id: "d1", name: "pull_request", payload: labeled() as never });
      api.persist(false);
      const token = seen.filter((s) => s.route === "token");
      expect(token).toHaveLength(1);
      expect(jwtValid(token[0]?.auth)).toBe(true);
      const handler = seen.filter((s) => s.route !== "token");
      // The handler asked for the sender's role, and listed comments over two pages.
      expect(handler.map((s) => s.route)).toContain("permission");
      expect(handler.filter((s) => s.route === "list")).toHaveLength(2);
      for (const s of handler) expect(s.auth, s.route).toBe(`token ${TOKEN}`);
    });
  }

  it("caches the installation token across deliveries and renews it before it expires", async () => {
    let tokens = 0;
    const api = nock("https://api.github.com")
      .persist()
      .post(`/app/installations/${INSTALLATION}/access_tokens`)
      .reply(() => {
        tokens++;
        return [
          201,
          {
            token: `${TOKEN}${tokens}`,
            expires_at: new Date(Date.now() + 3_600_000).toISOString(),
            permissions: { pull_requests: "write" },
            repository_selection: "selected",
          },
        ];
      })
      .get(/.*/)
      .reply(200, [])
      .post(/.*/)
      .reply(201, { id: 2, html_url: "https://x/2", content: "eyes" })
      .patch(/.*/)
      .reply(200, { id: 2, html_url: "https://x/2" });
    const probot = new Probot({ appId: 123, privateKey, Octokit: TestOctokit, logLevel: "fatal" });
    probot.load(terfynApp({ appSlug: "terfyn-test", runner, now: () => new Date() }));
    const deliver = (id: string) =>
      probot.receive({ id, name: "pull_request", payload: labeled() as never });
    const start = Date.now();
    vi.useFakeTimers({ now: start, toFake: ["Date"] });
    try {
      await deliver("d1");
      await deliver("d2");
      expect(tokens).toBe(1); // cached: one token for both deliveries
      vi.setSystemTime(start + 61 * 60_000); // past GitHub's one-hour expiry
      await deliver("d3");
      expect(tokens).toBe(2); // renewed
    } finally {
      vi.useRealTimers();
      api.persist(false);
    }
  });

  it("the guard admits the installation-token route and nothing else under /app", () => {
    expect(refusal("POST", `/app/installations/${INSTALLATION}/access_tokens`)).toBeUndefined();
    expect(refusal("GET", "/app/installations")).toMatch(/not a request Terfyn makes/);
    expect(refusal("POST", "/app/installations/1/suspended")).toBeDefined();
    expect(refusal("DELETE", "/app/installations/1")).toMatch(/never deletes/);
    expect(new ForbiddenRequestError("x")).toBeInstanceOf(Error);
  });
});
