/**
 * The only code in Terfyn that changes a git repository (review-response runs, docs/review-doctrine.md,
 * doctrine 12 "Never do the socially irreversible
 * thing").
 *
 * What it can do: read HEAD and the branch, list changed files, read a file at HEAD and in the
 * working tree (for the extend-only check), snapshot / revert / restore
 * working-tree files for the prover, make one normal commit on an expected parent (on a branch,
 * or detached in a run's own worktree), add and remove such a worktree, move a local branch
 * fast-forward only (a compare-and-swap `update-ref` after an ancestry check), and push a
 * branch fast-forward only.
 *
 * Git runs hardened, through the project's one git process (git-process.ts): hooks, the
 * fsmonitor hook, ssh command, pager, editor, credential helper and the ext:: transport from any
 * config file are overridden on the command line, system config and replace objects are not
 * read, and the environment is an allowlist (no GIT_DIR, no tokens).
 *
 * What it cannot do: force-push, amend, reset, rebase, delete a branch or a ref, or rewrite
 * history in any other way. There is no method for any of those, and every git process this
 * module starts goes through one private `#run` and `runGit`, which first calls `assertAllowedGitArgs`: an
 * allowlist of the exact subcommands and options used here, behind a denylist that names each
 * forbidden form (`--force`, `-f`, `--force-with-lease`, `--amend`, `+refspec`, `reset --hard`,
 * `rebase`, `branch -d/-D`, `push --delete`, `:ref`, `update-ref -d`, `filter-branch`,
 * `--mirror`, …). Anything else throws `ForbiddenGitOperation` before git starts.
 *
 * Git is spawned directly rather than through simple-git: simple-git resolves a command that
 * exits non-zero with empty stderr as a success, and `git merge-base --is-ancestor` says "no"
 * exactly that way (exit 1, no output). Here every exit code is checked.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  realpath,
  rm,
  rmdir,
  symlink,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, resolve as resolvePath } from "node:path";
import { GitProcessError, inheritedEnv, runGitProcess } from "./git-process.ts";

/** A git argument list this module refuses to run. Thrown before any process starts. */
export class ForbiddenGitOperation extends Error {
  override name = "ForbiddenGitOperation";
  readonly args: readonly string[];
  constructor(args: readonly string[], reason: string) {
    super(`forbidden git operation \`git ${args.join(" ")}\`: ${reason}`);
    this.args = [...args];
  }
}

export type RefusalCode =
  | "not-a-repository"
  | "no-head"
  | "detached-head"
  | "bad-path"
  | "branch-moved"
  | "operation-in-progress"
  | "unplanned-staged"
  | "unchanged-file"
  | "unplanned-commit-content"
  | "not-snapshotted"
  | "remote-branch-missing"
  | "remote-moved"
  | "behind-or-diverged"
  | "bad-ref"
  | "push-not-applied"
  | "bad-option";

/** The repository is not in a state where the requested write is safe; nothing was changed
 * unless the message says otherwise. The message is meant to be shown as is. */
