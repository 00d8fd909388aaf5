/**
 * The branch writer (src/adapters/git/branch-writer.ts), the only code in Terfyn that changes a
 * git repository, in real repositories made by the test with a bare "origin". Besides the
 * behaviour of each method, these tests show that the module cannot force-push, amend, reset,
 * rebase or delete: its guard rejects each forbidden argument list, its only process spawn sits
 * behind that guard, and the class has no other public methods.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import {
  assertAllowedGitArgs,
  BranchWriter,
  BranchWriterRefusal,
  ForbiddenGitOperation,
} from "../src/adapters/git/branch-writer.ts";

const IDENTITY = { name: "Terfyn Test", email: "terfyn-test@example.com" };
const HERMETIC = { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };
const GIT_ENV = {
  ...process.env,
  ...HERMETIC,
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.com",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.com",
};

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", env: GIT_ENV }).trim();
}

function write(root: string, rel: string, content: string | Buffer): void {
  mkdirSync(dirname(join(root, rel)), { recursive: true });
  writeFileSync(join(root, rel), content);
}

function configure(repo: string): void {
  git(repo, "config", "commit.gpgsign", "false");
  git(repo, "config", "user.name", "t");
  git(repo, "config", "user.email", "t@example.com");
}

/** A work repository with one pushed commit on `main`, and its bare origin. */
function setup(): { dir: string; origin: string; work: string; base: string } {
  const dir = mkdtempSync(join(tmpdir(), "terfyn-branch-writer-"));
  temps.push(dir);
  const origin = join(dir, "origin.git");
  const work = join(dir, "work");
  git(dir, "init", "-q", "--bare", "-b", "main", origin);
  git(dir, "init", "-q", "-b", "main", work);
  configure(work);
  write(work, ".gitignore", "*.log\n");
  write(work, "src/a.ts", "export const a = 1;\n");
  write(work, "src/b.ts", "export const b = 2;\n");
  write(work, "src/gone.ts", "export const gone = true;\n");
  git(work, "add", "-A");
  git(work, "commit", "-qm", "initial");
  git(work, "remote", "add", "origin", origin);
  git(work, "push", "-q", "origin", "main");
  return { dir, origin, work, base: git(work, "rev-parse", "HEAD") };
}

/** A second clone of origin, for someone else pushing to the branch. */
function otherClone(dir: string, origin: string): string {
  const other = join(dir, "other");
  git(dir, "clone", "-q", origin, other);
  configure(other);
  return other;
}

const open = (work: string) => BranchWriter.open(work, { identity: IDENTITY, env: HERMETIC });
const originHead = (origin: string) => git(origin, "rev-parse", "refs/heads/main");
const staged = (work: string) => git(work, "diff", "--cached", "--name-only", "HEAD");

describe("BranchWriter: reading", () => {
  it("reports HEAD and the branch, and refuses a detached HEAD", async () => {
    const { work, base } = setup();
    const w = await open(join(work, "src"));
    expect(w.root).toBe(git(work, "rev-parse", "--show-toplevel"));
    expect(await w.head()).toBe(base);
    expect(await w.branch()).toBe("main");
    git(work, "checkout", "-q", "--detach");
    await expect(w.branch()).rejects.toThrow(/HEAD is detached/);
    await expect(w.branch()).rejects.toMatchObject({ code: "detached-head" });
  });

  it("refuses a directory that is not a git work tree", async () => {
    const dir = mkdtempSync(join(tmpdir(), "terfyn-not-git-"));
    temps.push(dir);
    await expect(BranchWriter.open(dir, { env: HERMETIC })).rejects.toMatchObject({
      code: "not-a-repository",
    });
  });

  it("changedFiles lists modified, deleted, staged and untracked files, not ignored ones", async () => {
    const { work } = setup();
    const w = await open(work);
    expect(await w.changedFiles()).toEqual([]);
    write(work, "src/a.ts", "export const a = 10;\n");
    rmSync(join(work, "src/gone.ts"));
    write(work, "src/new/feature.ts", "export const f = 1;\n");
    write(work, "staged.txt", "staged\n");
    git(work, "add", "staged.txt");
    write(work, "debug.log", "ignored\n");
    expect(await w.changedFiles()).toEqual([
      "src/a.ts",
      "src/gone.ts",
      "src/new/feature.ts",
      "staged.txt",
    ]);
  });
});

