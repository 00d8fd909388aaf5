/**
 * Releases (issue 23, item 4): scripts/release.ts on a temporary repository holding the
 * release inputs of this working tree (action.yml, dist/, package.json, CHANGELOG.md, the
 * sources dist/ is built from), with a bare repository as its remote. Each refusal is shown on
 * the real check (the dist/ check is this repository's own `npm run build -- --check`, run in
 * the temporary repository); a release tags vX.Y.Z and moves v<major> in the remote, and a
 * later one moves v<major> on. Then the Action runs the way the runner runs it: from the tree
 * of the tag `uses: terfyn/terfyn@v<major>` names (`git archive` from the remote), its
 * action.yml's `runs.main`, with nothing else installed.
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { commitAll, git, pullRequestOpened, runAction } from "./helpers/action-harness.ts";
import { grant, prRepo } from "./helpers/example-project.ts";
import { fakeGitHub } from "./helpers/fake-github.ts";

const ROOT = join(import.meta.dirname, "..");
const RELEASE = join(ROOT, "scripts", "release.ts");
const TSX = import.meta.resolve("tsx");

/** What a release commit holds: the Action, the package, and what dist/ is built from. */
const INPUTS = [
  ".gitignore",
  "action.yml",
  "package.json",
  "package-lock.json",
  "tsconfig.json",
  "CHANGELOG.md",
  "README.md",
  "LICENSE",
  "bin",
  "dist",
  "agents",
  "src",
  "scripts/build-dist.ts",
  "scripts/bundle-aliases.ts",
  "scripts/node-targets.ts",
];

const VERSION = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version as string;
const [X, Y, Z] = VERSION.split(".").map(Number) as [number, number, number];
const MAJOR = `v${X}`;
/** The next minor release, and a patch of this one (older than the next, never tagged). */
const NEXT = `${X}.${Y + 1}.0`;
const BACKPORT = `${X}.${Y}.${Z + 1}`;

let base: string;
let template: string;
let gitConfig: string;

beforeAll(() => {
  nock.disableNetConnect();
  base = mkdtempSync(join(tmpdir(), "terfyn-release-"));
  gitConfig = join(base, "gitconfig");
  writeFileSync(gitConfig, "");
  // At the same depth as each case's clone (base/case-*/repo): the chunks' hashes hold the
  // relative path from the repository to node_modules (a link, resolved).
  template = join(base, "template", "repo");
  mkdirSync(template, { recursive: true });
  for (const f of INPUTS) cpSync(join(ROOT, f), join(template, f), { recursive: true });
  const changelog = join(template, "CHANGELOG.md");
  if (!readFileSync(changelog, "utf8").includes(`\n## [${VERSION}]`))
    writeFileSync(
      changelog,
      `${readFileSync(changelog, "utf8")}\n## [${VERSION}]\n\n### Added\n- This release.\n`,
    );
  git(template, "init", "-q", "-b", "main");
  git(template, "config", "commit.gpgsign", "false");
  linkModules(template);
  // dist/ as this repository's build makes it here: the CLI's chunk names hash the paths of the
  // modules they hold, which lie outside this repository (node_modules is a link), so the
  // chunks are rebuilt; the Action's bundles are single files and come out byte for byte.
  const build = npm(template, "run", "--silent", "build");
  expect(build.status, build.stderr).toBe(0);
  for (const f of ["dist/index.js", "dist/review-fix.js"])
    expect(
      readFileSync(join(template, f)).equals(readFileSync(join(ROOT, f))),
      `${f} differs from a fresh build: run \`npm run build\``,
    ).toBe(true);
  commitAll(template, "release inputs");
}, 120_000);

afterEach(() => {
  nock.cleanAll();
});

function npm(cwd: string, ...args: string[]) {
  return spawnSync("npm", args, { cwd, encoding: "utf8" });
}

/** node_modules of this checkout, linked and kept out of git (it is no release input). */
function linkModules(repo: string): void {
  symlinkSync(join(ROOT, "node_modules"), join(repo, "node_modules"));
  writeFileSync(join(repo, ".git", "info", "exclude"), "node_modules\n");
}

