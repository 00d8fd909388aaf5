/**
 * Cuts a release of the repository it runs in (the git work tree holding the current
 * directory): the annotated tag vX.Y.Z on HEAD, and the major tag vX moved to it, so that
 * `uses: terfyn/terfyn@vX` follows the major and `@vX.Y.Z` pins one release.
 *
 *   tsx scripts/release.ts X.Y.Z                  # tag locally
 *   tsx scripts/release.ts X.Y.Z --push origin    # and push both tags (the major one forced)
 *
 * It refuses, with one line saying what to do, unless everything a tag freezes is ready:
 * - the working tree is clean (a tag names a commit, not what is on disk);
 * - package.json's version is X.Y.Z;
 * - CHANGELOG.md has a `## [X.Y.Z]` section (Keep a Changelog);
 * - vX.Y.Z is not already a tag of another commit, and the major tag would not move back to an
 *   older release than the newest of its major;
 * - dist/ matches a fresh build (`npm run build -- --check`: the Action runs the committed
 *   dist/index.js from the tag's tree, and the package's binary runs dist/cli.js);
 * - the bundled CLI (dist/cli.js --version) says X.Y.Z.
 * Run again on the same commit after a failed push, it keeps the tag it made and pushes again.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

class Refusal extends Error {}

const USAGE = "usage: tsx scripts/release.ts X.Y.Z [--push REMOTE]";

function run(cmd: string, args: string[], cwd: string) {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8" });
  if (r.error) throw new Refusal(`cannot run ${cmd}: ${r.error.message}`);
  return { ok: r.status === 0, stdout: r.stdout.trim(), stderr: r.stderr.trim() };
}

function git(cwd: string, ...args: string[]): string {
  const r = run("git", args, cwd);
  if (!r.ok) throw new Refusal(`git ${args[0]} failed: ${r.stderr.split("\n")[0] ?? ""}`);
  return r.stdout;
}

/** The commit a tag names, or undefined when there is no such tag. */
function tagCommit(cwd: string, tag: string): string | undefined {
  const r = run("git", ["rev-parse", "-q", "--verify", `refs/tags/${tag}^{commit}`], cwd);
  return r.ok ? r.stdout : undefined;
}

type Version = [number, number, number];
const parseVersion = (v: string): Version | undefined => {
  const m = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/.exec(v);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
};
const newer = (a: Version, b: Version) =>
  a[0] !== b[0] ? a[0] > b[0] : a[1] !== b[1] ? a[1] > b[1] : a[2] > b[2];

/** The lines of CHANGELOG.md's `## [version]` section, heading included; undefined when absent. */
function changelogSection(text: string, version: string): string | undefined {
  const lines = text.split("\n");
  const heading = `## [${version}]`;
  const start = lines.findIndex(
    (l) => l === heading || l.startsWith(`${heading} `) || l.startsWith(`${heading}\t`),
  );
  if (start < 0) return undefined;
  const end = lines.findIndex((l, i) => i > start && l.startsWith("## "));
  return lines
    .slice(start, end < 0 ? undefined : end)
    .join("\n")
    .trim();
}

