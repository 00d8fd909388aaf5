/**
 * A review-fix run's files kept between GitHub Actions jobs, in the repository itself, as the
 * commit at `refs/terfyn/runs/<run>`. With `placement: actions` every job is a fresh machine: a
 * job runs the core until a gate (or the end), saves the run's files here and exits; the job the
 * next `/terfyn approve` dispatches loads them and goes on.
 *
 * Why a ref: the job already holds `contents: write` (it pushes the fix), so no other permission
 * or service is needed; a ref outside `refs/heads/` and `refs/tags/` triggers no workflow and
 * shows in no branch list; it never expires (an artifact does after 90 days); and each save is a
 * commit whose parent is the state it loaded, pushed without force, so two jobs that both loaded
 * one state cannot both save: the second push is refused as non-fast-forward.
 *
 * What is read back is hostile data (anyone who can push to the repository can push this ref):
 * a state is loaded only when its commit carries a MAC over the run id and every file (HMAC-
 * SHA256, keyed by the workflow's state key: a secret the executed code never sees) that this
 * key reproduces; only regular files (mode 100644) under the names `files` allows are accepted,
 * each path is checked before it is written, and the caller binds the commit it loads to the one
 * its own status comment names.
 *
 * git runs hardened (no hooks, no credential helper, no ext:: transport, no global or system
 * config), in a bare repository of its own that nothing else uses, with an environment that is
 * an allowlist; the token reaches it only as a header in git's own environment.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { byCodeUnit } from "../../core/order.ts";
import { GitProcessError, hardenedGitEnv, runGitProcess } from "../git/git-process.ts";

/** Run ids as the App and the Action make and accept them: also a safe ref component and file name. */
export const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** A path inside a saved state: `/`-separated, no empty, `.` or `..` part, no `.git`. */
export function isSafeStatePath(p: string): boolean {
  if (p === "" || p.length > 4096 || p.startsWith("/") || p.includes("\\") || p.includes("\0"))
    return false;
  return p
    .split("/")
    .every((part) => part !== "" && part !== "." && part !== ".." && part.toLowerCase() !== ".git");
}

export class RunStateError extends Error {}

export interface RunStateConfig {
  /** A bare repository of the store's own (created when missing). */
  gitDir: string;
  /** The repository's URL (https, or a local path in tests). */
  url: string;
  /** git's authentication as environment variables (GIT_CONFIG_COUNT/KEY/VALUE), or none. */
  auth?: Record<string, string>;
  /** Author and committer of state commits. */
  identity: { name: string; email: string };
  /**
   * The key of the state's MAC: what signs a save and what a load must reproduce. Every job of
   * the repository's workflow has it; nothing the run executes does.
   */
  key: Buffer;
}

/** The trailer of a state commit's message that carries its MAC. */
const MAC_TRAILER = "Terfyn-State-MAC: hmac-sha256:";

/** The shortest state key accepted: 32 bytes (`openssl rand -hex 32` gives 64 characters). */
export const MIN_STATE_KEY_BYTES = 32;

/**
 * The MAC of a run's state: HMAC-SHA256 under `key` of the run id and each file's path and
 * SHA-256, in path order, each part ended by a NUL (no path or id holds one).
 */
export function stateMac(key: Buffer, run: string, files: ReadonlyMap<string, Buffer>): string {
  const mac = createHmac("sha256", key).update(`terfyn-run-state-v1\0${run}\0`);
  for (const path of [...files.keys()].sort(byCodeUnit))
    mac.update(
      `${path}\0${createHash("sha256")
        .update(files.get(path) as Buffer)
        .digest("hex")}\0`,
    );
  return mac.digest("hex");
}

export interface LoadedState {
  /** The commit at the ref when it was loaded. */
  commit: string;
  /** Every file in it, by path. */
  files: Map<string, Buffer>;
}

const MAX_FILES = 10_000;
const MAX_BYTES = 256 * 1024 * 1024;

export function stateRef(run: string): string {
  if (!RUN_ID.test(run)) throw new RunStateError(`not a run id: ${JSON.stringify(run)}`);
  return `refs/terfyn/runs/${run}`;
}