describe("BranchWriter: fileVersions", () => {
  it("reads a file's bytes at HEAD and in the working tree; absent where there is none", async () => {
    const { work } = setup();
    const w = await open(work);
    write(work, "src/a.ts", "export const a = 1;\nexport const more = 2;\n");
    write(work, "src/new.ts", "new\n");
    rmSync(join(work, "src/b.ts"));
    const a = await w.fileVersions("src/a.ts");
    expect(a.head?.toString()).toBe("export const a = 1;\n");
    expect(a.worktree?.toString()).toBe("export const a = 1;\nexport const more = 2;\n");
    expect(await w.fileVersions("src/new.ts")).toEqual({ worktree: Buffer.from("new\n") });
    expect((await w.fileVersions("src/b.ts")).worktree).toBeUndefined();
    expect((await w.fileVersions("src/b.ts")).head?.toString()).toBe("export const b = 2;\n");
    await expect(w.fileVersions("../x")).rejects.toThrow(BranchWriterRefusal);
  });

  it("cat-file reads one blob by id and nothing else", () => {
    expect(() => assertAllowedGitArgs(["cat-file", "-p", "HEAD:src/a.ts"])).toThrow(
      ForbiddenGitOperation,
    );
    expect(() => assertAllowedGitArgs(["cat-file", "blob", "HEAD:src/a.ts"])).toThrow(
      /exactly one blob/,
    );
  });
});

describe("BranchWriter: snapshot, revertToHead, restore", () => {
  it("round-trips exact bytes and modes, including a new file and a deleted file", async () => {
    const { work } = setup();
    const w = await open(work);
    const headA = readFileSync(join(work, "src/a.ts"));
    const headGone = readFileSync(join(work, "src/gone.ts"));
    const binary = Buffer.from([0x00, 0xff, 0x0d, 0x0a, 0x80, 0x41, 0x0d, 0x00, 0xfe]);
    write(work, "src/a.ts", binary);
    rmSync(join(work, "src/gone.ts"));
    write(work, "src/new/tool.sh", "#!/bin/sh\r\necho new\r\n");
    chmodSync(join(work, "src/new/tool.sh"), 0o755);
    git(work, "add", "src/a.ts");
    const stagedBefore = staged(work);
    const changedBefore = await w.changedFiles();
    const paths = ["src/a.ts", "src/gone.ts", "src/new/tool.sh"];

    const snap = await w.snapshot(paths);
    expect(snap.entries.map((e) => [e.path, e.kind])).toEqual([
      ["src/a.ts", "file"],
      ["src/gone.ts", "absent"],
      ["src/new/tool.sh", "file"],
    ]);

    await w.revertToHead(paths);
    expect(readFileSync(join(work, "src/a.ts")).equals(headA)).toBe(true);
    expect(readFileSync(join(work, "src/gone.ts")).equals(headGone)).toBe(true);
    expect(existsSync(join(work, "src/new/tool.sh"))).toBe(false);
    // Only the working tree moved: the index is as it was.
    expect(staged(work)).toBe(stagedBefore);

    await w.restore(snap);
    expect(readFileSync(join(work, "src/a.ts")).equals(binary)).toBe(true);
    expect(existsSync(join(work, "src/gone.ts"))).toBe(false);
    expect(readFileSync(join(work, "src/new/tool.sh"), "utf8")).toBe("#!/bin/sh\r\necho new\r\n");
    expect(statSync(join(work, "src/new/tool.sh")).mode & 0o777).toBe(0o755);
    expect(await w.changedFiles()).toEqual(changedBefore);
    expect(staged(work)).toBe(stagedBefore);
  });

  it("refuses to revert a file whose current content no snapshot holds (no lost work)", async () => {
    const { work } = setup();
    const w = await open(work);
    write(work, "src/a.ts", "work in progress\n");
    await expect(w.revertToHead(["src/a.ts"])).rejects.toMatchObject({ code: "not-snapshotted" });
    await w.snapshot(["src/a.ts"]);
    write(work, "src/a.ts", "newer work in progress\n");
    await expect(w.revertToHead(["src/a.ts"])).rejects.toMatchObject({ code: "not-snapshotted" });
    expect(readFileSync(join(work, "src/a.ts"), "utf8")).toBe("newer work in progress\n");
  });

  it("refuses paths outside the tree or inside .git", async () => {
    const { work } = setup();
    const w = await open(work);
    for (const p of ["../escape", "/etc/passwd", ".git/config", "src/../x", "src//a.ts", ""])
      await expect(w.snapshot([p])).rejects.toMatchObject({ code: "bad-path" });
  });
});

