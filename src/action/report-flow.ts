/**
 * Plans every selected project of an event and reports: job summary and outputs first (so the
 * plan is visible whatever happens with the API), then per project a check run and the sticky
 * comment, then one `terfyn/approval` commit status for the head. Decisions come from
 * core/ci/outcome.ts (each project's verdict) and core/ci/decisions.ts (approvals, status,
 * labels, comment, outputs, failure) and every text from core/render: this file only carries
 * them out through the gateway and @actions/core.
 */
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as core from "@actions/core";
import { describeApiError } from "../adapters/github/client.ts";
import type { GitHubGateway, IssueComment } from "../adapters/github/gateway.ts";
import {
  judgeApprovalComment,
  meetsPermission,
  parseApprovalComment,
} from "../core/approvals/approval-comment.ts";
import {
  type Changers,
  type CommitList,
  changersOf,
  nextPushRecord,
  type PushRecord,
  pushRecordLine,
  trustedPushRecord,
} from "../core/approvals/changers.ts";
import {
  anyWidened,
  approvalStatus,
  commentAction,
  failureMessage,
  firstApprovalPerHash,
  nextLabels,
  type SharedHeadPullRequest,
  sharedHeadFailing,
  sharedHeadStatus,
  stepOutputs,
  stickyMarker,
} from "../core/ci/decisions.ts";
import {
  type Approval,
  decideOutcome,
  outcomeHeadline,
  type ProjectOutcomeVerdict,
} from "../core/ci/outcome.ts";
import { repositoryFromGitHub } from "../core/plan/repository-identity.ts";
import {
  codeBlock,
  inlineCode,
  markdownText,
  plainText,
  showInvisible,
} from "../core/render/escape.ts";
import { capWorkflowAnnotations, projectAnnotations } from "../core/render/plan-annotations.ts";
import { planToJson } from "../core/render/plan-json.ts";
import { renderPlanText } from "../core/render/plan-text.ts";
import {
  CHECK_OUTPUT_BUDGET,
  COMMENT_BUDGET,
  JOB_SUMMARY_BUDGET,
  type ProjectReport,
  projectLabel,
  renderProjectReport,
} from "../core/render/pr-report.ts";
import {
  type ProjectOutcome,
  planProjectAt,
  planRemovedAt,
  projectErrorOutcome,
} from "./plan-revisions.ts";
import { accountProjects } from "./project-set.ts";
import type { Settings } from "./settings.ts";
import type { PlanTarget } from "./targets.ts";

export interface FlowResult {
  failed: string | undefined;
  outcomes: ProjectOutcome[];
  verdicts: ProjectOutcomeVerdict[];
}

