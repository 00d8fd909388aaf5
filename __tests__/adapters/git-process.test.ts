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
import { GitProcessError, gitText } from "../../src/adapters/git/git-process.ts";
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

  it("a graft file cannot give a commit other parents (GIT_NO_REPLACE_OBJECTS does not turn grafts off)", async () => {
    const repo = mkdtempSync(join(tmpdir(), "terfyn-grafts-"));
    git(repo, "init", "-q", "-b", "main");
    git(repo, "commit", "-q", "--allow-empty", "-m", "base");
    git(repo, "commit", "-q", "--allow-empty", "-m", "head");
    const head = git(repo, "rev-parse", "HEAD");
    const base = git(repo, "rev-parse", "HEAD~1");
    writeFileSync(join(repo, ".git", "info", "grafts"), `${head}\n`);
    // Plain git is fooled, even without replace objects: the head has no parent.
    const plain = execFileSync("git", ["rev-list", "--parents", "-n1", head], {
      cwd: repo,
      encoding: "utf8",
      env: { ...process.env, GIT_NO_REPLACE_OBJECTS: "1" },
    });
    expect(plain.trim()).toBe(head);
    expect((await gitText(repo, ["rev-list", "--parents", "-n1", head])).trim()).toBe(
      `${head} ${base}`,
    );
  });

  it("core.gitProxy planted in the repository's config never runs", async () => {
    const dir = mkdtempSync(join(tmpdir(), "terfyn-git-proxy-"));
    const repo = join(dir, "repo");
    git(dir, "init", "-q", "-b", "main", repo);
    const marker = join(dir, "proxy-ran");
    const proxy = join(dir, "proxy.sh");
    writeFileSync(proxy, `#!/bin/sh\ntouch '${marker}'\nexit 1\n`);
    chmodSync(proxy, 0o755);
    git(repo, "config", "core.gitProxy", proxy);
    const fetch = gitText(repo, ["fetch", "git://127.0.0.1:9/x.git", "main"]);
    await expect(fetch).rejects.toBeInstanceOf(GitProcessError);
    expect(existsSync(marker)).toBe(false);
    // Plain git runs it.
    expect(() => git(repo, "fetch", "git://127.0.0.1:9/x.git", "main")).toThrow();
    expect(existsSync(marker)).toBe(true);
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
    git(work, "remote", "add", "origin", `file://${origin}`);
    git(work, "push", "-q", "origin", "main");
    const base = git(work, "rev-parse", "HEAD");
    const marker = join(dir, "planted-ran");
    const script = join(dir, "planted.sh");
    writeFileSync(script, `#!/bin/sh\ntouch '${marker}'\nexec git "$(basename "$0")" "$@"\n`);
    chmodSync(script, 0o755);
    git(work, "config", "remote.origin.uploadpack", `sh -c 'touch ${marker}'; git-upload-pack`);
    git(work, "config", "remote.origin.receivepack", `sh -c 'touch ${marker}'; git-receive-pack`);
    // The push runs in a transport repository that reads none of the repository's config; the
    // pack programs are named on the command line as well, so not even a config git still reads
    // there (the global one, for a remote named by its URL) can choose them.
    const global = join(dir, "global.gitconfig");
    writeFileSync(
      global,
      `[remote "file://${origin}"]\n\tuploadpack = sh -c 'touch ${marker}'; git-upload-pack\n\treceivepack = sh -c 'touch ${marker}'; git-receive-pack\n`,
    );
    writeFileSync(join(work, "a.txt"), "b\n");
    const w = await BranchWriter.open(work, {
      identity: { name: "t", email: "t@x" },
      env: { GIT_CONFIG_GLOBAL: global },
    });
    const sha = await w.commit("b", ["a.txt"], base);
    await w.push("origin", "main", base);
    expect(git(origin, "rev-parse", "refs/heads/main")).toBe(sha);
    expect(existsSync(marker)).toBe(false);
  });

  it("insteadOf, pushInsteadOf, pushurl and http settings in the repository's config do not move the push", async () => {
    const dir = mkdtempSync(join(tmpdir(), "terfyn-remote-url-"));
    const origin = join(dir, "origin.git");
    const decoy = join(dir, "decoy.git");
    const work = join(dir, "work");
    git(dir, "init", "-q", "--bare", "-b", "main", origin);
    git(dir, "init", "-q", "--bare", "-b", "main", decoy);
    git(dir, "init", "-q", "-b", "main", work);
    writeFileSync(join(work, "a.txt"), "a\n");
    git(work, "add", "-A");
    git(work, "commit", "-qm", "a");
    git(work, "remote", "add", "origin", origin);
    git(work, "push", "-q", "origin", "main");
    git(decoy, "fetch", "-q", origin, "main:main");
    const base = git(work, "rev-parse", "HEAD");
    // What code with write access to .git/config could plant to carry the push elsewhere.
    git(work, "config", `url.${decoy}.insteadOf`, origin);
    git(work, "config", `url.${decoy}.pushInsteadOf`, origin);
    git(work, "config", "remote.origin.pushurl", decoy);
    git(work, "config", "http.proxy", "http://127.0.0.1:9");
    // Plain git is fooled: its push goes to the decoy.
    expect(git(work, "remote", "get-url", "--push", "origin")).toBe(decoy);
    writeFileSync(join(work, "a.txt"), "b\n");
    const w = await BranchWriter.open(work, { identity: { name: "t", email: "t@x" } });
    const sha = await w.commit("b", ["a.txt"], base);
    expect(await w.push("origin", "main", base)).toEqual({
      pushed: true,
      before: base,
      after: sha,
    });
    expect(git(origin, "rev-parse", "refs/heads/main")).toBe(sha);
    expect(git(decoy, "rev-parse", "refs/heads/main")).toBe(base);
    // The transport repository is gone, and nothing was written under the repository's refs.
    const ours = readdirSync(tmpdir())
      .filter((n) => n.startsWith("terfyn-transport-"))
      .filter((n) => {
        const alternates = join(tmpdir(), n, "objects", "info", "alternates");
        return existsSync(alternates) && readFileSync(alternates, "utf8").includes(work);
      });
    expect(ours).toEqual([]);
  });
});
