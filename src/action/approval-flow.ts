/**
 * The `issue_comment` flow: `/terfyn approve sha256:…` on a pull request. The approval counts
 * only from a user (never a bot, never the PR's author) whose permission meets `approvers`,
 * only in an unedited comment, and only for a hash the current head produces. A valid approval
 * marks the head commit (status `terfyn/approval`) and is answered; every refusal is answered
 * with its reason. Approvals are reconstructible from the PR's comments: nothing else is kept.
 */
import * as core from "@actions/core";
import { ensureCommit } from "../adapters/git/ensure-commit.ts";
import { describeApiError, type GitHubClient } from "../adapters/github/client.ts";
import {
  judgeApprovalComment,
  meetsPermission,
  parseApprovalComment,
} from "../core/approvals/approval-comment.ts";
import { planProjectAt, selectProjects } from "./plan-revisions.ts";
import { repositoryPermission } from "./pull-request.ts";
import type { Settings } from "./settings.ts";

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
  settings: Settings,
  ctx: { repo: { owner: string; repo: string }; repoRoot: string; payload: CommentEvent },
  client: GitHubClient,
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
  const number = payload.issue.number;
  const reply = async (text: string) => {
    try {
      await client.rest.issues.createComment({ ...ctx.repo, issue_number: number, body: text });
    } catch (e) {
      core.warning(describeApiError(e, "replying to the approval comment"));
    }
  };
  const author = payload.comment.user?.login ?? "";
  const pr = await client.rest.pulls.get({ ...ctx.repo, pull_number: number });
  const headSha = pr.data.head.sha;
  const baseSha = pr.data.base.sha;
  await ensureCommit(ctx.repoRoot, headSha, core.info);
  await ensureCommit(ctx.repoRoot, baseSha, core.info);
  const paths = await selectProjects(ctx.repoRoot, headSha, settings.projects);
  const outcomes = [];
  for (const path of paths)
    outcomes.push(await planProjectAt(ctx.repoRoot, path, headSha, baseSha));
  const current = outcomes.flatMap((o) => (o.plan ? [{ path: o.path, hash: o.plan.hash }] : []));

  const verdict = judgeApprovalComment(
    {
      body,
      author,
      authorType: payload.comment.user?.type ?? "",
      edited:
        payload.action === "edited" ||
        (payload.comment.updated_at ?? "") !== (payload.comment.created_at ?? ""),
    },
    {
      prAuthor: pr.data.user?.login ?? "",
      botLogins: [],
      currentHashes: current.map((c) => c.hash),
    },
  );
  if (!verdict) return {};
  const currentList =
    current.map((c) => `- \`${c.path}\`: \`${c.hash}\``).join("\n") ||
    "- (no project could be planned)";
  if (!verdict.ok) {
    const mismatch = verdict.hash !== undefined && !current.some((c) => c.hash === verdict.hash);
    await reply(
      `❌ Not approved: ${verdict.reason}.${mismatch ? `\n\nYou approved: \`${verdict.hash}\`\nThe current head (${headSha.slice(0, 7)}) produces:\n${currentList}` : ""}`,
    );
    core.info(`terfyn: approval refused: ${verdict.reason}`);
    return {};
  }
  const permission = await repositoryPermission(client, ctx.repo, author);
  if (!meetsPermission(permission, settings.approvers)) {
    await reply(
      `❌ Not approved: @${author} has \`${permission}\` permission on this repository; approving needs \`${settings.approvers}\` or higher.`,
    );
    core.info(`terfyn: approval refused: ${author} has ${permission}`);
    return {};
  }
  const project = current.find((c) => c.hash === verdict.hash);
  try {
    await client.rest.repos.createCommitStatus({
      ...ctx.repo,
      sha: headSha,
      state: "success",
      context: "terfyn/approval",
      description: `Plan ${verdict.hash.slice(0, 19)}… approved by @${author}`.slice(0, 140),
    });
  } catch (e) {
    const message = describeApiError(e, "marking the approval on the head commit");
    await reply(`⚠️ The approval is valid, but ${message}.`);
    return { failed: message };
  }
  await reply(
    `✅ Approved by @${author}: the plan of \`${project?.path}\` at ${headSha.slice(0, 7)}, \`${verdict.hash}\`.\nA push that changes the plan needs a new approval.`,
  );
  core.setOutput("plan-hash", verdict.hash);
  return {};
}