export class BranchWriterRefusal extends Error {
  override name = "BranchWriterRefusal";
  readonly code: RefusalCode;
  constructor(code: RefusalCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** Git itself failed (not a refusal by this module). */
export class GitCommandError extends Error {
  override name = "GitCommandError";
  readonly exitCode: number | null;
  readonly stderr: string;
  constructor(args: readonly string[], exitCode: number | null, stderr: string) {
    super(`git ${args.join(" ")} failed (exit ${exitCode}): ${stderr.trim().split("\n")[0] ?? ""}`);
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

export interface GitIdentity {
  name: string;
  email: string;
}

export interface BranchWriterOptions {
  /** Author and committer of commits made by this writer; otherwise git's environment/config. */
  identity?: GitIdentity;
  /** Extra environment for git: only identity, date and config-location variables. */
  env?: Record<string, string>;
}

export type SnapshotEntry =
  | { readonly path: string; readonly kind: "absent" }
  | { readonly path: string; readonly kind: "file"; readonly bytes: Buffer; readonly mode: number }
  | { readonly path: string; readonly kind: "symlink"; readonly target: string };

/** Working-tree contents of some files, held in memory. */
export interface Snapshot {
  /** HEAD when the snapshot was taken (informational). */
  readonly head: string;
  readonly entries: readonly SnapshotEntry[];
}

export interface PushResult {
  /** False when the remote branch already pointed at the local HEAD. */
  pushed: boolean;
  /** The remote branch head before the push. */
  before: string;
  /** The remote branch head after the push (equal to the local HEAD). */
  after: string;
}

// ─────────────────────────────────────── the guard ───────────────────────────────────────

/** Long options that force, amend, delete, prune, skip hooks or reset hard, in any command. */
const FORBIDDEN_LONG = [
  "force",
  "force-with-lease",
  "force-if-includes",
  "amend",
  "mirror",
  "delete",
  "prune",
  "prune-tags",
  "no-verify",
  "hard",
  "onto",
];

/** Subcommands that rewrite history or delete refs whatever their options. */
const HISTORY_REWRITERS: Record<string, string> = {
  rebase: "rebase rewrites history",
  "filter-branch": "filter-branch rewrites history",
  "filter-repo": "filter-repo rewrites history",
  replace: "replace rewrites what history appears to be",
  reset: "reset moves the branch and can discard work (reset --hard)",
  branch: "branch can delete or move branches (branch -d / -D)",
  pull: "pull can rebase or merge",
  "cherry-pick": "cherry-pick is not a review-response operation",
};

interface Allowed {
  options: readonly string[];
  /** Inclusive bounds on positional arguments before any `--`. */
  positionals: readonly [number, number];
  /** Whether `-- <paths>` may follow. */
  paths: boolean;
  /** Extra check on the positional arguments. */
  check?: (positionals: readonly string[]) => string | undefined;
}

const REMOTE_BRANCH = /^refs\/heads\/[^:+^~?*[\\\s]+$/;

/**
 * Why `name` cannot be a pull request's branch the run clones and pushes, or undefined. Git's
 * own rules (check-ref-format: no control character, space, `~ ^ : ? * [ \`, `..`, `@{`, no
 * part starting with `.` or ending in `.lock`, no leading `-`, no trailing `/` or `.`), and no
 * `+` (the push refspec never holds one). Any other character, non-ASCII included, is fine.
 */
export function branchNameProblem(name: string): string | undefined {
  const says = (why: string) => `the pull request's branch ${JSON.stringify(name)} ${why}`;
  if (name === "" || Buffer.byteLength(name) > 250) return says("is empty or too long");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (/[\u0000-\u0020\u007f~^:?*[\\]/.test(name))
    return says("holds a space, a control character or one of ~ ^ : ? * [ \\");
  if (name.includes("+")) return says("holds +, which Terfyn never puts in a push refspec");
  if (name.startsWith("-")) return says("starts with -");
  if (name.includes("..") || name.includes("@{") || name === "@") return says("holds .. or @{");
  if (name.endsWith("/") || name.endsWith(".") || name.includes("//"))
    return says("ends with / or . or holds //");
  if (name.split("/").some((p) => p.startsWith(".") || p.endsWith(".lock")))
    return says("has a part starting with . or ending in .lock");
  return undefined;
}
const FULL_SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
/**
 * The remote's programs, named on the command line: a `remote.<name>.uploadpack` or
 * `receivepack` in the repository's configuration is a command git would run, and is never read.
 */
const UPLOAD_PACK = "git-upload-pack";
const RECEIVE_PACK = "git-receive-pack";

/** Exactly the git invocations the branch writer performs, and nothing else. */
const ALLOWED: Record<string, Allowed> = {
  "rev-parse": {
    options: [
      "--verify",
      "--quiet",
      "--show-toplevel",
      "--is-bare-repository",
      "--git-common-dir",
      "--show-object-format",
    ],
    positionals: [0, 1],
    paths: false,
  },
  "symbolic-ref": {
    // With two positionals symbolic-ref writes; only the one-argument read is allowed.
    options: ["--quiet"],
    positionals: [1, 1],
    paths: false,
    check: (p) => (p[0] === "HEAD" ? undefined : "symbolic-ref may only read HEAD"),
  },
  diff: {
    options: ["--cached", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv"],
    positionals: [0, 2],
    paths: false,
  },
  "ls-files": {
    options: ["--others", "--exclude-standard", "-z", "--full-name"],
    positionals: [0, 0],
    paths: true,
  },
  config: {
    // Reads only: the filter drivers configured (to switch them off) and a branch's remote.
    options: ["--get", "--name-only", "--get-regexp"],
    positionals: [1, 1],
    paths: false,
    check: (p) =>
      p[0] === "^filter\\." ||
      /^branch\.[A-Za-z0-9._/-]+\.remote$/.test(p[0] ?? "") ||
      /^remote\.[A-Za-z0-9._-]+\.url$/.test(p[0] ?? "")
        ? undefined
        : "config only reads the filter drivers, a branch's remote or a remote's url",
  },
  "ls-tree": {
    options: ["-r", "-z", "--name-only", "--full-tree"],
    positionals: [1, 1],
    paths: true,
  },
  "cat-file": {
    // One blob by its object id; or, read-only too, the objects named on stdin (`--batch`:
    // `HEAD:<path>` for many files in one process; `--batch-check`: whether refs resolve).
    options: ["--batch", "--batch-check"],
    positionals: [0, 2],
    paths: false,
    check: (p) =>
      p.length === 0 || (p[0] === "blob" && /^[0-9a-f]{40,64}$/.test(p[1] ?? ""))
        ? undefined
        : "cat-file reads exactly one blob, by its object id",
  },
  "rev-list": {
    options: ["--parents", "--max-count=1", "--count"],
    positionals: [1, 1],
    paths: false,
  },
  restore: {
    // Working tree only, from HEAD: the index and the branch are untouched.
    options: ["--source=HEAD", "--worktree"],
    positionals: [0, 0],
    paths: true,
  },
  // The commit is built with plumbing from checked bytes (BranchWriter.commit): blobs written
  // without filters, a private index over the parent's tree, a tree, a commit with one parent.
  "hash-object": {
    options: ["-w", "--no-filters", "--stdin"],
    positionals: [0, 0],
    paths: false,
  },
  "read-tree": {
    // Into an index only: no -u (the work tree), no -m (merges).
    options: [],
    positionals: [1, 1],
    paths: false,
    check: (p) => (FULL_SHA.test(p[0] ?? "") ? undefined : "read-tree takes one full object id"),
  },
  "update-index": { options: ["-z", "--index-info"], positionals: [0, 0], paths: false },
  "write-tree": { options: [], positionals: [0, 0], paths: false },
  "commit-tree": {
    // `commit-tree <tree> -p <parent>`: exactly one parent; the message comes on stdin.
    options: ["-p"],
    positionals: [2, 2],
    paths: false,
    check: (p) =>
      FULL_SHA.test(p[0] ?? "") && FULL_SHA.test(p[1] ?? "")
        ? undefined
        : "commit-tree takes a tree and one parent, both full object ids",
  },
  "merge-base": { options: ["--is-ancestor"], positionals: [2, 2], paths: false },
  "update-ref": {
    // Only the compare-and-swap form: `update-ref refs/heads/<branch> <new> <old>`, both full
    // object ids, so git itself refuses when the branch is not at <old>; or `--no-deref HEAD`
    // the same way (a run's detached worktree). Deleting (-d, --stdin, an empty <new>) is
    // refused by name above; fast-forward is checked by fastForwardBranch and commit.
    options: ["--no-deref"],
    positionals: [3, 3],
    paths: false,
    check: (p) =>
      (REMOTE_BRANCH.test(p[0] ?? "") || p[0] === "HEAD") &&
      FULL_SHA.test(p[1] ?? "") &&
      FULL_SHA.test(p[2] ?? "")
        ? undefined
        : "update-ref only as refs/heads/<branch> (or --no-deref HEAD) <new sha> <old sha> (compare-and-swap)",
  },
  worktree: {
    // A detached worktree at a full commit id, and pruning the records of removed ones. No
    // remove (it needs --force for untracked files), no move, no lock games.
    options: ["--detach", "--quiet"],
    positionals: [1, 3],
    paths: false,
    check: (p) =>
      (p[0] === "add" && p.length === 3 && FULL_SHA.test(p[2] ?? "")) ||
      (p[0] === "prune" && p.length === 1)
        ? undefined
        : "worktree only as `add --detach <dir> <sha>` or `prune`",
  },
  init: {
    // The push's transport repository: bare, no templates (hooks, config), at one new path.
    options: ["--bare", "--quiet", "--template=", "--object-format=sha1", "--object-format=sha256"],
    positionals: [1, 1],
    paths: false,
    check: (p) => (isAbsolute(p[0] ?? "") ? undefined : "init takes one absolute directory"),
  },
  "check-ref-format": {
    options: [],
    positionals: [1, 1],
    paths: false,
    check: (p) => (REMOTE_BRANCH.test(p[0] ?? "") ? undefined : "only refs/heads/<branch>"),
  },
  fetch: {
    options: ["--no-tags", "--no-recurse-submodules", "--quiet", `--upload-pack=${UPLOAD_PACK}`],
    positionals: [2, 2],
    paths: false,
    // Source only: fetching into FETCH_HEAD writes no branch or tracking ref from our argv.
    check: (p) =>
      REMOTE_BRANCH.test(p[1] ?? "") ? undefined : "fetch takes exactly refs/heads/<branch>",
  },
  "ls-remote": {
    options: [`--upload-pack=${UPLOAD_PACK}`],
    positionals: [2, 2],
    paths: false,
    check: (p) => (REMOTE_BRANCH.test(p[1] ?? "") ? undefined : "only refs/heads/<branch>"),
  },
  push: {
    options: [
      "--porcelain",
      "--no-recurse-submodules",
      "--no-follow-tags",
      "--quiet",
      `--receive-pack=${RECEIVE_PACK}`,
    ],
    positionals: [2, 2],
    paths: false,
    check: (p) => {
      const [sha, dest, more] = (p[1] ?? "").split(":");
      return FULL_SHA.test(sha ?? "") && REMOTE_BRANCH.test(dest ?? "") && more === undefined
        ? undefined
        : "push takes exactly <full commit id>:refs/heads/<branch>";
    },
  },
};

/**
 * Throws `ForbiddenGitOperation` unless `args` (a git argument list, subcommand first) is one
 * of the invocations the branch writer is allowed to make. Exported for tests; `#run` calls it
 * before every git process.
 */
export function assertAllowedGitArgs(args: readonly string[]): void {
  const forbid = (reason: string): never => {
    throw new ForbiddenGitOperation(args, reason);
  };
  if (!Array.isArray(args) || args.length === 0) forbid("no subcommand");
  for (const a of args) {
    if (typeof a !== "string") forbid("every argument must be a string");
    if (a.includes("\0")) forbid("an argument contains a NUL byte");
  }
  const sub = args[0]!;
  if (sub.startsWith("-"))
    forbid("options before the subcommand (-c, -C, --git-dir, …) are not allowed");

  const dd = args.indexOf("--", 1);
  const before = args.slice(1, dd < 0 ? args.length : dd);
  const after = dd < 0 ? [] : args.slice(dd + 1);
  const options = before.filter((a) => a.startsWith("-") && a !== "-");
  const positionals = before.filter((a) => !a.startsWith("-") || a === "-");
  const shortLetters = options
    .filter((a) => !a.startsWith("--"))
    .flatMap((a) => [...a.slice(1)])
    .join("");

  // Named denials first, so each forbidden form says why.
  if (
    sub === "reset" &&
    options.some((o) => longName(o) !== undefined && "hard".startsWith(longName(o)!))
  )
    forbid("reset --hard discards work and moves the branch");
  if (sub === "branch" && /[dDmMf]/.test(shortLetters))
    forbid("branch -d / -D / -m / -f deletes, moves or overwrites a branch");
  if (sub === "update-ref" && (/d/.test(shortLetters) || options.some((o) => o.startsWith("--d"))))
    forbid("update-ref -d deletes a ref");
  if (sub === "update-ref" && options.some((o) => o === "--stdin"))
    forbid("update-ref --stdin can delete or move any ref");
  if (sub === "update-ref" && options.includes("--no-deref") !== (positionals[0] === "HEAD"))
    forbid(
      "update-ref moves HEAD only with --no-deref (a detached worktree), and a branch only without it",
    );
  if (sub === "update-ref" && positionals.length !== 3)
    forbid("update-ref without an expected old value can move or delete any ref");
  if (sub === "worktree" && positionals[0] === "remove")
    forbid("worktree remove is not used: the run deletes its own directory, then prunes");
  const rewriter = HISTORY_REWRITERS[sub];
  if (rewriter) forbid(rewriter);
  for (const o of options) {
    const name = longName(o);
    if (name === undefined || name === "") continue;
    // git accepts any unambiguous prefix of a long option (`--forc`, `--amen`), so a prefix of
    // a forbidden option is as forbidden as the option itself.
    const hit = FORBIDDEN_LONG.find((f) => f.startsWith(name));
    if (hit) forbid(`--${hit} is never allowed (rewrites or deletes history, or skips hooks)`);
  }
  if ((sub === "push" || sub === "fetch") && shortLetters.includes("f"))
    forbid(`${sub} -f forces a non-fast-forward update; never force-push`);
  if (sub === "push" && shortLetters.includes("d")) forbid("push -d deletes a remote branch");
  if (sub === "commit" && shortLetters.includes("n")) forbid("commit -n skips hooks (--no-verify)");
  for (const p of sub === "push" || sub === "fetch" ? [...positionals, ...after] : positionals) {
    if (p.startsWith("+")) forbid(`refspec ${p} starts with +, which forces the update`);
    if (p.includes(":+")) forbid(`refspec ${p} forces the update`);
  }
  if (sub === "push")
    for (const p of [...positionals.slice(1), ...after]) {
      if (p.startsWith(":")) forbid(`refspec ${p} has no source, which deletes the remote ref`);
    }

  // Then the allowlist: the exact invocations this module makes.
  const allowed = ALLOWED[sub];
  if (!allowed) forbid(`git ${sub} is not an operation the branch writer performs`);
  for (const o of options)
    if (!allowed!.options.includes(o))
      forbid(`option ${o} is not allowed for git ${sub} in the branch writer`);
  const [min, max] = allowed!.positionals;
  if (positionals.length < min || positionals.length > max)
    forbid(`git ${sub} takes ${min}..${max} non-option arguments here, got ${positionals.length}`);
  if (dd >= 0 && !allowed!.paths) forbid(`git ${sub} takes no paths here`);
  if (allowed!.paths && dd >= 0 && after.length === 0) forbid(`git ${sub} -- needs paths`);
  const problem = allowed!.check?.(positionals);
  if (problem) forbid(problem);
}

function longName(option: string): string | undefined {
  if (!option.startsWith("--")) return undefined;
  return option.slice(2).split("=")[0];
}

// ─────────────────────────────────────── the writer ──────────────────────────────────────

/** GIT_CONFIG_COUNT/KEY_0/VALUE_0: one config entry in git's environment (the App's token header). */
const ENV_ALLOWED =
  /^(GIT_(AUTHOR|COMMITTER)_(NAME|EMAIL|DATE)|GIT_INDEX_FILE|GIT_CONFIG_GLOBAL|GIT_CONFIG_NOSYSTEM|GIT_CONFIG_COUNT|GIT_CONFIG_(KEY|VALUE)_0|HOME)$/;

interface RunResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

interface RunOptions {
  stdin?: string | Buffer;
  /** `-c key=value` pairs given before the subcommand (after the hardening). */
  config?: readonly string[];
  env?: Record<string, string>;
  /** Exit codes that are answers rather than failures (default: only 0). */
  okCodes?: readonly number[];
}

export class BranchWriter {
  readonly root: string;
  readonly #env: Record<string, string>;
  /** The last snapshotted state of each path: revertToHead refuses anything not held here. */
  readonly #held = new Map<string, SnapshotEntry>();

  /** `-c filter.<driver>.clean=` … for every configured filter driver: none of them ever runs. */
  readonly #filters: readonly string[];

  private constructor(root: string, env: Record<string, string>, filters: readonly string[]) {
    this.root = root;
    this.#env = env;
    this.#filters = filters;
  }

  /** Opens the working tree containing `repoDir` (its top level becomes the root). */
  static async open(repoDir: string, options: BranchWriterOptions = {}): Promise<BranchWriter> {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(options.env ?? {})) {
      if (!ENV_ALLOWED.test(k))
        throw new BranchWriterRefusal("bad-option", `environment variable ${k} is not allowed`);
      env[k] = v;
    }
    if (options.identity) {
      env.GIT_AUTHOR_NAME = options.identity.name;
      env.GIT_AUTHOR_EMAIL = options.identity.email;
      env.GIT_COMMITTER_NAME = options.identity.name;
      env.GIT_COMMITTER_EMAIL = options.identity.email;
    }
    let top: RunResult;
    try {
      top = await runGit(repoDir, ["rev-parse", "--show-toplevel"], { env });
    } catch {
      throw new BranchWriterRefusal("not-a-repository", `${repoDir} is not inside a git work tree`);
    }
    if (top.code !== 0)
      throw new BranchWriterRefusal("not-a-repository", `${repoDir} is not inside a git work tree`);
    const root = await realpath(top.stdout.toString("utf8").trim());
    return new BranchWriter(root, env, await filterOverrides(root, env));
  }

  /** The current commit. */
  async head(): Promise<string> {
    const r = await this.#run(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], {
      okCodes: [0, 1],
    });
    const sha = r.stdout.toString("utf8").trim();
    if (r.code !== 0 || sha === "")
      throw new BranchWriterRefusal("no-head", "the repository has no commit at HEAD");
    return sha;
  }

  /** The current branch name; refuses a detached HEAD. */
  async branch(): Promise<string> {
    const r = await this.#run(["symbolic-ref", "--quiet", "HEAD"], { okCodes: [0, 1] });
    const ref = r.stdout.toString("utf8").trim();
    if (r.code !== 0 || !ref.startsWith("refs/heads/"))
      throw new BranchWriterRefusal(
        "detached-head",
        "HEAD is detached (no branch is checked out); a review-response run commits only on the PR's branch; stop and say so",
      );
    return ref.slice("refs/heads/".length);
  }

  /** The commit `refs/heads/<branch>` points at, or undefined when there is no such branch. */
  async branchTip(branch: string): Promise<string | undefined> {
    const ref = checkBranch(branch);
    const r = await this.#run(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], {
      okCodes: [0, 1],
    });
    const sha = r.stdout.toString("utf8").trim();
    return r.code === 0 && sha !== "" ? sha : undefined;
  }

  /** How many commits `to` has that `from` lacks, or undefined when either is unknown here. */
  async commitsBetween(from: string, to: string): Promise<number | undefined> {
    if (!/^[0-9a-f]{7,64}$/.test(from) || !/^[0-9a-f]{7,64}$/.test(to)) return undefined;
    const r = await this.#run(["rev-list", "--count", `${from}..${to}`], { okCodes: [0, 128] });
    return r.code === 0 ? Number(r.stdout.toString("utf8").trim()) : undefined;
  }

  /**
   * Adds a linked worktree of this repository at `dir` (absolute, not existing or empty) with a
   * detached HEAD at `commit`, and opens it. The branch and this working tree are untouched.
   */
  async addWorktree(dir: string, commit: string): Promise<BranchWriter> {
    if (!isAbsolute(dir)) throw new BranchWriterRefusal("bad-path", `${dir} is not absolute`);
    const sha = (
      await this.#run(["rev-parse", "--verify", "--quiet", `${commit}^{commit}`], {
        okCodes: [0, 1],
      })
    ).stdout
      .toString("utf8")
      .trim();
    if (!FULL_SHA.test(sha))
      throw new BranchWriterRefusal("bad-ref", `${commit} is not a commit of ${this.root}`);
    // A worktree of this repository whose directory was deleted (a temp dir cleaned) is still
    // registered, and git refuses to add one at its path until the record is pruned.
    if (!existsSync(dir)) await this.#run(["worktree", "prune"]);
    await this.#run(["worktree", "add", "--quiet", "--detach", dir, sha]);
    return BranchWriter.open(dir, { env: this.#env });
  }

  /**
   * Deletes the linked worktree at `dir`, which must be another worktree of this same
   * repository (never this one), and prunes git's record of it.
   */
  async removeWorktree(dir: string): Promise<void> {
    const real = await realpath(dir).catch(() => undefined);
    if (real !== undefined) {
      if (real === this.root)
        throw new BranchWriterRefusal(
          "bad-path",
          `${dir} is this working tree, not a worktree of the run`,
        );
      const other = await BranchWriter.open(real, { env: this.#env });
      if (other.root !== real || (await other.#commonDir()) !== (await this.#commonDir()))
        throw new BranchWriterRefusal("bad-path", `${dir} is not a worktree of ${this.root}`);
      await rm(real, { recursive: true, force: true });
    }
    await this.#run(["worktree", "prune"]);
  }

  /** Where the repository's objects and refs are: fixed for a working tree, so read once. */
  #common: Promise<string> | undefined;
  #commonDir(): Promise<string> {
    this.#common ??= this.#run(["rev-parse", "--git-common-dir"]).then((r) =>
      realpath(resolvePath(this.root, r.stdout.toString("utf8").trim())),
    );
    this.#common.catch(() => {
      this.#common = undefined;
    });
    return this.#common;
  }

  /**
   * Moves `refs/heads/<branch>` from `from` to `to`, fast-forward only: the branch must be at
   * `from`, and `from` must be an ancestor of `to`; the move itself is a compare-and-swap, so a
   * branch that moved in between is left alone. Nothing else changes (no working tree, no index).
   */
  async fastForwardBranch(branch: string, from: string, to: string): Promise<void> {
    const ref = checkBranch(branch);
    if (!FULL_SHA.test(from) || !FULL_SHA.test(to))
      throw new BranchWriterRefusal("bad-ref", "fast-forward takes full commit ids");
    const tip = await this.branchTip(branch);
    if (tip !== from)
      throw new BranchWriterRefusal(
        "branch-moved",
        `${branch} is at ${tip ?? "nothing"}, not ${from}: the branch moved since the run started; stop and say so`,
      );
    const ancestor = await this.#run(["merge-base", "--is-ancestor", from, to], {
      okCodes: [0, 1],
    });
    if (ancestor.code !== 0)
      throw new BranchWriterRefusal(
        "behind-or-diverged",
        `${from} is not an ancestor of ${to}: moving ${branch} there is not a fast-forward; never rewrite a branch; stop and say so`,
      );
    await this.#run(["update-ref", ref, to, from]);
    if ((await this.branchTip(branch)) !== to)
      throw new BranchWriterRefusal("push-not-applied", `${branch} did not move to ${to}`);
  }

