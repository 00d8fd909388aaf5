/**
 * The same review-response workflow against repositories in other languages (docs/review-doctrine.md,
 * doctrine 19): a Python module tested with unittest, and POSIX shell helpers with their own
 * runner, each a real git repository made by the test from __tests__/fixtures/review-*, run end
 * to end to `done` offline with a model script, through the `terfyn` binary with secrets in
 * its environment. Alongside: the run never touches the user's checkout (every file hashed
 * before and after), a write outside the plan or into .git is denied at the tool boundary,
 * the repository's commands see no secret, and what they leave behind (`__pycache__/`,
 * `build/`) is neither counted as touched nor committed.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const BIN = join(import.meta.dirname, "..", "bin", "terfyn.mjs");
const FIXTURES = join(import.meta.dirname, "fixtures");
const SECRETS = { ANTHROPIC_API_KEY: "sk-test", GITHUB_TOKEN: "ghp-test" };
/** A variable the Python fixture's AGENTS.md names, so its commands see it. */
const NAMED = { CALC_PRECISION: "4", UNNAMED_VARIABLE: "x" };
const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "Fixture Author",
  GIT_AUTHOR_EMAIL: "author@fixture.example",
  GIT_COMMITTER_NAME: "Fixture Author",
  GIT_COMMITTER_EMAIL: "author@fixture.example",
};
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8", env: GIT_ENV }).trim();

/** A real repository from a fixture: one commit on `fix-add`, the filled request next to it. */
function build(fixture: string) {
  const dir = mkdtempSync(join(tmpdir(), `terfyn-${fixture}-`));
  const repo = join(dir, "repo");
  cpSync(join(FIXTURES, fixture, "repo"), repo, { recursive: true });
  git(dir, "init", "-q", "-b", "main", repo);
  git(repo, "config", "user.name", "Fixture Author");
  git(repo, "config", "user.email", "author@fixture.example");
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "Start");
  git(repo, "checkout", "-qb", "fix-add");
  const head = git(repo, "rev-parse", "HEAD");
  const request = join(dir, "request.json");
  writeFileSync(
    request,
    readFileSync(join(FIXTURES, fixture, "request.template.json"), "utf8").replaceAll(
      "{{HEAD}}",
      head,
    ),
  );
  return {
    dir,
    repo,
    head,
    request,
    runDir: join(dir, "run"),
    script: join(FIXTURES, fixture, "model-script.yaml"),
  };
}

/** Every file of a directory tree but .git, by path, with the sha-256 of its bytes. */
function hashTree(root: string, skipGit = true): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, e.name);
      if (skipGit && e.name === ".git") continue;
      if (e.isDirectory()) walk(full);
      else
        out[relative(root, full)] = createHash("sha256").update(readFileSync(full)).digest("hex");
    }
  };
  walk(root);
  return out;
}

/** All text under a directory, for looking for leaked values. */
function allText(root: string): string {
  let text = "";
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else if (statSync(full).size < 5_000_000) text += readFileSync(full, "utf8");
    }
  };
  walk(root);
  return text;
}

