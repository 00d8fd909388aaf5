/**
 * The App's in-process runner over examples/review-fix, offline: the example's repository (a
 * real defect, served through a bare remote on disk), GitHub's GraphQL side and its issues as
 * fakes on nock, the webhooks delivered with probot.receive. Shared by the app-*runner* tests
 * and the Action's review-fix tests (whose replies and tickets are github-actions'); each test
 * file disables net connect itself.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nock from "nock";
import { Probot } from "probot";
import { expect } from "vitest";
import { type ReviewFixResult, reviewFix } from "../../src/action/review-fix.ts";
import { readProjectDirectory } from "../../src/adapters/fs/read-project.ts";
import { hostFacts } from "../../src/adapters/fs/run-lock.ts";
import { createGateway } from "../../src/adapters/github/gateway.ts";
import { appEffects } from "../../src/adapters/github/review-effects.ts";
import { stateMac } from "../../src/adapters/github/run-state-ref.ts";
import { ModelRouter } from "../../src/adapters/models/model-router.ts";
import { ScriptedModel } from "../../src/adapters/models/model-script.ts";
import {
  agentsProjectDir,
  type InProcessRunner,
  inProcessRunner,
} from "../../src/adapters/review/review-runner.ts";
import { terfynApp } from "../../src/app/app.ts";
import { parseLedger } from "../../src/core/app/triggers.ts";
import { type ModelPort, ModelUnavailable } from "../../src/core/engine/ports.ts";
import { validateProject } from "../../src/core/validate.ts";
import { API, fixture, OWNER, REPO, recordRequests } from "./action-harness.ts";
import { type FakeComment, fakeGitHub, humanComment } from "./fake-github.ts";
import { TestOctokit } from "./probot-octokit.ts";
import { testSandbox } from "./sandbox.ts";

// biome-ignore lint/suspicious/noExplicitAny: webhook example payloads are loose JSON, adapted field by field
export type Loose = Record<string, any>;

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

export interface RequestThread {
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
 * The example's review threads as GitHub's GraphQL API lists them (reviewThreads nodes), with
 * the replies added so far (authored by the App's Bot `slug`) at the end of their thread.
 */
