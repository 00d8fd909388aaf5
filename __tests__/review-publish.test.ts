/**
 * Publishing a review run in local mode: `--push` sends the commit to the branch's remote,
 * fast-forward only, and leaves the local branch alone; a remote that moved ends the run stuck
 * with the reason. Real repositories in temp dirs, a bare remote, the example's model script.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runTerfyn } from "./helpers/cli.ts";
import {
  approveAndResume,
  buildReviewExample,
  git,
  localSteps,
  reviewStartArgs,
  reviewState as state,
} from "./helpers/review-run.ts";

/** The example repository with a bare remote `pr` holding its branches, which the branch tracks. */
function buildWithRemote() {
  const info = buildReviewExample("terfyn-review-push-");
  const remote = join(info.runDir, "..", "remote.git");
  git(join(info.runDir, ".."), "clone", "--quiet", "--bare", info.repo, remote);
  // Not `origin`: the run pushes to the remote the branch tracks.
  git(info.repo, "remote", "add", "pr", remote);
  const branch = JSON.parse(readFileSync(info.request, "utf8")).branch as string;
  git(info.repo, "config", `branch.${branch}.remote`, "pr");
  return { ...info, remote, branch };
}

const start = (b: ReturnType<typeof buildWithRemote>, ...extra: string[]) =>
  runTerfyn(reviewStartArgs(b, undefined, extra), b.repo);

describe("terfyn review --push", () => {
  it("pushes the commit fast-forward to the branch's remote and leaves the local branch where it was", async () => {
    const b = buildWithRemote();
    expect((await start(b, "--push")).code).toBe(2);
    const end = await approveAndResume(b);
    expect(end.code, end.stderr + end.stdout).toBe(0);
    expect(end.stdout).toMatch(/^done: /);
    const pushed = git(b.remote, "rev-parse", `refs/heads/${b.branch}`);
    expect(pushed).not.toBe(b.head);
    expect(git(b.remote, "rev-parse", `${pushed}^`)).toBe(b.head);
    expect(git(b.repo, "rev-parse", `refs/heads/${b.branch}`)).toBe(b.head);
    expect(end.stderr).toContain(`pushed ${pushed} to pr/${b.branch}`);
    const published = JSON.parse(readFileSync(join(b.runDir, "published.json"), "utf8"));
    expect(published.commit).toBe(pushed);
  });

  it("a remote that moved while the run waited at the publish gate: stuck with the reason, nothing pushed over it", async () => {
    const b = buildWithRemote();
    expect((await start(b, "--push")).code).toBe(2);
    await approveAndResume(b, "publish");
    // Somebody pushes to the pull request's branch meanwhile.
    const other = join(b.runDir, "..", "other");
    git(join(b.runDir, ".."), "clone", "--quiet", "--branch", b.branch, b.remote, other);
    writeFileSync(join(other, "HUMAN.txt"), "a human's change\n");
    git(other, "add", "HUMAN.txt");
    git(other, "-c", "user.name=H", "-c", "user.email=h@example.com", "commit", "-qm", "human");
    git(other, "push", "--quiet", "origin", b.branch);
    const moved = git(b.remote, "rev-parse", `refs/heads/${b.branch}`);

    const end = await approveAndResume(b);
    expect(end.code, end.stderr + end.stdout).toBe(1);
    expect(state(b.runDir)).toMatchObject({ status: "ended", terminal: "stuck" });
    expect(state(b.runDir).reason).toContain(`is at ${moved}, not ${b.head}`);
    expect(readFileSync(join(b.runDir, "report.md"), "utf8")).toContain("publishing failed");
    expect(git(b.remote, "rev-parse", `refs/heads/${b.branch}`)).toBe(moved);
  });

  it("--push is kept for a resumed run (run.json), as is --prior", async () => {
    const b = buildWithRemote();
    expect((await start(b, "--push", "--prior", b.runDir.replace(/run$/, "prior"))).code).toBe(1);
    // The prior run does not exist: bad input at decide, and the configuration says what was asked.
    const config = JSON.parse(readFileSync(join(b.runDir, "run.json"), "utf8"));
    expect(config).toMatchObject({ push: true, prior: b.runDir.replace(/run$/, "prior") });
    expect(state(b.runDir)).toMatchObject({ terminal: "bad-input" });
  });
});

describe("the publish gate binds bytes", () => {
  it("publish.json holds each committed file's content hash and the diff", async () => {
    const b = buildWithRemote();
    expect((await start(b)).code).toBe(2);
    await approveAndResume(b, "publish");
    const artifact = JSON.parse(readFileSync(join(b.runDir, "publish.json"), "utf8"));
    expect(artifact.content.map((c: { path: string }) => c.path)).toEqual(artifact.files);
    for (const c of artifact.content) expect(c.sha256).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(artifact.diff).toContain("+++ b/src/add.js");
    expect(artifact.diff).toContain("-  return a - b;");
    // The reply to the fix says what the prover showed, in Terfyn's words.
    const fixReply = artifact.replies.find((r: { item: string }) => r.item === "RT_101");
    expect(fixReply.body).toMatch(
      /\n\nProof: "add returns the sum" fails with the production change reverted and passes with it\.$/,
    );
  });

  it("a file edited in the run's worktree while it waits at the publish gate voids the approval: stuck, nothing committed", async () => {
    const b = buildWithRemote();
    expect((await start(b)).code).toBe(2);
    await approveAndResume(b, "publish");
    const worktreeFile = join(`${b.runDir}.worktree`, "src", "add.js");
    writeFileSync(
      worktreeFile,
      `${readFileSync(worktreeFile, "utf8")}\n// edited after approval\n`,
    );
    const end = await approveAndResume(b);
    expect(end.code).toBe(1);
    expect(state(b.runDir)).toMatchObject({ terminal: "stuck" });
    expect(state(b.runDir).reason).toContain(
      "src/add.js changed in the run's worktree after the publish artifact was composed",
    );
    expect(git(b.repo, "rev-parse", `refs/heads/${b.branch}`)).toBe(b.head);
  });

  it("the commit publisher's own check: an edit after the gate passed is refused before anything is committed", async () => {
    const b = buildWithRemote();
    expect((await start(b)).code).toBe(2);
    await approveAndResume(b, "publish");
    const { steps, root } = await localSteps(b);
    const { artifactHash } = await import("../src/core/review/gates.ts");
    const text = readFileSync(join(b.runDir, "publish.json"), "utf8");
    const approvals = [
      { gate: "publish" as const, hash: artifactHash(text), approved_at: "t", by: "test" },
    ];
    const worktreeFile = join(root, "src", "add.js");
    writeFileSync(worktreeFile, "export const add = () => 0;\n");
    await expect(steps.publish(JSON.parse(text), text, approvals)).rejects.toThrow(
      "src/add.js changed after the publish artifact was composed and approved",
    );
    expect(git(b.repo, "rev-parse", `refs/heads/${b.branch}`)).toBe(b.head);
    expect(git(root, "rev-parse", "HEAD")).toBe(b.head);
  });
});