export async function planTarget(
  repoRoot: string,
  target: PlanTarget,
  patterns: readonly string[],
): Promise<ProjectOutcome[]> {
  const entries = await accountProjects(repoRoot, target.current, target.prior, patterns);
  if (entries.length === 0) {
    throw new Error(
      `no Terfyn project (a directory with terfyn.yaml) in ${target.current.slice(0, 12)} matches input \`project\`: ${patterns.join(", ")}`,
    );
  }
  const planned = entries.filter((e) => e.kind === "plan").map((e) => e.path);
  core.info(
    `terfyn: planning ${planned.join(", ") || "no project"} at ${target.current.slice(0, 12)}${target.prior ? ` against ${target.prior.slice(0, 12)}` : " (no prior commit: everything is new)"}`,
  );
  // The repository the plans bind (hashed): the one this workflow runs in, as GitHub names it.
  const repository = repositoryFromGitHub(
    process.env.GITHUB_SERVER_URL,
    process.env.GITHUB_REPOSITORY,
  );
  const outcomes: ProjectOutcome[] = [];
  for (const e of entries) {
    if (e.kind === "error") {
      core.info(`terfyn: ${e.path}: ${e.diagnostic.message}`);
      outcomes.push(projectErrorOutcome(e.path, e.diagnostic));
    } else if (e.kind === "removed" && target.prior !== undefined) {
      core.info(
        `terfyn: ${e.path}: the base's project is ${e.movedTo ? `moved to ${e.movedTo}, which input \`project\` does not select` : "removed"}`,
      );
      outcomes.push(await planRemovedAt(repoRoot, e.path, target.prior, e.movedTo, repository));
    } else if (e.kind === "plan") {
      outcomes.push(
        await planProjectAt(
          repoRoot,
          e.path,
          target.current,
          target.prior,
          target.conflicts,
          e.priorPath,
          repository,
        ),
      );
    }
  }
  return outcomes;
}

/**
 * Who changed the pull request and may not approve it (core/approvals/changers.ts): its
 * commits' authors and committers read from the API now, the pusher from `pushers`. A list that
 * cannot be read completely makes them unknown, and then nothing approves.
 */
export async function readChangers(
  gateway: GitHubGateway,
  pr: { number: number; headSha: string; author: string; commits?: number },
  pushers: PushRecord | undefined,
): Promise<Changers> {
  let commits: CommitList;
  try {
    commits = { ok: true, commits: await gateway.listPullRequestCommits(pr.number) };
  } catch (e) {
    commits = { ok: false, error: describeApiError(e, "listing the pull request's commits") };
  }
  return changersOf({
    prAuthor: pr.author,
    headSha: pr.headSha,
    ...(pr.commits !== undefined ? { reportedCommits: pr.commits } : {}),
    commits,
    pushers,
  });
}

/**
 * readChangers with the pusher from the record Terfyn's own sticky comment keeps for this head
 * (a record in anyone else's comment is never trusted).
 */
export async function changersFromComments(
  gateway: GitHubGateway,
  pr: { number: number; headSha: string; author: string; commits?: number },
  comments: readonly IssueComment[],
): Promise<Changers> {
  return readChangers(
    gateway,
    pr,
    trustedPushRecord(comments, await gateway.identity(), pr.headSha),
  );
}

/**
 * Valid approvals among a pull request's comments (role checked through the API, cached).
 * `changers` is asked only when a comment holds an approval command, so a pull request without
 * approvals costs no extra call.
 */
export async function approvalsFrom(
  gateway: GitHubGateway,
  comments: readonly IssueComment[],
  ctx: {
    prAuthor: string;
    approvers: Settings["approvers"];
    currentHashes: readonly string[];
    changers: () => Promise<Changers>;
  },
): Promise<Approval[]> {
  const out: Approval[] = [];
  const commands = comments.filter((c) => parseApprovalComment(c.body)?.kind === "approve");
  if (commands.length === 0) return out;
  const changers = await ctx.changers();
  if (!changers.known) core.warning(`terfyn: no approval counts: ${changers.reason}`);
  for (const c of commands) {
    const verdict = judgeApprovalComment(
      {
        body: c.body,
        author: c.author,
        authorType: c.authorType,
        edited: c.updatedAt !== c.createdAt,
      },
      { prAuthor: ctx.prAuthor, botLogins: [], currentHashes: ctx.currentHashes, changers },
    );
    if (!verdict?.ok) {
      if (changers.known && verdict)
        core.info(`terfyn: @${c.author}'s approval does not count: ${verdict.reason}`);
      continue;
    }
    // The token's own comments never approve (a personal token is a "User"); looked up only
    // when a candidate exists, so a pull request without approvals costs no extra call.
    if (c.author === (await gateway.identity())) continue;
    let role: { level: string; name: string };
    try {
      role = await gateway.collaboratorRole(c.author);
    } catch (e) {
      core.warning(describeApiError(e, `checking ${c.author}'s role`));
      continue;
    }
    if (meetsPermission(role.level, ctx.approvers))
      out.push({ hash: verdict.hash, login: c.author, role: role.name });
  }
  return out;
}

function reportOf(
  o: ProjectOutcome,
  verdict: ProjectOutcomeVerdict,
  target: PlanTarget,
  settings: Settings,
  runUrl: string | undefined,
): ProjectReport {
  return {
    path: o.path,
    outcome: verdict,
    ...(o.plan ? { plan: o.plan } : {}),
    tests: o.tests,
    // With a plan, its violations are shown as the plan's; without one, the errors that stopped it.
    blocking: o.plan
      ? []
      : o.blocking.length > 0
        ? o.blocking
        : o.head.diagnostics.filter((d) => d.severity === "error"),
    sources: o.head.project.sources,
    ...(o.baseProblem ? { baseProblem: o.baseProblem } : {}),
    ...(o.movedFrom ? { movedFrom: o.movedFrom } : {}),
    ...(o.removed ? { removed: o.removed } : {}),
    conflicts: o.conflicts,
    revisions: target.revisions,
    ...(runUrl ? { runUrl } : {}),
    approvers: settings.approvers,
  };
}

