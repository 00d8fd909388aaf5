/**
 * The Action's `mode: review-fix` as one call: the review-fix flow (review-fix.ts) with the
 * Action's inputs, outputs and failure. Bundled on its own as dist/review-fix.js and loaded by
 * dist/index.js only in this mode, so the plan mode never parses the review runner, the engine
 * or the model SDK.
 */
import * as core from "@actions/core";
import { createGateway } from "../adapters/github/gateway.ts";
import { reviewFix } from "./review-fix.ts";

export async function runReviewFix(options: {
  fetch?: typeof fetch;
  retries?: number;
}): Promise<void> {
  const result = await reviewFix((name) => core.getInput(name), process.env, {
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
