/**
 * A status and a check run belong to a commit, not to a pull request: every open pull request
 * whose head is that commit shows them. So before the head's verdict is set, each other open
 * pull request with the same head is planned and judged as its own job would judge it (its own
 * base, its own approvals, the judge its base configures); core/ci/decisions.ts combines them.
 */
import * as core from "@actions/core";
import { describeApiError } from "../adapters/github/client.ts";
import type { GitHubGateway } from "../adapters/github/gateway.ts";
import type { Changers } from "../core/approvals/changers.ts";
import type { SharedHeadPullRequest } from "../core/ci/decisions.ts";
import { type Approval, decideOutcome } from "../core/ci/outcome.ts";
import { judgeFor } from "./judge.ts";
import type { ProjectOutcome } from "./plan-revisions.ts";
import {
  approvalsFrom,
  changersFromComments,
  type FlowResult,
  planTarget,
  reportFlow,
} from "./report-flow.ts";
import type { Settings } from "./settings.ts";
import { type PlanTarget, pullRequestTargetFromApi } from "./targets.ts";

/**
 * The other open pull requests with `target`'s head, judged; undefined when they cannot be
 * listed or judged (the head's status then cannot be success).
 */
export async function otherPullRequestsWithHead(
  repoRoot: string,
  gateway: GitHubGateway,
  inputs: Settings,
  target: PlanTarget,
  /** True in the `pull_request` job: the inputs are the pull request's own. */
  untrustedInputs: boolean,
): Promise<SharedHeadPullRequest[] | undefined> {
  const own = target.pullRequest?.number;
  const headSha = target.statusSha;
  try {
    const others = (await gateway.openPullRequestsWithHead(headSha)).filter(
      (p) => p.number !== own,
    );
    const out: SharedHeadPullRequest[] = [];
    for (const other of others) {
      core.info(`terfyn: #${other.number} (into ${other.base}) has the same head; judging it too`);
      const pr = await gateway.getPullRequest(other.number);
      if (pr.headSha !== headSha) continue; // it moved on since it was listed
      const t = await pullRequestTargetFromApi(repoRoot, other.number, pr, core.info);
      const outcomes = await planTarget(repoRoot, t, inputs.projects);
      const judged = await judgeFor(repoRoot, t.prior, inputs, untrustedInputs);
      let approvals: Approval[] = [];
      if (judged.countsApprovals) {
        const comments = await gateway.listIssueComments(other.number);
        approvals = await approvalsFrom(gateway, comments, {
          prAuthor: pr.author,
          approvers: judged.settings.approvers,
          currentHashes: outcomes.flatMap((o) => (o.plan ? [o.plan.hash] : [])),
          // Its changers, as its own job would find them (its own pushers' record).
          changers: () =>
            changersFromComments(
              gateway,
              {
                number: other.number,
                headSha,
                author: pr.author,
                ...(typeof pr.commits === "number" ? { commits: pr.commits } : {}),
              },
              comments,
            ),
        });
      }
      out.push({
        number: other.number,
        base: other.base,
        paths: outcomes.map((o) => o.path),
        verdicts: outcomes.map((o) => decideOutcome(o, judged.settings.failOn, approvals)),
      });
    }
    return out;
  } catch (e) {
    core.warning(
      describeApiError(e, "judging the other pull requests with this head") +
        "; terfyn/approval cannot be success",
    );
    return undefined;
  }
}

/**
 * Reports a target as the job's judge sees it: the judge (judge.ts) from the inputs and the
 * base, and, for a pull request, the other open pull requests with its head. The one way every
 * pull request job (the event's, `workflow_run`'s by number, an approval's) reaches reportFlow.
 */
export async function reportJudged(
  repoRoot: string,
  gateway: GitHubGateway,
  inputs: Settings,
  target: PlanTarget,
  outcomes: ProjectOutcome[],
  options: {
    /** True in the `pull_request` job: the inputs are the pull request's own. */
    untrustedInputs: boolean;
    /** The judge, when the caller already asked it (an approval is judged before the report). */
    judged?: Awaited<ReturnType<typeof judgeFor>>;
    extraApprovals?: Approval[];
    changers?: Changers;
  },
): Promise<FlowResult> {
  const judged =
    options.judged ?? (await judgeFor(repoRoot, target.prior, inputs, options.untrustedInputs));
  const others = target.pullRequest
    ? await otherPullRequestsWithHead(repoRoot, gateway, inputs, target, options.untrustedInputs)
    : undefined;
  return reportFlow(judged.settings, target, outcomes, gateway, {
    countsApprovals: judged.countsApprovals,
    ...(target.pullRequest ? { sharedHead: { others } } : {}),
    ...(options.extraApprovals ? { extraApprovals: options.extraApprovals } : {}),
    ...(options.changers ? { changers: options.changers } : {}),
  });
}