  /** Paths (relative to the root) that differ from HEAD in the working tree, plus untracked
   * files that are not ignored. Sorted, unique. */
  async changedFiles(): Promise<string[]> {
    const tracked = await this.trackedChanges();
    const untracked = await this.#run(["ls-files", "--others", "--exclude-standard", "-z"]);
    return unique([...tracked, ...splitZ(untracked.stdout)]);
  }

  /** Tracked paths whose working-tree copy differs from HEAD (changed or deleted). */
  async trackedChanges(): Promise<string[]> {
    let r: RunResult;
    try {
      r = await this.#run(["diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "HEAD"]);
    } catch (e) {
      // Without a commit at HEAD the diff fails: say so as before (head() refuses), once.
      await this.head();
      throw e;
    }
    return unique(splitZ(r.stdout));
  }

  /** Which of `paths` exist untracked, whether or not .gitignore matches them. */
  async untrackedAmong(paths: readonly string[]): Promise<string[]> {
    const clean = unique(paths.map(checkPath));
    if (clean.length === 0) return [];
    const r = await this.#run(["ls-files", "--others", "-z", "--", ...clean]);
    return unique(splitZ(r.stdout));
  }

  /** The remote a branch tracks (`branch.<name>.remote`), else `origin`. */
  async remoteOf(branch: string): Promise<string> {
    checkBranch(branch);
    if (!/^[A-Za-z0-9._/-]+$/.test(branch)) return "origin";
    const r = await this.#run(["config", "--get", `branch.${branch}.remote`], { okCodes: [0, 1] });
    const remote = r.stdout.toString("utf8").trim();
    return remote !== "" && remote !== "." && !remote.startsWith("-") ? remote : "origin";
  }

