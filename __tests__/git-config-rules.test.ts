/**
 * Which of a checkout's git settings the Action refuses (src/core/ci/git-config-rules.ts,
 * issue 22), against the source: every key whose value is a program git may run, includes from
 * inside the checkout, and the repository files that make git read what it did not fetch; and
 * what actions/checkout itself writes passes. The records are hostile text: parsed from
 * NUL-separated output, shown escaped. Reading them from a real repository:
 * foreign-checkout.test.ts; the Action refusing: fork-recipe.test.ts.
 */
import { describe, expect, it } from "vitest";
import {
  type CheckoutPlace,
  foreignCheckoutMessage,
  foreignConfigSettings,
  foreignRepositoryFiles,
  type GitConfigEntry,
  parseGitConfigList,
} from "../src/core/ci/git-config-rules.ts";

const PLACE: CheckoutPlace = {
  workspace: ["/home/runner/work/agents/agents"],
  home: "/home/runner",
};

const local = (key: string, value?: string): GitConfigEntry => ({
  scope: "local",
  origin: "file:.git/config",
  key,
  value,
});

const refused = (entries: GitConfigEntry[]) =>
  foreignConfigSettings(entries, PLACE).map((s) => s.name);

describe("git config keys that name a program", () => {
  it("core.fsmonitor set to a path is refused; a boolean is not", () => {
    expect(refused([local("core.fsmonitor", "/tmp/x/.git/fsmon.sh")])).toEqual(["core.fsmonitor"]);
    expect(refused([local("core.fsmonitor", "./hook")])).toEqual(["core.fsmonitor"]);
    for (const v of ["false", "true", "0", "off", "", undefined])
      expect(refused([local("core.fsmonitor", v)])).toEqual([]);
  });

  it("a filter, diff or merge driver's program is refused, whatever the driver's name", () => {
    for (const key of [
      "filter.evil.smudge",
      "filter.evil.clean",
      "filter.evil.process",
      'filter.e v"il.smudge',
      "filter.x.y.clean",
      "diff.evil.textconv",
      "diff.evil.command",
      "diff.external",
      "merge.evil.driver",
    ])
      expect(refused([local(key, "sh -c 'touch /tmp/pwned'")])).toEqual([key]);
    // Not programs: a filter's `required`, a diff driver's `binary`, a merge driver's name.
    expect(
      refused([
        local("filter.evil.required", "true"),
        local("diff.evil.binary", "true"),
        local("merge.evil.name", "a driver"),
        local("diff.algorithm", "histogram"),
      ]),
    ).toEqual([]);
  });

  it("hooks, ssh, proxy, prompts, editors, pagers and other commands git may run are refused", () => {
    const keys = [
      "core.hooksPath",
      "core.sshCommand",
      "core.gitProxy",
      "core.askPass",
      "core.editor",
      "core.pager",
      "core.alternateRefsCommand",
      "sequence.editor",
      "pager.log",
      "interactive.diffFilter",
      "difftool.x.cmd",
      "mergetool.x.path",
      "browser.x.cmd",
      "man.x.path",
      "guitool.x.cmd",
      "instaweb.httpd",
      "gpg.program",
      "gpg.ssh.program",
      "gpg.x509.program",
      "gpg.ssh.defaultKeyCommand",
      "credential.helper",
      "credential.https://github.com.helper",
      "sendemail.sendmailCmd",
      "sendemail.work.toCmd",
      "sendemail.smtpServer",
      "imap.tunnel",
      "trailer.sign.command",
      "trailer.sign.cmd",
      "hook.linter.command",
      "gc.recentObjectsHook",
      "uploadpack.packObjectsHook",
      "remote.origin.uploadpack",
      "remote.origin.receivepack",
      "remote.origin.vcs",
      "lfs.customtransfer.evil.path",
      "lfs.extension.evil.smudge",
    ];
    for (const key of keys) expect(refused([local(key, "/tmp/evil")]), key).toEqual([key]);
  });

  it("aliases, submodule updates and remote URLs only when they run something", () => {
    expect(refused([local("alias.st", "status")])).toEqual([]);
    expect(refused([local("alias.st", "!touch /tmp/x")])).toEqual(["alias.st"]);
    expect(refused([local("alias.hämta.command", " !sh")])).toEqual(["alias.hämta.command"]);
    expect(refused([local("submodule.lib.update", "rebase")])).toEqual([]);
    expect(refused([local("submodule.lib.update", "!sh evil")])).toEqual(["submodule.lib.update"]);
    expect(refused([local("remote.origin.url", "https://github.com/o/r")])).toEqual([]);
    expect(refused([local("remote.origin.url", "evil::/tmp/x")])).toEqual(["remote.origin.url"]);
    expect(refused([local("url.https://github.com/.insteadOf", "git@github.com:")])).toEqual([]);
    expect(refused([local("url.ext::sh -c evil.insteadOf", "https://github.com/")])).toEqual([
      "url.ext::sh -c evil.insteadOf",
    ]);
    // An empty credential helper only resets the list.
    expect(refused([local("credential.helper", "")])).toEqual([]);
    expect(refused([local("pager.log", "false")])).toEqual([]);
  });

  it("what actions/checkout writes passes: the token header, gc.auto, sparse checkout, git lfs install", () => {
    expect(
      refused([
        local("http.https://github.com/.extraheader", "AUTHORIZATION: basic ***"),
        local("gc.auto", "0"),
        local("core.sparseCheckout", "true"),
        local("remote.origin.url", "https://github.com/octo-org/agents"),
        local("remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"),
        local("filter.lfs.clean", "git-lfs clean -- %f"),
        local("filter.lfs.smudge", "git-lfs smudge -- %f"),
        local("filter.lfs.process", "git-lfs filter-process"),
        local("filter.lfs.required", "true"),
        local("filter.lfs.smudge", "git-lfs smudge --skip -- %f"),
      ]),
    ).toEqual([]);
    // The lfs driver with another program is any other filter.
    expect(refused([local("filter.lfs.smudge", "sh -c evil")])).toEqual(["filter.lfs.smudge"]);
  });

  it("the runner's own configuration and the Action's overrides are not the checkout's", () => {
    for (const scope of ["global", "system", "command"])
      expect(refused([{ ...local("core.sshCommand", "ssh -i key"), scope }])).toEqual([]);
    expect(refused([{ ...local("core.fsmonitor", "/x"), scope: "worktree" }])).toEqual([
      "core.fsmonitor",
    ]);
  });
});

