/**
 * Reads a project directory as it was at a git revision, without a checkout: `git ls-tree` for
 * the file list and one `git cat-file --batch` process for every file's bytes. Works when the
 * project did not exist at that revision (no files). Read-only: this module never writes to a
 * repository.
 */
import { spawn } from "node:child_process";
import { realpath } from "node:fs/promises";
import { relative } from "node:path";
import { simpleGit } from "simple-git";
import { belongsToProject, type ProjectFile } from "../../core/model/resolve-project.ts";

export class GitRevisionError extends Error {}

export interface RevisionFiles {
  /** The full commit id the revision resolved to. */
  commit: string;
  /** False when the revision has no terfyn.yaml at the project's path. */
  existed: boolean;
  files: ProjectFile[];
}

export async function readProjectAtRevision(
  projectDir: string,
  revision: string,
): Promise<RevisionFiles> {
  const git = simpleGit({ baseDir: projectDir });
  let top: string;
  try {
    top = (await git.revparse(["--show-toplevel"])).trim();
  } catch {
    throw new GitRevisionError(
      `${projectDir} is not inside a git repository, so --against cannot read an earlier revision`,
    );
  }
  const prefix = relative(await realpath(top), await realpath(projectDir))
    .split("\\")
    .join("/");
  return readProjectInRepository(top, prefix, revision);
}

/** Resolves a revision to a full commit id, or explains that it is unknown. */
export async function resolveCommit(repoRoot: string, revision: string): Promise<string> {
  let commit = "";
  try {
    commit = (
      await simpleGit({ baseDir: repoRoot }).raw([
        "rev-parse",
        "--verify",
        "--quiet",
        `${revision}^{commit}`,
      ])
    ).trim();
  } catch {
    commit = "";
  }
  if (!commit)
    throw new GitRevisionError(
      `unknown git revision \`${revision}\` (try a branch, tag, commit or HEAD~1)`,
    );
  return commit;
}

/**
 * The project at `prefix` (a path relative to the repository root, "" for the root) as it was
 * at `revision`, read from git objects only: nothing is checked out, nothing is executed.
 */
export async function readProjectInRepository(
  repoRoot: string,
  prefix: string,
  revision: string,
): Promise<RevisionFiles> {
  const commit = await resolveCommit(repoRoot, revision);
  const clean = prefix === "." ? "" : prefix.replace(/\/+$/, "");
  const paths = await listTree(repoRoot, commit, clean === "" ? "." : clean);
  const strip = clean === "" ? "" : `${clean}/`;
  const wanted = paths
    .filter((p) => strip === "" || p.startsWith(strip))
    .map((p) => ({ full: p, rel: p.slice(strip.length) }))
    .filter((p) => belongsToProject(p.rel));
  const existed = paths.some((p) => p === `${strip}terfyn.yaml`);
  if (!existed) return { commit, existed, files: [] };
  const contents = await catFiles(
    repoRoot,
    wanted.map((w) => `${commit}:${w.full}`),
  );
  return {
    commit,
    existed,
    files: wanted.map((w, i) => ({ path: w.rel, text: contents[i] ?? "" })),
  };
}

/** Directories (relative to the repository root, "." for the root) holding a terfyn.yaml at `revision`. */
export async function findProjectsAtRevision(
  repoRoot: string,
  revision: string,
): Promise<string[]> {
  const commit = await resolveCommit(repoRoot, revision);
  return (await listTree(repoRoot, commit))
    .filter((p) => p === "terfyn.yaml" || p.endsWith("/terfyn.yaml"))
    .map((p) => (p === "terfyn.yaml" ? "." : p.slice(0, -"/terfyn.yaml".length)))
    .filter((dir) => dir === "." || belongsToProject(`${dir}/x.agent`))
    .sort();
}

/** Every file path in `commit` (under `path`, when given), relative to the repository root. */
async function listTree(repoRoot: string, commit: string, path?: string): Promise<string[]> {
  const args = ["ls-tree", "-r", "-z", "--full-tree", "--name-only", commit];
  if (path !== undefined) args.push("--", path);
  const listing = await simpleGit({ baseDir: repoRoot }).raw(args);
  return listing.split("\0").filter((p) => p !== "");
}

/** Reads many blobs through one `git cat-file --batch` process. */
function catFiles(cwd: string, objects: string[]): Promise<string[]> {
  if (objects.length === 0) return Promise.resolve([]);
  return new Promise((resolve, reject) => {
    const child = spawn("git", ["cat-file", "--batch"], { cwd, stdio: ["pipe", "pipe", "pipe"] });
    const chunks: Buffer[] = [];
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => chunks.push(c));
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child.on("error", (e) => reject(new GitRevisionError(`cannot run git: ${e.message}`)));
    child.on("close", (code) => {
      if (code !== 0) {
        reject(new GitRevisionError(`git cat-file failed: ${stderr.trim()}`));
        return;
      }
      const out = Buffer.concat(chunks);
      const texts: string[] = [];
      let pos = 0;
      for (let i = 0; i < objects.length; i++) {
        const eol = out.indexOf(10, pos);
        const header = out.subarray(pos, eol).toString();
        const size = Number(header.split(" ")[2]);
        if (header.endsWith(" missing") || !Number.isFinite(size)) {
          texts.push("");
          pos = eol + 1;
          continue;
        }
        texts.push(out.subarray(eol + 1, eol + 1 + size).toString("utf8"));
        pos = eol + 1 + size + 1;
      }
      resolve(texts);
    });
    child.stdin.end(`${objects.join("\n")}\n`);
  });
}
