/**
 * What the App needs from its environment, checked before anything starts, with one message
 * naming every problem at once (not the first only). Without credentials at all (no APP_ID and
 * no private key) the App starts Probot's setup (manifest) flow, which registers it: no slug
 * and no runner are needed then. With credentials, the webhook secret is required, numbers
 * must be numbers, and the slug comes from TERFYN_APP_SLUG or, when unset, from `GET /app`.
 * Pure: the caller reads the key file and calls GitHub.
 */

export type AppEnv = Record<string, string | undefined>;

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

export function checkAppEnv(env: AppEnv): AppEnvCheck {
  const settings = settingProblems(env);
  const hasId = set(env, "APP_ID");
  const hasKey = set(env, "PRIVATE_KEY") || set(env, "PRIVATE_KEY_PATH");
  const problems: string[] = [];
  if (!hasId && !hasKey) {
    if (env.NODE_ENV === "production")
      problems.push(
        "APP_ID and PRIVATE_KEY (or PRIVATE_KEY_PATH) are not set; in production the App does not run its setup flow: register it first (the server started without them, NODE_ENV unset, serves the setup page), then set them",
      );
    return { mode: "setup", problems: [...problems, ...settings] };
  }
  if (!hasId) problems.push("APP_ID is not set (the App's numeric id, on its settings page)");
  else if (integerProblem(env, "APP_ID")) problems.push(integerProblem(env, "APP_ID") as string);
  if (!hasKey)
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
