/**
 * Reads a project directory from disk into the core's `ProjectFile` list.
 *
 * Walks the tree below the project root, skipping the directories that never belong to a
 * project (fixtures/, .terfyn/, node_modules/, .git/) and never following directory symlinks
 * (a link cycle or a link out of the project must not pull files in). A terfyn.yaml that is a
 * symbolic link is refused: git reviews the link, not what it points to. Unreadable files, and
 * files that are not UTF-8 text, are reported as one diagnostic each, not thrown and not parsed.
 */
import { existsSync, lstatSync } from "node:fs";
import { lstat, readdir, readFile, stat } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { type Diagnostic, diagnostic } from "../../core/diagnostics.ts";
import {
  hasUnsafeFileName,
  linkedFileDiagnostic,
  stripUnsafe,
  submoduleDiagnostic,
  unsafeFileNameDiagnostic,
} from "../../core/model/file-names.ts";
import {
  belongsToProject,
  NOT_TEXT_HINT,
  PROJECT_FILE,
  type ProjectFile,
} from "../../core/model/resolve-project.ts";
import { fileSpan } from "../../core/source.ts";
import { listedHosts } from "../../core/validate.ts";
import { entryExists as exists } from "./real-path.ts";

export interface ReadProjectResult {
  files: ProjectFile[];
  diagnostics: Diagnostic[];
}

export class ProjectNotFoundError extends Error {}

export async function readProjectDirectory(root: string): Promise<ReadProjectResult> {
  let rootStat: Awaited<ReturnType<typeof stat>>;
  try {
    rootStat = await stat(root);
  } catch {
    throw new ProjectNotFoundError(`project directory ${root} does not exist`);
  }
  if (!rootStat.isDirectory())
    throw new ProjectNotFoundError(
      `${root} is not a directory; --project takes the directory holding terfyn.yaml`,
    );
  let projectFile: Awaited<ReturnType<typeof lstat>>;
  try {
    projectFile = await lstat(join(root, PROJECT_FILE));
  } catch {
    throw new ProjectNotFoundError(
      `no ${PROJECT_FILE} in ${root}: a project is the directory holding ${PROJECT_FILE} (apiVersion: terfyn.dev/v1, kind: Project)`,
    );
  }
  const link = linkedComponent(root);
  if (link !== undefined)
    throw new ProjectNotFoundError(
      `${link} is a symbolic link inside its repository; Terfyn does not read a project through one: git records the link, not the directory it leads to (the Action refuses the project too), so give --project the directory itself`,
    );
  if (projectFile.isSymbolicLink())
    throw new ProjectNotFoundError(
      `${join(root, PROJECT_FILE)} is a symbolic link; Terfyn does not follow it: what it points to is not what git reviews (the Action refuses the project too), so replace the link with the file itself`,
    );
  const files: ProjectFile[] = [];
  const diagnostics: Diagnostic[] = [];
  // Host files terfyn.yaml lists at other paths (spec.hosts) are the project's too.
  const listed = new Set(
    listedHosts(await readFile(join(root, PROJECT_FILE), "utf8").catch(() => undefined)).map(
      (h) => h.path,
    ),
  );
  const wanted = (rel: string) => belongsToProject(rel) || listed.has(rel);
  const walk = async (rel: string) => {
    const dir = rel === "" ? root : join(root, rel);
    let entries: import("node:fs").Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (e) {
      diagnostics.push(
        diagnostic(
          "TF2008",
          fileSpan(rel || "."),
          `cannot read directory: ${(e as Error).message}`,
        ),
      );
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const entry of entries) {
      const childRel = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (
        hasUnsafeFileName(childRel) &&
        (wanted(childRel) || belongsToProject(stripUnsafe(childRel)))
      ) {
        // Never skipped silently: a newline or bidi override in a name can hide it from review.
        diagnostics.push(unsafeFileNameDiagnostic(childRel));
        continue;
      }
      if (entry.isDirectory()) {
        if (!belongsToProject(`${childRel}/x.agent`)) continue;
        if (await exists(join(root, childRel, ".git"))) {
          // A submodule (or a repository nested on disk): git's tree holds a gitlink here, or
          // nothing, so the reviewed change cannot show what the checkout would load.
          diagnostics.push(submoduleDiagnostic(childRel));
          continue;
        }
        await walk(childRel);
      } else if ((entry.isFile() || entry.isSymbolicLink()) && wanted(childRel)) {
        try {
          const full = join(root, childRel);
          if (entry.isSymbolicLink()) {
            // A link to a directory is not walked, as git lists nothing below one; a link to a
            // file is refused, as the git reader refuses it: its target is not what is reviewed.
            if ((await stat(full)).isFile()) diagnostics.push(linkedFileDiagnostic(childRel));
            continue;
          }
          const bytes = await readFile(full);
          const text = decodeUtf8(bytes);
          if (text === undefined) {
            // Decoding leniently would turn each bad byte into U+FFFD and a diagnostic of its own.
            diagnostics.push(
              diagnostic(
                "TF2009",
                fileSpan(childRel),
                "this file is not valid UTF-8 text; it was not parsed",
                {
                  hint: NOT_TEXT_HINT,
                },
              ),
            );
            continue;
          }
          files.push({ path: childRel, text });
        } catch (e) {
          diagnostics.push(
            diagnostic(
              "TF2008",
              fileSpan(childRel),
              `cannot read file: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
            ),
          );
        }
      }
    }
  };
  await walk("");
  return { files, diagnostics };
}

/**
 * The first component of `root`, below the repository holding it, that is a symbolic link, or
 * undefined. The repository is found on the path as given (the nearest directory above `root`
 * holding `.git`), not on the resolved one, so a link inside the repository is seen; links
 * above the repository (a home directory on a mount) are not its business.
 */
function linkedComponent(root: string): string | undefined {
  const abs = resolve(root);
  let top: string | undefined;
  for (let d = abs; ; d = dirname(d)) {
    if (existsSync(join(d, ".git"))) {
      top = d;
      break;
    }
    if (dirname(d) === d) break;
  }
  if (top === undefined) return undefined;
  const parts = relative(top, abs)
    .split(sep)
    .filter((p) => p !== "");
  let p = top;
  for (const part of parts) {
    p = join(p, part);
    try {
      if (lstatSync(p).isSymbolicLink()) return p;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** The text of UTF-8 bytes, or undefined when they are not valid UTF-8. */
function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}