export function workflowRunUrl(): string | undefined {
  const server = process.env.GITHUB_SERVER_URL;
  const repo = process.env.GITHUB_REPOSITORY;
  const id = process.env.GITHUB_RUN_ID;
  return server && repo && id ? `${server}/${repo}/actions/runs/${id}` : undefined;
}

export async function reportFlow(
  settings: Settings,
  target: PlanTarget,
  outcomes: ProjectOutcome[],
  gateway: GitHubGateway,
  options: {
    extraApprovals?: Approval[];
    /**
     * Whether approvals among the pull request's comments count (judge.ts): not in the
     * `pull_request` job when the base has no `.github/terfyn.yml`.
     */
    countsApprovals?: boolean;
    /**
     * Other open pull requests with the same head, judged (shared-head.ts); undefined when
     * they could not be listed. Absent when the target is no pull request.
     */
    sharedHead?: { others: SharedHeadPullRequest[] | undefined };
    changers?: Changers;
  } = {},
): Promise<FlowResult> {
  const runUrl = workflowRunUrl();
  const pr = target.pullRequest;

  let comments: IssueComment[] | undefined;
  let approvals: Approval[] = [...(options.extraApprovals ?? [])];
  let readOnly = false;
  // Who pushed the head: this event's sender (when it pushed) and the record Terfyn's own
  // sticky comment keeps for this head; written back into the sticky comment. Asked lazily: the
  // token's identity is usually known by then.
  let record: Promise<PushRecord | undefined> | undefined;
  const pushRecord = () =>
    (record ??= (async () =>
      pr
        ? nextPushRecord(
            trustedPushRecord(comments ?? [], await gateway.identity(), pr.headSha),
            pr.headSha,
            pr.pusher,
          )
        : undefined)());
  if (pr) {
    try {
      comments = await gateway.listIssueComments(pr.number);
      if (options.countsApprovals === false)
        core.info(
          "terfyn: approvals in this pull request's comments are not counted by this job (the base has no .github/terfyn.yml); the issue_comment job counts each new one",
        );
      else
        approvals.push(
          ...(await approvalsFrom(gateway, comments, {
            prAuthor: pr.author,
            approvers: settings.approvers,
            currentHashes: outcomes.flatMap((o) => (o.plan ? [o.plan.hash] : [])),
            changers: async () =>
              options.changers ?? (await readChangers(gateway, pr, await pushRecord())),
          })),
        );
    } catch (e) {
      readOnly = true;
      core.warning(describeApiError(e, "reading the pull request's comments"));
    }
  }
  approvals = firstApprovalPerHash(approvals);
  const verdicts = outcomes.map((o) => decideOutcome(o, settings.failOn, approvals));
  const reports = outcomes.map((o, i) => reportOf(o, verdicts[i]!, target, settings, runUrl));

  // Summary and outputs first: whatever happens with the API, the plan is visible.
  const planFile = writePlanFile(outcomes);
  await writeSummary(reports, planFile);
  setOutputs(outcomes, verdicts, planFile);

  const commentUrls: string[] = [];
  const checkIds: string[] = [];
  for (const [i, o] of outcomes.entries()) {
    const report = reports[i]!;
    const annotations = projectAnnotations({
      path: o.path,
      blocking: report.blocking,
      tests: o.tests,
      ...(o.plan ? { plan: o.plan } : {}),
    });
    let annotated = false;
    if (settings.annotations && !readOnly) {
      try {
        const others = options.sharedHead?.others;
        const id = await createCheckRun(gateway, target, report, annotations, runUrl, {
          failing: sharedHeadFailing(o.path, verdicts[i]!, others),
          others: (others ?? []).flatMap((p) => {
            const at = p.paths.indexOf(o.path);
            return at < 0 ? [] : [{ number: p.number, base: p.base, verdict: p.verdicts[at]! }];
          }),
        });
        checkIds.push(String(id));
        annotated = true;
      } catch (e) {
        readOnly = true;
        core.warning(
          `${describeApiError(e, `creating the check run for ${o.path}`)}; annotating through workflow commands instead`,
        );
      }
    }
    if (pr && comments && settings.comment !== "never" && !readOnly) {
      try {
        const url = await upsertComment(
          gateway,
          pr.number,
          report,
          comments,
          settings.comment,
          await pushRecord(),
        );
        if (url) commentUrls.push(url);
      } catch (e) {
        readOnly = true;
        core.warning(
          `${describeApiError(e, `commenting the plan of ${o.path}`)}; the plan is in the job summary`,
        );
      }
    }
    if (settings.annotations && !annotated) emitWorkflowAnnotations(annotations);
  }
  if (target.revisions.event !== "push" && !readOnly) {
    await setApprovalStatus(gateway, target, outcomes, verdicts, runUrl, options.sharedHead);
  }
  if (pr && settings.labels && !readOnly) await syncLabels(gateway, pr, verdicts, outcomes);
  core.setOutput("comment-url", commentUrls.join("\n"));
  core.setOutput("check-run-id", checkIds.join(","));
  return {
    failed: failureMessage(
      outcomes.map((o) => o.path),
      verdicts,
    ),
    outcomes,
    verdicts,
  };
}

