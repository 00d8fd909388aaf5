/**
 * Makes sure a commit's objects are present locally (a shallow checkout may lack the PR's base
 * or head): if not, fetches exactly that commit from `origin`, shallowly. Fetching reads
 * objects only; nothing is checked out.
 */
import { gitText } from "./git-process.ts";
import { GitRevisionError } from "./read-revision.ts";

export async function ensureCommit(
  repoRoot: string,
  sha: string,
  log: (m: string) => void = () => {},
): Promise<void> {
  const present = async () => {
    try {
      return (
        (
          await gitText(repoRoot, ["rev-parse", "--verify", "--quiet", `${sha}^{commit}`])
        ).trim() !== ""
      );
    } catch {
      return false;
    }
  };
  if (await present()) return;
  log(`fetching ${sha.slice(0, 7)} from origin`);
  try {
    await gitText(repoRoot, [
      "fetch",
      "--no-tags",
      "--no-recurse-submodules",
      "--depth=1",
      "origin",
      sha,
    ]);
  } catch (e) {
    throw new GitRevisionError(
      `commit ${sha} is not in the checkout and cannot be fetched (${(e as Error).message.split("\n")[0]}); use actions/checkout with fetch-depth: 0`,
    );
  }
  if (!(await present()))
    throw new GitRevisionError(`commit ${sha} is still missing after fetching it`);
}
