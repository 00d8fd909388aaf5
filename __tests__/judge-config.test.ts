/**
 * The judge is configured by the base (issue 22, item 4). The `pull_request` job runs the pull
 * request's own copy of the workflow, so its inputs (`approvers`, `fail-on`) are the pull
 * request's to change. The base's `.github/terfyn.yml`, read from git objects, binds them (an
 * input only makes them stricter); without one, the `pull_request` job counts no approval. The
 * bundled Action on real git repositories against the fake GitHub, and the rules from source.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { decideJudge, JudgeConfigError, parseJudgeConfig } from "../src/core/ci/judge-config.ts";
import { fixture, OWNER, pullRequestOpened, REPO, runAction } from "./helpers/action-harness.ts";
import { edit, prRepo, write } from "./helpers/example-project.ts";
import { fakeGitHub, humanComment } from "./helpers/fake-github.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

/** Writes the base's judge configuration beside the project (`agents/`). */
const judgeConfig = (text: string) => (p: string) => {
  mkdirSync(join(p, "..", ".github"), { recursive: true });
  write(p, "../.github/terfyn.yml", text);
};

/** A widening no policy forbids: more model turns per call (a relaxed guard). */
const widen = (p: string) => edit(p, "main.agent", "maxTurns 8", "maxTurns 9");

async function planJob(
  r: { repo: string; base: string; head: string },
  inputs: Record<string, string>,
  gh: ReturnType<typeof fakeGitHub>,
) {
  gh.pr ??= { headSha: r.head, baseSha: r.base, author: "alice" };
  const run = await runAction({
    event: "pull_request",
    payload: pullRequestOpened(r.base, r.head),
    workspace: r.repo,
    inputs: { project: "agents", ...inputs },
  });
  return { run, status: gh.statuses.find((s) => s.context === "terfyn/approval") };
}

