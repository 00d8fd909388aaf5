/**
 * A run's files put back into a worktree made anew (a review-fix job on a fresh machine): the
 * saved list is hostile data (it comes from a ref anyone who can push may push), so writes go
 * through the workspace sandbox and removals never leave the worktree, follow a link or touch
 * .git. On the example repository with a committed symlink that points outside.
 */
import { existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { localEffects, type WorkFiles } from "../src/adapters/review/local-effects.ts";
import { buildReviewExample, git } from "./helpers/review-run.ts";

/** The example with `lnk` (a symlink to a directory outside) committed at head. */
function withOutsideLink() {
  const b = buildReviewExample("terfyn-restore-");
  const outside = mkdtempSync(join(tmpdir(), "terfyn-outside-"));
  writeFileSync(join(outside, "victim.txt"), "keep me\n");
  symlinkSync(outside, join(b.repo, "lnk"));
  git(b.repo, "add", "lnk");
  git(b.repo, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "a link");
  const head = git(b.repo, "rev-parse", "HEAD");
  return { b, outside, head };
}

const tree = (b: ReturnType<typeof buildReviewExample>, saved: WorkFiles) =>
  localEffects({
    repoDir: b.repo,
    requestFile: b.request,
    runDir: b.runDir,
    agents: undefined as never,
    model: undefined as never,
    // Nothing here runs a command.
    sandbox: undefined as never,
    progress: () => {},
    restoreWork: async () => saved,
  }).tree;

describe("restoring a run's files into a fresh worktree", () => {
  it("writes and removes inside the worktree", async () => {
    const { b, head } = withOutsideLink();
    const t = tree(b, {
      write: new Map([["src/new dir/ü.js", Buffer.from("x\n")]]),
      remove: ["README.md"],
    });
    expect(await t.prepare(head)).toBe(true);
    const root = t.location();
    expect(readFileSync(join(root, "src", "new dir", "ü.js"), "utf8")).toBe("x\n");
    expect(existsSync(join(root, "README.md"))).toBe(false);
    // Prepared once: a second call makes nothing.
    expect(await t.prepare(head)).toBe(false);
  });

  for (const [name, saved] of [
    [
      "a write through a symlinked directory",
      { write: new Map([["lnk/evil.txt", Buffer.from("x")]]), remove: [] },
    ],
    [
      "a write into .git",
      { write: new Map([[".git/hooks/post-commit", Buffer.from("x")]]), remove: [] },
    ],
    [
      "a write above the worktree",
      { write: new Map([["../evil.txt", Buffer.from("x")]]), remove: [] },
    ],
    ["a removal through a symlinked directory", { write: new Map(), remove: ["lnk/victim.txt"] }],
    ["a removal above the worktree", { write: new Map(), remove: ["../victim.txt"] }],
    ["a removal inside .git", { write: new Map(), remove: [".git/HEAD"] }],
  ] as [string, WorkFiles][]) {
    it(`${name} is refused and changes nothing outside`, async () => {
      const { b, outside, head } = withOutsideLink();
      writeFileSync(join(b.runDir, "..", "victim.txt"), "keep me too\n");
      await expect(tree(b, saved).prepare(head)).rejects.toThrow();
      expect(readFileSync(join(outside, "victim.txt"), "utf8")).toBe("keep me\n");
      expect(existsSync(join(outside, "evil.txt"))).toBe(false);
      expect(readFileSync(join(b.runDir, "..", "victim.txt"), "utf8")).toBe("keep me too\n");
      expect(existsSync(join(b.runDir, "..", "evil.txt"))).toBe(false);
    });
  }

  for (const [name, saved] of [
    [
      "a write of the worktree's .git file",
      { write: new Map([[".git", Buffer.from("gitdir: /tmp/x\n")]]), remove: [] },
    ],
    ["a removal of the worktree's .git file", { write: new Map(), remove: [".git"] }],
    ["a removal of .GIT", { write: new Map(), remove: [".GIT"] }],
  ] as [string, WorkFiles][]) {
    it(`${name} is refused and the worktree's link to its repository stays`, async () => {
      const { b, head } = withOutsideLink();
      await expect(tree(b, saved).prepare(head)).rejects.toThrow(/\.git/i);
      expect(readFileSync(join(`${b.runDir}.worktree`, ".git"), "utf8")).toMatch(/^gitdir: /);
    });
  }
});