describe("BranchWriter: commit", () => {
  it("makes a normal commit of exactly the planned files on the expected parent", async () => {
    const { work, base } = setup();
    const w = await open(work);
    write(work, "src/a.ts", "export const a = 42;\n");
    write(work, "src/new.ts", "export const n = 1;\n");
    rmSync(join(work, "src/gone.ts"));
    write(work, "src/b.ts", "not in the plan\n");
    const message = "Fix a\n\n#12 stays in the message.\n";
    const sha = await w.commit(message, ["src/a.ts", "src/new.ts", "src/gone.ts"], base);
    expect(sha).toBe(git(work, "rev-parse", "HEAD"));
    expect(git(work, "rev-list", "--parents", "-n", "1", sha)).toBe(`${sha} ${base}`);
    expect(git(work, "rev-parse", "refs/heads/main")).toBe(sha);
    expect(git(work, "diff", "--name-only", base, sha).split("\n")).toEqual([
      "src/a.ts",
      "src/gone.ts",
      "src/new.ts",
    ]);
    expect(git(work, "log", "-1", "--format=%an <%ae>|%cn <%ce>", sha)).toBe(
      "Terfyn Test <terfyn-test@example.com>|Terfyn Test <terfyn-test@example.com>",
    );
    expect(git(work, "log", "-1", "--format=%B", sha)).toBe(message.trim());
    // The file outside the plan is still only in the working tree.
    expect(await w.changedFiles()).toEqual(["src/b.ts"]);
  });

  it("refuses when HEAD moved since the run started", async () => {
    const { work, base } = setup();
    const w = await open(work);
    write(work, "src/b.ts", "someone else\n");
    git(work, "commit", "-qam", "someone else's commit");
    const moved = git(work, "rev-parse", "HEAD");
    write(work, "src/a.ts", "export const a = 42;\n");
    await expect(w.commit("fix", ["src/a.ts"], base)).rejects.toThrow(
      /the branch moved since the run started.*stop and say so/,
    );
    await expect(w.commit("fix", ["src/a.ts"], base)).rejects.toMatchObject({
      code: "branch-moved",
    });
    expect(git(work, "rev-parse", "HEAD")).toBe(moved);
    expect(staged(work)).toBe("");
  });

  it("refuses when a file outside the plan is staged", async () => {
    const { work, base } = setup();
    const w = await open(work);
    write(work, "src/a.ts", "export const a = 42;\n");
    write(work, "src/b.ts", "unplanned\n");
    git(work, "add", "src/b.ts");
    await expect(w.commit("fix", ["src/a.ts"], base)).rejects.toMatchObject({
      code: "unplanned-staged",
      message: expect.stringContaining("src/b.ts"),
    });
    expect(git(work, "rev-parse", "HEAD")).toBe(base);
    expect(staged(work)).toBe("src/b.ts");
  });

  it("refuses to commit a file that is not changed", async () => {
    const { work, base } = setup();
    const w = await open(work);
    write(work, "src/a.ts", "export const a = 42;\n");
    await expect(w.commit("fix", ["src/a.ts", "src/b.ts"], base)).rejects.toMatchObject({
      code: "unchanged-file",
      message: expect.stringContaining("src/b.ts"),
    });
    await expect(w.commit("fix", ["src/missing.ts"], base)).rejects.toMatchObject({
      code: "unchanged-file",
    });
    expect(git(work, "rev-parse", "HEAD")).toBe(base);
    expect(staged(work)).toBe("");
  });

  it("never runs the repository's hooks: a pre-commit hook that would widen the commit does not execute", async () => {
    const { work, base } = setup();
    const w = await open(work);
    const marker = join(work, "..", "hook-ran");
    const hook = join(work, ".git/hooks/pre-commit");
    writeFileSync(
      hook,
      `#!/bin/sh\ntouch '${marker}'\necho extra > extra.txt\ngit add extra.txt\n`,
    );
    chmodSync(hook, 0o755);
    // A hooks path in the repository's config is ignored too.
    git(work, "config", "core.hooksPath", ".git/hooks");
    write(work, "src/a.ts", "export const a = 42;\n");
    const sha = await w.commit("fix", ["src/a.ts"], base);
    expect(existsSync(marker)).toBe(false);
    expect(git(work, "diff", "--name-only", base, sha)).toBe("src/a.ts");
  });

  it("ignores config-driven commands of the repository: core.fsmonitor and core.sshCommand never execute", async () => {
    const { work, base } = setup();
    const marker = join(work, "..", "fsmonitor-ran");
    const script = join(work, "..", "monitor.sh");
    writeFileSync(script, `#!/bin/sh\ntouch '${marker}'\nexit 1\n`);
    chmodSync(script, 0o755);
    git(work, "config", "core.fsmonitor", script);
    git(work, "config", "core.sshCommand", script);
    git(work, "config", "core.pager", script);
    // Git itself runs it (the setup is real), the writer does not.
    git(work, "status", "--porcelain");
    expect(existsSync(marker)).toBe(true);
    rmSync(marker);
    const w = await open(work);
    write(work, "src/a.ts", "export const a = 42;\n");
    expect(await w.changedFiles()).toEqual(["src/a.ts"]);
    await w.commit("fix", ["src/a.ts"], base);
    await w.fileVersions("src/a.ts");
    expect(existsSync(marker)).toBe(false);
  });

  it("refuses to commit during a merge in progress", async () => {
    const { work, base } = setup();
    const w = await open(work);
    writeFileSync(join(work, ".git/MERGE_HEAD"), `${base}\n`);
    write(work, "src/a.ts", "export const a = 42;\n");
    await expect(w.commit("fix", ["src/a.ts"], base)).rejects.toMatchObject({
      code: "operation-in-progress",
    });
  });
});

