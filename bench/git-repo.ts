/**
 * git for the benchmarks' repositories: a fixed identity and fixed dates (commits work with no
 * git configuration and the ids are the same on every run), no signing, no hooks.
 */
import { execFileSync } from "node:child_process";

const GIT_ENV = {
  ...Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"].includes(k),
    ),
  ),
  GIT_AUTHOR_NAME: "Terfyn Bench",
  GIT_AUTHOR_EMAIL: "bench@terfyn.invalid",
  GIT_AUTHOR_DATE: "2024-06-01T00:00:00Z",
  GIT_COMMITTER_NAME: "Terfyn Bench",
  GIT_COMMITTER_EMAIL: "bench@terfyn.invalid",
  GIT_COMMITTER_DATE: "2024-06-01T00:00:00Z",
  GIT_CONFIG_NOSYSTEM: "1",
};

/** Runs git in `dir`; its output, or an error made by `fail` naming the command and stderr. */
export function benchGit(fail: (message: string) => Error, dir: string, ...args: string[]): string {
  try {
    return execFileSync(
      "git",
      [
        "-c",
        "commit.gpgsign=false",
        "-c",
        "tag.gpgsign=false",
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        "init.defaultBranch=main",
        ...args,
      ],
      { cwd: dir, env: GIT_ENV, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
    );
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw fail(`git ${args[0]} failed in ${dir}: ${err.stderr?.trim() || err.message}`);
  }
}