function release(argv: string[], cwd: string, log: (line: string) => void): void {
  const pushAt = argv.indexOf("--push");
  const remote = pushAt >= 0 ? argv[pushAt + 1] : undefined;
  if (pushAt >= 0 && (remote === undefined || remote.startsWith("-")))
    throw new Refusal(`--push needs a remote; ${USAGE}`);
  const rest = argv.filter((_, i) => pushAt < 0 || (i !== pushAt && i !== pushAt + 1));
  if (rest.length !== 1) throw new Refusal(USAGE);
  const version = rest[0] as string;
  const parsed = parseVersion(version);
  if (!parsed) throw new Refusal(`the version must be X.Y.Z (three numbers), not "${version}"`);
  const tag = `v${version}`;
  const major = `v${parsed[0]}`;

  const top = run("git", ["rev-parse", "--show-toplevel"], cwd);
  if (!top.ok) throw new Refusal("not inside a git work tree");
  const root = top.stdout;

  const dirty = git(root, "status", "--porcelain", "--untracked-files=normal");
  if (dirty !== "") {
    const lines = dirty.split("\n");
    throw new Refusal(
      `the working tree is not clean (${lines.length} change${lines.length === 1 ? "" : "s"}, first: ${lines[0]?.trim()}): commit or stash, a tag names a commit`,
    );
  }

  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    version?: string;
  };
  if (pkg.version !== version)
    throw new Refusal(
      `package.json's version is ${pkg.version ?? "missing"}, not ${version}: set it (and src/cli/version.ts), rebuild dist/ and commit`,
    );

  let changelog = "";
  try {
    changelog = readFileSync(join(root, "CHANGELOG.md"), "utf8");
  } catch {
    throw new Refusal("there is no CHANGELOG.md");
  }
  const notes = changelogSection(changelog, version);
  if (notes === undefined)
    throw new Refusal(
      `CHANGELOG.md has no "## [${version}]" section: move the Unreleased entries under one and commit`,
    );

  const head = git(root, "rev-parse", "HEAD");
  const existing = tagCommit(root, tag);
  if (existing !== undefined && existing !== head)
    throw new Refusal(`the tag ${tag} already names another commit (${existing}), not HEAD`);
  const newest = git(root, "tag", "--list", `${major}.*`)
    .split("\n")
    .map((t) => parseVersion(t.slice(1)))
    .filter((v): v is Version => v !== undefined)
    .reduce<Version | undefined>((a, v) => (a === undefined || newer(v, a) ? v : a), undefined);
  if (newest !== undefined && newer(newest, parsed))
    throw new Refusal(
      `v${newest.join(".")} is newer than ${version}: releasing it would move ${major} back (tag a backport by hand)`,
    );

  const build = run("npm", ["run", "--silent", "build", "--", "--check"], root);
  if (!build.ok) {
    const why = `${build.stderr}\n${build.stdout}`.split("\n").find((l) => l.trim() !== "");
    throw new Refusal(
      `dist/ does not match a fresh build (${why?.trim() ?? "the build failed"}): run \`npm run build\` and commit dist/`,
    );
  }
  const cli = run(process.execPath, [join(root, "dist", "cli.js"), "--version"], root);
  if (!cli.ok || cli.stdout !== version)
    throw new Refusal(
      `dist/cli.js says its version is ${cli.ok ? cli.stdout : "(it did not run)"}, not ${version}: set src/cli/version.ts, rebuild dist/ and commit`,
    );

  if (existing === undefined) {
    git(
      root,
      "tag",
      "-a",
      "--cleanup=whitespace",
      tag,
      "-m",
      `terfyn ${version}\n\n${notes}`,
      head,
    );
    log(`release: tagged ${tag} at ${head}`);
  } else log(`release: ${tag} already tags ${head}; kept`);
  const before = tagCommit(root, major);
  git(root, "tag", "-f", major, head);
  log(
    before === head
      ? `release: ${major} already at ${head}`
      : `release: moved ${major} ${before ? `from ${before} ` : ""}to ${head}`,
  );
  const refs = [`refs/tags/${tag}:refs/tags/${tag}`, `+refs/tags/${major}:refs/tags/${major}`];
  if (remote === undefined) {
    log(`release: push with: git push --atomic <remote> ${refs.join(" ")}`);
    return;
  }
  const push = run("git", ["push", "--atomic", remote, ...refs], root);
  if (!push.ok)
    throw new Refusal(
      `pushing ${tag} and ${major} to ${remote} failed: ${push.stderr.split("\n").find((l) => /error|rejected|fatal/.test(l)) ?? push.stderr}`,
    );
  log(`release: pushed ${tag} and ${major} to ${remote}`);
}

try {
  release(process.argv.slice(2), process.cwd(), (line) => process.stdout.write(`${line}\n`));
} catch (e) {
  if (!(e instanceof Refusal)) throw e;
  process.stderr.write(`release: ${e.message}\n`);
  process.exitCode = 1;
}