  /**
   * A file's bytes at HEAD and in the working tree, each absent where there is no regular file
   * (a symlink in the working tree counts as absent): what the extend-only check compares.
   */
  async fileVersions(
    path: string,
    options: {
      /** The commit whose version is `head` (a full id): HEAD when not given. */
      at?: string;
      /** Only the version in the commit, or only the one in the working tree. */
      only?: "head" | "worktree";
    } = {},
  ): Promise<{ head?: Buffer; worktree?: Buffer }> {
    const p = checkPath(path);
    const head =
      options.only === "worktree" ? undefined : (await this.#filesAt([p], options.at)).get(p);
    const now = options.only === "head" ? undefined : await this.#read(p);
    // A link is not content: read as "no file", a link to /etc/passwd would show as a deletion.
    if (now?.kind === "symlink")
      throw new BranchWriterRefusal(
        "bad-path",
        `${p} is a symbolic link in the work tree (to ${JSON.stringify(now.target)}); a run works with regular files only`,
      );
    return {
      ...(head ? { head } : {}),
      ...(now?.kind === "file" ? { worktree: now.bytes } : {}),
    };
  }

  /**
   * The bytes of each of `paths` in `commit` (a full object id, or HEAD), undefined where the
   * commit has no blob there (no such path, a directory, a submodule): the files of one commit
   * read by one `git cat-file --batch`, not two processes per file.
   */
  async #filesAt(
    paths: readonly string[],
    commit = "HEAD",
  ): Promise<Map<string, Buffer | undefined>> {
    if (commit !== "HEAD" && !FULL_SHA.test(commit))
      throw new BranchWriterRefusal("bad-ref", `${commit} is not a full commit id`);
    const clean = unique(paths.map(checkPath));
    const out = new Map<string, Buffer | undefined>();
    // cat-file --batch reads names a line each: a path with a newline is read on its own.
    const batched = clean.filter((p) => !p.includes("\n"));
    for (const p of clean.filter((x) => x.includes("\n")))
      out.set(p, await this.#blobAt(commit, p));
    if (batched.length === 0) return out;
    const r = await this.#run(["cat-file", "--batch"], {
      stdin: batched.map((p) => `${commit}:${p}\n`).join(""),
    });
    const objects = parseBatch(r.stdout, batched.length);
    batched.forEach((p, i) => {
      const o = objects[i];
      out.set(p, o?.type === "blob" ? o.bytes : undefined);
    });
    return out;
  }

  /** One file's blob in `commit` through ls-tree and cat-file (a name cat-file --batch cannot take). */
  async #blobAt(commit: string, p: string): Promise<Buffer | undefined> {
    const listed = await this.#run(["ls-tree", "-r", "-z", "--full-tree", commit, "--", p]);
    const entry = splitZ(listed.stdout).find((e) => e.endsWith(`\t${p}`));
    const blob = entry?.match(/^\d+ blob ([0-9a-f]{40,64})\t/)?.[1];
    return blob ? (await this.#run(["cat-file", "blob", blob])).stdout : undefined;
  }

  /** Paths staged in the index that differ from HEAD. */
  /** The mode and object id of each of `paths` in `commit` (absent: not a file there). */
  async #entriesAt(
    commit: string,
    paths: readonly string[],
  ): Promise<Map<string, { mode: string; oid: string }>> {
    const out = new Map<string, { mode: string; oid: string }>();
    const listing = (
      await this.#run(["ls-tree", "-r", "-z", "--full-tree", commit, "--", ...paths])
    ).stdout.toString("utf8");
    for (const line of listing.split("\0")) {
      const m = line.match(/^(\d{6}) \S+ ([0-9a-f]{40,64})\t(.*)$/s);
      if (m && paths.includes(m[3] as string))
        out.set(m[3] as string, { mode: m[1] as string, oid: m[2] as string });
    }
    return out;
  }

  async #staged(): Promise<string[]> {
    const r = await this.#run([
      "diff",
      "--cached",
      "--name-only",
      "-z",
      "--no-renames",
      "--no-ext-diff",
      "HEAD",
    ]);
    return unique(splitZ(r.stdout));
  }

  /** Keeps the working-tree state of `paths` (bytes and mode, a symlink's target, or absence). */
  async snapshot(paths: string[]): Promise<Snapshot> {
    const clean = unique(paths.map(checkPath));
    const head = await this.head();
    const entries: SnapshotEntry[] = [];
    for (const p of clean) {
      const entry = await this.#read(p);
      entries.push(Object.freeze(entry));
      // The writer keeps its own copy, so a caller changing the snapshot's bytes changes nothing.
      this.#held.set(
        p,
        entry.kind === "file" ? { ...entry, bytes: Buffer.from(entry.bytes) } : entry,
      );
    }
    return Object.freeze({ head, entries: Object.freeze(entries) });
  }

  /** Puts the working tree back exactly as in `snapshot`. Does not touch the index or HEAD. */
  async restore(snapshot: Snapshot): Promise<void> {
    for (const entry of snapshot.entries) {
      const p = checkPath(entry.path);
      await this.#assertInsideTree(p);
      const abs = join(this.root, p);
      const now = await lstatOrUndefined(abs);
      if (now?.isDirectory())
        throw new BranchWriterRefusal("bad-path", `${p} is now a directory; not restoring over it`);
      if (now) await rm(abs, { force: true });
      if (entry.kind === "absent") continue;
      await mkdir(dirname(abs), { recursive: true });
      if (entry.kind === "symlink") await symlink(entry.target, abs);
      else {
        await writeFile(abs, entry.bytes, { flag: "wx" });
        await chmod(abs, entry.mode);
      }
    }
  }

  /**
   * Sets the working-tree copy of each path to its content at HEAD (deleting paths HEAD does
   * not have). Index and branch are untouched. Refuses any path whose current state is not the
   * one last recorded by `snapshot`, so reverting can never lose uncommitted work.
   */
  async revertToHead(paths: string[]): Promise<void> {
    const clean = unique(paths.map(checkPath));
    if (clean.length === 0) return;
    for (const p of clean) {
      const held = this.#held.get(p);
      if (!held || !sameEntry(held, await this.#read(p)))
        throw new BranchWriterRefusal(
          "not-snapshotted",
          `${p} has no current snapshot; take a snapshot before reverting so nothing is lost`,
        );
    }
    const listed = await this.#run([
      "ls-tree",
      "-r",
      "-z",
      "--name-only",
      "--full-tree",
      "HEAD",
      "--",
      ...clean,
    ]);
    const atHead = new Set(splitZ(listed.stdout));
    const restore = clean.filter((p) => atHead.has(p));
    const remove = clean.filter((p) => !atHead.has(p));
    if (restore.length > 0)
      await this.#run(["restore", "--source=HEAD", "--worktree", "--", ...restore]);
    for (const p of remove) {
      const abs = join(this.root, p);
      const st = await lstatOrUndefined(abs);
      if (st?.isDirectory())
        throw new BranchWriterRefusal("bad-path", `${p} is a directory, not a file`);
      await rm(abs, { force: true });
      await this.#pruneEmptyParents(p);
    }
  }

  /**
   * Makes one normal commit on `expectedParent` (which must be HEAD) that changes exactly
   * `files`, built with git plumbing from bytes this process read and checked, never through
   * `git add`: each file is read from the work tree without following a link, checked against
   * `bound` (the sha256 an approval names; null: the file is deleted), written with
   * `hash-object --no-filters` (no attributes, filters, `ident` or eol conversion), put in a
   * private index on top of the parent's tree (`read-tree`, `update-index --index-info`),
   * `write-tree`, `commit-tree`. Then HEAD (the branch, or a run's detached worktree) moves to
   * it compare-and-swap, and the work tree's index is set to its tree. Refuses when HEAD moved,
   * something is staged, a file is unchanged, a symbolic link, a submodule, a mode change, or
   * bytes that are not the bound ones. Hooks never run. Returns the new commit id.
   */
  async commit(
    message: string,
    files: string[],
    expectedParent: string,
    options: {
      identity?: GitIdentity;
      /** The approved content of each file (sha256:…; null: deleted). Absent: as the work tree has it. */
      bound?: readonly { path: string; sha256: string | null }[];
    } = {},
  ): Promise<string> {
    if (typeof message !== "string" || message.trim() === "")
      throw new BranchWriterRefusal("bad-option", "the commit message is empty");
    const planned = unique(files.map(checkPath));
    if (planned.length === 0) throw new BranchWriterRefusal("bad-option", "no files to commit");
    // A run's own worktree has a detached HEAD; the branch moves later, by fastForwardBranch.
    const branch = await this.#branchOrDetached();
    const head = await this.head();
    if (head !== expectedParent)
      throw new BranchWriterRefusal(
        "branch-moved",
        `the branch moved since the run started (HEAD is ${head}, expected ${expectedParent}); stop and say so`,
      );
    await this.#assertNoOperationInProgress();
    const staged = await this.#staged();
    const unplanned = staged.filter((p) => !planned.includes(p));
    if (unplanned.length > 0)
      throw new BranchWriterRefusal(
        "unplanned-staged",
        `files outside the plan are staged: ${unplanned.join(", ")}; refusing to commit`,
      );
    if (options.bound !== undefined) {
      const boundPaths = unique(options.bound.map((b) => checkPath(b.path)));
      if (!sameSet(boundPaths, planned))
        throw new BranchWriterRefusal(
          "unplanned-commit-content",
          `the approved content names [${boundPaths.join(", ")}] but the commit would change [${planned.join(", ")}]; nothing was committed`,
        );
    }
    const bound = new Map(options.bound?.map((b) => [b.path, b.sha256]));
    const inHead = await this.#entriesAt(expectedParent, planned);
    const headBytes = await this.#filesAt(planned, expectedParent);

    // Each file's new index entry, from the bytes read here (and only those bytes).
    const entries: { path: string; mode: string; bytes: Buffer | null }[] = [];
    for (const p of planned) {
      const now = await this.#read(p);
      const was = inHead.get(p);
      if (was && was.mode !== "100644" && was.mode !== "100755")
        throw new BranchWriterRefusal(
          "bad-path",
          `${p} is a ${was.mode === "120000" ? "symbolic link" : was.mode === "160000" ? "submodule" : `mode ${was.mode} entry`} at the head; a run changes regular files only`,
        );
      if (now.kind === "symlink")
        throw new BranchWriterRefusal(
          "bad-path",
          `${p} is a symbolic link in the work tree (to ${JSON.stringify(now.target)}); a run commits regular files only, so nothing was committed`,
        );
      const bytes = now.kind === "file" ? now.bytes : null;
      if (options.bound !== undefined) {
        const want = bound.get(p) ?? null;
        const got = bytes === null ? null : sha256Of(bytes);
        if (want !== got)
          throw new BranchWriterRefusal(
            "unplanned-commit-content",
            `${p} is not the approved content (approved ${want ?? "deleted"}, the work tree has ${got ?? "no file"}); nothing was committed`,
          );
      }
      if (bytes === null ? was === undefined : headBytes.get(p)?.equals(bytes))
        throw new BranchWriterRefusal(
          "unchanged-file",
          `not changed relative to HEAD, so there is nothing to commit for: ${p}`,
        );
      let mode = was?.mode ?? "100644";
      if (now.kind === "file") {
        const executable = (now.mode & 0o111) !== 0;
        if (was ? executable !== (mode === "100755") : executable)
          throw new BranchWriterRefusal(
            "bad-path",
            `${p} changed mode (${was ? `${mode} at the head` : "a new file"}, ${executable ? "executable" : "not executable"} in the work tree); a run never changes a file's mode`,
          );
        mode = executable ? "100755" : "100644";
      }
      entries.push({ path: p, mode, bytes });
    }

    // The commit, from a private index: the work tree's own index and files are not read.
    const scratch = await mkdtemp(join(tmpdir(), "terfyn-commit-"));
    try {
      const index = { GIT_INDEX_FILE: join(scratch, "index") };
      let info = "";
      for (const e of entries) {
        if (e.bytes === null) {
          info += `0 ${"0".repeat(expectedParent.length)}\t${e.path}\0`;
          continue;
        }
        const oid = (
          await this.#run(["hash-object", "-w", "--no-filters", "--stdin"], { stdin: e.bytes })
        ).stdout
          .toString("utf8")
          .trim();
        if (!FULL_SHA.test(oid))
          throw new GitCommandError(["hash-object"], 0, `not an object id: ${oid}`);
        info += `${e.mode} ${oid}\t${e.path}\0`;
      }
      await this.#run(["read-tree", expectedParent], { env: index });
      await this.#run(["update-index", "-z", "--index-info"], { env: index, stdin: info });
      const tree = (await this.#run(["write-tree"], { env: index })).stdout.toString("utf8").trim();
      const env: Record<string, string> = {};
      if (options.identity) {
        env.GIT_AUTHOR_NAME = options.identity.name;
        env.GIT_AUTHOR_EMAIL = options.identity.email;
        env.GIT_COMMITTER_NAME = options.identity.name;
        env.GIT_COMMITTER_EMAIL = options.identity.email;
      }
      const made = (
        await this.#run(["commit-tree", tree, "-p", expectedParent], { stdin: message, env })
      ).stdout
        .toString("utf8")
        .trim();
      // HEAD moves compare-and-swap: the branch, or the run's detached worktree.
      if (branch !== undefined) await this.#run(["update-ref", branch, made, expectedParent]);
      else await this.#run(["update-ref", "--no-deref", "HEAD", made, expectedParent]);
      // The work tree's index follows HEAD (its files already hold these bytes).
      await this.#run(["read-tree", made]);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }

    // Verify what was made: one parent, the expected one, the same branch, exactly the files.
    // One process gives the new HEAD and its parents: `<sha> <parent>…`.
    const [sha = "", ...parents] = (
      await this.#run(["rev-list", "--parents", "--max-count=1", "HEAD"])
    ).stdout
      .toString("utf8")
      .trim()
      .split(/\s+/);
    if (!FULL_SHA.test(sha))
      throw new BranchWriterRefusal("no-head", "the repository has no commit at HEAD");
    if (parents.length !== 1 || parents[0] !== expectedParent)
      throw new BranchWriterRefusal(
        "branch-moved",
        `commit ${sha} has parents [${parents.join(", ")}], not exactly ${expectedParent}; it must not be pushed; stop and say so`,
      );
    if ((await this.#branchOrDetached()) !== branch)
      throw new BranchWriterRefusal(
        "branch-moved",
        `the checked-out branch changed during the commit; stop and say so`,
      );
    const inCommit = unique(
      splitZ(
        (
          await this.#run([
            "diff",
            "--name-only",
            "-z",
            "--no-renames",
            "--no-ext-diff",
            expectedParent,
            sha,
          ])
        ).stdout,
      ),
    );
    if (!sameSet(inCommit, planned))
      throw new BranchWriterRefusal(
        "unplanned-commit-content",
        `commit ${sha} changes [${inCommit.join(", ")}] but the plan named [${planned.join(", ")}] (a hook changed it?); it was not pushed and must not be; stop and say so`,
      );
    return sha;
  }

  /**
   * Pushes HEAD to `remote`'s `branch`, fast-forward only: fetches the remote branch, refuses
   * unless its head is an ancestor of HEAD (and equals `expectedRemoteHead`, when given), pushes
   * with an explicit non-forcing refspec, then checks the remote now points at HEAD.
   *
   * `remote` is a remote's name, whose `remote.<name>.url` is read raw (no `insteadOf` applied),
   * or a URL or path given as is. Every remote command then runs in a transport repository of
   * its own: a bare repository this method makes in a temporary directory, with no config but
   * what git init writes, which borrows this repository's objects through `alternates`. So no
   * configuration of this repository reaches the transport: not `url.*.insteadOf` or
   * `pushInsteadOf`, not `remote.*.pushurl`, `uploadpack` or `receivepack`, not `http.*` (a
   * proxy, a certificate check), whoever wrote it.
   */
  async push(remote: string, branch: string, expectedRemoteHead?: string): Promise<PushResult> {
    if (typeof remote !== "string" || remote === "" || /^[-+:]/.test(remote) || /\s/.test(remote))
      throw new BranchWriterRefusal("bad-ref", `not a remote name: ${JSON.stringify(remote)}`);
    const ref = `refs/heads/${branch}`;
    if (
      typeof branch !== "string" ||
      branch === "" ||
      branch.startsWith("-") ||
      !REMOTE_BRANCH.test(ref) ||
      (await this.#run(["check-ref-format", ref], { okCodes: [0, 1] })).code !== 0
    )
      throw new BranchWriterRefusal("bad-ref", `not a branch name: ${JSON.stringify(branch)}`);
    const local = await this.head();
    const url = await this.#remoteUrl(remote);
    return this.#inTransport(async (run) => {
      const before = await remoteHead(run, url, ref);
      if (before === undefined)
        throw new BranchWriterRefusal(
          "remote-branch-missing",
          `${remote} has no branch ${branch}; the run pushes only to the existing PR branch; stop and say so`,
        );
      await run([
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-recurse-submodules",
        `--upload-pack=${UPLOAD_PACK}`,
        url,
        ref,
      ]);
      const fetched = (
        await run(["rev-parse", "--verify", "--quiet", "FETCH_HEAD^{commit}"])
      ).stdout
        .toString("utf8")
        .trim();
      if (expectedRemoteHead !== undefined && fetched !== expectedRemoteHead)
        throw new BranchWriterRefusal(
          "remote-moved",
          `${remote}/${branch} is at ${fetched}, not ${expectedRemoteHead}: the branch moved since the run started; stop and say so`,
        );
      const ancestor = await run(["merge-base", "--is-ancestor", fetched, local], {
        okCodes: [0, 1],
      });
      if (ancestor.code !== 0)
        throw new BranchWriterRefusal(
          "behind-or-diverged",
          `${remote}/${branch} (${fetched}) is not an ancestor of HEAD (${local}): the branch is behind or diverged; never force-push; stop and say so`,
        );
      if (fetched === local) return { pushed: false, before: fetched, after: local };

      await run([
        "push",
        "--porcelain",
        "--no-follow-tags",
        "--no-recurse-submodules",
        `--receive-pack=${RECEIVE_PACK}`,
        url,
        `${local}:${ref}`,
      ]);
      const after = await remoteHead(run, url, ref);
      if (after !== local)
        throw new BranchWriterRefusal(
          "push-not-applied",
          `after pushing, ${remote}/${branch} is at ${after ?? "nothing"}, not HEAD (${local}); stop and say so`,
        );
      return { pushed: true, before: fetched, after };
    });
  }

  /**
   * Where `remote` is: a configured remote's `url` exactly as written (`git config --get` applies
   * no `insteadOf`), a relative path made absolute against the work tree; or `remote` itself
   * when it is no remote's name but a URL or a path.
   */
  async #remoteUrl(remote: string): Promise<string> {
    const named = /^[A-Za-z0-9._-]+$/.test(remote)
      ? (await this.#run(["config", "--get", `remote.${remote}.url`], { okCodes: [0, 1] })).stdout
          .toString("utf8")
          .trim()
      : "";
    const url = named !== "" ? named : /[/:]/.test(remote) ? remote : undefined;
    if (url === undefined || url.startsWith("-") || /[\0\n]/.test(url))
      throw new BranchWriterRefusal(
        "bad-ref",
        `remote ${JSON.stringify(remote)} has no usable url in this repository's config; add one with git remote add`,
      );
    // `scheme://…` and scp-like `host:path` (a colon before any slash) are remote; else a path.
    if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(url) || /^[^/]+:/.test(url)) return url;
    return resolvePath(this.root, url);
  }

  /**
   * Runs `work` with git commands that run in a new bare repository of their own (see push),
   * removed afterwards. Its objects are its own plus this repository's, through alternates.
   */
  async #inTransport<T>(work: (run: TransportRun) => Promise<T>): Promise<T> {
    const format = (await this.#run(["rev-parse", "--show-object-format"])).stdout
      .toString("utf8")
      .trim();
    const objects = join(await this.#commonDir(), "objects");
    const dir = await mkdtemp(join(tmpdir(), "terfyn-transport-"));
    try {
      await runGit(
        dir,
        ["init", "--bare", "--quiet", "--template=", `--object-format=${format}`, dir],
        {
          env: this.#env,
        },
      );
      await mkdir(join(dir, "objects", "info"), { recursive: true });
      await writeFile(join(dir, "objects", "info", "alternates"), `${objects}\n`);
      return await work((args, options = {}) =>
        runGit(dir, args, { ...options, env: { ...this.#env, ...options.env, GIT_DIR: dir } }),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  async #branchOrDetached(): Promise<string | undefined> {
    const r = await this.#run(["symbolic-ref", "--quiet", "HEAD"], { okCodes: [0, 1] });
    return r.code === 0 ? r.stdout.toString("utf8").trim() : undefined;
  }

  async #assertNoOperationInProgress(): Promise<void> {
    const pseudo = ["MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD"];
    // One process for the four: each line says `<name> missing` unless the ref resolves.
    const r = await this.#run(["cat-file", "--batch-check"], {
      stdin: pseudo.map((p) => `${p}\n`).join(""),
    });
    const lines = r.stdout.toString("utf8").split("\n");
    pseudo.forEach((p, i) => {
      const line = lines[i];
      if (line === undefined || line !== `${p} missing`)
        throw new BranchWriterRefusal(
          "operation-in-progress",
          `${p} exists (a merge, cherry-pick, revert or rebase is in progress); refusing to commit`,
        );
    });
  }

  async #read(p: string): Promise<SnapshotEntry> {
    await this.#assertInsideTree(p);
    const abs = join(this.root, p);
    const st = await lstatOrUndefined(abs);
    if (!st) return { path: p, kind: "absent" };
    if (st.isSymbolicLink()) return { path: p, kind: "symlink", target: await readlink(abs) };
    if (!st.isFile())
      throw new BranchWriterRefusal("bad-path", `${p} is not a regular file or symlink`);
    return { path: p, kind: "file", bytes: await readFile(abs), mode: st.mode & 0o7777 };
  }

  /** Refuses a path that goes through a symlinked directory (it could lead outside the tree). */
  async #assertInsideTree(p: string): Promise<void> {
    const parts = p.split("/");
    let cur = this.root;
    for (const part of parts.slice(0, -1)) {
      cur = join(cur, part);
      const st = await lstatOrUndefined(cur);
      if (!st) return;
      if (st.isSymbolicLink())
        throw new BranchWriterRefusal("bad-path", `${p} goes through a symbolic link`);
      if (!st.isDirectory()) throw new BranchWriterRefusal("bad-path", `${p}: a parent is a file`);
    }
  }

  async #pruneEmptyParents(p: string): Promise<void> {
    let dir = dirname(p);
    while (dir !== "." && dir !== "") {
      const abs = join(this.root, dir);
      try {
        if ((await readdir(abs)).length > 0) return;
        await rmdir(abs);
      } catch {
        return;
      }
      dir = dirname(dir);
    }
  }

  /** The one door to git for an open writer. */
  #run(args: string[], options: RunOptions = {}): Promise<RunResult> {
    return runGit(this.root, args, {
      ...options,
      env: { ...this.#env, ...options.env },
      config: this.#filters,
    });
  }
}

