/**
 * Placement (issue 12 item 7): with `placement: actions` a writer's label dispatches the run onto
 * the repository's own runners (one workflow_dispatch on the default branch, the pull request
 * and head as inputs) instead of running it in process. Real webhook payloads through
 * `probot.receive`, GitHub as the nock fake, every request checked against the OpenAPI fixture.
 */
import nock from "nock";
import { Probot } from "probot";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Placement, placementFromEnv, type ReviewRunner, terfynApp } from "../src/app/app.ts";
import { webBaseUrl } from "../src/core/app/app-env.ts";
import { parseLedger } from "../src/core/app/triggers.ts";
import { API, fixture, OWNER, REPO, recordRequests } from "./helpers/action-harness.ts";
import { fakeGitHub, humanComment } from "./helpers/fake-github.ts";
import { TestOctokit } from "./helpers/probot-octokit.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

// biome-ignore lint/suspicious/noExplicitAny: webhook example payloads are loose JSON
type Loose = Record<string, any>;

const HEAD = "1".repeat(40);
const SLUG = "terfyn-test";
const APP = `${SLUG}[bot]`;
const WORKFLOW = "terfyn-review-fix.yml";
const ACTIONS: Placement = { kind: "actions", workflow: WORKFLOW };

function recordingRunner() {
  const calls: string[] = [];
  const runner: ReviewRunner = {
    start: (job) => calls.push(`start ${job.pullRequest} ${job.head}`),
    approve: (_job, _l, by) => calls.push(`approve ${by.login}`),
    stop: (_job, _l, reason) => calls.push(`stop ${reason}`),
    recover: (job) => calls.push(`recover ${job.run}`),
    interrupted: async () => {
      calls.push("interrupted");
      return [];
    },
  };
  return { runner, calls };
}

/** The dispatch route on the fake: records each request's workflow and body. */
function dispatches(status = 204) {
  const seen: { workflow: string; body: Loose }[] = [];
  nock(API)
    .persist()
    .post(new RegExp(`^/repos/${OWNER}/${REPO}/actions/workflows/[^/]+/dispatches$`))
    .reply((uri, body) => {
      seen.push({
        workflow: decodeURIComponent(uri.split("/").slice(-2)[0] as string),
        body: body as Loose,
      });
      return status === 204 ? [204, ""] : [status, { message: "Not Found" }];
    });
  return seen;
}

async function receive(
  name: string,
  payload: Loose,
  runner: ReviewRunner,
  placement?: Placement,
  webUrl?: string,
) {
  const probot = new Probot({
    githubToken: "test",
    Octokit: TestOctokit,
    logLevel: "fatal",
  });
  probot.load(
    terfynApp({
      appSlug: SLUG,
      runner,
      ...(placement ? { placement } : {}),
      ...(webUrl ? { webUrl } : {}),
      now: () => new Date("2026-12-01T10:00:00Z"),
    }),
  );
  const rec = recordRequests();
  try {
    await probot.receive({ id: "d-1", name: name as "pull_request", payload: payload as never });
  } finally {
    rec.stop();
  }
  expect(rec.problems).toEqual([]);
  return rec.requests;
}

function labeled(): Loose {
  const p = fixture("pull_request.labeled") as Loose;
  p.number = 7;
  p.pull_request.number = 7;
  p.pull_request.head.sha = HEAD;
  p.pull_request.head.ref = "feature";
  p.pull_request.user.login = "alice";
  p.label = { ...(p.label ?? {}), name: "terfyn:review-fix" };
  p.sender = { ...p.sender, login: "maria", type: "User" };
  p.repository.name = REPO;
  p.repository.owner.login = OWNER;
  p.repository.full_name = `${OWNER}/${REPO}`;
  p.repository.default_branch = "main";
  p.pull_request.base.repo.full_name = `${OWNER}/${REPO}`;
  p.pull_request.head.repo.full_name = `${OWNER}/${REPO}`;
  return p;
}

