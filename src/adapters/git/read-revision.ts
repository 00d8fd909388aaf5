/**
 * Reads a project directory as it was at a git revision (a commit, or a tree such as a merge
 * computed by `git merge-tree`), without a checkout.
 *
 * Every path from git is hostile data: the listing is `git ls-tree -r -z` (NUL-terminated
 * records, names never quoted or split), and blobs are read through one `git cat-file --batch`
 * process **by the object ids that listing printed**, never by `rev:path` text. A path holding a
 * newline would otherwise be two lines of the batch protocol and shift every later file onto
 * another blob's bytes. Names with control characters become diagnostics (TF2010), never a
 * silent skip; bytes that are not UTF-8 are TF2009. Symbolic links (mode 120000) and
 * submodules (gitlinks, mode 160000) are told apart by their mode and never followed: what they
 * lead to is not part of the reviewed tree, so a project file that is a link, or a submodule
 * where project files could be, is an error (TF2008), never a silent skip. Read-only: this
 * module never writes to a repository.
 */

import { realpath } from "node:fs/promises";
import { relative } from "node:path";
import { type Diagnostic, diagnostic } from "../../core/diagnostics.ts";
import { HOST_ONLY_MARK, HOST_ONLY_PROJECT_YAML, isHostPath } from "../../core/hosts/host-paths.ts";
import {
  hasUnsafeFileName,
  linkedFileDiagnostic,
  stripUnsafe,
  submoduleDiagnostic,
  unsafeFileNameDiagnostic,
} from "../../core/model/file-names.ts";
import {
  belongsToProject,
  PROJECT_FILE,
  type ProjectFile,
} from "../../core/model/resolve-project.ts";
import { fileSpan } from "../../core/source.ts";
import { listedHosts } from "../../core/validate.ts";
import { GitProcessError, gitText, runGitProcess } from "./git-process.ts";

export class GitRevisionError extends Error {}

export interface RevisionFiles {
  /** The full commit id the revision resolved to; the tree id when the revision is a tree. */
  commit: string;
  /** The root tree id of the revision. */
  tree: string;
  /** False when the revision has no terfyn.yaml at the project's path. */
  existed: boolean;
  files: ProjectFile[];
  /** Problems with the tree itself (unsafe names, undecodable bytes), relative to the project. */
  diagnostics: Diagnostic[];
}

/** One record of `git ls-tree -r -z`: `<mode> SP <type> SP <oid> TAB <path> NUL`. */
export interface TreeEntry {
  mode: string;
  type: string;
  oid: string;
  path: string;
}

export async function readProjectAtRevision(
  projectDir: string,
  revision: string,
): Promise<RevisionFiles> {
  const { top, prefix } = await locateProject(projectDir);
  return readProjectInRepository(top, prefix, revision);
}

/** The repository root of a project directory, and the project's path in it (`/`-separated). */
export async function locateProject(projectDir: string): Promise<{ top: string; prefix: string }> {
  let top: string;
  try {
    top = (await gitText(projectDir, ["rev-parse", "--show-toplevel"])).trim();
  } catch {
    throw new GitRevisionError(
      `${projectDir} is not inside a git repository, so --against cannot read an earlier revision`,
    );
  }
  const prefix = relative(await realpath(top), await realpath(projectDir))
    .split("\\")
    .join("/");
  return { top, prefix };
}

const OID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

async function revParse(repoRoot: string, spec: string): Promise<string> {
  try {
    const out = (
      await gitText(repoRoot, ["rev-parse", "--verify", "--quiet", "--end-of-options", spec])
    ).trim();
    return OID.test(out) ? out : "";
  } catch {
    return "";
  }
}

/** Resolves a revision to a full commit id, or explains that it is unknown. */
export async function resolveCommit(repoRoot: string, revision: string): Promise<string> {
  const commit = revision.startsWith("-") ? "" : await revParse(repoRoot, `${revision}^{commit}`);
  if (!commit)
    throw new GitRevisionError(
      `unknown git revision \`${revision}\` (try a branch, tag, commit or HEAD~1)`,
    );
  return commit;
}

/** A commit's (or a tree's own) root tree id, and the commit id when it is a commit. */
export async function resolveTree(
  repoRoot: string,
  revision: string,
): Promise<{ commit: string; tree: string }> {
  if (revision.startsWith("-")) throw new GitRevisionError(`unknown git revision \`${revision}\``);
  const commit = await revParse(repoRoot, `${revision}^{commit}`);
  const tree = await revParse(repoRoot, `${revision}^{tree}`);
  if (!tree)
    throw new GitRevisionError(
      `unknown git revision \`${revision}\` (try a branch, tag, commit or HEAD~1)`,
    );
  return { commit: commit || tree, tree };
}

/**
 * The project at `prefix` (a path relative to the repository root, "" or "." for the root) as
 * it was at `revision`, read from git objects only: nothing is checked out, nothing is executed.
 */