/**
 * The configured filter drivers (git config `filter.<name>.*`, from any config file or include)
 * switched off: a `.gitattributes` in the tree under review (which a pull request or an agent
 * controls) selects which driver runs on add, diff and restore, and a driver is a program.
 */
async function filterOverrides(root: string, env: Record<string, string>): Promise<string[]> {
  const r = await runGit(root, ["config", "--name-only", "--get-regexp", "^filter\\."], {
    env,
    okCodes: [0, 1],
  });
  const drivers = new Set<string>();
  for (const name of r.stdout.toString("utf8").split("\n")) {
    const m = name.trim().match(/^filter\.(.+)\.[^.]+$/);
    if (!m?.[1]) continue;
    // `-c` splits at the first `=`: a driver whose name holds one could not be switched off.
    if (/[=\s]/.test(m[1]))
      throw new BranchWriterRefusal(
        "bad-option",
        `git config defines a filter driver named ${JSON.stringify(m[1])}, which cannot be switched off; remove it`,
      );
    drivers.add(m[1]);
  }
  return [...drivers].flatMap((d) =>
    ["clean", "smudge", "process"]
      .map((k) => `filter.${d}.${k}=`)
      .concat(`filter.${d}.required=false`)
      .flatMap((kv) => ["-c", kv]),
  );
}