const writer = { maria: { role_name: "write", permission: "write" } };

describe("placement: actions", () => {
  it("a writer's label sends one workflow_dispatch on the default branch with the pull request and head; nothing runs in process", async () => {
    const gh = fakeGitHub({ me: APP, roles: writer });
    const seen = dispatches();
    const r = recordingRunner();
    const requests = await receive("pull_request", labeled(), r.runner, ACTIONS);
    gh.done();
    expect(seen).toEqual([
      {
        workflow: WORKFLOW,
        body: {
          ref: "main",
          inputs: { "pull-request": "7", "head-sha": HEAD, run: expect.stringMatching(/^pr7-/) },
        },
      },
    ]);
    expect(
      requests.filter((q) => q.path.endsWith("/dispatches")).map((q) => `${q.method} ${q.path}`),
    ).toEqual([`POST /repos/${OWNER}/${REPO}/actions/workflows/${WORKFLOW}/dispatches`]);
    expect(r.calls).toEqual([]);
    const status = gh.comments.find((c) => c.user.login === APP);
    expect(status?.body).toContain("dispatched to GitHub Actions");
    expect(status?.body).toContain(
      `(https://github.com/${OWNER}/${REPO}/actions/workflows/${WORKFLOW})`,
    );
    expect(parseLedger(status?.body ?? "")).toMatchObject({
      run: seen[0]?.body.inputs.run,
      pull_request: 7,
      head: HEAD,
      phase: "dispatched",
    });
    expect(parseLedger(status?.body ?? "")?.terminal).toBeUndefined();
  });

  it("on GitHub Enterprise the status comment links the workflow's runs on that server", async () => {
    const gh = fakeGitHub({ me: APP, roles: writer });
    dispatches();
    const web = webBaseUrl({ GHE_HOST: "ghe.example.com:8443" });
    expect(web).toBe("https://ghe.example.com:8443");
    await receive("pull_request", labeled(), recordingRunner().runner, ACTIONS, web);
    gh.done();
    const status = gh.comments.find((c) => c.user.login === APP);
    expect(status?.body).toContain(
      `(https://ghe.example.com:8443/${OWNER}/${REPO}/actions/workflows/${WORKFLOW})`,
    );
    expect(status?.body).not.toContain("https://github.com/");
  });

  it("by default (in-process) the same label starts the runner and dispatches nothing", async () => {
    const gh = fakeGitHub({ me: APP, roles: writer });
    const seen = dispatches();
    const r = recordingRunner();
    await receive("pull_request", labeled(), r.runner);
    gh.done();
    expect(seen).toEqual([]);
    expect(r.calls).toEqual(["interrupted", `start 7 ${HEAD}`]);
  });

  it("a dispatch GitHub refuses (no such workflow) ends the run stuck with the cause, and nothing runs in process", async () => {
    const gh = fakeGitHub({ me: APP, roles: writer });
    const seen = dispatches(404);
    const r = recordingRunner();
    await receive("pull_request", labeled(), r.runner, ACTIONS);
    gh.done();
    expect(seen).toHaveLength(1);
    expect(r.calls).toEqual([]);
    const status = gh.comments.find((c) => c.user.login === APP);
    expect(parseLedger(status?.body ?? "")?.terminal).toBe("stuck");
    expect(status?.body).toContain("HTTP 404");
    expect(status?.body).toContain("workflow\\_dispatch");
  });

  it("a redelivered label for a dispatched run dispatches nothing more and resumes nothing in process", async () => {
    const ledger = { run: "pr7-abc", pull_request: 7, head: HEAD, phase: "dispatched" };
    const marker = `<!-- terfyn:ledger ${Buffer.from(JSON.stringify(ledger)).toString("base64url")} -->`;
    const gh = fakeGitHub({
      me: APP,
      roles: writer,
      comments: [{ ...humanComment(APP, `${marker}\nstatus`), user: { login: APP, type: "Bot" } }],
    });
    const seen = dispatches();
    const r = recordingRunner();
    await receive("pull_request", labeled(), r.runner, ACTIONS);
    gh.done();
    expect(seen).toEqual([]);
    expect(r.calls).toEqual([]);
  });
});

