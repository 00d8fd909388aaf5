/**
 * Files the App's environment comes from or names, read by the server before its start-up
 * checks (core/app/app-env.ts is pure: it gets what is found here).
 *
 * The `.env` file of the server's working directory, loaded as Probot's `run()` will load it
 * (probot/lib/helpers/load-env.js and apply-env.js: node:util parseEnv, its values assigned over
 * the environment, a missing file ignored), but before the start-up checks, so that credentials
 * kept only in `.env` are checked, and counted, as the credentials Probot will use.
 */
import { accessSync, constants, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseEnv } from "node:util";

/**
 * Assigns `<cwd>/.env`'s values over `env`. Returns undefined when it was loaded or is absent,
 * else the start-up problem naming the file (a directory, a file the server may not read, …).
 */
export function loadEnvFile(env: NodeJS.ProcessEnv, cwd: string): string | undefined {
  const path = join(cwd, ".env");
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    const code = (e as NodeJS.ErrnoException).code;
    return `${path} (the .env file Probot loads from the working directory) cannot be read: ${code ?? (e as Error).message}; make it a readable file or remove it`;
  }
  Object.assign(env, parseEnv(text));
  return undefined;
}

/**
 * TERFYN_MODEL_SCRIPT, when set, must name a readable file (relative to the working directory,
 * where the review worker reads it at each session): else the problem, found at start rather
 * than at a run's first model call.
 */
export function modelScriptProblem(
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): string | undefined {
  const given = env.TERFYN_MODEL_SCRIPT;
  if (given === undefined || given === "") return undefined;
  const path = resolve(cwd, given);
  try {
    if (!statSync(path).isFile())
      return `TERFYN_MODEL_SCRIPT must name a model script file: ${path} is not a file`;
    accessSync(path, constants.R_OK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === "ENOENT" || code === "ENOTDIR"
      ? `TERFYN_MODEL_SCRIPT names no file: ${path} does not exist`
      : `TERFYN_MODEL_SCRIPT (${path}) cannot be read: ${code ?? (e as Error).message}`;
  }
  return undefined;
}