/** The one door to git for this module: the guard, then the project's hardened git process. */
/** A git command in a transport repository (BranchWriter.#inTransport). */
type TransportRun = (args: string[], options?: RunOptions) => Promise<RunResult>;

/** The commit `ref` points at on `url`, or undefined when it has no such ref. */
async function remoteHead(
  run: TransportRun,
  url: string,
  ref: string,
): Promise<string | undefined> {
  const r = await run(["ls-remote", `--upload-pack=${UPLOAD_PACK}`, url, ref]);
  for (const line of r.stdout.toString("utf8").split("\n")) {
    const [sha, name] = line.split("\t");
    if (name === ref && sha) return sha;
  }
  return undefined;
}

async function runGit(cwd: string, args: string[], options: RunOptions = {}): Promise<RunResult> {
  assertAllowedGitArgs(args);
  try {
    return await runGitProcess(args, {
      cwd,
      env: { ...inheritedEnv(["SSH_AUTH_SOCK"]), ...options.env, GIT_LITERAL_PATHSPECS: "1" },
      ...(options.config ? { config: options.config } : {}),
      ...(options.stdin !== undefined ? { stdin: options.stdin } : {}),
      ...(options.okCodes ? { okCodes: options.okCodes } : {}),
    });
  } catch (e) {
    if (e instanceof GitProcessError) throw new GitCommandError(args, e.exitCode, e.stderr);
    throw e;
  }
}

