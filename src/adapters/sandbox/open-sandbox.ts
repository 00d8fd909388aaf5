/**
 * Which sandbox a front door gets. The App and the Action call `openSandbox` with no choice:
 * bubblewrap or a refusal. The CLI passes `unconfined: true` only for an explicit
 * `--unconfined`. The operator's environment (trusted: it is who runs Terfyn) names where to
 * find bwrap (PATH) and any toolchain directories outside /usr and /opt to show read-only
 * (TERFYN_SANDBOX_READ_ONLY, `:`-separated absolute paths).
 */
import { BubblewrapSandbox } from "./bubblewrap.ts";
import type { Sandbox } from "./sandbox.ts";
import { UnconfinedSandbox } from "./unconfined.ts";

export interface OpenSandboxOptions {
  /** The operator's environment: PATH and TERFYN_SANDBOX_READ_ONLY are read. */
  env: Readonly<Record<string, string | undefined>>;
  /** The CLI's `--unconfined`. Never set by the App or the Action. */
  unconfined?: boolean;
}

export async function openSandbox(options: OpenSandboxOptions): Promise<Sandbox> {
  if (options.unconfined) return new UnconfinedSandbox();
  return BubblewrapSandbox.open({
    searchPath: options.env.PATH ?? "/usr/bin:/bin",
    extraReadOnly: sandboxReadOnlyPaths(options.env),
  });
}

/** TERFYN_SANDBOX_READ_ONLY as a list; relative or empty entries are dropped. */
export function sandboxReadOnlyPaths(env: Readonly<Record<string, string | undefined>>): string[] {
  return (env.TERFYN_SANDBOX_READ_ONLY ?? "").split(":").filter((p) => p.startsWith("/"));
}