export async function readProjectInRepository(
  repoRoot: string,
  prefix: string,
  revision: string,
): Promise<RevisionFiles> {
  const { commit, tree } = await resolveTree(repoRoot, revision);
  const clean = prefix === "." ? "" : prefix.replace(/\/+$/, "");
  const strip = clean === "" ? "" : `${clean}/`;
  const entries = (await listTree(repoRoot, tree, clean === "" ? undefined : clean)).filter(
    (e) => strip === "" || e.path.startsWith(strip),
  );
  const hasProjectFile = entries.some(
    (e) => e.path === `${strip}${PROJECT_FILE}` && e.type === "blob" && e.mode !== SYMLINK,
  );
  // A root without terfyn.yaml but with host files: its hosts' project (host-paths.ts), of
  // those files only.
  const hostOnly =
    !hasProjectFile &&
    strip === "" &&
    !entries.some((e) => e.path === PROJECT_FILE) &&
    entries.some((e) => e.type === "blob" && isHostPath(e.path));
  const existed = hasProjectFile || hostOnly;
  if (!existed) return { commit, tree, existed, files: [], diagnostics: [] };
  const diagnostics: Diagnostic[] = [];
  // Host files terfyn.yaml lists at other paths (spec.hosts) are the project's too.
  const projectEntry = entries.find((e) => e.path === `${strip}${PROJECT_FILE}`);
  const projectBytes = projectEntry
    ? (await catBlobs(repoRoot, [projectEntry.oid])).get(projectEntry.oid)
    : undefined;
  const listed = new Set(listedHosts(projectBytes?.toString("utf8")).map((h) => h.path));
  const wanted: { oid: string; rel: string }[] = [];
  for (const e of entries) {
    const rel = e.path.slice(strip.length);
    if (e.mode === GITLINK && !hasUnsafeFileName(rel) && mayHoldProjectFiles(rel)) {
      diagnostics.push(submoduleDiagnostic(rel));
      continue;
    }
    if (hasUnsafeFileName(rel)) {
      // Judged as a person reads the name: `x.agent\n` is a project file with a newline.
      if (belongsToProject(rel) || belongsToProject(stripUnsafe(rel)))
        diagnostics.push(unsafeFileNameDiagnostic(rel));
      continue;
    }
    if (hostOnly ? !isHostPath(rel) : !belongsToProject(rel) && !listed.has(rel)) continue;
    if (e.type !== "blob") continue; // a submodule (commit) is not project content
    if (e.mode === SYMLINK) {
      diagnostics.push(linkedFileDiagnostic(rel));
      continue;
    }
    wanted.push({ oid: e.oid, rel });
  }
  const blobs = await catBlobs(
    repoRoot,
    wanted.map((w) => w.oid),
  );
  const files: ProjectFile[] = hostOnly
    ? [{ path: PROJECT_FILE, text: HOST_ONLY_PROJECT_YAML }]
    : [];
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
  for (const w of wanted) {
    const bytes = blobs.get(w.oid);
    if (bytes === undefined) {
      diagnostics.push(
        diagnostic("TF2008", fileSpan(w.rel), `git object ${w.oid} is missing from the clone`),
      );
      continue;
    }
    let text: string | undefined;
    try {
      text = bytes.includes(0) ? undefined : decoder.decode(bytes);
    } catch {
      text = undefined;
    }
    if (text === undefined)
      diagnostics.push(
        diagnostic(
          "TF2009",
          fileSpan(w.rel),
          "is binary (holds a NUL byte) or not valid UTF-8; save it as UTF-8 or move it out of the project (e.g. under fixtures/)",
        ),
      );
    else files.push({ path: w.rel, text });
  }
  return { commit, tree, existed, files, diagnostics };
}

/** `git ls-tree` modes the reader never follows: a symbolic link, a submodule (gitlink). */
export const SYMLINK = "120000";
export const GITLINK = "160000";

/**
 * Whether a path of a project (relative to it) is where its files could be: a project file
 * itself, or a directory the project's files are read from (not under fixtures/, .terfyn/, …).
 */
function mayHoldProjectFiles(rel: string): boolean {
  return belongsToProject(rel) || belongsToProject(`${rel}/x.agent`);
}

/** The projects of a tree, and the links the tree does not go on below. */
export interface TreeProjects {
  /** Directories ("." for the root) holding a regular terfyn.yaml → that file's blob id. */
  projects: Map<string, string>;
  /** Directories whose terfyn.yaml is a symbolic link: never read, never a project. */
  linkedProjectFiles: string[];
  /** Symbolic links and submodules by path: git lists nothing below them. */
  links: Map<string, TreeEntry>;
}