// ─────────────────────────────────────── helpers ─────────────────────────────────────────

/** A repository-relative file path: no absolute paths, `..`, `.` or `.git`, no empty parts. */
function checkPath(p: string): string {
  const bad = (why: string): never => {
    throw new BranchWriterRefusal("bad-path", `bad path ${JSON.stringify(p)}: ${why}`);
  };
  if (typeof p !== "string" || p === "") bad("empty");
  if (p.includes("\0") || p.includes("\\")) bad("contains NUL or a backslash");
  if (p.startsWith("/")) bad("absolute");
  for (const part of p.split("/")) {
    if (part === "" || part === "." || part === "..") bad("not a normalised relative path");
    if (part.toLowerCase() === ".git") bad("inside .git");
  }
  return p;
}

/** `refs/heads/<branch>` for a plain branch name, or a refusal. */
function checkBranch(branch: string): string {
  const ref = `refs/heads/${branch}`;
  if (
    typeof branch !== "string" ||
    branch === "" ||
    branch.startsWith("-") ||
    !REMOTE_BRANCH.test(ref)
  )
    throw new BranchWriterRefusal("bad-ref", `not a branch name: ${JSON.stringify(branch)}`);
  return ref;
}

/**
 * The objects `git cat-file --batch` printed for `count` names, in order: `<oid> <type>
 * <size>\n<bytes>\n` each, or `<name> missing` (or `ambiguous`) and no bytes.
 */