/** A clone of the release inputs, with a bare repository of its own as `origin`. */
function newCase(): { repo: string; remote: string } {
  const dir = mkdtempSync(join(base, "case-"));
  const remote = join(dir, "remote.git");
  git(dir, "init", "-q", "--bare", remote);
  const repo = join(dir, "repo");
  git(dir, "clone", "-q", template, repo);
  git(repo, "config", "commit.gpgsign", "false");
  git(repo, "remote", "set-url", "origin", remote);
  linkModules(repo);
  return { repo, remote };
}

function release(cwd: string, ...args: string[]) {
  const r = spawnSync(process.execPath, ["--import", TSX, RELEASE, ...args], {
    cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_CONFIG_GLOBAL: gitConfig,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_NAME: "Release Manager",
      GIT_AUTHOR_EMAIL: "release@example.com",
      GIT_COMMITTER_NAME: "Release Manager",
      GIT_COMMITTER_EMAIL: "release@example.com",
    },
    timeout: 90_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function replace(repo: string, file: string, from: string, to: string): void {
  const path = join(repo, file);
  const text = readFileSync(path, "utf8");
  if (!text.includes(from)) throw new Error(`${from} is not in ${file}`);
  writeFileSync(path, text.replace(from, to));
}

const setPackageVersion = (repo: string, v: string) =>
  replace(repo, "package.json", `"version": "${VERSION}"`, `"version": "${v}"`);
const setCliVersion = (repo: string, v: string) =>
  replace(repo, "src/cli/version.ts", `"${VERSION}"`, `"${v}"`);
const addChangelog = (repo: string, v: string) =>
  replace(
    repo,
    "CHANGELOG.md",
    "\n## [Unreleased]\n",
    `\n## [Unreleased]\n\n## [${v}]\n\n### Fixed\n- Things.\n`,
  );

/** The commit a tag names in a repository (bare or not); "" when there is none. */
function tagged(gitDir: string, tag: string): string {
  const r = spawnSync(
    "git",
    ["--git-dir", gitDir, "rev-parse", "-q", "--verify", `refs/tags/${tag}^{commit}`],
    {
      encoding: "utf8",
    },
  );
  return r.status === 0 ? r.stdout.trim() : "";
}

const tags = (repo: string) => git(repo, "tag", "--list");

describe("the version", () => {
  // A workflow that pins a major no release has tagged fails on its first run: what the
  // README, the docs and `terfyn init` tell people to write is this version's major tag.
  it(`is one: package.json's, the CLI's, and ${MAJOR} wherever the Action is pinned`, async () => {
    const { VERSION: cli } = await import("../src/cli/version.ts");
    expect(cli).toBe(VERSION);
    const { actionWorkflow } = await import("../src/cli/commands/init.ts");
    const sources: [string, string][] = [
      ["terfyn init's workflow", actionWorkflow("agents")],
      ["README.md", readFileSync(join(ROOT, "README.md"), "utf8")],
      ...readdirSync(join(ROOT, "docs"))
        .filter((f) => f.endsWith(".md"))
        .map((f): [string, string] => [`docs/${f}`, readFileSync(join(ROOT, "docs", f), "utf8")]),
    ];
    const pins = sources.flatMap(([where, text]) =>
      [...text.matchAll(/\bterfyn\/terfyn@(v\d+)\b(?![.\d])/g)].map((m) => ({ where, pin: m[1] })),
    );
    expect(pins.filter((p) => p.where === "terfyn init's workflow").length).toBeGreaterThan(0);
    expect(pins.filter((p) => p.pin !== MAJOR)).toEqual([]);
  });
});

describe("scripts/release.ts refuses", () => {
  it("a version that is not X.Y.Z, and --push without a remote", () => {
    const { repo } = newCase();
    expect(release(repo, "1.2").stderr).toBe(
      'release: the version must be X.Y.Z (three numbers), not "1.2"\n',
    );
    expect(release(repo, `v${VERSION}`).code).toBe(1);
    const r = release(repo, VERSION, "--push");
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      "release: --push needs a remote; usage: tsx scripts/release.ts X.Y.Z [--push REMOTE]\n",
    );
  });

  it("a working tree that is not clean: a changed file, an untracked one", () => {
    const { repo } = newCase();
    writeFileSync(join(repo, "README.md"), "changed\n");
    const changed = release(repo, VERSION);
    expect(changed.code).toBe(1);
    expect(changed.stderr).toBe(
      "release: the working tree is not clean (1 change, first: M README.md): commit or stash, a tag names a commit\n",
    );
    git(repo, "checkout", "--", "README.md");
    writeFileSync(join(repo, "notes.txt"), "draft\n");
    const untracked = release(repo, VERSION);
    expect(untracked.code).toBe(1);
    expect(untracked.stderr).toBe(
      "release: the working tree is not clean (1 change, first: ?? notes.txt): commit or stash, a tag names a commit\n",
    );
    expect(tags(repo)).toBe("");
  });

  it("a version package.json does not have", () => {
    const { repo } = newCase();
    addChangelog(repo, NEXT);
    commitAll(repo, "changelog only");
    const r = release(repo, NEXT);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `release: package.json's version is ${VERSION}, not ${NEXT}: set it (and src/cli/version.ts), rebuild dist/ and commit\n`,
    );
    expect(tags(repo)).toBe("");
  });

  it("a version CHANGELOG.md has no section for", () => {
    const { repo } = newCase();
    setPackageVersion(repo, NEXT);
    commitAll(repo, "version only");
    const r = release(repo, NEXT);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `release: CHANGELOG.md has no "## [${NEXT}]" section: move the Unreleased entries under one and commit\n`,
    );
    expect(tags(repo)).toBe("");
  });

  it("a dist/ that does not match a fresh build", () => {
    const { repo } = newCase();
    setPackageVersion(repo, NEXT);
    setCliVersion(repo, NEXT);
    addChangelog(repo, NEXT);
    commitAll(repo, "bumped, not rebuilt");
    const r = release(repo, NEXT);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      "release: dist/ does not match a fresh build (dist/cli.js is out of date: run `npm run build` and commit dist/): run `npm run build` and commit dist/\n",
    );
    expect(tags(repo)).toBe("");
  }, 60_000);

  it("a bundled CLI whose version is not the release's", () => {
    const { repo } = newCase();
    setPackageVersion(repo, NEXT);
    addChangelog(repo, NEXT);
    commitAll(repo, "src/cli/version.ts not bumped");
    const r = release(repo, NEXT);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `release: dist/cli.js says its version is ${VERSION}, not ${NEXT}: set src/cli/version.ts, rebuild dist/ and commit\n`,
    );
    expect(tags(repo)).toBe("");
  }, 60_000);

  it("a version tagged on another commit (and keeps its own tag when run again on the same one)", () => {
    const { repo } = newCase();
    expect(release(repo, VERSION).code).toBe(0);
    const first = git(repo, "rev-parse", "HEAD");
    const again = release(repo, VERSION);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`release: v${VERSION} already tags ${first}; kept`);
    writeFileSync(join(repo, "README.md"), "later\n");
    commitAll(repo, "later");
    const r = release(repo, VERSION);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `release: the tag v${VERSION} already names another commit (${first}), not HEAD\n`,
    );
    expect(tagged(join(repo, ".git"), `v${VERSION}`)).toBe(first);
  }, 90_000);

  it("a release older than the newest of its major: v<major> never moves back", () => {
    const { repo } = newCase();
    git(repo, "tag", "-a", `v${NEXT}`, "-m", "newer");
    setPackageVersion(repo, BACKPORT);
    addChangelog(repo, BACKPORT);
    commitAll(repo, "a backport");
    const r = release(repo, BACKPORT);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `release: v${NEXT} is newer than ${BACKPORT}: releasing it would move ${MAJOR} back (tag a backport by hand)\n`,
    );
    expect(tags(repo)).toBe(`v${NEXT}`);
  });
});

