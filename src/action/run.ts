/**
 * The Action's single entry: reads the settings, dispatches on the event, and turns every error
 * into one `core.setFailed` line. Nothing from the repository is executed: projects are read
 * from git objects and only parsed, and a checkout whose git configuration names programs (or
 * that reads objects from elsewhere) is refused before git runs in it.
 *
 * An event the Action does not act on ends before anything else is loaded: the GitHub gateway
 * (Octokit), git and the planner are imported only when there is work, so a run with nothing
 * to do costs little more than Node's own start-up.
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
const EVENTS = [...PULL_REQUEST_EVENTS, "issue_comment", "merge_group", "push"];

/** The input `mode`: plan (the default: plan the pull request) or review-fix (review-fix.ts). */
const MODES = ["plan", "review-fix"];

/**
 * Where `mode: review-fix` is: next to the bundle, its own bundle dist/review-fix.js (a
 * specifier esbuild does not follow, so dist/index.js does not carry it); from source, the
 * module itself.
 */
function reviewFixModule(): string {
  return import.meta.url.endsWith("/dist/index.js")
    ? new URL("./review-fix.js", import.meta.url).href
    : "./review-fix-entry.ts";
}

export async function run(options: RunOptions = {}): Promise<void> {
  try {
    const mode = core.getInput("mode").trim() || "plan";
    if (!MODES.includes(mode)) {
      core.setFailed(
        `terfyn: input \`mode\` must be plan or review-fix, not ${JSON.stringify(mode)}`,
      );
      return;
    }
    if (mode === "review-fix") {
      const { runReviewFix } = (await import(
        /* @vite-ignore */ reviewFixModule()
      )) as typeof import("./review-fix-entry.ts");
      await runReviewFix(options);
      return;
    }
    const settings = readSettings((name) => core.getInput(name));
    const eventName = process.env.GITHUB_EVENT_NAME ?? "";
    if (!EVENTS.includes(eventName) && settings.pullRequest === undefined) {
      core.info(
        `terfyn: the ${eventName} event is not one this Action acts on (${EVENTS.join(", ")}); nothing to do`,
      );
      return;
    }
    const [github, { createGateway }, targets, flow, { reportJudged }, checkout] =
      await Promise.all([
        import("@actions/github"),
        import("../adapters/github/gateway.ts"),
        import("./targets.ts"),
        import("./report-flow.ts"),
        import("./shared-head.ts"),
        import("../adapters/git/foreign-checkout.ts"),
      ]);
    const repoRoot = process.env.GITHUB_WORKSPACE || process.cwd();
    // Before any other git command, and before GitHub is asked anything: a .git holding
    // programs, alternates or replace refs (an artifact's, reused by actions/checkout) is
    // refused with what to do, never run git in (issue 22).
    await checkout.refuseForeignCheckout(repoRoot);
    const context = github.context;
    const gateway = createGateway(
      settings.token,
      { owner: context.repo.owner, repo: context.repo.repo },
      {
        ...(options.fetch ? { fetch: options.fetch } : {}),
        ...(options.retries !== undefined ? { retries: options.retries } : {}),
        log: (m) => core.info(m),
      },
    );
    const payload = context.payload as Record<string, unknown>;
    let failed: string | undefined;
    if (settings.pullRequest !== undefined && eventName !== "issue_comment") {
      // A trusted job (workflow_run) reporting a pull request by number: head and base come
      // from the API, never from an artifact the pull request produced.
      const pr = await gateway.getPullRequest(settings.pullRequest);
      const target = await targets.pullRequestTargetFromApi(
        repoRoot,
        settings.pullRequest,
        pr,
        core.info,
      );
      const outcomes = await flow.planTarget(repoRoot, target, settings.projects);
      // This job runs the default branch's workflow: its inputs are trusted.
      failed = (
        await reportJudged(repoRoot, gateway, settings, target, outcomes, {
          untrustedInputs: false,
        })
      ).failed;
    } else if (eventName === "issue_comment") {
      const { approvalCommentFlow } = await import("./approval-flow.ts");
      failed = (
        await approvalCommentFlow(
          settings,
          { repoRoot, payload: payload as unknown as CommentEvent },
          gateway,
        )
      ).failed;
    } else {
      let target: Awaited<ReturnType<typeof targets.pushTarget>>;
      if (PULL_REQUEST_EVENTS.includes(eventName)) {
        if (payload.action === "edited" && !(payload.changes as { base?: unknown })?.base) {
          core.info(
            "terfyn: the pull request's title or body was edited, not its base; nothing to re-plan",
          );
          return;
        }
        const pr = payload.pull_request as
          | {
              number: number;
              head: { sha: string; repo?: { full_name?: string } | null };
              base: { sha: string };
              user?: { login?: string };
              merge_commit_sha?: string | null;
              labels?: { name?: string }[];
              commits?: number;
            }
          | undefined;
        if (!pr) throw new Error(`the ${eventName} event has no pull_request payload`);
        const pusher = targets.pusherOf(payload);
        target = await targets.pullRequestTarget(
          repoRoot,
          {
            number: pr.number,
            headSha: pr.head.sha,
            baseSha: pr.base.sha,
            author: pr.user?.login ?? "",
            labels: (pr.labels ?? []).flatMap((l) => (l.name ? [l.name] : [])),
            ...(pr.head.repo?.full_name ? { headRepo: pr.head.repo.full_name } : {}),
            ...(typeof pr.commits === "number" ? { commits: pr.commits } : {}),
            ...(pusher ? { pusher } : {}),
            // On pull_request, GITHUB_SHA is GitHub's test merge commit.
            mergeCandidates: [
              eventName === "pull_request" ? context.sha : undefined,
              pr.merge_commit_sha ?? undefined,
            ],
          },
          core.info,
        );
      } else if (eventName === "merge_group") {
        target = await targets.mergeGroupTarget(
          repoRoot,
          (payload.merge_group ?? {}) as { head_sha?: unknown; base_sha?: unknown },
          core.info,
        );
      } else {
        target = await targets.pushTarget(repoRoot, payload, core.info);
      }
      const outcomes = await flow.planTarget(repoRoot, target, settings.projects);
      // On pull_request the workflow file, and so every input, is the pull request's own.
      failed = (
        await reportJudged(repoRoot, gateway, settings, target, outcomes, {
          untrustedInputs: eventName === "pull_request",
        })
      ).failed;
    }
    if (failed) core.setFailed(`terfyn: ${failed}`);
  } catch (e) {
    core.setFailed(`terfyn: ${(e as Error).message}`);
  }
}
