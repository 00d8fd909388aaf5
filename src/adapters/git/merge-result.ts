/**
 * The merge result of a pull request, as git objects: what would land if it merged now. GitHub's
 * own test merge commit is used when it is present and is exactly a merge of the base and head
 * being planned (its parents are read from the commit object, so a shallow clone works);
 * otherwise the merge is computed with `git merge-tree --write-tree` (git ≥ 2.38), which writes
 * only objects and touches no ref, index or work tree. Conflicting paths are reported, never
 * guessed at.
 */
import { GitProcessError, gitText, runGitProcess } from "./git-process.ts";
import { GitRevisionError, resolveTree } from "./read-revision.ts";

export interface MergeResult {
  /** The tree to plan. */
  tree: string;
  /** The merge commit when GitHub's is used; the tree id when computed. */
  id: string;
  computed: boolean;
  /** Paths (repository-relative) that conflict; the tree then holds conflict markers there. */
  conflicts: string[];
}

async function parentsOf(repoRoot: string, commit: string): Promise<string[] | undefined> {
  try {
    const raw = await gitText(repoRoot, ["cat-file", "commit", commit]);
    const header = raw.slice(0, raw.indexOf("\n\n") < 0 ? raw.length : raw.indexOf("\n\n"));
    return header
      .split("\n")
      .filter((l) => l.startsWith("parent "))
      .map((l) => l.slice("parent ".length).trim());
  } catch {
    return undefined;
  }
}

/**
 * The first of `candidates` (merge commits GitHub made, present locally) that is exactly base +
 * head, else one merge computed from git objects.
 */
export async function mergeResult(
  repoRoot: string,
  base: string,
  head: string,
  candidates: readonly string[] = [],
): Promise<MergeResult> {
  for (const candidate of candidates) {
    if (!/^[0-9a-f]{40}$/.test(candidate)) continue;
    const parents = await parentsOf(repoRoot, candidate);
    if (parents && parents.length === 2 && parents[0] === base && parents[1] === head) {
      const { tree } = await resolveTree(repoRoot, candidate);
      return { tree, id: candidate, computed: false, conflicts: [] };
    }
  }
  const attempt = async (): Promise<{ out: string; message: string }> => {
    // Exit 1 means "merged with conflicts" and still prints the tree: read stdout either way.
    try {
      const r = await runGitProcess(
        ["merge-tree", "--write-tree", "--name-only", "-z", "--no-messages", base, head],
        { cwd: repoRoot, okCodes: [0, 1] },
      );
      return { out: r.stdout.toString("utf8"), message: r.stderr };
    } catch (e) {
      if (e instanceof GitProcessError) return { out: "", message: e.stderr || e.message };
      throw e;
    }
  };
  let r = await attempt();
  const parse = (out: string) => {
    const fields = out.split("\0");
    const tree = (fields[0] ?? "").trim();
    return /^[0-9a-f]{40}$/.test(tree)
      ? { tree, conflicts: fields.slice(1).filter((f) => f !== "") }
      : undefined;
  };
  let parsed = parse(r.out);
  if (!parsed && (await isShallow(repoRoot))) {
    // A shallow clone may lack the merge base: deepen both sides once, then try again.
    try {
      await runGitProcess(
        ["fetch", "--no-tags", "--no-recurse-submodules", "--deepen=200", "origin"],
        { cwd: repoRoot },
      );
    } catch {
      // Reported below with the original reason.
    }
    r = await attempt();
    parsed = parse(r.out);
  }
  if (!parsed)
    throw new GitRevisionError(
      `cannot compute the merge of ${head.slice(0, 12)} into ${base.slice(0, 12)} (${r.message.split("\n")[0] ?? "git merge-tree failed"}); check out the pull request with actions/checkout and fetch-depth: 0, or let the Action use GitHub's merge commit`,
    );
  return { tree: parsed.tree, id: parsed.tree, computed: true, conflicts: parsed.conflicts };
}

async function isShallow(repoRoot: string): Promise<boolean> {
  try {
    return (await gitText(repoRoot, ["rev-parse", "--is-shallow-repository"])).trim() === "true";
  } catch {
    return false;
  }
}