export function reviewThreadNodes(
  ex: Example,
  replies: readonly { threadId: string; body: string }[],
  slug: string,
) {
  const request = JSON.parse(readFileSync(ex.request, "utf8")) as { threads: RequestThread[] };
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
  return request.threads.map((t) => ({
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
    /** Creating an issue answers this HTTP status (listing them still works). */
    failTicket?: number;
    /** Whose replies and tickets these are (default the test App's). */
    slug?: string;
  } = {},
) {
  const slug = opts.slug ?? SLUG;
  const replies: { threadId: string; body: string }[] = [];
  const issues: { title: string; body: string; author?: string }[] = [];
  const threads = () => reviewThreadNodes(ex, replies, slug);
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
      if (opts.failTicket)
        return [
          opts.failTicket,
          opts.failTicket === 422
            ? { message: "Validation Failed", errors: [{ resource: "Issue", code: "invalid" }] }
            : { message: "Resource not accessible by integration" },
        ];
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

export function labeled(ex: Example): Loose {
  const p = fixture("pull_request.labeled") as Loose;
  p.number = 7;
  p.pull_request.number = 7;
  p.pull_request.head.sha = ex.head;
  p.pull_request.head.ref = "fix-add";
  p.pull_request.user.login = "alice";
  p.label = { ...(p.label ?? {}), name: "terfyn:review-fix" };
  p.sender = { ...p.sender, login: "maria", type: "User" };
  p.repository.name = REPO;
  p.repository.owner.login = OWNER;
  p.repository.full_name = `${OWNER}/${REPO}`;
  p.pull_request.base.repo.full_name = `${OWNER}/${REPO}`;
  p.pull_request.head.repo.full_name = `${OWNER}/${REPO}`;
  return p;
}

export function commented(body: string, user = "maria"): Loose {
  const p = fixture("issue_comment.created") as Loose;
  p.issue.number = 7;
  p.issue.pull_request = { url: `${API}/repos/${OWNER}/${REPO}/pulls/7` };
  p.comment.body = body;
  p.comment.user = { ...p.comment.user, login: user, type: "User" };
  p.repository.name = REPO;
  p.repository.owner.login = OWNER;
  return p;
}

export function probotWith(runner: InProcessRunner) {
  const probot = new Probot({
    githubToken: "test",
    Octokit: TestOctokit,
    logLevel: "fatal",
  });
  probot.load(terfynApp({ appSlug: SLUG, runner, now: () => new Date(T0) }));
  let n = 0;
  return (name: string, payload: Loose) =>
    probot.receive({
      id: `delivery-${++n}`,
      name: name as "pull_request",
      payload: payload as never,
    });
}

export const status = (comments: FakeComment[]) => {
  const mine = comments.filter((c) => c.user.login === APP && parseLedger(c.body));
  expect(mine).toHaveLength(1);
  return { body: mine[0]!.body, ledger: parseLedger(mine[0]!.body)! };
};

/** A writer's approval, posted after the gate began (at `at`, LATER unless said). */
export function approval(comments: FakeComment[], hash: string, at = LATER): string {
  const c = humanComment("maria", `Read it; fine.\n\n/terfyn approve ${hash}`);
  c.created_at = at;
  c.updated_at = at;
  comments.push(c);
  return c.body;
}

/** The in-process runner over the example's bare remote, in a fresh runs directory. */
export const exampleRunner = async (
  ex: Example,
  extra: Partial<Parameters<typeof inProcessRunner>[0]> = {},
) =>
  inProcessRunner({
    appSlug: SLUG,
    runsDir: mkdtempSync(join(tmpdir(), "terfyn-app-runs-")),
    agents: await agents(),
    sandbox: await testSandbox(),
    model,
    cloneUrl: () => ex.origin,
    now: () => new Date(T0),
    log: () => {},
    ...extra,
  });

/** A pull request on the example where maria may write. */
export const writer = (ex: Example) =>
  fakeGitHub({
    me: APP,
    roles: { maria: { role_name: "write", permission: "write" } },
    pr: { headSha: ex.head, baseSha: ex.base, author: "alice" },
  });

/** The App's effects for a run's directories, as a resumed publish builds them. */
export const runEffects = async (
  run: string,
  p: { clone: string; worktree: string; run: string },
) =>
  appEffects({
    gateway: createGateway(
      "t",
      { owner: OWNER, repo: REPO },
      { fetch: globalThis.fetch, retries: 0 },
    ),
    repo: { owner: OWNER, repo: REPO },
    pullRequest: 7,
    triggerAt: T0,
    run,
    appSlug: SLUG,
    cloneDir: p.clone,
    worktreeDir: p.worktree,
    runDir: p.run,
    git: {},
    agents: await agents(),
    model: await model(),
    sandbox: await testSandbox(),
    progress: () => {},
  });

/**
 * Polls `f` until it answers (a background session's progress, a process's report): its
 * answer, or a failure naming `what` after `ms`. `f` may throw to fail at once.
 */
export async function until<T>(
  f: () => T | undefined | false,
  ms = 90_000,
  what = "a condition",
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Label → plan gate → approval → publish gate → approval: the run's publish, however it ends. */
export async function throughPublish(
  ex: Example,
  gh: ReturnType<typeof fakeGitHub>,
  extra: Partial<Parameters<typeof inProcessRunner>[0]> = {},
) {
  const runner = await exampleRunner(ex, extra);
  const receive = probotWith(runner);
  await receive("pull_request", labeled(ex));
  await runner.idle();
  for (const gate of ["plan", "publish"]) {
    const s = status(gh.comments);
    expect(s.ledger.gate).toBe(gate);
    await receive("issue_comment", commented(approval(gh.comments, s.ledger.hash!)));
    await runner.idle();
  }
  return { runner, run: status(gh.comments).ledger.run };
}

/**
 * The example with an App process whose Planner never answers (the process is about to die):
 * the label is delivered and the run is left `running` in phase plan. Returns the example, its
 * fake GitHub and runs directory, that runner, the run and a reader of the run's state.
 */
export async function leftRunningAtPlan() {
  const ex = build();
  const gh = writer(ex);
  fakeGraphql(ex);
  const runsDir = mkdtempSync(join(tmpdir(), "terfyn-app-runs-"));
  let hung = false;
  const first = await exampleRunner(ex, {
    runsDir,
    model: async () => {
      const m = await model();
      return {
        turn: (r) => {
          if (r.agent !== "Planner") return m.turn(r);
          hung = true;
          return new Promise(() => {});
        },
      };
    },
  });
  await probotWith(first)("pull_request", labeled(ex));
  await until(() => hung);
  const run = status(gh.comments).ledger.run;
  /** The run's state.json as the runs directory has it now. */
  const state = () =>
    JSON.parse(readFileSync(join(first.paths(run).run, "state.json"), "utf8")) as Loose;
  return { ex, gh, runsDir, first, run, state };
}

/** The example's model, recording in `calls` which agent each turn is for. */
export const countingModel = (calls: string[]) => async () => {
  const m = await model();
  return {
    turn: (r: Parameters<typeof m.turn>[0]) => {
      calls.push(r.agent);
      return m.turn(r);
    },
  };
};

/**
 * The example's model, recording which agent each turn is for in `calls`, whose API does not
 * answer `agent` (ModelUnavailable, as the Anthropic adapter throws it after its retries) while
 * `down()` says so.
 */
export const outageModel =
  (calls: string[], down: () => boolean, agent = "Builder") =>
  async () => {
    const m = await model();
    return {
      turn: (r: Parameters<typeof m.turn>[0]) => {
        calls.push(r.agent);
        if (down() && r.agent === agent)
          throw new ModelUnavailable("the API answered 529 after retries: Overloaded");
        return m.turn(r);
      },
    };
  };

/**
 * The App restarted on `runsDir`: the earlier process's pid is gone. Its model records which
 * agents it is asked for in `calls`, its log lines go to `lines`.
 */
export const restartedRunner = (
  ex: Example,
  runsDir: string,
  calls: string[],
  lines: string[] = [],
) =>
  exampleRunner(ex, {
    runsDir,
    model: countingModel(calls),
    lockFacts: { host: hostFacts.host, pidAlive: () => false },
    log: (l) => lines.push(l),
  });

/** The workflow's state key in tests (input `state-key`): what signs the run's state. */
export const STATE_KEY = "terfyn-test-state-key-".padEnd(64, "k");

/**
 * A run's state as someone who can push forges it: the saved state at
 * `refs/terfyn/runs/<run>` of `origin`, changed by `edit` in a checkout of it, committed as the
 * ref's next commit and pushed. Signed with `key` (a writer who also holds the workflow's state
 * key), or unsigned when `key` is undefined. Returns the forged commit.
 */
export function forgeState(
  origin: string,
  run: string,
  edit: (work: string) => void,
  key: string | null = STATE_KEY,
): string {
  const work = mkdtempSync(join(tmpdir(), "terfyn-forge-"));
  execFileSync("git", ["init", "-q", work]);
  git(work, "fetch", "-q", origin, `refs/terfyn/runs/${run}`);
  git(work, "checkout", "-q", "FETCH_HEAD");
  edit(work);
  git(work, "add", "-A");
  const files = new Map(
    git(work, "ls-files", "-z")
      .split("\0")
      .filter((p) => p !== "")
      .map((p) => [p, readFileSync(join(work, p))] as const),
  );
  const mac =
    key === null
      ? ""
      : `\n\nTerfyn-State-MAC: hmac-sha256:${stateMac(Buffer.from(key), run, files)}`;
  git(
    work,
    "-c",
    "user.name=m",
    "-c",
    "user.email=m@x",
    "commit",
    "--allow-empty",
    "-qm",
    `forged${mac}`,
  );
  git(work, "push", "-q", origin, `HEAD:refs/terfyn/runs/${run}`);
  return git(work, "rev-parse", "HEAD");
}

/**
 * One job of the Action's review-fix mode on a fresh machine (an empty runs directory), with
 * the inputs a dispatch gives, against the bare remote `origin`; every request is checked
 * against the OpenAPI fixture.
 */
export async function reviewFixJob(
  origin: string,
  inputs: Record<string, string>,
  jobModel: () => Promise<ModelPort> = model,
  runsDir = mkdtempSync(join(tmpdir(), "terfyn-rf-job-")),
): Promise<ReviewFixResult> {
  const all: Record<string, string> = { "github-token": "t", "state-key": STATE_KEY, ...inputs };
  const rec = recordRequests();
  try {
    return await reviewFix(
      (name) => all[name] ?? "",
      { GITHUB_REPOSITORY: `${OWNER}/${REPO}` },
      {
        gatewayFor: (token, repo) =>
          createGateway(token, repo, { fetch: globalThis.fetch, retries: 0 }),
        info: () => {},
        repoUrl: origin,
        runsDir,
        agents: await agents(),
        model: jobModel,
        now: () => new Date(T0),
      },
    );
  } finally {
    rec.stop();
    expect(rec.problems).toEqual([]);
  }
}