export class RunStateRef {
  constructor(private readonly c: RunStateConfig) {
    if (c.url.startsWith("-")) throw new RunStateError(`not a repository URL: ${c.url}`);
    if (c.key.length < MIN_STATE_KEY_BYTES)
      throw new RunStateError(
        `the state key has ${c.key.length} bytes; it needs at least ${MIN_STATE_KEY_BYTES}`,
      );
  }

  private async init(): Promise<void> {
    await mkdir(this.c.gitDir, { recursive: true });
    await this.git(["init", "--quiet", "--bare"]);
  }

  /** The run's saved state, or undefined when the repository has no state for it. */
  async load(run: string): Promise<LoadedState | undefined> {
    const ref = stateRef(run);
    await this.init();
    const listed = (await this.git(["ls-remote", "--", this.c.url, ref])).stdout.toString("utf8");
    const line = listed.split("\n").find((l) => l.endsWith(`\t${ref}`));
    if (!line) return undefined;
    const commit = line.slice(0, line.indexOf("\t"));
    if (!/^[0-9a-f]{40}$/.test(commit))
      throw new RunStateError(`the remote answered ${JSON.stringify(line)} for ${ref}`);
    // Into FETCH_HEAD, not a local ref: a second load in the same store never needs a forced
    // update of what an earlier load fetched.
    await this.git(["fetch", "--quiet", "--no-tags", "--", this.c.url, ref]);
    const at = (await this.git(["rev-parse", "--verify", "FETCH_HEAD^{commit}"])).stdout
      .toString("utf8")
      .trim();
    if (at !== commit)
      throw new RunStateError(
        `${ref} moved while it was read (${commit.slice(0, 12)} then ${at.slice(0, 12)}): another job saved the run; run it again`,
      );
    const tree = (await this.git(["ls-tree", "-r", "-z", "--full-tree", "--", commit])).stdout;
    const files = new Map<string, Buffer>();
    let total = 0;
    for (const entry of tree.toString("utf8").split("\0")) {
      if (entry === "") continue;
      const m = /^(\d{6}) (\w+) ([0-9a-f]{40})\t(.+)$/s.exec(entry);
      if (!m)
        throw new RunStateError(`${ref} has an entry git describes as ${JSON.stringify(entry)}`);
      const [, mode, type, sha, path] = m as unknown as [string, string, string, string, string];
      if (mode !== "100644" || type !== "blob")
        throw new RunStateError(
          `${ref} holds ${JSON.stringify(path)} as ${type} ${mode}: a run's state has only regular files`,
        );
      if (!isSafeStatePath(path))
        throw new RunStateError(`${ref} holds a file with an unsafe name ${JSON.stringify(path)}`);
      if (files.size >= MAX_FILES)
        throw new RunStateError(`${ref} holds more than ${MAX_FILES} files`);
      const bytes = (await this.git(["cat-file", "blob", sha])).stdout;
      total += bytes.length;
      if (total > MAX_BYTES) throw new RunStateError(`${ref} holds more than ${MAX_BYTES} bytes`);
      files.set(path, bytes);
    }
    // Only a state this repository's own jobs saved: its MAC, under the key they hold.
    const message = (await this.git(["cat-file", "commit", commit])).stdout.toString("utf8");
    const body = message.slice(message.indexOf("\n\n") + 2);
    const carried = body
      .split("\n")
      .filter((l) => l.startsWith(MAC_TRAILER))
      .map((l) => l.slice(MAC_TRAILER.length).trim());
    const want = Buffer.from(stateMac(this.c.key, run, files), "hex");
    const got = carried.length === 1 ? Buffer.from(carried[0] as string, "hex") : Buffer.alloc(0);
    if (got.length !== want.length || !timingSafeEqual(got, want))
      throw new RunStateError(
        `${ref} (${commit.slice(0, 12)}) ${carried.length === 0 ? "carries no MAC" : "carries a MAC this workflow's state key does not reproduce"}: it was not saved by a job of this workflow (or the key changed since), so it is not loaded`,
      );
    return { commit, files };
  }