async function createCheckRun(
  gateway: GitHubGateway,
  target: PlanTarget,
  report: ProjectReport,
  annotations: ReturnType<typeof projectAnnotations>,
  runUrl: string | undefined,
  shared: {
    failing: boolean;
    others: { number: number; base: string; verdict: ProjectOutcomeVerdict }[];
  },
): Promise<number> {
  const h = outcomeHeadline(report.outcome);
  // The check run is the commit's: every pull request with this head shows it.
  const alsoFor = shared.others
    .map(
      (p) =>
        `> This commit is also the head of #${p.number} (into ${inlineCode(p.base)}): ${markdownText(outcomeHeadline(p.verdict).text)}.\n`,
    )
    .join("");
  const text = report.plan ? renderPlanText(report.plan, { priorName: "the base" }) : "";
  const created = await gateway.createCheckRun({
    name: `terfyn: ${plainText(projectLabel(report.path))}`,
    headSha: target.statusSha,
    conclusion: shared.failing ? "failure" : "success",
    ...(runUrl ? { detailsUrl: runUrl } : {}),
    externalId: report.plan?.hash ?? "",
    output: {
      title: plainText(`${projectLabel(report.path)}: ${h.text}`).slice(0, 250),
      summary: `${alsoFor ? `${alsoFor}\n` : ""}${renderProjectReport(report, {
        budget: CHECK_OUTPUT_BUDGET - alsoFor.length - 1,
        fullPlanAt: "the full plan is in the job summary and the plan-json-file output",
      })}`,
      ...(text ? { text: clipText(text, CHECK_OUTPUT_BUDGET) } : {}),
    },
    annotations,
  });
  return created.id;
}

/**
 * Plain text as a code block within `limit` characters, cut at a line with a note. The check
 * run's text is Markdown: the fence is longer than any run of backticks a line of the text
 * starts with (so none closes it), and the text's invisible characters are shown (escape.ts).
 */
export function clipText(s: string, limit: number): string {
  const shown = showInvisible(s, "\n\t");
  const wrapped = `${codeBlock(shown, "text", { minFence: 4 })}\n`;
  if (wrapped.length <= limit) return wrapped;
  const note =
    "\n… (truncated; the full plan is in the job summary and the plan-json-file output)\n";
  const fence = wrapped.indexOf("text\n");
  const kept = shown.slice(0, limit - note.length - 2 * fence - 20).replace(/\n[^\n]*$/, "");
  return `${codeBlock(`${kept}${note}`, "text", { minFence: fence })}\n`;
}

async function upsertComment(
  gateway: GitHubGateway,
  issue: number,
  report: ProjectReport,
  comments: readonly IssueComment[],
  mode: "changes" | "always",
  pushed: PushRecord | undefined,
): Promise<string | undefined> {
  const marker = stickyMarker(report.path);
  const rendered = renderProjectReport(report, {
    budget: COMMENT_BUDGET - 100,
    marker,
    fullPlanAt: "the full plan is in the workflow run's job summary",
  });
  // The hidden last line the issue_comment job trusts (core/approvals/changers.ts).
  const body = pushed ? `${rendered}${pushRecordLine(pushed)}\n` : rendered;
  const action = commentAction({
    mode,
    verdict: report.outcome.verdict,
    hasChanges: report.plan?.summary.has_changes,
    comments,
    me: await gateway.identity(),
    marker,
    body,
  });
  switch (action.kind) {
    case "unchanged":
      return action.url;
    case "update":
      return (await gateway.updateIssueComment(action.id, body)).url;
    case "skip":
      core.info(`terfyn: ${report.path}: nothing changed; no comment (input comment: changes)`);
      return undefined;
    case "create":
      return (await gateway.createIssueComment(issue, body)).url;
  }
}

