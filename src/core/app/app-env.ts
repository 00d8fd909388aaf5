/**
 * What the App needs from its environment, checked before anything starts, with one message
 * naming every problem at once (not the first only). Without credentials at all (no APP_ID and
 * no private key) the App starts Probot's setup (manifest) flow, which registers it: no slug
 * and no runner are needed then. With credentials, the webhook secret is required, numbers
 * must be numbers, and the slug comes from TERFYN_APP_SLUG or, when unset, from `GET /app`.
 * Pure: the caller reads `.env`, the key and the model script, and calls GitHub.
 */

export type AppEnv = Record<string, string | undefined>;

/**
 * The private key as the caller read it (src/app/private-key.ts): `found` (a key Probot will
 * sign with), `absent` (none anywhere Probot looks), or the problem found reading or parsing it.
 */
export type AppKeyRead =
  | { kind: "found" }
  | { kind: "absent" }
  | { kind: "problem"; problem: string };

/** What the caller found on disk for the settings that name files. */
export interface AppFiles {
  /** The problem with TERFYN_MODEL_SCRIPT's file (missing, not a readable file), if any. */
  modelScript?: string;
}

export interface AppEnvCheck {
  /** `setup`: no credentials, Probot's manifest flow; `app`: the App itself. */
  mode: "setup" | "app";
  problems: string[];
}

const set = (env: AppEnv, name: string) => (env[name] ?? "").trim() !== "";

/** A whole-number setting: undefined when unset or valid, else the problem. */
export function integerProblem(env: AppEnv, name: string, min = 1): string | undefined {
  const v = env[name];
  if (v === undefined || v === "") return undefined;
  const n = Number(v);
  if (/^\s*\d+\s*$/.test(v) && Number.isSafeInteger(n) && n >= min) return undefined;
  return `${name} must be ${min === 1 ? "a positive integer" : `an integer of at least ${min}`}, not ${JSON.stringify(v)}`;
}

/** Settings that are wrong whatever the mode: a typo must not wait for the first run. */
function settingProblems(env: AppEnv): string[] {
  const problems: string[] = [];
  const slug = env.TERFYN_APP_SLUG;
  if (slug !== undefined && slug !== "" && !/^[a-z0-9](?:[a-z0-9-]{0,33}[a-z0-9])?$/i.test(slug))
    problems.push(
      `TERFYN_APP_SLUG must be the App's slug (letters, digits, dashes), not ${JSON.stringify(slug)}`,
    );
  const host = env.GHE_HOST;
  if (host !== undefined && host !== "" && !/^[a-z0-9.-]+(?::\d+)?$/i.test(host))
    problems.push(
      `GHE_HOST must be a host name (and port), without scheme or path, not ${JSON.stringify(host)}`,
    );
  if (
    env.GHE_PROTOCOL !== undefined &&
    env.GHE_PROTOCOL !== "" &&
    !["https", "http"].includes(env.GHE_PROTOCOL)
  )
    problems.push(`GHE_PROTOCOL must be https or http, not ${JSON.stringify(env.GHE_PROTOCOL)}`);
  if (env.TERFYN_APP_RUNS_DIR !== undefined && env.TERFYN_APP_RUNS_DIR.trim() === "")
    problems.push(
      "TERFYN_APP_RUNS_DIR is set but empty (it would be the working directory): set it to a directory or unset it",
    );
  const runner = env.TERFYN_APP_RUNNER;
  if (runner !== undefined && runner !== "" && runner !== "unwired")
    problems.push(
      `TERFYN_APP_RUNNER must be unwired (the runner that ends every run stuck) or unset, not ${JSON.stringify(runner)}`,
    );
  for (const [name, min] of [
    ["TERFYN_APP_MAX_MODEL_CALLS", 1],
    ["TERFYN_APP_MAX_TOKENS", 1],
    ["TERFYN_APP_MAX_RUNS", 1],
    // At least two of a holder's 30-second heartbeats: a live holder is never judged stale.
    ["TERFYN_LOCK_STALE_SECONDS", 60],
  ] as const) {
    const p = integerProblem(env, name, min);
    if (p) problems.push(p);
  }
  return problems;
}

/**
 * `key`: the private key as read (default: found when PRIVATE_KEY or PRIVATE_KEY_PATH is set,
 * else absent). `files`: problems with the files settings name. Setup mode only with no APP_ID,
 * no key found and no key problem.
 */
export function checkAppEnv(env: AppEnv, key?: AppKeyRead, files: AppFiles = {}): AppEnvCheck {
  const settings = settingProblems(env);
  if (files.modelScript) settings.push(files.modelScript);
  const read: AppKeyRead =
    key ??
    (set(env, "PRIVATE_KEY") || set(env, "PRIVATE_KEY_PATH")
      ? { kind: "found" }
      : { kind: "absent" });
  const hasId = set(env, "APP_ID");
  const hasKey = read.kind === "found";
  const problems: string[] = [];
  if (!hasId && read.kind === "absent") {
    if (env.NODE_ENV === "production")
      problems.push(
        "APP_ID and PRIVATE_KEY (or PRIVATE_KEY_PATH) are not set; in production the App does not run its setup flow: register it first (the server started without them, NODE_ENV unset, serves the setup page), then set them",
      );
    return { mode: "setup", problems: [...problems, ...settings] };
  }
  if (!hasId) problems.push("APP_ID is not set (the App's numeric id, on its settings page)");
  else if (integerProblem(env, "APP_ID")) problems.push(integerProblem(env, "APP_ID") as string);
  if (read.kind === "problem") problems.push(read.problem);
  else if (!hasKey)
    problems.push(
      "PRIVATE_KEY (the PEM text) or PRIVATE_KEY_PATH (its file) is not set: generate a private key on the App's settings page",
    );
  if (!set(env, "WEBHOOK_SECRET"))
    problems.push(
      "WEBHOOK_SECRET is not set: without it no webhook can be verified (set the same secret as on the App's settings page)",
    );
  return { mode: "app", problems: [...problems, ...settings] };
}

/** The one message for every problem found. */
export function appEnvMessage(problems: readonly string[]): string {
  return `terfyn app: cannot start:\n${problems.map((p) => `  - ${p}`).join("\n")}\n`;
}

/**
 * Where the App clones a repository from, as a template with `{owner}` and `{repo}`: the
 * GitHub Enterprise server at GHE_HOST (over GHE_PROTOCOL, https unless set), or undefined for
 * github.com. The API and git are the same server, so a run on GitHub Enterprise never clones
 * (and never sends its installation token) anywhere else.
 */
export function cloneUrlTemplate(env: AppEnv): string | undefined {
  const host = (env.GHE_HOST ?? "").trim();
  if (host === "") return undefined;
  const protocol = env.GHE_PROTOCOL === "http" ? "http" : "https";
  return `${protocol}://${host}/{owner}/{repo}.git`;
}

/**
 * The web address of the GitHub the App serves, where its links point: the GitHub Enterprise
 * server at GHE_HOST (over GHE_PROTOCOL, https unless set), else https://github.com. From the
 * same settings as the API, never from a webhook's payload.
 */
export function webBaseUrl(env: AppEnv): string {
  const host = (env.GHE_HOST ?? "").trim();
  if (host === "") return "https://github.com";
  const protocol = env.GHE_PROTOCOL === "http" ? "http" : "https";
  return `${protocol}://${host}`;
}
