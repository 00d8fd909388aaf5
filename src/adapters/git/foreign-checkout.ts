/**
 * Refuses a checkout whose git directory holds what the Action did not put there (issue 22):
 * configuration that names a program git may run, includes from inside the checkout,
 * alternates, grafts, replace refs or a common directory elsewhere. The rule is
 * core/ci/git-config-rules.ts; this reads the facts, cheaply and without running anything the
 * repository names:
 *
 * - the git directory's files with the file system (`.git` must be the directory
 *   actions/checkout makes; `commondir`, `objects/info/alternates`, `info/grafts`,
 *   `refs/replace/` and `packed-refs` are read as text, never followed by git);
 * - the configuration with one git process through the hardened door,
 *   `git config --list --includes --show-scope --show-origin -z`: git reads config files and
 *   runs nothing to list them; the records are NUL-separated and parsed as hostile data.
 *   (Only a repository whose refs are in reftable needs a second one, `git for-each-ref
 *   refs/replace/`, since its refs are not files.)
 *
 * Called by the Action before any other git command runs in the workspace.
 */
import type { Dirent } from "node:fs";
import { lstat, readdir, readFile, realpath } from "node:fs/promises";
import { join } from "node:path";
import {
  type ForeignGitSetting,
  foreignCheckoutMessage,
  foreignConfigSettings,
  foreignRepositoryFiles,
  type GitDirectoryFacts,
  parseGitConfigList,
} from "../../core/ci/git-config-rules.ts";
import { entryExists as exists } from "../fs/real-path.ts";
import { GitProcessError, runGitProcess } from "./git-process.ts";

/** The checkout holds git settings the Action refuses (the message names them). */
export class ForeignCheckoutError extends Error {
  override name = "ForeignCheckoutError";
  readonly settings: readonly ForeignGitSetting[];
  constructor(message: string, settings: readonly ForeignGitSetting[]) {
    super(message);
    this.settings = settings;
  }
}

async function text(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch {
    return undefined;
  }
}

/** Every entry below `dir` (directories too: an empty one is still planted), relative. */
async function entriesBelow(dir: string, prefix: string): Promise<string[]> {
  let list: Dirent[];
  try {
    list = await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const d of list) {
    const name = `${prefix}${d.name}`;
    out.push(name);
    if (d.isDirectory()) out.push(...(await entriesBelow(join(dir, d.name), `${name}/`)));
  }
  return out;
}

/** The facts of `<workspace>/.git` the rule judges, read from the file system. */
async function gitDirectoryFacts(workspace: string): Promise<GitDirectoryFacts> {
  const gitDir = join(workspace, ".git");
  let kind: GitDirectoryFacts["notADirectory"];
  try {
    const st = await lstat(gitDir);
    if (st.isSymbolicLink()) kind = "symbolic link";
    else if (st.isFile()) kind = "file";
    else if (!st.isDirectory()) kind = "other";
  } catch {
    kind = "missing";
  }
  if (kind !== undefined) return { gitDir, notADirectory: kind, replaceRefs: [] };
  const packed = (await text(join(gitDir, "packed-refs"))) ?? "";
  const replaceRefs = [
    ...(await entriesBelow(join(gitDir, "refs", "replace"), "refs/replace/")),
    ...packed
      .split("\n")
      .flatMap((l) => (/^[0-9a-f]+ refs\/replace\//.test(l) ? [l.slice(l.indexOf(" ") + 1)] : [])),
  ];
  const alternates = await text(join(gitDir, "objects", "info", "alternates"));
  const grafts = await text(join(gitDir, "info", "grafts"));
  return {
    gitDir,
    ...((await exists(join(gitDir, "commondir"))) ? { commonDir: true } : {}),
    ...(alternates !== undefined ? { alternates } : {}),
    ...(grafts !== undefined ? { grafts } : {}),
    replaceRefs,
  };
}

/**
 * What the Action refuses in the checkout at `workspace`: empty when it may run git there.
 * One git process (two for a reftable repository).
 */
export async function foreignCheckoutSettings(workspace: string): Promise<ForeignGitSetting[]> {
  const facts = await gitDirectoryFacts(workspace);
  // No git directory of its own: git would find another one; nothing more is read.
  if (facts.notADirectory !== undefined) return foreignRepositoryFiles(facts);
  let raw: string;
  try {
    raw = (
      await runGitProcess(
        ["config", "--list", "--includes", "--show-scope", "--show-origin", "-z"],
        { cwd: workspace },
      )
    ).stdout.toString("utf8");
  } catch (e) {
    const why = e instanceof GitProcessError ? e.stderr.trim().split("\n")[0] : String(e);
    return [
      {
        name: "configuration",
        where: facts.gitDir,
        why: `cannot be read (${why || "git config failed"})`,
      },
    ];
  }
  const entries = parseGitConfigList(raw);
  if (entries === undefined)
    return [{ name: "configuration", where: facts.gitDir, why: "cannot be parsed" }];
  const real = await realpath(workspace).catch(() => workspace);
  const settings = foreignConfigSettings(entries, {
    workspace: [workspace, real],
    home: process.env.HOME,
  });
  const reftable = entries.some(
    (e) => e.key.toLowerCase() === "extensions.refstorage" && e.value?.trim() === "reftable",
  );
  if (reftable) {
    const listed = await runGitProcess(["for-each-ref", "--format=%(refname)", "refs/replace/"], {
      cwd: workspace,
    }).catch(() => undefined);
    const names = listed?.stdout.toString("utf8").split("\n").filter(Boolean);
    facts.replaceRefs = names ?? ["(unreadable)"];
  }
  return [...settings, ...foreignRepositoryFiles(facts)];
}

/**
 * Throws ForeignCheckoutError, naming each setting and what to do, when the checkout at
 * `workspace` holds any; returns when the Action may run git there.
 */
export async function refuseForeignCheckout(workspace: string): Promise<void> {
  const settings = await foreignCheckoutSettings(workspace);
  if (settings.length > 0)
    throw new ForeignCheckoutError(foreignCheckoutMessage(workspace, settings), settings);
}