function commented(body: string): Loose {
  const p = fixture("issue_comment.created") as Loose;
  p.issue.number = 7;
  p.issue.pull_request = { url: `https://api.github.com/repos/${OWNER}/${REPO}/pulls/7` };
  p.comment.body = body;
  p.comment.user = { ...p.comment.user, login: "maria", type: "User" };
  p.repository.name = REPO;
  p.repository.owner.login = OWNER;
  return p;
}

describe("comment commands on a dispatched run", () => {
  const ledger = { run: "pr7-abc", pull_request: 7, head: HEAD, phase: "dispatched" };
  const marker = `<!-- terfyn:ledger ${Buffer.from(JSON.stringify(ledger)).toString("base64url")} -->`;
  const appStatus = () => ({
    ...humanComment(APP, `${marker}\nstatus`),
    user: { login: APP, type: "Bot" },
  });
  const onRun = (extra: Partial<Parameters<typeof fakeGitHub>[0]> = {}) =>
    fakeGitHub({
      me: APP,
      roles: { ...writer, tom: { role_name: "triage", permission: "triage" } },
      pr: { headSha: HEAD, baseSha: "b".repeat(40), author: "alice" },
      comments: [appStatus()],
      ...extra,
    });
  const withDefault = (c: Loose) => {
    c.repository.default_branch = "main";
    return c;
  };

  for (const body of ["/terfyn stop", `/terfyn approve sha256:${"e".repeat(64)}`]) {
    it(`a writer's ${body.split(" ").slice(0, 2).join(" ")} is passed on as a new dispatch for the run; no runner here`, async () => {
      const gh = onRun();
      const seen = dispatches();
      const r = recordingRunner();
      await receive("issue_comment", withDefault(commented(body)), r.runner, ACTIONS);
      gh.done();
      expect(r.calls).toEqual([]);
      expect(seen).toEqual([
        {
          workflow: WORKFLOW,
          body: { ref: "main", inputs: { "pull-request": "7", "head-sha": HEAD, run: "pr7-abc" } },
        },
      ]);
      // The App's comment says it was passed on; its ledger stays the dispatched run's.
      expect(gh.comments).toHaveLength(1);
      expect(gh.comments[0]?.body).toContain("was passed on to the run on GitHub Actions");
      expect(parseLedger(gh.comments[0]?.body ?? "")).toMatchObject({
        run: "pr7-abc",
        phase: "dispatched",
      });
    });
  }

  for (const [name, login, body, says] of [
    [
      "the pull request's author's approval",
      "alice",
      `/terfyn approve sha256:${"e".repeat(64)}`,
      "the pull request's author cannot approve",
    ],
    ["a triage user's command", "tom", "/terfyn stop", "needs write or higher"],
  ] as const) {
    it(`${name} is not passed on`, async () => {
      const gh = onRun({
        roles: {
          alice: { role_name: "write", permission: "write" },
          tom: { role_name: "triage", permission: "triage" },
        },
      });
      const seen = dispatches();
      const c = withDefault(commented(body));
      c.comment.user.login = login;
      await receive("issue_comment", c, recordingRunner().runner, ACTIONS);
      gh.done();
      expect(seen).toEqual([]);
      expect(gh.comments.at(-1)?.body).toContain(says);
    });
  }

  it("a dispatch GitHub refuses is said in a reply, and nothing else changes", async () => {
    const gh = onRun();
    const seen = dispatches(404);
    await receive(
      "issue_comment",
      withDefault(commented("/terfyn stop")),
      recordingRunner().runner,
      ACTIONS,
    );
    gh.done();
    expect(seen).toHaveLength(1);
    expect(gh.comments.at(-1)?.body).toMatch(/was not passed on to run `pr7-abc`.*HTTP 404/);
    expect(parseLedger(gh.comments[0]?.body ?? "")?.terminal).toBeUndefined();
  });

  it("a push to the branch is passed on (the job ends the run) and the App's ledger ends", async () => {
    const gh = onRun();
    const seen = dispatches();
    const p = fixture("pull_request.synchronize") as Loose;
    const moved = "2".repeat(40);
    p.number = 7;
    p.pull_request.number = 7;
    p.pull_request.head.sha = moved;
    p.repository.name = REPO;
    p.repository.owner.login = OWNER;
    p.repository.default_branch = "main";
    const r = recordingRunner();
    await receive("pull_request", p, r.runner, ACTIONS);
    gh.done();
    expect(r.calls).toEqual([]);
    expect(seen.map((d) => d.body)).toEqual([
      { ref: "main", inputs: { "pull-request": "7", "head-sha": moved, run: "pr7-abc" } },
    ]);
    const l = parseLedger(gh.comments[0]?.body ?? "");
    expect(l).toMatchObject({ run: "pr7-abc", terminal: "stuck" });
    expect(gh.comments[0]?.body).toContain("a push moved the branch");
  });

  it("a label after the workflow's status comment says the run ended starts a new run; before, it does not", async () => {
    const ended = {
      ...ledger,
      phase: "report",
      terminal: "done",
      state: "3".repeat(40),
    };
    const actionsStatus = {
      ...humanComment(
        "github-actions[bot]",
        `<!-- terfyn:ledger ${Buffer.from(JSON.stringify(ended)).toString("base64url")} -->\ndone`,
      ),
      user: { login: "github-actions[bot]", type: "Bot" },
    };
    let gh = onRun();
    let seen = dispatches();
    await receive("pull_request", labeled(), recordingRunner().runner, ACTIONS);
    gh.done();
    expect(seen).toEqual([]);
    nock.cleanAll();
    gh = onRun({ comments: [appStatus(), actionsStatus] });
    seen = dispatches();
    await receive("pull_request", labeled(), recordingRunner().runner, ACTIONS);
    gh.done();
    expect(seen).toHaveLength(1);
    expect(seen[0]?.body.inputs.run).not.toBe("pr7-abc");
  });
});

