/**
 * The one place the project starts git: the review runs' branch writer (behind its own argument
 * guard), the Action's revision reader and merge computation, the run-state ref, the App's
 * clones and the approver's identity. Hardened here, once:
 *
 * - configuration that would make git run a program a repository (or code that ran in it)
 *   chose is overridden on the command line: hooks, the fsmonitor hook, ssh command, pager,
 *   editor, askpass, credential helper, the ext:: transport, signing, automatic gc;
 * - the environment is built here, never copied: the parent's PATH, HOME, LANG and TMPDIR (and
 *   what the caller adds), no system config or attributes, no replace objects (a
 *   `refs/replace/<commit>` could make git show another tree than the one named) and no grafts
 *   (`info/grafts` could give a commit other parents, and GIT_NO_REPLACE_OBJECTS does not turn
 *   them off), no proxy program for git:// (`core.gitProxy`), no prompt, the C locale;
 * - every exit code is checked (an expected non-zero one is named by the caller).
 *
 * What it cannot override: programs the repository's config names per driver or per name
 * (`filter.<driver>.*`, `merge.<driver>.driver`, `hook.<name>.command`, …) and alternates.
 * Where the repository's `.git` is not one Terfyn or actions/checkout made (the Action's
 * workspace), adapters/git/foreign-checkout.ts refuses it before git runs there.
 *
 * What it never does: decide which git commands are allowed (the branch writer's guard does),
 * or read a repository's configuration for a value it then trusts.
 */
import { spawn } from "node:child_process";
import { spawnTimer } from "../spawn-log.ts";

/**
 * Configuration that would make git run a program the repository (or an agent that wrote into
 * it) chose. Given on the command line, it overrides every config file. External diff drivers
 * and textconv are off through `--no-ext-diff`/`--no-textconv` where diffs are made.
 */
export const GIT_HARDENING: readonly string[] = [
  "core.hooksPath=/dev/null",
  "core.fsmonitor=false",
  "core.sshCommand=ssh",
  "core.pager=cat",
  "core.editor=true",
  "sequence.editor=true",
  "core.askPass=",
  "credential.helper=",
  "protocol.ext.allow=never",
  "commit.gpgSign=false",
  "tag.gpgSign=false",
  "gc.auto=0",
  "maintenance.auto=false",
].flatMap((kv) => ["-c", kv]);

/** Set for every git process, after the caller's environment: the caller cannot unset them. */
const FORCED_ENV: Readonly<Record<string, string>> = {
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_ATTR_NOSYSTEM: "1",
  GIT_NO_REPLACE_OBJECTS: "1",
  // A graft file that cannot exist (a path below /dev/null): `info/grafts` is never read, and
  // git prints no deprecation hint, which it does for any graft file it opens.
  GIT_GRAFT_FILE: "/dev/null/terfyn-no-grafts",
  // Set and empty: git uses no proxy program for git://, whatever `core.gitProxy` says.
  GIT_PROXY_COMMAND: "",
  GIT_TERMINAL_PROMPT: "0",
  GIT_EDITOR: "true",
  GIT_PAGER: "cat",
  LC_ALL: "C",
};

/** The variables of the parent's environment a git process sees unless the caller adds more. */
const INHERITED_ENV = ["PATH", "HOME", "LANG", "TMPDIR"] as const;

/**
 * The environment of a git process that reads no user or system configuration (the App's
 * clone, the run-state store, the Action's reader): the parent's PATH, HOME, LANG and TMPDIR,
 * global config off, then `extra` (a token header, GIT_DIR).
 */
export function hardenedGitEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { ...inheritedEnv(), GIT_CONFIG_GLOBAL: "/dev/null", ...extra };
}

/** The parent's PATH, HOME, LANG and TMPDIR, and `more` of its variables by name. */
export function inheritedEnv(more: readonly string[] = []): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of [...INHERITED_ENV, ...more]) {
    const v = process.env[k];
    if (v !== undefined) env[k] = v;
  }
  return env;
}

export interface GitProcessOptions {
  cwd?: string;
  /** The whole environment besides the forced variables. Default: `inheritedEnv()`. */
  env?: Record<string, string>;
  stdin?: string | Buffer;
  /** `-c key=value` pairs given after the hardening (a caller's own overrides). */
  config?: readonly string[];
  /** Exit codes that are answers rather than failures (default: only 0). */
  okCodes?: readonly number[];
}

export interface GitProcessResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Git itself failed, or could not start. */
export class GitProcessError extends Error {
  override name = "GitProcessError";
  readonly args: readonly string[];
  readonly exitCode: number | null;
  readonly stderr: string;
  constructor(args: readonly string[], exitCode: number | null, stderr: string) {
    super(`git ${args.join(" ")} failed (exit ${exitCode}): ${stderr.trim().split("\n")[0] ?? ""}`);
    this.args = [...args];
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

/** Runs `git <hardening> <config> <args>`; rejects with GitProcessError on an unexpected exit. */
export async function runGitProcess(
  args: readonly string[],
  options: GitProcessOptions = {},
): Promise<GitProcessResult> {
  const okCodes = options.okCodes ?? [0];
  const timed = spawnTimer("git", args.find((a) => !a.startsWith("-")) ?? "");
  const result = await new Promise<GitProcessResult>((resolve, reject) => {
    const child = spawn("git", [...GIT_HARDENING, ...(options.config ?? []), ...args], {
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...(options.env ?? inheritedEnv()), ...FORCED_ENV },
    });
    const out: Buffer[] = [];
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString("utf8");
    });
    child.on("error", (e) =>
      reject(new GitProcessError(args, null, `cannot run git: ${e.message}`)),
    );
    child.on("close", (code) => {
      timed?.();
      resolve({ code, stdout: Buffer.concat(out), stderr });
    });
    child.stdin.on("error", () => {});
    child.stdin.end(options.stdin ?? "");
  });
  if (result.code === null || !okCodes.includes(result.code))
    throw new GitProcessError(args, result.code, result.stderr);
  return result;
}

/** One git command's standard output as text. */
export async function gitText(
  cwd: string,
  args: readonly string[],
  options: Omit<GitProcessOptions, "cwd"> = {},
): Promise<string> {
  return (await runGitProcess(args, { ...options, cwd })).stdout.toString("utf8");
}
