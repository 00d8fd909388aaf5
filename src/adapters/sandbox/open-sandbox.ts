/**
 * Which sandbox a front door gets. The App and the Action call `openSandbox` with no choice:
 * bubblewrap or a refusal. The CLI passes `unconfined: true` only for an explicit
 * `--unconfined`. The operator's environment (trusted: it is who runs Terfyn) names where to
 * find bwrap (PATH) and any toolchain directories outside /usr and /opt to show read-only
 * (TERFYN_SANDBOX_READ_ONLY, `:`-separated absolute paths).
 */
import { realpathSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { BubblewrapSandbox } from "./bubblewrap.ts";
import { isWithin, SYSTEM_PATHS } from "./bubblewrap-args.ts";
import type { Sandbox } from "./sandbox.ts";
import { UnconfinedSandbox } from "./unconfined.ts";

export interface OpenSandboxOptions {
  /** The operator's environment: PATH and TERFYN_SANDBOX_READ_ONLY are read. */
  env: Readonly<Record<string, string | undefined>>;
  /** The CLI's `--unconfined`. Never set by the App or the Action. */
  unconfined?: boolean;
  /** Paths hidden from every command (the App's secret files). */
  hide?: readonly string[];
}

export async function openSandbox(options: OpenSandboxOptions): Promise<Sandbox> {
  if (options.unconfined) return new UnconfinedSandbox();
  return BubblewrapSandbox.open({
    searchPath: options.env.PATH ?? "/usr/bin:/bin",
    extraReadOnly: sandboxReadOnlyPaths(options.env),
    ...(options.hide ? { alwaysHidden: options.hide } : {}),
  });
}

/**
 * Whether `path` (resolved through symlinks as far as it exists) is inside what the sandbox
 * shows every command read-only: the system directories and TERFYN_SANDBOX_READ_ONLY.
 */
export function visibleInSandbox(
  path: string,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const real = realAsFarAsExists(resolve(path));
  return [...SYSTEM_PATHS, ...sandboxReadOnlyPaths(env)].find((dir) =>
    isWithin(real, realAsFarAsExists(dir)),
  );
}

function realAsFarAsExists(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(realAsFarAsExists(parent), basename(path));
  }
}

/** TERFYN_SANDBOX_READ_ONLY as a list; relative or empty entries are dropped. */
export function sandboxReadOnlyPaths(env: Readonly<Record<string, string | undefined>>): string[] {
  return (env.TERFYN_SANDBOX_READ_ONLY ?? "").split(":").filter((p) => p.startsWith("/"));
}