describe("a job of the placement workflow that ends badly", () => {
  const ledger = { run: "pr7-abc", pull_request: 7, head: HEAD, phase: "dispatched" };
  const marker = `<!-- terfyn:ledger ${Buffer.from(JSON.stringify(ledger)).toString("base64url")} -->`;
  const completed = (o: { conclusion: string; path?: string; title?: string }): Loose => {
    const p = fixture("workflow_run.completed") as Loose;
    p.repository.name = REPO;
    p.repository.owner.login = OWNER;
    p.workflow = { ...(p.workflow ?? {}), path: o.path ?? `.github/workflows/${WORKFLOW}` };
    p.workflow_run.conclusion = o.conclusion;
    p.workflow_run.display_title = o.title ?? "terfyn review-fix pr7-abc on #7";
    p.workflow_run.html_url = `https://github.com/${OWNER}/${REPO}/actions/runs/99`;
    return p;
  };
  const onRun = () =>
    fakeGitHub({
      me: APP,
      comments: [{ ...humanComment(APP, `${marker}\nstatus`), user: { login: APP, type: "Bot" } }],
    });

  it("a cancelled job of a run whose ledger already ended (a push stopped it) writes nothing", async () => {
    const ended = { ...ledger, terminal: "stuck" };
    const gh = fakeGitHub({
      me: APP,
      comments: [
        {
          ...humanComment(
            APP,
            `<!-- terfyn:ledger ${Buffer.from(JSON.stringify(ended)).toString("base64url")} -->\nstopped`,
          ),
          user: { login: APP, type: "Bot" },
        },
      ],
    });
    await receive(
      "workflow_run",
      completed({ conclusion: "cancelled" }),
      recordingRunner().runner,
      ACTIONS,
    );
    gh.done();
    expect(gh.requests.filter((r) => !r.startsWith("GET"))).toEqual([]);
  });

  it("a cancelled job is said on the App's status comment, with the job's link", async () => {
    const gh = onRun();
    await receive(
      "workflow_run",
      completed({ conclusion: "cancelled" }),
      recordingRunner().runner,
      ACTIONS,
    );
    gh.done();
    expect(gh.comments).toHaveLength(1);
    expect(gh.comments[0]?.body).toContain("ended cancelled before the run reported");
    expect(gh.comments[0]?.body).toContain(`https://github.com/${OWNER}/${REPO}/actions/runs/99`);
    expect(parseLedger(gh.comments[0]?.body ?? "")).toMatchObject({
      run: "pr7-abc",
      phase: "dispatched",
    });
  });

  it("on GitHub Enterprise the job's link is used only when it is on that server", async () => {
    const web = webBaseUrl({ GHE_HOST: "ghe.example.com" });
    for (const [link, shown] of [
      [`${web}/${OWNER}/${REPO}/actions/runs/99`, `${web}/${OWNER}/${REPO}/actions/runs/99`],
      [
        `https://github.com/${OWNER}/${REPO}/actions/runs/99`,
        `${web}/${OWNER}/${REPO}/actions/workflows/${WORKFLOW}`,
      ],
    ]) {
      const gh = onRun();
      const p = completed({ conclusion: "cancelled" });
      p.workflow_run.html_url = link;
      await receive("workflow_run", p, recordingRunner().runner, ACTIONS, web);
      gh.done();
      expect(gh.comments[0]?.body).toContain(shown);
      expect(gh.comments[0]?.body).not.toContain("https://github.com/");
      nock.cleanAll();
    }
  });

  for (const [name, o] of [
    ["a job that succeeded", { conclusion: "success" }],
    ["another workflow", { conclusion: "failure", path: ".github/workflows/ci.yml" }],
    ["a title that names no run", { conclusion: "failure", title: "CI" }],
    [
      "a title naming a run the App does not know",
      { conclusion: "failure", title: "terfyn review-fix pr7-zzz on #7" },
    ],
  ] as [string, { conclusion: string; path?: string; title?: string }][]) {
    it(`${name}: nothing is written`, async () => {
      const gh = onRun();
      await receive("workflow_run", completed(o), recordingRunner().runner, ACTIONS);
      gh.done();
      expect(gh.requests.filter((r) => !r.startsWith("GET"))).toEqual([]);
    });
  }
});

describe("TERFYN_APP_PLACEMENT and TERFYN_APP_WORKFLOW", () => {
  it("default in-process; actions with the default or a named workflow file", () => {
    expect(placementFromEnv({})).toEqual({ kind: "in-process" });
    expect(placementFromEnv({ TERFYN_APP_PLACEMENT: "actions" })).toEqual(ACTIONS);
    expect(
      placementFromEnv({ TERFYN_APP_PLACEMENT: "actions", TERFYN_APP_WORKFLOW: "review.yaml" }),
    ).toEqual({ kind: "actions", workflow: "review.yaml" });
  });
  it("anything else is refused with the setting's name", () => {
    expect(() => placementFromEnv({ TERFYN_APP_PLACEMENT: "lambda" })).toThrow(
      /TERFYN_APP_PLACEMENT must be in-process or actions/,
    );
    for (const bad of ["../x.yml", "a/b.yml", "x.sh", ".yml"])
      expect(() =>
        placementFromEnv({ TERFYN_APP_PLACEMENT: "actions", TERFYN_APP_WORKFLOW: bad }),
      ).toThrow(/TERFYN_APP_WORKFLOW must be a workflow file name/);
  });
});
