/**
 * The Action's single entry: reads the settings, dispatches on the event, and turns every error
 * into one `core.setFailed` line. Nothing in the pull request is executed: projects are read
 * from git objects and only parsed.
 *
 * An event the Action does not act on ends before anything else is loaded: the GitHub client
 * (@actions/github, Octokit), git (simple-git) and the planner are imported only when there is
 * work, so a run with nothing to do costs little more than Node's own start-up.
 */
import * as core from "@actions/core";
import type { CommentEvent } from "./approval-flow.ts";
import { readSettings } from "./settings.ts";

export interface RunOptions {
  /** Node's global fetch in tests (nock intercepts it); @actions/github's default otherwise. */
  fetch?: typeof fetch;
  retries?: number;
}

/** The events the Action acts on; github.context.eventName is GITHUB_EVENT_NAME. */
const PULL_REQUEST_EVENTS = ["pull_request", "pull_request_target"];
const COMMENT_EVENT = "issue_comment";

export async function run(options: RunOptions = {}): Promise<void> {
  try {
    const settings = readSettings((name) => core.getInput(name));
    const eventName = process.env.GITHUB_EVENT_NAME;
    if (!PULL_REQUEST_EVENTS.includes(eventName ?? "") && eventName !== COMMENT_EVENT) {
      core.info(
        `terfyn: the ${eventName} event is not one this Action acts on (pull_request, issue_comment); nothing to do`,
      );
      return;
    }
    const [github, { ensureCommit }, { createGitHubClient }] = await Promise.all([
      import("@actions/github"),
      import("../adapters/git/ensure-commit.ts"),
      import("../adapters/github/client.ts"),
    ]);
    const context = github.context;
    const repoRoot = process.env.GITHUB_WORKSPACE || process.cwd();
    const client = createGitHubClient(settings.token, {
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.retries !== undefined ? { retries: options.retries } : {}),
      log: (m) => core.info(m),
    });
    const repo = { owner: context.repo.owner, repo: context.repo.repo };
    let failed: string | undefined;
    if (PULL_REQUEST_EVENTS.includes(context.eventName)) {
      const pr = context.payload.pull_request;
      if (!pr) throw new Error(`the ${context.eventName} event has no pull_request payload`);
      await ensureCommit(repoRoot, pr.head.sha, core.info);
      await ensureCommit(repoRoot, pr.base.sha, core.info);
      const { pullRequestFlow } = await import("./pull-request.ts");
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
    } else {
      const { approvalCommentFlow } = await import("./approval-flow.ts");
      failed = (
        await approvalCommentFlow(
          settings,
          { repo, repoRoot, payload: context.payload as unknown as CommentEvent },
          client,
        )
      ).failed;
    }
    if (failed) core.setFailed(`terfyn: ${failed}`);
  } catch (e) {
    core.setFailed(`terfyn: ${(e as Error).message}`);
  }
}
