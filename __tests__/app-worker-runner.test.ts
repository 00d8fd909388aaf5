/**
 * The App's review sessions in a worker process (src/adapters/review/worker-runner.ts): the same
 * run as the in-process runner's, label to `done`, through probot.receive with GitHub a fake on
 * nock (net connect disabled: every API call is made by this process, the worker asks for it),
 * a real fork of the worker, the real sandbox, the example's bare remote. And the point of it:
 * the worker's environment holds none of the App's secrets, whatever the server's holds.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { GitHubGateway } from "../src/adapters/github/gateway.ts";
import type { RunJob } from "../src/adapters/review/review-runner-port.ts";
import {
  answerQuestion,
  type Held,
  workerEnv,
  workerRunner,
} from "../src/adapters/review/worker-runner.ts";
import { recordRequests } from "./helpers/action-harness.ts";
import {
  APP,
  approval,
  build,
  commented,
  EXAMPLE,
  fakeGraphql,
  git,
  labeled,
  probotWith,
  status,
  until,
  writer,
} from "./helpers/app-runner.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

/** What a server's environment may hold that no process running a repository's code may. */
const SECRETS = {
  APP_ID: "12345",
  PRIVATE_KEY: "-----BEGIN RSA PRIVATE KEY-----canary-private-key",
  WEBHOOK_SECRET: "canary-webhook-secret",
  ANTHROPIC_API_KEY: "canary-model-key",
  GITHUB_TOKEN: "canary-github-token",
  GITHUB_CLIENT_SECRET: "canary-client-secret",
};

/** The worker keeps the real clock (the in-process tests fix it): an approval a minute from now. */
const soon = () => new Date(Date.now() + 60_000).toISOString();

describe("the App's review worker", () => {
  it("runs a review label → plan gate → approvals → done, with no App secret in its environment", async () => {
    const ex = build();
    const gh = writer(ex);
    const fake = fakeGraphql(ex);
    const runner = workerRunner({
      appSlug: APP.replace(/\[bot\]$/, ""),
      runsDir: mkdtempSync(join(tmpdir(), "terfyn-worker-runs-")),
      cloneUrl: ex.origin,
      env: {
        ...process.env,
        ...SECRETS,
        TERFYN_MODEL_SCRIPT: join(EXAMPLE, "model-script.yaml"),
      },
      log: () => {},
    });
    const receive = probotWith(runner);
    const rec = recordRequests();
    try {
      await receive("pull_request", labeled(ex));
      await runner.idle();
      // The worker is alive between sessions: read what the kernel says its environment is.
      const pid = runner.pid();
      expect(pid).toBeGreaterThan(0);
      const environ = readFileSync(`/proc/${pid}/environ`, "utf8");
      for (const [name, value] of Object.entries(SECRETS)) {
        expect(environ, name).not.toContain(value);
        expect(
          environ.split("\0").some((kv) => kv.startsWith(`${name}=`)),
          name,
        ).toBe(false);
      }
      expect(environ).toContain("TERFYN_MODEL_SCRIPT=");

      let s = status(gh.comments);
      expect(s.ledger.gate).toBe("plan");
      await receive("issue_comment", commented(approval(gh.comments, s.ledger.hash!, soon())));
      await runner.idle();
      s = status(gh.comments);
      expect(s.ledger.gate).toBe("publish");
      await receive("issue_comment", commented(approval(gh.comments, s.ledger.hash!, soon())));
      await runner.idle();
      s = status(gh.comments);
      expect(s.ledger.terminal).toBe("done");
      // Pushed, fast-forward, from the worker's git; replied from this process's gateway.
      expect(git(ex.origin, "rev-parse", "fix-add^")).toBe(ex.head);
      expect(fake.replies.length).toBeGreaterThan(0);
    } finally {
      rec.stop();
      await runner.close();
      gh.done();
    }
    expect(rec.problems).toEqual([]);
  }, 240_000);

  it("its environment is the server's without any secret-shaped variable", () => {
    const env = workerEnv({
      PATH: "/usr/bin",
      LANG: "C.UTF-8",
      TERFYN_APP_RUNS_DIR: "/var/lib/terfyn",
      ...SECRETS,
      PRIVATE_KEY_PATH: "/etc/terfyn/key.pem",
      AWS_SECRET_ACCESS_KEY: "x",
      NPM_AUTH: "x",
      "BAD-NAME": "x",
    });
    expect(env).toEqual({
      PATH: "/usr/bin",
      LANG: "C.UTF-8",
      TERFYN_APP_RUNS_DIR: "/var/lib/terfyn",
    });
  });

  it("a worker that dies is forked anew at the next call", async () => {
    const runner = workerRunner({
      appSlug: "terfyn-test",
      runsDir: mkdtempSync(join(tmpdir(), "terfyn-worker-runs-")),
      env: { ...process.env, TERFYN_MODEL_SCRIPT: join(EXAMPLE, "model-script.yaml") },
      log: () => {},
    });
    try {
      expect(await runner.interrupted()).toEqual([]);
      const first = runner.pid();
      process.kill(first as number, "SIGKILL");
      await until(() => runner.pid() === undefined);
      expect(await runner.interrupted()).toEqual([]);
      expect(runner.pid()).toBeGreaterThan(0);
      expect(runner.pid()).not.toBe(first);
    } finally {
      await runner.close();
    }
  }, 60_000);

  it("answers a worker's question only with the gateway's own methods, and errors as data", async () => {
    const calls: string[] = [];
    const gateway = {
      listIssueComments: async (n: number) => {
        calls.push(`list ${n}`);
        return [];
      },
      createIssue: async () => {
        throw Object.assign(new Error("Resource not accessible by integration"), {
          status: 403,
          response: { data: { message: "Resource not accessible by integration" } },
        });
      },
    } as unknown as GitHubGateway;
    const held = new Map<number, Held>([
      [
        1,
        {
          job: { gateway, token: async () => "tok" } as unknown as RunJob,
          reporter: { update: async () => {} },
        },
      ],
    ]);
    const ask = (method: string, handle = 1) =>
      answerQuestion(held, { type: "call", id: 9, handle, method: method as never, args: [7] });
    expect(await ask("listIssueComments")).toEqual({ type: "reply", id: 9, ok: true, value: [] });
    expect(calls).toEqual(["list 7"]);
    for (const bad of ["constructor", "toString", "__proto__", "auth", "request"])
      expect(await ask(bad), bad).toMatchObject({
        ok: false,
        error: { message: `${bad} is not a gateway method` },
      });
    expect(await ask("listIssueComments", 2)).toMatchObject({
      ok: false,
      error: { message: "no job is held under handle 2" },
    });
    expect(await ask("createIssue")).toMatchObject({
      ok: false,
      error: { status: 403, data: { message: "Resource not accessible by integration" } },
    });
    expect(await answerQuestion(held, { type: "token", id: 3, handle: 1 })).toMatchObject({
      ok: true,
      value: "tok",
    });
  });
});