/** Reads a `git ls-tree -r` listing (of a whole tree) as projects and links, by mode. */
export function treeProjects(entries: readonly TreeEntry[]): TreeProjects {
  const out: TreeProjects = {
    projects: new Map(),
    linkedProjectFiles: [],
    links: new Map(),
  };
  const usable = (dir: string) =>
    dir === "." || (!hasUnsafeFileName(dir) && belongsToProject(`${dir}/x.agent`));
  for (const e of entries) {
    if (e.mode === SYMLINK || e.mode === GITLINK) out.links.set(e.path, e);
    if (e.path !== PROJECT_FILE && !e.path.endsWith(`/${PROJECT_FILE}`)) continue;
    const dir = e.path === PROJECT_FILE ? "." : e.path.slice(0, -`/${PROJECT_FILE}`.length);
    if (!usable(dir)) continue;
    if (e.mode === SYMLINK) out.linkedProjectFiles.push(dir);
    else if (e.type === "blob") out.projects.set(dir, e.oid);
  }
  // A root without terfyn.yaml that holds host files is a project of its hosts' agents.
  if (
    !out.projects.has(".") &&
    !out.linkedProjectFiles.includes(".") &&
    entries.some((e) => e.type === "blob" && isHostPath(e.path))
  )
    out.projects.set(".", HOST_ONLY_MARK);
  out.linkedProjectFiles.sort();
  return out;
}

/** The whole tree of `revision` read as projects and links. */
export async function treeProjectsAt(repoRoot: string, revision: string): Promise<TreeProjects> {
  const { tree } = await resolveTree(repoRoot, revision);
  return treeProjects(await listTree(repoRoot, tree));
}

/**
 * Every entry of `treeish` (under `path`, when given), paths relative to the repository root.
 * The pathspec is literal: a directory named `*` or `:(glob)x` matches only itself.
 */
export async function listTree(
  repoRoot: string,
  treeish: string,
  path?: string,
): Promise<TreeEntry[]> {
  const args = ["--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", treeish];
  if (path !== undefined) args.push("--", path);
  const listing = await gitText(repoRoot, args);
  return parseTreeListing(listing);
}

/** Parses `git ls-tree -z` output; a path may hold any byte but NUL (tabs and newlines too). */
export function parseTreeListing(listing: string): TreeEntry[] {
  const out: TreeEntry[] = [];
  for (const record of listing.split("\0")) {
    if (record === "") continue;
    const tab = record.indexOf("\t");
    if (tab < 0)
      throw new GitRevisionError(`unexpected git ls-tree record: ${JSON.stringify(record)}`);
    const [mode, type, oid] = record.slice(0, tab).split(" ");
    if (!mode || !type || !oid || !OID.test(oid))
      throw new GitRevisionError(`unexpected git ls-tree record: ${JSON.stringify(record)}`);
    out.push({ mode, type, oid, path: record.slice(tab + 1) });
  }
  return out;
}

/**
 * Reads blobs by object id through one `git cat-file --batch` process. The request lines are
 * object ids only (hex), so nothing a committer chose can reach the protocol; each reply header
 * is checked against the id asked for, and a size that does not fit the output stops the read.
 */
export async function catBlobs(cwd: string, oids: readonly string[]): Promise<Map<string, Buffer>> {
  const unique = [...new Set(oids)];
  if (unique.length === 0) return new Map();
  for (const oid of unique)
    if (!OID.test(oid)) throw new GitRevisionError(`not a git object id: ${JSON.stringify(oid)}`);
  let out: Buffer;
  try {
    out = (await runGitProcess(["cat-file", "--batch"], { cwd, stdin: `${unique.join("\n")}\n` }))
      .stdout;
  } catch (e) {
    if (e instanceof GitProcessError)
      throw new GitRevisionError(`git cat-file failed: ${e.stderr.trim()}`);
    throw e;
  }
  const blobs = new Map<string, Buffer>();
  let pos = 0;
  for (const oid of unique) {
    const eol = out.indexOf(10, pos);
    if (eol < 0) throw new GitRevisionError(`git cat-file ended early, before ${oid}`);
    const header = out.subarray(pos, eol).toString("latin1").split(" ");
    pos = eol + 1;
    if (header[0] !== oid)
      throw new GitRevisionError(`git cat-file answered ${header[0]} for ${oid}`);
    if (header[1] === "missing") continue;
    const size = Number(header[2]);
    if (header[1] !== "blob" || !Number.isSafeInteger(size) || pos + size > out.length)
      throw new GitRevisionError(`unexpected git cat-file header for ${oid}: ${header.join(" ")}`);
    blobs.set(oid, out.subarray(pos, pos + size));
    pos += size + 1;
  }
  return blobs;
}

/**
 * One file of `revision` by its path from the repository root, read from git objects: absent,
 * a regular file's text, or `link` for a symbolic link or anything else that is not a regular
 * file (never followed).
 */
export async function readFileAtRevision(
  repoRoot: string,
  revision: string,
  path: string,
): Promise<{ kind: "absent" } | { kind: "file"; text: string } | { kind: "not-a-file" }> {
  const { tree } = await resolveTree(repoRoot, revision);
  const entry = (await listTree(repoRoot, tree, path)).find((e) => e.path === path);
  if (!entry) return { kind: "absent" };
  if (entry.type !== "blob" || entry.mode === SYMLINK) return { kind: "not-a-file" };
  const bytes = (await catBlobs(repoRoot, [entry.oid])).get(entry.oid);
  if (bytes === undefined) return { kind: "absent" };
  return { kind: "file", text: bytes.toString("utf8") };
}