function cli(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    encoding: "utf8",
    // From source: the test is about this tree, not the last bundle.
    env: { ...process.env, ...SECRETS, ...NAMED, TERFYN_FROM_SOURCE: "1" },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const state = (runDir: string) => JSON.parse(readFileSync(join(runDir, "state.json"), "utf8"));

/** Start, approve the plan, resume, approve the publish artifact, resume: the run's last words. */
function runToEnd(b: ReturnType<typeof build>, atPublishGate: () => void) {
  let r = cli(
    [
      "review",
      "--repo",
      b.repo,
      "--request",
      b.request,
      "--run-dir",
      b.runDir,
      "--model-script",
      b.script,
    ],
    b.dir,
  );
  for (const gate of ["plan", "publish"]) {
    expect(r.code, r.stderr + r.stdout).toBe(2);
    expect(state(b.runDir).awaiting.gate).toBe(gate);
    if (gate === "publish") atPublishGate();
    const a = cli(["approve", "--run", b.runDir, "--hash", state(b.runDir).awaiting.hash], b.dir);
    expect(a.code, a.stderr).toBe(0);
    r = cli(["review", "--resume", b.runDir], b.dir);
  }
  return r;
}

const committed = (repo: string, from: string) =>
  git(repo, "diff", "--name-only", from, "refs/heads/fix-add").split("\n").sort();

describe("review-response runs in other languages", () => {
  it("Python (unittest, no .gitignore): done; the user's checkout byte-identical; writes outside the plan and into .git denied; no secret in the tests' environment; __pycache__ neither touched nor committed", () => {
    const b = build("review-python");
    const marker = "/tmp/terfyn-fsmonitor-ran";
    rmSync(marker, { force: true });
    const before = hashTree(b.repo);
    const gitConfig = readFileSync(join(b.repo, ".git", "config"), "utf8");
    const worktree = `${b.runDir}.worktree`;

    const end = runToEnd(b, () => {
      // The run has been working elsewhere: in its own worktree, where the tests left caches.
      expect(hashTree(b.repo)).toEqual(before);
      expect(existsSync(join(worktree, "__pycache__"))).toBe(true);
      expect(existsSync(join(b.repo, "__pycache__"))).toBe(false);
      expect(readFileSync(join(worktree, "README.md"), "utf8")).toBe(
        readFileSync(join(b.repo, "README.md"), "utf8"),
      );
    });
    expect(end.code, end.stderr + end.stdout).toBe(0);
    expect(end.stdout.split("\n")[0]).toBe(
      "done: published; every new test is proven to test the change",
    );

    // One commit on the branch, exactly the plan's files; nothing the commands made.
    expect(git(b.repo, "rev-parse", "refs/heads/fix-add^")).toBe(b.head);
    expect(committed(b.repo, b.head)).toEqual(["calc.py", "test_add.py"]);
    expect(git(b.repo, "ls-tree", "-r", "--name-only", "refs/heads/fix-add")).not.toContain(
      "__pycache__",
    );

    // The user's files as they were, git's config untouched, the run's worktree gone.
    expect(hashTree(b.repo)).toEqual(before);
    expect(readFileSync(join(b.repo, ".git", "config"), "utf8")).toBe(gitConfig);
    expect(existsSync(worktree)).toBe(false);
    expect(git(b.repo, "worktree", "list", "--porcelain")).not.toContain("run.worktree");
    expect(existsSync(marker)).toBe(false);

    // The denials are in the Builder's journal, as the agent saw them.
    const journal = allText(join(b.runDir, "agents", "build-1"));
    expect(journal).toContain("writing README.md is denied");
    expect(journal).toContain("path .git/config is inside .git");
    expect(journal).toContain("path .GIT/config is inside .git");

    // The agent-written test printed its environment's names: no secret among them.
    const verdict = JSON.parse(readFileSync(join(b.runDir, "verdict-1.json"), "utf8"));
    const names = /ENV-NAMES: (.*)/.exec(verdict.evidence)?.[1]?.split(" ") ?? [];
    expect(names).toContain("PATH");
    expect(names).toContain("CALC_PRECISION");
    expect(names).not.toContain("UNNAMED_VARIABLE");
    // Named by AGENTS.md, refused: the repository is not trusted with the run's credentials.
    expect(names).not.toContain("ANTHROPIC_API_KEY");
    expect(names).not.toContain("GITHUB_TOKEN");
    expect(allText(b.runDir)).not.toMatch(/sk-test|ghp-test/);
  }, 180_000);

  it("POSIX shell (its own runner, which writes build/results.txt): done, and build/ is neither touched nor committed", () => {
    const b = build("review-shell");
    const before = hashTree(b.repo);
    const worktree = `${b.runDir}.worktree`;
    const end = runToEnd(b, () => {
      expect(existsSync(join(worktree, "build", "results.txt"))).toBe(true);
      expect(hashTree(b.repo)).toEqual(before);
    });
    expect(end.code, end.stderr + end.stdout).toBe(0);
    expect(end.stdout.split("\n")[0]).toBe(
      "done: published; every new test is proven to test the change",
    );
    expect(committed(b.repo, b.head)).toEqual(["lib/text.sh", "tests/test_shout.sh"]);
    expect(git(b.repo, "show", "refs/heads/fix-add:lib/text.sh")).toContain("tr '[:lower:]'");
    expect(hashTree(b.repo)).toEqual(before);
    expect(existsSync(worktree)).toBe(false);
  }, 180_000);
});
