/**
 * The Action's `mode: review-fix`: the entry the GitHub App dispatches onto the repository's own
 * runners with `placement: actions` (a `workflow_dispatch` on the default branch, the pull
 * request and its head SHA as inputs; docs/github-app-placement.md).
 *
 * This build validates the dispatch and stops: the pull request is a positive integer, the head
 * is 40 hex digits and still the pull request's head by the API, the pull request is not from a
 * fork. Any failure is one clear message and no other effect (nothing is written to GitHub). A
 * validated dispatch then fails with "not implemented yet": the review run itself (intake,
 * DoctrineSteps, the publishers, the gates by comment) does not execute inside the Action yet.
 */
import type { GitHubGateway, RepoRef } from "../adapters/github/gateway.ts";

export class ReviewFixInputError extends Error {}

export interface ReviewFixInputs {
  pullRequest: number;
  headSha: string;
}

/** The inputs, validated; throws ReviewFixInputError naming the input and what it accepts. */
export function readReviewFixInputs(getInput: (name: string) => string): ReviewFixInputs {
  const pr = getInput("pull-request").trim();
  if (!/^[1-9][0-9]{0,9}$/.test(pr))
    throw new ReviewFixInputError(
      `mode review-fix needs input \`pull-request\`: a pull request number (a positive integer), not ${JSON.stringify(pr)}`,
    );
  const head = getInput("head-sha").trim();
  if (!/^[0-9a-f]{40}$/i.test(head))
    throw new ReviewFixInputError(
      `mode review-fix needs input \`head-sha\`: the pull request's head commit, 40 hex digits, not ${JSON.stringify(head)}`,
    );
  return { pullRequest: Number(pr), headSha: head.toLowerCase() };
}

/** GITHUB_REPOSITORY as owner and name. */
export function repoFromEnv(env: Readonly<Record<string, string | undefined>>): RepoRef {
  const m = /^([^/\s]+)\/([^/\s]+)$/.exec(env.GITHUB_REPOSITORY ?? "");
  if (!m) throw new ReviewFixInputError("GITHUB_REPOSITORY is not set to owner/name");
  return { owner: m[1] as string, repo: m[2] as string };
}

/**
 * Checks the dispatch against the API (reads only): the head must be the pull request's
 * current head (a push since the dispatch voids the run), and the pull request not a fork's.
 * Returns why it may not run, or undefined.
 */
export async function checkDispatch(
  inputs: ReviewFixInputs,
  repo: RepoRef,
  gateway: Pick<GitHubGateway, "getPullRequest">,
): Promise<string | undefined> {
  const pr = await gateway.getPullRequest(inputs.pullRequest);
  if (pr.headSha.toLowerCase() !== inputs.headSha)
    return `pull request #${inputs.pullRequest}'s head is ${pr.headSha.slice(0, 12)}, not the dispatched ${inputs.headSha.slice(0, 12)}: the branch moved since the run was dispatched, so it does not run (label the pull request again)`;
  const own = `${repo.owner}/${repo.repo}`;
  // A deleted fork has no head repository: not ours either.
  if (pr.headRepo?.toLowerCase() !== own.toLowerCase())
    return `pull request #${inputs.pullRequest} comes from ${pr.headRepo ? `the fork ${pr.headRepo}` : "a fork that no longer exists"}: review-fix pushes to the pull request's branch, so it runs only on branches of ${own}`;
  return undefined;
}

export const NOT_IMPLEMENTED =
  "mode review-fix is not implemented yet in the Action: the dispatch is valid, but no review run executes here. Use the App's in-process placement (TERFYN_APP_PLACEMENT=in-process) or `terfyn review` locally";

/**
 * The mode's whole flow; returns the failure message (the step fails with it) — in this build
 * always one: a validation failure, or NOT_IMPLEMENTED after a valid dispatch.
 */
export async function reviewFix(
  getInput: (name: string) => string,
  env: Readonly<Record<string, string | undefined>>,
  gatewayFor: (token: string, repo: RepoRef) => Pick<GitHubGateway, "getPullRequest">,
  info: (line: string) => void,
): Promise<string> {
  let inputs: ReviewFixInputs;
  let repo: RepoRef;
  try {
    inputs = readReviewFixInputs(getInput);
    repo = repoFromEnv(env);
  } catch (e) {
    if (e instanceof ReviewFixInputError) return e.message;
    throw e;
  }
  const token = getInput("github-token");
  if (token === "") return "mode review-fix needs input `github-token`";
  const { describeApiError } = await import("../adapters/github/client.ts");
  let why: string | undefined;
  try {
    why = await checkDispatch(inputs, repo, gatewayFor(token, repo));
  } catch (e) {
    return describeApiError(e, `reading pull request #${inputs.pullRequest}`);
  }
  if (why) return why;
  info(
    `terfyn: review-fix dispatch for pull request #${inputs.pullRequest} at ${inputs.headSha} is valid`,
  );
  return NOT_IMPLEMENTED;
}
