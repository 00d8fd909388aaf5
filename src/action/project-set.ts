/**
 * The set of projects is part of authority. Which projects an event plans is decided here, and
 * accounted for against the base: every project of the base that input `project` selects is
 * planned at the same path in the head, planned where it moved (a project the head holds
 * nowhere else with the same terfyn.yaml, selected too), or reported removed, which is a
 * widening (its guards are gone). What would hide a project from the reader while a checkout
 * still loads it is an error that blocks, never a silent skip:
 *
 * - a `terfyn.yaml` that is a symbolic link;
 * - a project directory that is a symbolic link or a submodule (gitlink), or lies below one:
 *   an explicit entry naming one, a base project whose path became one, a link a glob selects
 *   whose target holds a terfyn.yaml (or leaves the repository, or goes through another link);
 * - an explicit `project:` entry (not a glob) that names no project in the head.
 *
 * Links are told apart by their `git ls-tree` mode (120000, 160000), never by a checkout.
 */
import { posix } from "node:path";
import { Minimatch, minimatch } from "minimatch";
import {
  catBlobs,
  GITLINK,
  type TreeEntry,
  type TreeProjects,
  treeProjectsAt,
} from "../adapters/git/read-revision.ts";
import { type Diagnostic, diagnostic } from "../core/diagnostics.ts";
import { PROJECT_FILE } from "../core/model/resolve-project.ts";
import { fileSpan } from "../core/source.ts";

/** One selected path and what becomes of it. */
export type ProjectEntry =
  /** Planned at `path`, against the base's project at `priorPath` (the same path, or where it moved from). */
  | { kind: "plan"; path: string; priorPath: string }
  /** Cannot be planned: a link where the project is, or an explicit entry naming nothing. */
  | { kind: "error"; path: string; diagnostic: Diagnostic }
  /** The base's project at `path` is gone from the head's selection: deleted, or moved to `movedTo`. */
  | { kind: "removed"; path: string; movedTo?: string };