/** One status for the head: pending while an approval is needed, success when none is. */
async function setApprovalStatus(
  gateway: GitHubGateway,
  target: PlanTarget,
  outcomes: readonly ProjectOutcome[],
  verdicts: readonly ProjectOutcomeVerdict[],
  runUrl: string | undefined,
  sharedHead: { others: SharedHeadPullRequest[] | undefined } | undefined,
): Promise<void> {
  const own = approvalStatus(
    outcomes.map((o) => o.path),
    verdicts,
  );
  const status =
    sharedHead && target.pullRequest
      ? sharedHeadStatus({ number: target.pullRequest.number, status: own }, sharedHead.others)
      : own;
  try {
    await gateway.setCommitStatus({
      sha: target.statusSha,
      context: "terfyn/approval",
      ...status,
      ...(runUrl ? { targetUrl: runUrl } : {}),
    });
  } catch (e) {
    core.warning(describeApiError(e, "setting the terfyn/approval commit status"));
  }
}

async function syncLabels(
  gateway: GitHubGateway,
  pr: NonNullable<PlanTarget["pullRequest"]>,
  verdicts: readonly ProjectOutcomeVerdict[],
  outcomes: readonly ProjectOutcome[],
): Promise<void> {
  const next = nextLabels(pr.labels, verdicts, anyWidened(outcomes));
  if (!next.changed) return;
  try {
    // setLabels replaces the set: the pull request's other labels are kept as the event saw them.
    await gateway.setLabels(pr.number, next.labels);
  } catch (e) {
    core.warning(describeApiError(e, "labelling the pull request"));
  }
}

/** Annotations through workflow commands: they need no token, so they work on forks. */
function emitWorkflowAnnotations(annotations: ReturnType<typeof projectAnnotations>): void {
  const { shown, omitted } = capWorkflowAnnotations(annotations);
  for (const a of shown) {
    const props = { file: a.path, startLine: a.start_line, endLine: a.end_line, title: a.title };
    if (a.annotation_level === "failure") core.error(a.message, props);
    else if (a.annotation_level === "warning") core.warning(a.message, props);
    else core.notice(a.message, props);
  }
  if (omitted > 0)
    core.notice(
      `${omitted} more annotations are not shown (GitHub shows 10 per level per step); the job summary and the plan-json-file output have the full plan`,
    );
}

function writePlanFile(outcomes: readonly ProjectOutcome[]): string {
  const dir = process.env.RUNNER_TEMP || tmpdir();
  const file = join(dir, `terfyn-plan-${process.env.GITHUB_RUN_ID ?? "local"}-${process.pid}.json`);
  const plans = outcomes.map((o) => ({
    project: o.path,
    plan: o.plan ? planToJson(o.plan) : null,
    errors: o.plan ? [] : o.head.diagnostics.filter((d) => d.severity === "error"),
  }));
  writeFileSync(file, `${JSON.stringify(plans.length === 1 ? plans[0] : plans, null, 2)}\n`);
  return file;
}

async function writeSummary(reports: readonly ProjectReport[], planFile: string): Promise<void> {
  const each = Math.floor((JOB_SUMMARY_BUDGET - 2_000) / Math.max(1, reports.length));
  const parts = reports.map((r) =>
    renderProjectReport(r, {
      budget: each,
      fullPlanAt: `the full plan JSON is the file in the plan-json-file output (${planFile}); upload it with actions/upload-artifact`,
    }),
  );
  try {
    await core.summary.addRaw(parts.join("\n\n")).write({ overwrite: false });
  } catch (e) {
    core.warning(`cannot write the job summary: ${(e as Error).message}`);
  }
}

function setOutputs(
  outcomes: readonly ProjectOutcome[],
  verdicts: readonly ProjectOutcomeVerdict[],
  planFile: string,
): void {
  const { outputs, warning } = stepOutputs(outcomes, verdicts, planFile);
  for (const [name, value] of Object.entries(outputs)) {
    core.setOutput(name, value);
    // Right after the empty plan-json, as the reason for it.
    if (name === "plan-json" && warning) core.warning(warning);
  }
}
