/**
 * The Action's `mode: review-fix` (the run the App dispatches with `placement: actions`), from
 * one call: the review-fix flow (review-fix.ts) with the Action's inputs, outputs and failure.
 * Bundled on its own as dist/review-fix.js and loaded by dist/index.js only in this mode, so the
 * plan mode never parses the review runner, the engine or the model SDK.
 *
 * Before anything runs, the job's secrets leave `process.env` (withdrawSecrets): the token, the
 * state key and the model key are read from a snapshot the flow is given explicitly, so no
 * process this job starts (git, bwrap) can inherit them by a default environment.
 */
import * as core from "@actions/core";
import { createGateway } from "../adapters/github/gateway.ts";
import { passableEnvNames } from "../core/review/repo-facts.ts";
import { reviewFix } from "./review-fix.ts";

type Env = Record<string, string | undefined>;

/**
 * Takes every variable that is secret-shaped or not a plain name (the runner's `INPUT_*` with a
 * dash, `INPUT_GITHUB-TOKEN`, `INPUT_STATE-KEY`, `ANTHROPIC_API_KEY`, …) out of `env`, in place,
 * and returns the whole environment as it was. The runner's own process still holds them (it
 * started this one); what this job starts does not.
 */
export function withdrawSecrets(env: Env): Readonly<Env> {
  const taken: Env = { ...env };
  const names = Object.keys(env).filter((k) => env[k] !== undefined);
  for (const k of passableEnvNames(names).refused) delete env[k];
  return taken;
}

/** An input as `@actions/core` reads it (`INPUT_<NAME>`, spaces as underscores), trimmed. */
export function inputFrom(env: Readonly<Env>): (name: string) => string {
  return (name) => (env[`INPUT_${name.replace(/ /g, "_").toUpperCase()}`] ?? "").trim();
}

export async function runReviewFix(options: {
  fetch?: typeof fetch;
  retries?: number;
}): Promise<void> {
  const env = withdrawSecrets(process.env);
  const result = await reviewFix(inputFrom(env), env, {
    gatewayFor: (token, repo) =>
      createGateway(token, repo, {
        ...(options.fetch ? { fetch: options.fetch } : {}),
        ...(options.retries !== undefined ? { retries: options.retries } : {}),
        log: (m) => core.info(m),
      }),
    info: (line) => core.info(line),
  });
  if (result.run) core.setOutput("review-run", result.run);
  if (result.state) core.setOutput("review-state", result.state);
  if (result.comment) core.setOutput("comment-url", result.comment);
  if (result.failed) core.setFailed(`terfyn: ${result.failed}`);
}