describe("BranchWriter: commit from the approved bytes (plumbing, no filters)", () => {
  const sha256 = (b: string | Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;
  const blob = (work: string, sha: string, path: string) =>
    execFileSync("git", ["cat-file", "blob", `${sha}:${path}`], { cwd: work, env: GIT_ENV });

  it("commits exactly the work tree's bytes whatever the attributes say: ident, eol and working-tree-encoding do not convert", async () => {
    const { work, base } = setup();
    // Attributes from both places a pull request or an executed test could write them.
    write(work, ".git/info/attributes", "* ident\n");
    write(work, ".gitattributes", "*.ts text eol=crlf working-tree-encoding=UTF-16\n");
    const bytes = "export const id = '$Id: 0123456789abcdef $';\r\nconst guard = true;\r\n";
    write(work, "src/a.ts", bytes);
    const w = await open(work);
    const sha = await w.commit("fix", ["src/a.ts"], base, {
      bound: [{ path: "src/a.ts", sha256: sha256(bytes) }],
    });
    expect(blob(work, sha, "src/a.ts").toString("utf8")).toBe(bytes);
    // HEAD and the index follow the commit: nothing is left staged or changed.
    expect(git(work, "rev-parse", "HEAD")).toBe(sha);
    expect(staged(work)).toBe("");
  });

  it("refuses bytes that are not the approved ones, and commits nothing", async () => {
    const { work, base } = setup();
    write(work, "src/a.ts", "export const a = 'approved';\n");
    const approved = sha256("export const a = 'approved';\n");
    write(work, "src/a.ts", "export const a = 'edited after approval';\n");
    const w = await open(work);
    await expect(
      w.commit("fix", ["src/a.ts"], base, { bound: [{ path: "src/a.ts", sha256: approved }] }),
    ).rejects.toMatchObject({ code: "unplanned-commit-content" });
    // An approval that names other files, or none, binds nothing to commit.
    await expect(w.commit("fix", ["src/a.ts"], base, { bound: [] })).rejects.toMatchObject({
      code: "unplanned-commit-content",
    });
    expect(git(work, "rev-parse", "HEAD")).toBe(base);
  });

  it("refuses a symbolic link where a planned file should be (a test that replaced itself with a link to /etc/passwd)", async () => {
    const { work, base } = setup();
    symlinkSync("/etc/passwd", join(work, "src/evil.ts"));
    const w = await open(work);
    await expect(w.fileVersions("src/evil.ts")).rejects.toMatchObject({ code: "bad-path" });
    await expect(
      w.commit("fix", ["src/evil.ts"], base, { bound: [{ path: "src/evil.ts", sha256: null }] }),
    ).rejects.toMatchObject({
      code: "bad-path",
      message: expect.stringContaining("symbolic link"),
    });
    expect(git(work, "rev-parse", "HEAD")).toBe(base);
  });

  it("refuses a mode change: an approved file made executable is not committed", async () => {
    const { work, base } = setup();
    const bytes = "export const a = 42;\n";
    write(work, "src/a.ts", bytes);
    chmodSync(join(work, "src/a.ts"), 0o755);
    const w = await open(work);
    await expect(
      w.commit("fix", ["src/a.ts"], base, { bound: [{ path: "src/a.ts", sha256: sha256(bytes) }] }),
    ).rejects.toMatchObject({ code: "bad-path", message: expect.stringContaining("mode") });
    expect(git(work, "rev-parse", "HEAD")).toBe(base);
  });

  it("deletes a planned file only when the approval binds it as deleted", async () => {
    const { work, base } = setup();
    rmSync(join(work, "src/gone.ts"));
    const w = await open(work);
    await expect(
      w.commit("rm", ["src/gone.ts"], base, {
        bound: [{ path: "src/gone.ts", sha256: sha256("export const gone = true;\n") }],
      }),
    ).rejects.toMatchObject({ code: "unplanned-commit-content" });
    const sha = await w.commit("rm", ["src/gone.ts"], base, {
      bound: [{ path: "src/gone.ts", sha256: null }],
    });
    expect(git(work, "show", "--name-status", "--format=", sha)).toBe("D\tsrc/gone.ts");
  });
});

describe("BranchWriter: a run's own worktree, and moving the branch", () => {
  it("adds a detached worktree at a commit, commits there, moves the branch fast-forward, and removes the worktree", async () => {
    const { dir, work, base } = setup();
    const w = await open(work);
    const wtDir = join(dir, "run.worktree");
    const wt = await w.addWorktree(wtDir, base);
    expect(wt.root).toBe(realpathSync(wtDir));
    expect(await wt.head()).toBe(base);
    write(wtDir, "src/a.ts", "export const a = 42;\n");
    // The user's working tree does not see the change.
    expect(await w.changedFiles()).toEqual([]);
    const sha = await wt.commit("fix", ["src/a.ts"], base);
    expect(git(work, "rev-parse", "refs/heads/main")).toBe(base);
    await w.fastForwardBranch("main", base, sha);
    expect(git(work, "rev-parse", "refs/heads/main")).toBe(sha);
    expect(readFileSync(join(work, "src/a.ts"), "utf8")).toBe("export const a = 1;\n");
    await w.removeWorktree(wtDir);
    expect(existsSync(wtDir)).toBe(false);
    expect(git(work, "worktree", "list", "--porcelain")).not.toContain("run.worktree");
  });

  it("refuses to move a branch that moved, or to a commit that is not a fast-forward", async () => {
    const { dir, work, base } = setup();
    const w = await open(work);
    const wt = await w.addWorktree(join(dir, "wt"), base);
    write(join(dir, "wt"), "src/a.ts", "export const a = 42;\n");
    const ours = await wt.commit("fix", ["src/a.ts"], base);
    write(work, "src/b.ts", "a human's change\n");
    git(work, "commit", "-qam", "human");
    const human = git(work, "rev-parse", "HEAD");
    await expect(w.fastForwardBranch("main", base, ours)).rejects.toMatchObject({
      code: "branch-moved",
    });
    await expect(w.fastForwardBranch("main", human, ours)).rejects.toMatchObject({
      code: "behind-or-diverged",
    });
    expect(git(work, "rev-parse", "refs/heads/main")).toBe(human);
  });

  it("removes only a worktree of its own repository, never its own working tree", async () => {
    const { dir, work } = setup();
    const w = await open(work);
    await expect(w.removeWorktree(work)).rejects.toMatchObject({ code: "bad-path" });
    const other = setup();
    await expect(w.removeWorktree(other.work)).rejects.toMatchObject({ code: "bad-path" });
    expect(existsSync(join(other.work, "src/a.ts"))).toBe(true);
    expect(existsSync(join(dir, "work", "src/a.ts"))).toBe(true);
  });
});

describe("BranchWriter: push (fast-forward only)", () => {
  it("fast-forwards origin to HEAD and verifies it", async () => {
    const { work, origin, base } = setup();
    const w = await open(work);
    write(work, "src/a.ts", "export const a = 42;\n");
    const sha = await w.commit("fix", ["src/a.ts"], base);
    const result = await w.push("origin", "main", base);
    expect(result).toEqual({ pushed: true, before: base, after: sha });
    expect(originHead(origin)).toBe(sha);
    // Pushing again is a no-op, not an error.
    expect(await w.push("origin", "main")).toEqual({ pushed: false, before: sha, after: sha });
  });

  it("refuses when origin has a commit the local branch lacks (diverged), leaving origin as it was", async () => {
    const { dir, work, origin, base } = setup();
    const other = otherClone(dir, origin);
    write(other, "src/b.ts", "reviewer pushed meanwhile\n");
    git(other, "commit", "-qam", "their commit");
    git(other, "push", "-q", "origin", "main");
    const theirs = originHead(origin);

    const w = await open(work);
    write(work, "src/a.ts", "export const a = 42;\n");
    const ours = await w.commit("fix", ["src/a.ts"], base);
    await expect(w.push("origin", "main")).rejects.toThrow(
      /the branch is behind or diverged; never force-push/,
    );
    await expect(w.push("origin", "main")).rejects.toMatchObject({ code: "behind-or-diverged" });
    expect(originHead(origin)).toBe(theirs);
    expect(git(work, "rev-parse", "HEAD")).toBe(ours);
  });

  it("refuses when the local branch is merely behind", async () => {
    const { dir, work, origin } = setup();
    const other = otherClone(dir, origin);
    write(other, "src/b.ts", "ahead\n");
    git(other, "commit", "-qam", "ahead");
    git(other, "push", "-q", "origin", "main");
    const theirs = originHead(origin);
    const w = await open(work);
    await expect(w.push("origin", "main")).rejects.toMatchObject({ code: "behind-or-diverged" });
    expect(originHead(origin)).toBe(theirs);
  });

  it("refuses when the remote head is not the one the run expected", async () => {
    const { dir, work, origin, base } = setup();
    const other = otherClone(dir, origin);
    write(other, "src/b.ts", "moved\n");
    git(other, "commit", "-qam", "moved");
    git(other, "push", "-q", "origin", "main");
    git(work, "pull", "-q", "--ff-only", "origin", "main");
    const theirs = originHead(origin);
    const w = await open(work);
    write(work, "src/a.ts", "export const a = 42;\n");
    await w.commit("fix", ["src/a.ts"], theirs);
    await expect(w.push("origin", "main", base)).rejects.toMatchObject({ code: "remote-moved" });
    expect(originHead(origin)).toBe(theirs);
  });

  it("refuses a missing remote branch and branch names shaped like force or delete refspecs", async () => {
    const { work, origin, base } = setup();
    const w = await open(work);
    write(work, "src/a.ts", "export const a = 42;\n");
    await w.commit("fix", ["src/a.ts"], base);
    await expect(w.push("origin", "feature")).rejects.toMatchObject({
      code: "remote-branch-missing",
    });
    for (const bad of ["+main", ":main", "-f", "main:main", "+refs/heads/main", "a b", "..", ""])
      await expect(w.push("origin", bad)).rejects.toMatchObject({ code: "bad-ref" });
    for (const bad of ["--force", "-f", "+origin"])
      await expect(w.push(bad, "main")).rejects.toMatchObject({ code: "bad-ref" });
    expect(originHead(origin)).toBe(base);
    expect(git(origin, "for-each-ref", "--format=%(refname)")).toBe("refs/heads/main");
  });
});

describe("assertAllowedGitArgs: the guard in front of every git process", () => {
  const forbidden: string[][] = [
    [],
    ["push", "--force", "origin", "HEAD:refs/heads/main"],
    ["push", "-f", "origin", "HEAD:refs/heads/main"],
    ["push", "-qf", "origin", "HEAD:refs/heads/main"],
    ["push", "--forc", "origin", "HEAD:refs/heads/main"],
    ["push", "--force-with-lease", "origin", "HEAD:refs/heads/main"],
    ["push", "--force-with-lease=refs/heads/main:abc123", "origin", "HEAD:refs/heads/main"],
    ["push", "--force-if-includes", "origin", "HEAD:refs/heads/main"],
    ["push", "origin", "+HEAD:refs/heads/main"],
    ["push", "origin", "+refs/heads/main"],
    ["push", "origin", "--", "+HEAD:refs/heads/main"],
    ["fetch", "origin", "+refs/heads/main:refs/heads/main"],
    ["fetch", "-f", "origin", "refs/heads/main"],
    ["commit", "--amend", "--file=-"],
    ["commit", "--amend", "--no-edit"],
    ["commit", "--amen", "--file=-"],
    ["commit", "--no-verify", "--file=-"],
    ["commit", "-n", "--file=-"],
    ["reset", "--hard"],
    ["reset", "--hard", "HEAD~1"],
    ["reset", "--ha", "origin/main"],
    ["reset", "--soft", "HEAD~1"],
    ["rebase", "main"],
    ["rebase", "-i", "HEAD~3"],
    ["rebase", "--onto", "main", "topic"],
    ["pull", "--rebase", "origin", "main"],
    ["branch", "-D", "feature"],
    ["branch", "-d", "feature"],
    ["branch", "--delete", "feature"],
    ["branch", "-f", "main", "HEAD~1"],
    ["push", "--delete", "origin", "feature"],
    ["push", "-d", "origin", "feature"],
    ["push", "origin", ":feature"],
    ["push", "origin", ":refs/heads/feature"],
    ["push", "--prune", "origin", "HEAD:refs/heads/main"],
    ["push", "--mirror", "origin"],
    ["push", "--all", "origin"],
    ["fetch", "--mirror", "origin"],
    ["update-ref", "-d", "refs/heads/main"],
    ["update-ref", "--delete", "refs/heads/main"],
    ["update-ref", "refs/heads/main", "HEAD~1"],
    ["update-ref", "refs/heads/main", "a".repeat(40)],
    ["update-ref", "refs/heads/main", "a".repeat(40), "HEAD"],
    ["update-ref", "refs/heads/main", "", "a".repeat(40)],
    ["update-ref", "refs/tags/v1", "a".repeat(40), "b".repeat(40)],
    ["update-ref", "--no-deref", "refs/heads/main", "a".repeat(40), "b".repeat(40)],
    ["worktree", "remove", "--force", "/tmp/x"],
    ["worktree", "remove", "/tmp/x"],
    ["worktree", "add", "/tmp/x", "main"],
    ["worktree", "add", "-b", "x", "/tmp/x", "a".repeat(40)],
    ["worktree", "move", "/tmp/x", "/tmp/y"],
    ["filter-branch", "--tree-filter", "rm -f secret", "HEAD"],
    ["filter-repo", "--path", "x"],
    ["-c", "alias.x=push --force", "push", "origin", "HEAD:refs/heads/main"],
    ["--git-dir=/elsewhere", "push", "origin", "HEAD:refs/heads/main"],
    ["symbolic-ref", "HEAD", "refs/heads/other"],
    ["checkout", "-f", "main"],
    ["clean", "-fdx"],
    ["restore", "--staged", "--", "src/a.ts"],
    ["commit", "--file=-", "--", "src/a.ts"],
    ["push", "origin", "HEAD:refs/tags/v1"],
    ["push", "origin", "main"],
  ];

  it.each(forbidden.map((args) => [args.join(" ") || "(empty)", args]))(
    "rejects git %s",
    (_label, args) => {
      expect(() => assertAllowedGitArgs(args as string[])).toThrow(ForbiddenGitOperation);
    },
  );

  it("names the reason for each form the design forbids", () => {
    const reason = (args: string[]) => {
      try {
        assertAllowedGitArgs(args);
      } catch (e) {
        return (e as Error).message;
      }
      return "accepted";
    };
    expect(reason(["push", "--force", "o", "HEAD:refs/heads/m"])).toMatch(/--force is never/);
    expect(reason(["push", "-f", "o", "HEAD:refs/heads/m"])).toMatch(/never force-push/);
    expect(reason(["push", "o", "+HEAD:refs/heads/m"])).toMatch(/starts with \+/);
    expect(reason(["commit", "--amend"])).toMatch(/--amend is never/);
    expect(reason(["reset", "--hard"])).toMatch(/reset --hard/);
    expect(reason(["rebase", "main"])).toMatch(/rebase rewrites history/);
    expect(reason(["branch", "-D", "x"])).toMatch(/deletes/);
    expect(reason(["push", "o", ":x"])).toMatch(/deletes the remote ref/);
    expect(reason(["update-ref", "-d", "refs/heads/x"])).toMatch(/deletes a ref/);
    expect(reason(["filter-branch", "HEAD"])).toMatch(/rewrites history/);
    expect(reason(["push", "--mirror", "o"])).toMatch(/--mirror is never/);
  });

  it("accepts exactly the invocations the writer makes", () => {
    const allowed: string[][] = [
      ["rev-parse", "--show-toplevel"],
      ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
      ["rev-parse", "--verify", "--quiet", "MERGE_HEAD"],
      ["symbolic-ref", "--quiet", "HEAD"],
      ["diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "HEAD"],
      ["diff", "--cached", "--name-only", "-z", "--no-renames", "--no-ext-diff", "HEAD"],
      ["ls-files", "--others", "--exclude-standard", "-z"],
      ["ls-tree", "-r", "-z", "--name-only", "--full-tree", "HEAD", "--", "src/a.ts"],
      ["ls-tree", "-r", "-z", "--full-tree", "HEAD", "--", "src/a.ts"],
      ["cat-file", "blob", "0123456789abcdef0123456789abcdef01234567"],
      ["restore", "--source=HEAD", "--worktree", "--", "src/a.ts", "-f", "+odd name"],
      ["hash-object", "-w", "--no-filters", "--stdin"],
      ["read-tree", "0123456789abcdef0123456789abcdef01234567"],
      ["update-index", "-z", "--index-info"],
      ["write-tree"],
      [
        "commit-tree",
        "0123456789abcdef0123456789abcdef01234567",
        "-p",
        "89abcdef0123456789abcdef0123456789abcdef",
      ],
      [
        "update-ref",
        "--no-deref",
        "HEAD",
        "0123456789abcdef0123456789abcdef01234567",
        "89abcdef0123456789abcdef0123456789abcdef",
      ],
      ["rev-list", "--parents", "--max-count=1", "abc123"],
      ["check-ref-format", "refs/heads/feature/x"],
      ["ls-remote", "origin", "refs/heads/main"],
      ["fetch", "--quiet", "--no-tags", "--no-recurse-submodules", "origin", "refs/heads/main"],
      ["merge-base", "--is-ancestor", "abc", "def"],
      [
        "push",
        "--porcelain",
        "--no-follow-tags",
        "--no-recurse-submodules",
        "origin",
        "0123456789abcdef0123456789abcdef01234567:refs/heads/main",
      ],
      [
        "push",
        "--porcelain",
        "--no-follow-tags",
        "--no-recurse-submodules",
        "--receive-pack=git-receive-pack",
        "origin",
        "0123456789abcdef0123456789abcdef01234567:refs/heads/main",
      ],
      ["ls-remote", "--upload-pack=git-upload-pack", "origin", "refs/heads/main"],
      ["init", "--bare", "--quiet", "--template=", "--object-format=sha1", "/tmp/t"],
      ["rev-parse", "--show-object-format"],
      ["config", "--get", "remote.origin.url"],
    ];
    for (const args of allowed) expect(() => assertAllowedGitArgs(args)).not.toThrow();
  });
});

describe("BranchWriter: no way around the guard", () => {
  const source = readFileSync(
    fileURLToPath(new URL("../src/adapters/git/branch-writer.ts", import.meta.url)),
    "utf8",
  );

  it("starts git only through the project's git door, after the guard", () => {
    expect(source).not.toMatch(/\b(spawn|execFile|execSync|execFileSync|spawnSync|exec)\(/);
    expect(source).not.toMatch(/from "simple-git"/);
    expect(source.match(/\brunGitProcess\(/g)).toHaveLength(1);
    const door = source.slice(source.indexOf("async function runGit("));
    expect(door.indexOf("assertAllowedGitArgs(args)")).toBeGreaterThan(0);
    expect(door.indexOf("assertAllowedGitArgs(args)")).toBeLessThan(door.indexOf("runGitProcess("));
  });

  it("has no method that could force, amend, reset, rebase or delete", () => {
    expect(Object.getOwnPropertyNames(BranchWriter.prototype).sort()).toEqual([
      "addWorktree",
      "branch",
      "branchTip",
      "changedFiles",
      "commit",
      "commitsBetween",
      "constructor",
      "fastForwardBranch",
      "fileVersions",
      "head",
      "push",
      "remoteOf",
      "removeWorktree",
      "restore",
      "revertToHead",
      "snapshot",
      "trackedChanges",
      "untrackedAmong",
    ]);
    expect(
      Object.getOwnPropertyNames(BranchWriter).filter(
        (n) => typeof (BranchWriter as unknown as Record<string, unknown>)[n] === "function",
      ),
    ).toEqual(["open"]);
  });

  it("refusals are BranchWriterRefusal errors with a code", async () => {
    const { work, base } = setup();
    const w = await open(work);
    const err = await w.commit("x", ["src/a.ts"], base).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BranchWriterRefusal);
  });
});

describe("BranchWriter: what the tree under review cannot make git do", () => {
  it("never runs a configured filter driver that a .gitattributes in the tree selects (diff, commit, revert, restore)", async () => {
    const { work, base, dir } = setup();
    const marker = join(dir, "filter-ran");
    // The user's config has a driver; the pull request's .gitattributes points every file at it.
    git(work, "config", "filter.evil.clean", `touch '${marker}'; cat`);
    git(work, "config", "filter.evil.smudge", `touch '${marker}'; cat`);
    git(work, "config", "filter.evil.process", `sh -c "touch '${marker}'"`);
    write(work, ".gitattributes", "* filter=evil\n");
    write(work, "src/a.ts", "export const a = 2;\n");
    const w = await BranchWriter.open(work);
    expect(await w.trackedChanges()).toContain("src/a.ts");
    const snap = await w.snapshot(["src/a.ts"]);
    await w.revertToHead(["src/a.ts"]);
    await w.restore(snap);
    await w.commit("change a", [".gitattributes", "src/a.ts"], base);
    expect(existsSync(marker)).toBe(false);
  });

  it("commits a planned new file that the repository's .gitignore matches, and only the planned files", async () => {
    const { work, base } = setup();
    write(work, ".gitignore", "*.snap\n");
    git(work, "add", ".gitignore");
    git(work, "commit", "-qm", "ignore snapshots");
    const head = git(work, "rev-parse", "HEAD");
    write(work, "test/out.snap", "planned\n");
    write(work, "other.snap", "not planned\n");
    const w = await BranchWriter.open(work);
    expect(await w.untrackedAmong(["test/out.snap", "missing.snap", "other.snap"])).toEqual([
      "other.snap",
      "test/out.snap",
    ]);
    const sha = await w.commit("add snapshot", ["test/out.snap"], head);
    expect(git(work, "show", "--name-only", "--format=", sha)).toBe("test/out.snap");
    expect(base).not.toBe(head);
  });
});