describe("includes", () => {
  it("an include from inside the checkout (or relative to it) is refused", () => {
    for (const path of [
      "../evil.config",
      "evil.config",
      "/home/runner/work/agents/agents/pr-number.txt",
      "/home/runner/work/agents/agents/x/../../agents/.git/evil",
      "~/work/agents/agents/evil",
      "~someone/evil",
    ]) {
      expect(refused([local("include.path", path)]), path).toEqual(["include.path"]);
      expect(refused([local("includeIf.gitdir:/x/.git.path", path)]), path).toEqual([
        "includeIf.gitdir:/x/.git.path",
      ]);
    }
  });

  it("actions/checkout v6's credentials include passes, and what an include brings is judged", () => {
    const v6 = local(
      "includeif.gitdir:/home/runner/work/agents/agents/.git.path",
      "/home/runner/work/_temp/git-credentials-7f3c.config",
    );
    const container = local(
      "includeif.gitdir:/github/workspace/.git.path",
      "/github/runner_temp/git-credentials-7f3c.config",
    );
    const brought: GitConfigEntry = {
      scope: "local",
      origin: "file:/home/runner/work/_temp/git-credentials-7f3c.config",
      key: "http.https://github.com/.extraheader",
      value: "AUTHORIZATION: basic ***",
    };
    expect(refused([v6, container, brought])).toEqual([]);
    const planted = { ...brought, key: "filter.evil.smudge", value: "sh" };
    expect(foreignConfigSettings([v6, planted], PLACE)).toEqual([
      {
        name: "filter.evil.smudge",
        where: "/home/runner/work/_temp/git-credentials-7f3c.config",
        why: expect.stringContaining("filter driver"),
      },
    ]);
  });
});

describe("the records are parsed, never trusted", () => {
  it("NUL-separated records: values with line feeds, keys without values", () => {
    const raw =
      "local\0file:.git/config\0core.bare\nfalse\0" +
      'local\0file:.git/config\0filter.e v"il.smudge\0' +
      "local\0file:.git/config\0filter.x.clean\na\nb\0";
    expect(parseGitConfigList(raw)).toEqual([
      local("core.bare", "false"),
      local('filter.e v"il.smudge'),
      local("filter.x.clean", "a\nb"),
    ]);
    expect(parseGitConfigList("")).toEqual([]);
  });

  it("anything else is not guessed at", () => {
    expect(parseGitConfigList("core.bare=false\n")).toBeUndefined();
    expect(parseGitConfigList("local\0file:.git/config\0")).toBeUndefined();
    expect(parseGitConfigList("local\0file:.git/config\0not a key\0")).toBeUndefined();
  });
});

describe("repository files", () => {
  const facts = { gitDir: "/w/.git", replaceRefs: [] as string[] };
  it("alternates, grafts, replace refs, commondir and a .git that is not a directory", () => {
    expect(foreignRepositoryFiles(facts)).toEqual([]);
    expect(foreignRepositoryFiles({ ...facts, alternates: "# none\n\n" })).toEqual([]);
    expect(
      foreignRepositoryFiles({
        ...facts,
        alternates: "/tmp/artifact/objects\n",
        grafts: `${"a".repeat(40)}\n`,
        replaceRefs: [`refs/replace/${"b".repeat(40)}`],
        commonDir: true,
      }).map((s) => s.name),
    ).toEqual(["commondir", "objects/info/alternates", "info/grafts", "refs/replace/ (1 ref)"]);
    expect(foreignRepositoryFiles({ ...facts, notADirectory: "file" })[0]?.why).toMatch(
      /is a file, not the directory actions\/checkout makes/,
    );
  });
});

describe("the message", () => {
  it("names each key escaped, where it is, and what to do", () => {
    const msg = foreignCheckoutMessage("/w", [
      { name: "filter.\u202eevil\n.smudge", where: ".git/config", why: "a filter" },
      { name: "core.fsmonitor", where: ".git/config", why: "the fsmonitor hook" },
    ]);
    expect(msg).toContain("- filter.\\u202Eevil⏎.smudge (.git/config): a filter");
    expect(msg).toContain("- core.fsmonitor (.git/config)");
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the workflow expression the message names
    expect(msg).toContain("${{ runner.temp }}");
    expect(msg.split("\n")).toHaveLength(4);
  });
});