describe("the judge is configured by the base", () => {
  it("without .github/terfyn.yml on the base, the pull_request job counts no approval, whatever its inputs say", async () => {
    const r = prRepo(widen);
    const gh = fakeGitHub({ roles: { rita: { role_name: "read", permission: "read" } } });
    // Find the hash, then plant a read-only account's approval and lower `approvers` in the
    // pull request's own workflow inputs.
    const first = await planJob(r, {}, gh);
    const hash = first.run.outputs["plan-hash"] as string;
    expect(hash).toMatch(/^sha256:/);
    gh.comments.push(humanComment("rita", `/terfyn approve ${hash}`));
    gh.statuses.length = 0;
    const { run, status } = await planJob(r, { approvers: "read" }, gh);
    gh.done();
    expect(status?.state).toBe("pending");
    expect(run.outputs.approved).toBe("false");
    expect(run.stdout).toContain("are not counted by this job");
  });

  it("with .github/terfyn.yml on the base, its approvers bind: `approvers: read` in the pull request's inputs does not let a read-only account approve", async () => {
    const r = prRepo(widen, judgeConfig("approvers: maintain\n"));
    const gh = fakeGitHub({
      roles: {
        rita: { role_name: "read", permission: "read" },
        walt: { role_name: "write", permission: "write" },
        mia: { role_name: "maintain", permission: "write" },
      },
    });
    const hash = (await planJob(r, {}, gh)).run.outputs["plan-hash"] as string;
    gh.comments.push(humanComment("rita", `/terfyn approve ${hash}`));
    gh.comments.push(humanComment("walt", `/terfyn approve ${hash}`));
    gh.statuses.length = 0;
    const lowered = await planJob(r, { approvers: "read" }, gh);
    expect(lowered.run.stdout).toContain("approvers maintain");
    expect(lowered.status?.state).toBe("pending");
    // A maintainer's approval counts in the pull_request job, as the base says.
    gh.comments.push(humanComment("mia", `/terfyn approve ${hash}`));
    gh.statuses.length = 0;
    const approved = await planJob(r, { approvers: "read" }, gh);
    gh.done();
    expect(approved.status?.state).toBe("success");
    expect(approved.status?.description).toContain("@mia");
  });

  it("the issue_comment job applies the base's approvers too, and says why it refuses", async () => {
    const r = prRepo(widen, judgeConfig("approvers: maintain\n"));
    const gh = fakeGitHub({ roles: { walt: { role_name: "write", permission: "write" } } });
    const hash = (await planJob(r, {}, gh)).run.outputs["plan-hash"] as string;
    const c = humanComment("walt", `/terfyn approve ${hash}`);
    gh.comments.push(c);
    // biome-ignore lint/suspicious/noExplicitAny: a webhook example payload, adapted field by field
    const p = fixture("issue_comment.created") as Record<string, any>;
    p.action = "created";
    p.issue.number = 7;
    p.issue.pull_request = { url: `https://api.github.com/repos/${OWNER}/${REPO}/pulls/7` };
    p.comment.body = c.body;
    p.comment.user.login = "walt";
    p.comment.user.type = "User";
    p.comment.created_at = p.comment.updated_at = "2026-12-01T10:00:00Z";
    p.repository.name = REPO;
    p.repository.owner.login = OWNER;
    await runAction({
      event: "issue_comment",
      payload: p,
      workspace: r.repo,
      inputs: { project: "agents", approvers: "write" },
    });
    gh.done();
    expect(gh.comments.at(-1)?.body).toMatch(
      /Not approved: @walt has the `write` role on this repository; approving needs `maintain`/,
    );
  });

  it("the base's fail-on binds: `fail-on: forbidden` in the pull request's inputs does not pass a widening the base fails", async () => {
    const r = prRepo(widen, judgeConfig("fail-on: widening\n"));
    const gh = fakeGitHub();
    const { run } = await planJob(r, { "fail-on": "forbidden" }, gh);
    gh.done();
    expect(run.failed).toBe(true);
  });

  it("the pull request's own .github/terfyn.yml is not the judge: only the base's is read", async () => {
    const r = prRepo((p) => {
      widen(p);
      judgeConfig("approvers: read\n")(p);
    }, judgeConfig("approvers: admin\n"));
    const gh = fakeGitHub({ roles: { mia: { role_name: "maintain", permission: "write" } } });
    const hash = (await planJob(r, {}, gh)).run.outputs["plan-hash"] as string;
    gh.comments.push(humanComment("mia", `/terfyn approve ${hash}`));
    gh.statuses.length = 0;
    const { run, status } = await planJob(r, {}, gh);
    gh.done();
    expect(run.stdout).toContain("approvers admin");
    expect(status?.state).toBe("pending");
  });

  it("a base configuration that does not parse stops the job with its reason", async () => {
    const r = prRepo(widen, judgeConfig("approvers: everyone\nfail_on: never\n"));
    const gh = fakeGitHub();
    const { run } = await planJob(r, {}, gh);
    gh.done();
    expect(run.failed).toBe(true);
    expect(run.stdout).toMatch(/\.github\/terfyn\.yml on the base: .*`approvers` must be one of/);
    expect(run.stdout).toContain("unknown key `fail_on`");
  });
});

describe("the judge's rules, from source", () => {
  it("parses approvers and fail-on, and nothing else", () => {
    expect(parseJudgeConfig("approvers: admin\nfail-on: any-change\n")).toEqual({
      approvers: "admin",
      failOn: "any-change",
    });
    expect(parseJudgeConfig("")).toEqual({});
    expect(() => parseJudgeConfig("approvers: [write\n")).toThrow(JudgeConfigError);
    expect(() => parseJudgeConfig("approvers: write\napprovers: read\n")).toThrow(/not valid YAML/);
    expect(() => parseJudgeConfig("labels: true\n")).toThrow(/unknown key `labels`/);
  });

  it("an input only makes the base stricter; without a base file the pull_request job counts no approval", () => {
    const inputs = { approvers: "read", failOn: "forbidden" } as const;
    expect(decideJudge(inputs, { approvers: "maintain", failOn: "widening" }, true)).toMatchObject({
      approvers: "maintain",
      failOn: "widening",
      countsApprovals: true,
    });
    expect(
      decideJudge({ approvers: "admin", failOn: "any-change" }, { approvers: "write" }, true),
    ).toMatchObject({ approvers: "admin", failOn: "any-change" });
    // A base file that leaves approvers out still holds the default, not the pull request's.
    expect(decideJudge(inputs, {}, true)).toMatchObject({
      approvers: "write",
      countsApprovals: true,
    });
    expect(decideJudge(inputs, undefined, true).countsApprovals).toBe(false);
    expect(decideJudge(inputs, undefined, false).countsApprovals).toBe(true);
  });
});
