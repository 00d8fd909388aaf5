/**
 * The Action's `mode: review-fix` (the run the App dispatches with `placement: actions`), from
 * source: the inputs are validated, the head checked against the pull request by the API, and
 * every failure is one clear message with no write to GitHub; the bundled Action runs a valid
 * dispatch to the plan gate (whole runs across jobs: action-review-fix-run.test.ts). Requests
 * are recorded and checked against the OpenAPI fixture.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { run } from "../src/action/run.ts";
import { parseLedger } from "../src/core/app/triggers.ts";
import { API, OWNER, REPO, recordRequests, runAction } from "./helpers/action-harness.ts";
import { build, EXAMPLE, fakeGraphql, STATE_KEY } from "./helpers/app-runner.ts";
import { fakeGitHub } from "./helpers/fake-github.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

const HEAD = "a".repeat(40);

async function runReviewFix(inputs: Record<string, string>, extraEnv: Record<string, string> = {}) {
  const saved = { ...process.env };
  for (const k of Object.keys(process.env)) if (k.startsWith("INPUT_")) delete process.env[k];
  Object.assign(process.env, {
    GITHUB_EVENT_NAME: "workflow_dispatch",
    GITHUB_REPOSITORY: `${OWNER}/${REPO}`,
    GITHUB_WORKSPACE: mkdtempSync(join(tmpdir(), "terfyn-review-fix-")),
    GITHUB_API_URL: "https://api.github.com",
    "INPUT_GITHUB-TOKEN": "test-token",
    "INPUT_STATE-KEY": STATE_KEY,
    INPUT_MODE: "review-fix",
  });
  Object.assign(process.env, extraEnv);
  for (const [k, v] of Object.entries(inputs)) process.env[`INPUT_${k.toUpperCase()}`] = v;
  const rec = recordRequests();
  const writes: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((c: string | Uint8Array) => {
    writes.push(typeof c === "string" ? c : Buffer.from(c).toString());
    return true;
  }) as typeof process.stdout.write;
  const exitCode = process.exitCode;
  // What a process the job starts with the default environment would inherit, after the run.
  let inherited = "";
  try {
    await run({ fetch: globalThis.fetch, retries: 0 });
    inherited = execFileSync("env", { encoding: "utf8" });
  } finally {
    process.stdout.write = write;
    rec.stop();
    process.env = saved;
  }
  const failed = process.exitCode === 1;
  process.exitCode = exitCode;
  expect(rec.problems).toEqual([]);
  const errors = writes.join("").match(/^::error::.*$/gm) ?? [];
  return {
    failed,
    errors,
    inherited,
    requests: rec.requests.map((r) => `${r.method} ${r.path}`),
  };
}

describe("mode: review-fix", () => {
  const badInputs: [string, Record<string, string>, RegExp][] = [
    ["no pull request", { "head-sha": HEAD }, /input `pull-request`: a pull request number/],
    ["pull request 0", { "pull-request": "0", "head-sha": HEAD }, /positive integer/],
    ["pull request -3", { "pull-request": "-3", "head-sha": HEAD }, /positive integer/],
    ["pull request 7.5", { "pull-request": "7.5", "head-sha": HEAD }, /positive integer/],
    ["no head", { "pull-request": "7" }, /input `head-sha`: .*40 hex digits/],
    ["a short head", { "pull-request": "7", "head-sha": "abc123" }, /40 hex digits/],
    ["a non-hex head", { "pull-request": "7", "head-sha": "g".repeat(40) }, /40 hex digits/],
    [
      "a run id with a slash",
      { "pull-request": "7", "head-sha": HEAD, run: "a/b" },
      /input `run` must be a run id/,
    ],
    [
      "a budget of 0 calls",
      { "pull-request": "7", "head-sha": HEAD, "max-model-calls": "0" },
      /input `max-model-calls` must be a positive whole number/,
    ],
    [
      "a budget of 1e6 tokens",
      { "pull-request": "7", "head-sha": HEAD, "max-tokens": "1e6" },
      /input `max-tokens` must be a positive whole number/,
    ],
    [
      "a run id like an option",
      { "pull-request": "7", "head-sha": HEAD, run: "-x" },
      /input `run` must be a run id/,
    ],
    [
      "no state key",
      { "pull-request": "7", "head-sha": HEAD, "state-key": "" },
      /needs input `state-key`: a secret of at least 32 characters \(this one has 0\)/,
    ],
    [
      "a short state key",
      { "pull-request": "7", "head-sha": HEAD, "state-key": "hunter2" },
      /needs input `state-key`.*\(this one has 7\).*openssl rand -hex 32/,
    ],
  ];
  for (const [name, inputs, message] of badInputs) {
    it(`${name}: fails with a message naming the input, and sends nothing`, async () => {
      const gh = fakeGitHub({ pr: { headSha: HEAD, baseSha: "b".repeat(40), author: "alice" } });
      const r = await runReviewFix(inputs);
      gh.done();
      expect(r.failed).toBe(true);
      expect(r.errors).toHaveLength(1);
      expect(r.errors[0]).toMatch(message);
      expect(r.requests).toEqual([]);
    });
  }

  it("a head that is no longer the pull request's: fails saying both, after one read and no write", async () => {
    const gh = fakeGitHub({
      pr: { headSha: "c".repeat(40), baseSha: "b".repeat(40), author: "alice" },
    });
    const r = await runReviewFix({ "pull-request": "7", "head-sha": HEAD });
    gh.done();
    expect(r.failed).toBe(true);
    expect(r.errors[0]).toMatch(/head is cccccccccccc, not the dispatched aaaaaaaaaaaa/);
    expect(r.requests).toEqual([`GET /repos/${OWNER}/${REPO}/pulls/7`]);
  });

  it("the job's secrets leave its environment before anything runs: the token still reads the pull request, and a process the job starts inherits none of them", async () => {
    const gh = fakeGitHub({
      pr: { headSha: "c".repeat(40), baseSha: "b".repeat(40), author: "alice" },
    });
    const r = await runReviewFix(
      { "pull-request": "7", "head-sha": HEAD },
      {
        ANTHROPIC_API_KEY: "sk-ant-canary",
        GITHUB_TOKEN: "ghs_canary",
        ACTIONS_RUNTIME_TOKEN: "rt",
      },
    );
    gh.done();
    expect(r.requests).toEqual([`GET /repos/${OWNER}/${REPO}/pulls/7`]);
    for (const secret of ["test-token", STATE_KEY, "sk-ant-canary", "ghs_canary"])
      expect(r.inherited).not.toContain(secret);
    expect(r.inherited).not.toMatch(
      /^(INPUT_GITHUB-TOKEN|INPUT_STATE-KEY|ACTIONS_RUNTIME_TOKEN)=/m,
    );
    expect(r.inherited).toMatch(/^GITHUB_REPOSITORY=/m);
  });

  it("a pull request that does not exist: fails with the API's answer and writes nothing", async () => {
    const gh = fakeGitHub({});
    const r = await runReviewFix({ "pull-request": "7", "head-sha": HEAD });
    gh.done();
    expect(r.failed).toBe(true);
    expect(r.errors[0]).toMatch(/reading pull request #7 failed \(HTTP 404/);
    expect(r.requests).toEqual([`GET /repos/${OWNER}/${REPO}/pulls/7`]);
  });

  for (const [name, headRepo] of [
    ["a fork's pull request", { full_name: `mallory/${REPO}` }],
    ["a deleted fork's pull request", null],
  ] as const) {
    it(`${name}: fails as not runnable here, after one read and no write`, async () => {
      nock(API)
        .get(`/repos/${OWNER}/${REPO}/pulls/7`)
        .reply(200, {
          number: 7,
          head: { sha: HEAD, repo: headRepo },
          base: { sha: "b".repeat(40) },
          user: { login: "mallory" },
          merge_commit_sha: null,
          labels: [],
        });
      const r = await runReviewFix({ "pull-request": "7", "head-sha": HEAD });
      expect(r.failed).toBe(true);
      expect(r.errors[0]).toMatch(
        /comes from (the fork mallory\/agents|a fork that no longer exists)/,
      );
      expect(r.requests).toEqual([`GET /repos/${OWNER}/${REPO}/pulls/7`]);
    });
  }

  it("an unknown mode fails before anything is read", async () => {
    const gh = fakeGitHub({});
    const r = await runReviewFix({ mode: "deploy" });
    gh.done();
    expect(r.failed).toBe(true);
    expect(r.errors[0]).toMatch(/input `mode` must be plan or review-fix/);
    expect(r.requests).toEqual([]);
  });
});

describe("mode: review-fix in the bundled Action (dist/index.js)", () => {
  it("a workflow_dispatch runs the review to the plan gate on the model script and keeps the run's files in refs/terfyn/runs/<run>", async () => {
    const ex = build();
    // GITHUB_SERVER_URL/<owner>/<repo>.git is the repository's git URL (as on GitHub Enterprise
    // Server): here a directory holding the example's bare remote.
    const server = mkdtempSync(join(tmpdir(), "terfyn-server-"));
    mkdirSync(join(server, OWNER));
    execFileSync("git", ["clone", "-q", "--bare", ex.origin, join(server, OWNER, `${REPO}.git`)]);
    const origin = join(server, OWNER, `${REPO}.git`);
    const gh = fakeGitHub({
      me: "github-actions[bot]",
      pr: { headSha: ex.head, baseSha: ex.base, author: "alice", headRef: "fix-add" },
    });
    fakeGraphql(ex, { slug: "github-actions" });
    const r = await runAction({
      event: "workflow_dispatch",
      payload: { inputs: { "pull-request": "7", "head-sha": ex.head } },
      workspace: mkdtempSync(join(tmpdir(), "terfyn-review-fix-")),
      inputs: {
        mode: "review-fix",
        "pull-request": "7",
        "head-sha": ex.head,
        "state-key": STATE_KEY,
      },
      env: {
        GITHUB_SERVER_URL: server,
        TERFYN_MODEL_SCRIPT: join(EXAMPLE, "model-script.yaml"),
      },
    });
    gh.done();
    expect(r.failed, r.stdout).toBe(false);
    expect(r.outputs["review-state"]).toBe("awaiting-approval");
    const run = r.outputs["review-run"]!;
    expect(run).toMatch(/^pr7-/);
    const status = gh.comments.find((c) => c.user.login === "github-actions[bot]");
    const ledger = parseLedger(status?.body ?? "");
    expect(ledger).toMatchObject({ run, gate: "plan" });
    expect(ledger?.state).toBe(
      execFileSync("git", ["rev-parse", `refs/terfyn/runs/${run}`], {
        cwd: origin,
        encoding: "utf8",
      }).trim(),
    );
    expect(r.outputs["comment-url"]).toBe(status?.html_url);
  }, 120_000);
});
