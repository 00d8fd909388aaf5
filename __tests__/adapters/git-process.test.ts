/**
 * The project's one git door (src/adapters/git/git-process.ts): every git process in src/
 * starts there, and what a repository's configuration or refs could make git do is off:
 * replace objects, remote commands from config, hooks.
 */
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BranchWriter } from "../../src/adapters/git/branch-writer.ts";
import { readProjectAtRevision } from "../../src/adapters/git/read-revision.ts";

const SRC = join(import.meta.dirname, "..", "..", "src");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith(".ts") ? [p] : [];
  });
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@x", ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
  }).trim();

describe("one git door", () => {
  it("no file in src/ but git-process.ts starts git, nor imports simple-git", () => {
    const offenders: string[] = [];
    for (const file of sources(SRC)) {
      if (file.endsWith(join("git", "git-process.ts"))) continue;
      const text = readFileSync(file, "utf8");
      if (/\b(spawn|execFile|execFileSync|spawnSync|exec|execSync)\(\s*["'`]git["'`]/.test(text))
        offenders.push(`${file}: starts git`);
      if (/from ["']simple-git["']/.test(text)) offenders.push(`${file}: imports simple-git`);
    }
    expect(offenders).toEqual([]);
  });

  it("a replace object cannot make the reader see another tree than the commit names", async () => {
    const repo = mkdtempSync(join(tmpdir(), "terfyn-replace-"));
    git(repo, "init", "-q", "-b", "main");
    const project =
      "apiVersion: terfyn.dev/v1\nkind: Project\nmetadata: { name: real }\nspec: {}\n";
    writeFileSync(join(repo, "terfyn.yaml"), project);
    git(repo, "add", "-A");
    git(repo, "commit", "-qm", "real");
    const real = git(repo, "rev-parse", "HEAD");
    writeFileSync(join(repo, "terfyn.yaml"), project.replace("real", "harmless"));
    git(repo, "commit", "-qam", "harmless");
    const harmless = git(repo, "rev-parse", "HEAD");
    git(repo, "replace", real, harmless);
    // Plain git is fooled: it shows the harmless tree for the real commit.
    expect(git(repo, "show", `${real}:terfyn.yaml`)).toContain("harmless");
    const read = await readProjectAtRevision(repo, real);
    expect(read.commit).toBe(real);
    expect(read.files.find((f) => f.path === "terfyn.yaml")?.text).toContain("name: real");
  });

  it("remote.<name>.uploadpack and receivepack planted in the repository's config never run on push", async () => {
    const dir = mkdtempSync(join(tmpdir(), "terfyn-remote-cmds-"));
    const origin = join(dir, "origin.git");
    const work = join(dir, "work");
    git(dir, "init", "-q", "--bare", "-b", "main", origin);
    git(dir, "init", "-q", "-b", "main", work);
    writeFileSync(join(work, "a.txt"), "a\n");
    git(work, "add", "-A");
    git(work, "commit", "-qm", "a");
    git(work, "remote", "add", "origin", origin);
    git(work, "push", "-q", "origin", "main");
    const base = git(work, "rev-parse", "HEAD");
    const marker = join(dir, "planted-ran");
    const script = join(dir, "planted.sh");
    writeFileSync(script, `#!/bin/sh\ntouch '${marker}'\nexec git "$(basename "$0")" "$@"\n`);
    chmodSync(script, 0o755);
    git(work, "config", "remote.origin.uploadpack", `sh -c 'touch ${marker}'; git-upload-pack`);
    git(work, "config", "remote.origin.receivepack", `sh -c 'touch ${marker}'; git-receive-pack`);
    writeFileSync(join(work, "a.txt"), "b\n");
    const w = await BranchWriter.open(work, { identity: { name: "t", email: "t@x" } });
    const sha = await w.commit("b", ["a.txt"], base);
    await w.push("origin", "main", base);
    expect(git(origin, "rev-parse", "refs/heads/main")).toBe(sha);
    expect(existsSync(marker)).toBe(false);
  });
});
