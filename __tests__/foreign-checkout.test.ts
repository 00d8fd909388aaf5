/**
 * The Action's check of the checkout it is given (src/adapters/git/foreign-checkout.ts, issue
 * 22), against real repositories: configuration that names a program (directly or through an
 * include), alternates, grafts, replace refs (loose and packed), a common directory elsewhere
 * and a `.git` that is not a directory are each refused by name, and reading them runs nothing;
 * a checkout as actions/checkout leaves it (v5's token header, v6's credentials include, git lfs
 * install) passes. The rule itself: git-config-rules.test.ts.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ForeignCheckoutError,
  foreignCheckoutSettings,
  refuseForeignCheckout,
} from "../src/adapters/git/foreign-checkout.ts";

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@x", ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
  }).trim();

/** A repository as actions/checkout (v5, persist-credentials, lfs: true) leaves it. */
function checkout(): { dir: string; head: string } {
  const dir = mkdtempSync(join(tmpdir(), "terfyn-checkout-"));
  git(dir, "init", "-q", "-b", "main");
  writeFileSync(join(dir, "a.txt"), "a\n");
  git(dir, "add", "-A");
  git(dir, "commit", "-qm", "a");
  git(dir, "remote", "add", "origin", "https://github.com/octo-org/agents");
  git(dir, "config", "--local", "gc.auto", "0");
  git(dir, "config", "--local", "http.https://github.com/.extraheader", "AUTHORIZATION: basic x");
  git(dir, "config", "--local", "filter.lfs.clean", "git-lfs clean -- %f");
  git(dir, "config", "--local", "filter.lfs.smudge", "git-lfs smudge -- %f");
  git(dir, "config", "--local", "filter.lfs.process", "git-lfs filter-process");
  git(dir, "config", "--local", "filter.lfs.required", "true");
  return { dir, head: git(dir, "rev-parse", "HEAD") };
}

const names = async (dir: string) => (await foreignCheckoutSettings(dir)).map((s) => s.name);

describe("the checkout the Action is given", () => {
  it("as actions/checkout leaves it, with v6's credentials include, it passes", async () => {
    const { dir } = checkout();
    const temp = mkdtempSync(join(tmpdir(), "terfyn-runner-temp-"));
    const creds = join(temp, "git-credentials-1.config");
    writeFileSync(creds, '[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic x\n');
    git(dir, "config", "--local", `includeIf.gitdir:${dir}/.git.path`, creds);
    expect(await foreignCheckoutSettings(dir)).toEqual([]);
    await refuseForeignCheckout(dir);
  });

  it("core.fsmonitor naming a program is refused, and reading the config does not run it", async () => {
    const { dir } = checkout();
    const marker = join(dir, "..", `${dir.split("/").pop()}-fsmonitor-ran`);
    const hook = join(dir, ".git", "fsmon.sh");
    writeFileSync(hook, `#!/bin/sh\necho ran >> '${marker}'\nexit 1\n`);
    chmodSync(hook, 0o755);
    git(dir, "config", "--local", "core.fsmonitor", hook);
    const error = await refuseForeignCheckout(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForeignCheckoutError);
    expect((error as Error).message).toContain(
      "- core.fsmonitor (.git/config): the fsmonitor hook",
    );
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the workflow expression the message names
    expect((error as Error).message).toContain("${{ runner.temp }}");
    expect(existsSync(marker)).toBe(false);
    // Plain git, as actions/checkout runs it in a .git it finds, does run it.
    git(dir, "status", "--porcelain");
    expect(existsSync(marker)).toBe(true);
  });

  it("a filter driver is refused, also when an include from inside the checkout brings it", async () => {
    const { dir } = checkout();
    git(dir, "config", "--local", "filter.evil.smudge", "sh -c 'touch /tmp/pwned'");
    expect(await names(dir)).toEqual(["filter.evil.smudge"]);

    const other = checkout().dir;
    writeFileSync(join(other, ".git", "evil.config"), '[filter "evil"]\n\tclean = sh -c x\n');
    git(other, "config", "--local", "include.path", "evil.config");
    const settings = await foreignCheckoutSettings(other);
    expect(settings.map((s) => [s.name, s.where])).toEqual([
      ["include.path", ".git/config"],
      ["filter.evil.clean", ".git/evil.config"],
    ]);
  });

  it("an include from outside the checkout is judged by what it brings", async () => {
    const { dir } = checkout();
    const outside = join(mkdtempSync(join(tmpdir(), "terfyn-outside-")), "x.config");
    writeFileSync(outside, "[core]\n\tsshCommand = ssh -i /tmp/key\n");
    git(dir, "config", "--local", "include.path", outside);
    expect(await foreignCheckoutSettings(dir)).toEqual([
      { name: "core.sshcommand", where: outside, why: "the ssh program git runs" },
    ]);
  });

  it("alternates, grafts and a common directory are refused", async () => {
    const a = checkout().dir;
    const elsewhere = checkout().dir;
    writeFileSync(join(a, ".git", "objects", "info", "alternates"), `${elsewhere}/.git/objects\n`);
    expect(await names(a)).toEqual(["objects/info/alternates"]);

    const g = checkout();
    writeFileSync(join(g.dir, ".git", "info", "grafts"), `${g.head}\n`);
    expect(await names(g.dir)).toEqual(["info/grafts"]);

    const c = checkout().dir;
    writeFileSync(join(c, ".git", "commondir"), `${elsewhere}/.git\n`);
    expect(await names(c)).toContain("commondir");
  });

  it("replace refs are refused, loose or packed", async () => {
    const { dir, head } = checkout();
    writeFileSync(join(dir, "a.txt"), "harmless\n");
    git(dir, "commit", "-qam", "harmless");
    git(dir, "replace", head, git(dir, "rev-parse", "HEAD"));
    expect(await names(dir)).toEqual(["refs/replace/ (1 ref)"]);
    git(dir, "pack-refs", "--all", "--prune");
    expect(existsSync(join(dir, ".git", "refs", "replace", head))).toBe(false);
    expect(await names(dir)).toEqual(["refs/replace/ (1 ref)"]);
  });

  it("a .git that is a file, a link or missing is refused: git would read another repository", async () => {
    const { dir } = checkout();
    const linked = mkdtempSync(join(tmpdir(), "terfyn-worktree-"));
    git(dir, "worktree", "add", "-q", join(linked, "w"));
    expect(await names(join(linked, "w"))).toEqual([".git"]);
    const link = mkdtempSync(join(tmpdir(), "terfyn-gitlink-"));
    symlinkSync(join(dir, ".git"), join(link, ".git"));
    expect((await foreignCheckoutSettings(link))[0]?.why).toMatch(/^is a symbolic link/);
    const empty = mkdtempSync(join(tmpdir(), "terfyn-nogit-"));
    mkdirSync(join(empty, "sub"));
    const settings = await foreignCheckoutSettings(empty);
    expect(settings[0]?.why).toMatch(/^is missing/);
  });
});