  /**
   * Saves `files` as the run's state: a commit whose parent is `parent` (the state this job
   * loaded; none for a new run), pushed without force. Returns the new commit. A push refused
   * because the ref moved is a RunStateError saying so.
   */
  async save(run: string, files: ReadonlyMap<string, Buffer>, parent?: string): Promise<string> {
    const ref = stateRef(run);
    if (parent !== undefined && !/^[0-9a-f]{40}$/.test(parent))
      throw new RunStateError(`not a commit: ${parent}`);
    await this.init();
    const index = [] as string[];
    for (const [path, bytes] of [...files].sort(([a], [b]) => byCodeUnit(a, b))) {
      if (!isSafeStatePath(path))
        throw new RunStateError(`a run file has an unsafe name ${JSON.stringify(path)}`);
      const sha = (await this.git(["hash-object", "-w", "--stdin"], bytes)).stdout
        .toString("utf8")
        .trim();
      index.push(`100644 ${sha}\t${path}\0`);
    }
    const indexFile = `${this.c.gitDir}/state-index`;
    const env = { GIT_INDEX_FILE: indexFile };
    await this.git(["read-tree", "--empty"], undefined, env);
    await this.git(
      ["update-index", "-z", "--index-info"],
      Buffer.from(index.join(""), "utf8"),
      env,
    );
    const tree = (await this.git(["write-tree"], undefined, env)).stdout.toString("utf8").trim();
    const commit = (
      await this.git(
        [
          "commit-tree",
          ...(parent ? ["-p", parent] : []),
          "-m",
          `terfyn: the state of review-fix run ${run}`,
          "-m",
          `${MAC_TRAILER}${stateMac(this.c.key, run, files)}`,
          tree,
        ],
        undefined,
        identityEnv(this.c.identity),
      )
    ).stdout
      .toString("utf8")
      .trim();
    const pushed = await this.git(
      ["push", "--quiet", "--", this.c.url, `${commit}:${ref}`],
      undefined,
      {},
      true,
    );
    if (pushed.code !== 0) {
      const lines = pushed.stderr
        .split("\n")
        .map((l) => l.trim())
        .filter((l) => l !== "" && !l.startsWith("hint:"));
      const why = (lines.find((l) => /rejected/.test(l)) ?? lines.at(-1) ?? "").trim();
      throw new RunStateError(
        /non-fast-forward|fetch first|\[rejected\]/.test(pushed.stderr)
          ? `${ref} moved since this job loaded it: another job saved the run first, so this job's state was not saved (${why})`
          : `saving the run's state to ${ref} failed: ${why || `git push exited ${pushed.code}`}`,
      );
    }
    return commit;
  }

  private async git(
    args: readonly string[],
    stdin?: Buffer,
    extraEnv: Record<string, string> = {},
    tolerate = false,
  ): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
    const env = hardenedGitEnv({ GIT_DIR: this.c.gitDir, ...(this.c.auth ?? {}), ...extraEnv });
    try {
      return await runGitProcess(args, {
        env,
        stdin: stdin ?? Buffer.alloc(0),
        ...(tolerate ? { okCodes: Array.from({ length: 256 }, (_, i) => i) } : {}),
      });
    } catch (e) {
      if (!(e instanceof GitProcessError)) throw e;
      if (e.exitCode === null && e.stderr.startsWith("cannot run git"))
        throw new RunStateError(e.stderr);
      throw new RunStateError(
        `git ${args[0]} failed (exit ${e.exitCode}) on the run's state: ${e.stderr.trim().split("\n").at(-1) ?? ""}`,
      );
    }
  }
}

function identityEnv(i: { name: string; email: string }): Record<string, string> {
  return {
    GIT_AUTHOR_NAME: i.name,
    GIT_AUTHOR_EMAIL: i.email,
    GIT_COMMITTER_NAME: i.name,
    GIT_COMMITTER_EMAIL: i.email,
  };
}