const norm = (p: string) => p.replace(/^\.\//, "").replace(/\/+$/, "") || ".";

/** An entry names one directory (no glob characters): naming nothing is then an error. */
function isExplicit(pattern: string): boolean {
  return !new Minimatch(norm(pattern), { dot: true }).hasMagic();
}

/** The link at `path` or at a directory above it, if the tree has one. */
function linkOn(tree: TreeProjects, path: string): TreeEntry | undefined {
  if (path === ".") return undefined;
  const parts = path.split("/");
  for (let i = 1; i <= parts.length; i++) {
    const link = tree.links.get(parts.slice(0, i).join("/"));
    if (link) return link;
  }
  return undefined;
}

function linkDiagnostic(path: string, link: TreeEntry): Diagnostic {
  const what =
    link.mode === GITLINK ? "a git submodule (a gitlink)" : "a symbolic link in git (mode 120000)";
  const where = link.path === path ? "the project directory" : `\`${link.path}\`, above it,`;
  return diagnostic(
    "TF2008",
    fileSpan(PROJECT_FILE),
    `the project \`${path}\` cannot be read: ${where} is ${what}. Terfyn does not follow it (what it leads to is not part of the reviewed change), while a checkout would load a project there; commit the project's files at \`${path}\` itself, or take the entry out of input \`project\``,
  );
}

function linkedProjectFileDiagnostic(path: string): Diagnostic {
  return diagnostic(
    "TF2008",
    fileSpan(PROJECT_FILE),
    `the project \`${path}\`'s terfyn.yaml is a symbolic link in git (mode 120000). Terfyn does not follow it (its target is not part of the reviewed change), while a checkout would load the project through it; commit terfyn.yaml itself as a regular file`,
  );
}

function unmatchedDiagnostic(path: string, inBase: boolean): Diagnostic {
  return diagnostic(
    "TF2005",
    fileSpan(PROJECT_FILE),
    `input \`project\` names \`${path}\`, which is not a Terfyn project in the head (no terfyn.yaml there${inBase ? "; the base has one, so the project was deleted or moved" : ""}); an entry without glob characters must name a directory holding terfyn.yaml: fix the entry, or remove it from input \`project\``,
  );
}

/**
 * Where a symbolic link at `path` leads, resolved in the tree: `outside` when it leaves the
 * repository or goes through another link (nothing this tree can judge), else the path.
 */
function resolveLink(tree: TreeProjects, path: string, target: string): string | "outside" {
  if (target.startsWith("/")) return "outside";
  const resolved = posix.normalize(posix.join(posix.dirname(path), target)).replace(/\/+$/, "");
  if (resolved === ".." || resolved.startsWith("../")) return "outside";
  if (resolved === ".") return ".";
  return linkOn(tree, resolved) ? "outside" : resolved;
}

/**
 * The projects of the head (`current`) that `patterns` select, accounted for against the
 * base (`prior`; undefined: a new branch, nothing to account for), sorted by path.
 */
export async function accountProjects(
  repoRoot: string,
  current: string,
  prior: string | undefined,
  patterns: readonly string[],
): Promise<ProjectEntry[]> {
  const head = await treeProjectsAt(repoRoot, current);
  const base = prior === undefined ? undefined : await treeProjectsAt(repoRoot, prior);
  const selected = (dir: string) =>
    patterns.some((pat) => minimatch(dir, norm(pat), { dot: true }) || dir === norm(pat));
  const out = new Map<string, ProjectEntry>();

  for (const dir of head.projects.keys())
    if (selected(dir)) out.set(dir, { kind: "plan", path: dir, priorPath: dir });
  for (const dir of head.linkedProjectFiles)
    if (selected(dir))
      out.set(dir, { kind: "error", path: dir, diagnostic: linkedProjectFileDiagnostic(dir) });

  // A link a pattern selects is a project directory when it leads to a terfyn.yaml, or
  // somewhere this tree cannot judge (out of the repository, through another link, a
  // submodule). An explicit entry naming any other link is refused below.
  const linkTargets = new Map<string, string>();
  const symlinks = [...head.links.values()].filter((l) => l.mode !== GITLINK && selected(l.path));
  if (symlinks.length > 0) {
    const blobs = await catBlobs(
      repoRoot,
      symlinks.map((l) => l.oid),
    );
    // A target git does not have is somewhere this tree cannot judge.
    for (const l of symlinks) linkTargets.set(l.path, blobs.get(l.oid)?.toString("utf8") ?? "/");
  }
  for (const link of head.links.values()) {
    if (out.has(link.path) || !selected(link.path)) continue;
    const to =
      link.mode === GITLINK
        ? "outside"
        : resolveLink(head, link.path, linkTargets.get(link.path) ?? "/");
    const leadsToProject =
      to === "outside" ||
      head.projects.has(to) ||
      head.linkedProjectFiles.includes(to) ||
      head.links.has(to === "." ? PROJECT_FILE : `${to}/${PROJECT_FILE}`);
    if (leadsToProject)
      out.set(link.path, {
        kind: "error",
        path: link.path,
        diagnostic: linkDiagnostic(link.path, link),
      });
  }

  for (const pat of patterns) {
    if (!isExplicit(pat)) continue;
    const path = norm(pat);
    if (out.has(path)) continue;
    const link = linkOn(head, path);
    out.set(path, {
      kind: "error",
      path,
      diagnostic: link
        ? linkDiagnostic(path, link)
        : unmatchedDiagnostic(path, base?.projects.has(path) ?? false),
    });
  }

  // Every project of the base is accounted for: at the same path (above), behind a link (an
  // error), moved (to the one new project with the same terfyn.yaml), or removed.
  const claimed = new Set<string>();
  for (const [dir, oid] of [...(base?.projects ?? [])].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (!selected(dir) || out.has(dir)) continue;
    const link = linkOn(head, dir);
    if (link) {
      out.set(dir, { kind: "error", path: dir, diagnostic: linkDiagnostic(dir, link) });
      continue;
    }
    const moved = [...head.projects].filter(
      ([d, o]) => o === oid && !base?.projects.has(d) && !claimed.has(d),
    );
    const to = moved.length === 1 ? moved[0]?.[0] : undefined;
    if (to !== undefined) claimed.add(to);
    if (to !== undefined && out.get(to)?.kind === "plan")
      out.set(to, { kind: "plan", path: to, priorPath: dir });
    else out.set(dir, { kind: "removed", path: dir, ...(to !== undefined ? { movedTo: to } : {}) });
  }
  return [...out.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
