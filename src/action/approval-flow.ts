/**
 * The `issue_comment` flow: `/terfyn approve sha256:…` on a pull request. Only a `created`
 * comment counts (an edit or a deletion never approves). The approval counts only from a person
 * (never a bot, never the token's own identity) who did not change the pull request (not its
 * author, not the author or committer of any of its commits, not whoever pushed its head: see
 * core/approvals/changers.ts; the pusher is read from the record the `pull_request` job left in
 * its own sticky comment, and without one nothing approves) whose repository role meets
 * `approvers`, only as a line of its own in the comment's prose, and only for a hash a
 * project's current plan has. It approves that one project's plan. An accepted approval is
 * answered and the pull request is re-evaluated in the same run: that project's check run and
 * sticky comment say "approved by @login (role)" and the `terfyn/approval` status moves, so
 * nobody re-runs the workflow by hand. Every refusal is answered with its reason. Approvals
 * are reconstructible from the PR's comments: nothing else is kept.
 */
import * as core from "@actions/core";
import { describeApiError } from "../adapters/github/client.ts";
import type { GitHubGateway } from "../adapters/github/gateway.ts";
import {
  judgeApprovalComment,
  meetsPermission,
  parseApprovalComment,
} from "../core/approvals/approval-comment.ts";
import type { Changers } from "../core/approvals/changers.ts";
import { mdCode } from "../core/render/markdown-escape.ts";
import { projectLabel } from "../core/render/pr-report.ts";
import { judgeFor } from "./judge.ts";
import { changersFromComments, planTarget } from "./report-flow.ts";
import type { Settings } from "./settings.ts";
import { reportJudged } from "./shared-head.ts";
import { pullRequestTargetFromApi } from "./targets.ts";

export interface CommentEvent {
  action: string;
  issue: { number: number; pull_request?: unknown; user?: { login?: string } };
  comment: {
    id: number;
    body?: string;
    user?: { login?: string; type?: string };
    created_at?: string;
    updated_at?: string;
  };
}

export async function approvalCommentFlow(
  inputs: Settings,
  ctx: { repoRoot: string; payload: CommentEvent },
  gateway: GitHubGateway,
): Promise<{ failed?: string }> {
  const { payload } = ctx;
  if (!payload.issue?.pull_request) {
    core.info("terfyn: the comment is not on a pull request; nothing to do");
    return {};
  }
  const body = payload.comment?.body ?? "";
  if (!parseApprovalComment(body)) {
    core.info("terfyn: no /terfyn approve command in the comment; nothing to do");
    return {};
  }
  if (payload.action !== "created") {
    core.info(
      `terfyn: the comment was ${payload.action}, not created; only a newly created comment can approve`,
    );
    return {};
  }
  const number = payload.issue.number;
  const reply = async (text: string) => {
    try {
      await gateway.createIssueComment(number, text);
    } catch (e) {
      core.warning(describeApiError(e, "replying to the approval comment"));
    }
  };
  const author = payload.comment.user?.login ?? "";
  const pr = await gateway.getPullRequest(number);
  const target = await pullRequestTargetFromApi(ctx.repoRoot, number, pr, core.info);
  // The default branch's workflow runs this job; the base's .github/terfyn.yml makes it stricter.
  const judged = await judgeFor(ctx.repoRoot, target.prior, inputs, false);
  const { settings } = judged;
  const outcomes = await planTarget(ctx.repoRoot, target, inputs.projects);
  const current = outcomes.flatMap((o) => (o.plan ? [{ path: o.path, hash: o.plan.hash }] : []));
  const me = await gateway.identity();
  // Who changed the pull request: its commits from the API, its pusher from the record the
  // pull_request job left in Terfyn's own sticky comment for this head (only ours is trusted).
  let changers: Changers;
  try {
    changers = await changersFromComments(
      gateway,
      {
        number,
        headSha: pr.headSha,
        author: pr.author,
        ...(pr.commits !== undefined ? { commits: pr.commits } : {}),
      },
      await gateway.listIssueComments(number),
    );
  } catch (e) {
    changers = {
      known: false,
      reason: `${describeApiError(e, "reading the pull request's comments")}, so the Action cannot tell who pushed its head`,
    };
  }
  const verdict = judgeApprovalComment(
    {
      body,
      author,
      authorType: payload.comment.user?.type ?? "",
      edited: (payload.comment.updated_at ?? "") !== (payload.comment.created_at ?? ""),
    },
    {
      prAuthor: pr.author,
      botLogins: me ? [me] : [],
      currentHashes: current.map((c) => c.hash),
      changers,
    },
  );
  if (!verdict) return {};
  const head = pr.headSha.slice(0, 12);
  const currentList =
    current.map((c) => `- ${mdCode(projectLabel(c.path))}: ${mdCode(c.hash)}`).join("\n") ||
    "- (no project could be planned)";
  if (!verdict.ok) {
    const mismatch = verdict.hash !== undefined && !current.some((c) => c.hash === verdict.hash);
    await reply(
      `❌ Not approved: ${verdict.reason}.${mismatch ? `\n\nYou approved: ${mdCode(verdict.hash ?? "")}\nThe current head (${head}) produces:\n${currentList}` : ""}`,
    );
    core.info(`terfyn: approval refused: ${verdict.reason}`);
    return {};
  }
  let role: { level: string; name: string };
  try {
    role = await gateway.collaboratorRole(author);
  } catch (e) {
    const message = describeApiError(e, `checking ${author}'s role`);
    await reply(`❌ Not approved: ${message}.`);
    return { failed: message };
  }
  if (!meetsPermission(role.level, settings.approvers)) {
    await reply(
      `❌ Not approved: @${author} has the ${mdCode(role.name)} role on this repository; approving needs ${mdCode(settings.approvers)} or higher.`,
    );
    core.info(`terfyn: approval refused: ${author} has ${role.name}`);
    return {};
  }
  const projects = current.filter((c) => c.hash === verdict.hash).map((c) => projectLabel(c.path));
  await reply(
    `✅ Approved by @${author} (${role.name}): the plan of ${projects.map((p) => mdCode(p)).join(", ")} at ${head}, ${mdCode(verdict.hash)}.\nA push that changes the plan needs a new approval.`,
  );
  core.info(`terfyn: ${author} (${role.name}) approved ${verdict.hash}`);
  // Re-evaluate now: the check run, the sticky comment and the status reflect the approval.
  const result = await reportJudged(ctx.repoRoot, gateway, inputs, target, outcomes, {
    untrustedInputs: false,
    judged,
    extraApprovals: [{ hash: verdict.hash, login: author, role: role.name }],
    changers,
  });
  return result.failed ? { failed: result.failed } : {};
}