describe("scripts/release.ts releases", () => {
  it(`tags v${VERSION} and moves ${MAJOR} to it in the remote; the next release moves ${MAJOR} on`, () => {
    const { repo, remote } = newCase();
    const r = release(repo, VERSION, "--push", "origin");
    expect(r.code, r.stderr).toBe(0);
    const first = git(repo, "rev-parse", "HEAD");
    expect(r.stdout).toBe(
      [
        `release: tagged v${VERSION} at ${first}`,
        `release: moved ${MAJOR} to ${first}`,
        `release: pushed v${VERSION} and ${MAJOR} to origin`,
        "",
      ].join("\n"),
    );
    expect(tagged(remote, `v${VERSION}`)).toBe(first);
    expect(tagged(remote, MAJOR)).toBe(first);
    // vX.Y.Z is annotated, its message the changelog's section.
    expect(git(remote, "cat-file", "-t", `refs/tags/v${VERSION}`)).toBe("tag");
    expect(git(remote, "tag", "--list", "--format=%(contents)", `v${VERSION}`)).toContain(
      `terfyn ${VERSION}\n\n## [${VERSION}]`,
    );

    setPackageVersion(repo, NEXT);
    setCliVersion(repo, NEXT);
    addChangelog(repo, NEXT);
    expect(npm(repo, "run", "--silent", "build").status).toBe(0);
    const second = commitAll(repo, `${NEXT}`);
    const r2 = release(repo, NEXT, "--push", "origin");
    expect(r2.code, r2.stderr).toBe(0);
    expect(r2.stdout).toContain(`release: moved ${MAJOR} from ${first} to ${second}`);
    expect(tagged(remote, `v${NEXT}`)).toBe(second);
    expect(tagged(remote, MAJOR)).toBe(second);
    expect(tagged(remote, `v${VERSION}`)).toBe(first);
  }, 120_000);

  it(`the Action runs from ${MAJOR}'s tree in the remote, with nothing installed`, async () => {
    const { repo, remote } = newCase();
    const r = release(repo, VERSION, "--push", "origin");
    expect(r.code, r.stderr).toBe(0);
    // What the runner downloads for `uses: terfyn/terfyn@v<major>`: the tag's tree.
    const tree = join(mkdtempSync(join(tmpdir(), "terfyn-action-tree-")), "terfyn");
    mkdirSync(tree);
    const archive = join(tree, "..", "tree.tar");
    git(remote, "archive", "--format=tar", "-o", archive, MAJOR);
    execFileSync("tar", ["-xf", archive, "-C", tree]);
    rmSync(archive);
    expect(existsSync(join(tree, "node_modules"))).toBe(false);
    const action = parse(readFileSync(join(tree, "action.yml"), "utf8"));
    expect(action.runs.using).toBe("node24");
    const main = join(tree, action.runs.main);

    // An event it does not act on, in a process of its own as the runner starts it: every
    // input as INPUT_<NAME> with action.yml's default (the token's expression given a value).
    const inputs: Record<string, string> = {};
    for (const [name, input] of Object.entries(
      action.inputs as Record<string, { default?: string }>,
    ))
      inputs[`INPUT_${name.toUpperCase()}`] = String(input.default ?? "").startsWith("${{")
        ? "test-token"
        : String(input.default ?? "");
    const idle = spawnSync(process.execPath, [main], {
      cwd: tmpdir(),
      encoding: "utf8",
      env: { PATH: process.env.PATH, GITHUB_EVENT_NAME: "workflow_dispatch", ...inputs },
    });
    expect(idle.status, idle.stderr).toBe(0);
    expect(idle.stdout).toContain("nothing to do");

    // A pull request that gives the Reviewer a grant its policy forbids.
    const pr = prRepo((p) => grant(p, "Reviewer", "tool.workspace.write_file"));
    const gh = fakeGitHub({ pr: { headSha: pr.head, baseSha: pr.base, author: "alice" } });
    const run = await runAction({
      bundle: main,
      event: "pull_request",
      payload: pullRequestOpened(pr.base, pr.head),
      workspace: pr.repo,
      inputs: { project: "agents" },
    });
    gh.done();
    expect(run.failed).toBe(true);
    expect(run.outputs.forbidden).toBe("true");
    expect(run.outputs.widened).toBe("true");
    expect(run.outputs["plan-hash"]).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(run.summary).toContain("autonomous -> WIDENED");
    expect(gh.comments.some((c) => c.body.startsWith("<!-- terfyn:plan project=agents -->"))).toBe(
      true,
    );
    expect(gh.checkRuns[0]?.body).toMatchObject({ conclusion: "failure", head_sha: pr.head });
  }, 90_000);
});
