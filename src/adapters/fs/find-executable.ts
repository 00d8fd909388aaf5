/**
 * Finds the program a name or path stands for, as the operator's PATH and the project lay it
 * out: the `command` tools' argv[0], and the sandbox's own `bwrap`. Reads the file system only.
 */
import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { delimiter, isAbsolute, join, resolve } from "node:path";

/** Resolves argv[0]: PATH for a bare name, the project root for a relative path. */
export async function resolveProgram(
  argv0: string,
  projectRoot: string,
  path: string | undefined,
): Promise<string> {
  const candidates = argv0.includes("/")
    ? [isAbsolute(argv0) ? argv0 : resolve(projectRoot, argv0)]
    : (path ?? "")
        .split(delimiter)
        .filter((d) => d !== "")
        .map((d) => join(d, argv0));
  for (const c of candidates) {
    try {
      if ((await stat(c)).isFile()) {
        await access(c, constants.X_OK);
        return c;
      }
    } catch {
      // Not here, or not executable: try the next.
    }
  }
  throw new Error(
    argv0.includes("/")
      ? `${argv0} (relative to the project root) is not an executable file`
      : `${argv0} is not an executable found in PATH`,
  );
}
