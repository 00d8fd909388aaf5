/**
 * The Action's single entry: reads the settings, dispatches on the event, and turns every error
 * into one `core.setFailed` line. Nothing in the pull request is executed: projects are read
 * from git objects and only parsed.
 */
import * as core from "@actions/core";
import * as github from "@actions/github";
import { ensureCommit } from "../adapters/git/ensure-commit.ts";
import { createGitHubClient } from "../adapters/github/client.ts";
import { approvalCommentFlow, type CommentEvent } from "./approval-flow.ts";
import { pullRequestFlow } from "./pull-request.ts";
import { readSettings } from "./settings.ts";

export interface RunOptions {
  /** Node's global fetch in tests (nock intercepts it); @actions/github's default otherwise. */
  fetch?: typeof fetch;
  retries?: number;
}

export async function run(options: RunOptions = {}): Promise<void> {
  try {
    const settings = readSettings((name) => core.getInput(name));
    const context = github.context;
    const repoRoot = process.env.GITHUB_WORKSPACE || process.cwd();
    const client = createGitHubClient(settings.token, {
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.retries !== undefined ? { retries: options.retries } : {}),
      log: (m) => core.info(m),
    });
    const repo = { owner: context.repo.owner, repo: context.repo.repo };
    let failed: string | undefined;
    if (context.eventName === "pull_request" || context.eventName === "pull_request_target") {
      const pr = context.payload.pull_request;
      if (!pr) throw new Error(`the ${context.eventName} event has no pull_request payload`);
      await ensureCommit(repoRoot, pr.head.sha, core.info);
      await ensureCommit(repoRoot, pr.base.sha, core.info);
      const result = await pullRequestFlow(
        settings,
        {
          repo,
          number: pr.number,
          headSha: pr.head.sha,
          baseSha: pr.base.sha,
          author: pr.user?.login ?? "",
          repoRoot,
        },
        client,
      );
      failed = result.failed;
    } else if (context.eventName === "issue_comment") {
      failed = (
        await approvalCommentFlow(
          settings,
          { repo, repoRoot, payload: context.payload as unknown as CommentEvent },
          client,
        )
      ).failed;
    } else {
      core.info(
        `terfyn: the ${context.eventName} event is not one this Action acts on (pull_request, issue_comment); nothing to do`,
      );
    }
    if (failed) core.setFailed(`terfyn: ${failed}`);
  } catch (e) {
    core.setFailed(`terfyn: ${(e as Error).message}`);
  }
}