function parseBatch(out: Buffer, count: number): ({ type: string; bytes: Buffer } | undefined)[] {
  const objects: ({ type: string; bytes: Buffer } | undefined)[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    const eol = out.indexOf(0x0a, at);
    if (eol < 0) throw new GitCommandError(["cat-file", "--batch"], 0, "output ended early");
    const header = out.subarray(at, eol).toString("utf8");
    at = eol + 1;
    const m = header.match(/^[0-9a-f]{40,64} (\S+) (\d+)$/);
    if (!m) {
      objects.push(undefined);
      continue;
    }
    const size = Number(m[2]);
    objects.push({ type: m[1] as string, bytes: Buffer.from(out.subarray(at, at + size)) });
    at += size + 1;
  }
  return objects;
}

/** `sha256:<hex>` of bytes, as the publish artifact binds them. */
function sha256Of(bytes: Buffer): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

function splitZ(out: Buffer): string[] {
  return out
    .toString("utf8")
    .split("\0")
    .filter((s) => s !== "");
}

function unique(xs: string[]): string[] {
  return [...new Set(xs)].sort();
}

function sameSet(a: string[], b: string[]): boolean {
  const x = unique(a);
  const y = unique(b);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

function sameEntry(a: SnapshotEntry, b: SnapshotEntry): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "file" && b.kind === "file") return a.mode === b.mode && a.bytes.equals(b.bytes);
  if (a.kind === "symlink" && b.kind === "symlink") return a.target === b.target;
  return true;
}

async function lstatOrUndefined(abs: string) {
  try {
    return await lstat(abs);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
}
