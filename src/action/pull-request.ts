/**
 * The pull-request flow: plan each project's head against the PR base, run its capability
 * tests, and report in a sticky comment, a check run with annotations, the job summary and the
 * step outputs. A failure to comment or annotate never hides the plan: the summary and outputs
 * are written first. Decides pass/fail by `fail-on`.
 */
import * as core from "@actions/core";
import { createCheckRun } from "../adapters/github/check-run.ts";
import { describeApiError, type GitHubClient } from "../adapters/github/client.ts";
import {
  type IssueComment,
  listIssueComments,
  upsertStickyComment,
} from "../adapters/github/sticky-comment.ts";
import {
  judgeApprovalComment,
  meetsPermission,
  type PermissionLevel,
} from "../core/approvals/approval-comment.ts";
import { sha256 } from "../core/plan/canonical-hash.ts";
import { renderDiagnosticsText } from "../core/render/diagnostics-text.ts";
import { type Annotation, renderPlanAnnotations } from "../core/render/plan-annotations.ts";
import { planToJson } from "../core/render/plan-json.ts";
import { planVerdict, renderPlanMarkdown } from "../core/render/plan-markdown.ts";
import { renderPlanText } from "../core/render/plan-text.ts";
import { plural } from "../core/words.ts";
import { type ProjectOutcome, planProjectAt, selectProjects } from "./plan-revisions.ts";
import type { Settings } from "./settings.ts";

export interface PullRequestContext {
  repo: { owner: string; repo: string };
  number: number;
  headSha: string;
  baseSha: string;
  author: string;
  repoRoot: string;
}

export interface FlowResult {
  failed: string | undefined;
  outcomes: ProjectOutcome[];
}

export async function pullRequestFlow(
  settings: Settings,
  pr: PullRequestContext,
  client: GitHubClient,
): Promise<FlowResult> {
  const paths = await selectProjects(pr.repoRoot, pr.headSha, settings.projects);
  if (paths.length === 0) {
    throw new Error(
      `no Terfyn project (a directory with terfyn.yaml) at ${pr.headSha.slice(0, 7)} matches input \`project\`: ${settings.projects.join(", ")}`,
    );
  }
  core.info(
    `terfyn: planning ${paths.join(", ")} at ${pr.headSha.slice(0, 7)} against base ${pr.baseSha.slice(0, 7)}`,
  );
  const outcomes: ProjectOutcome[] = [];
  for (const path of paths)
    outcomes.push(await planProjectAt(pr.repoRoot, path, pr.headSha, pr.baseSha));

  // Summary and outputs first: whatever happens with the API, the plan is visible.
  await writeSummary(outcomes);
  setOutputs(outcomes);

  let comments: IssueComment[] | undefined;
  let commentsError: string | undefined;
  try {
    comments = await listIssueComments(client, pr.repo, pr.number);
  } catch (e) {
    commentsError = describeApiError(e, "reading the pull request's comments");
    core.warning(commentsError);
  }
  const approved = comments
    ? await approvedHashes(client, pr, settings.approvers, comments, outcomes)
    : new Set<string>();

  const failures: string[] = [];
  for (const o of outcomes) {
    const reason = failureReason(o, settings.failOn, approved);
    if (reason) failures.push(`${o.path}: ${reason}`);
    const annotations = annotationsFor(o);
    let readOnly = false;
    if (settings.comment && comments) {
      try {
        const body = commentBody(o, approved, reason);
        const r = await upsertStickyComment(client, pr.repo, pr.number, o.path, body, comments);
        core.info(`terfyn: ${o.path}: comment ${r.action}`);
      } catch (e) {
        readOnly = true;
        core.warning(
          `${describeApiError(e, `commenting the plan of ${o.path}`)}; the plan is in the job summary and annotations`,
        );
      }
    } else if (settings.comment && commentsError) {
      readOnly = true;
    }
    if (settings.annotations) {
      try {
        await createCheckRun(client, pr.repo, {
          name: `terfyn: ${o.path}`,
          headSha: pr.headSha,
          conclusion: reason ? "failure" : "success",
          title: checkTitle(o, reason),
          summary: commentBody(o, approved, reason),
          text: o.plan
            ? `\`\`\`text\n${renderPlanText(o.plan, { priorName: "the base" })}\`\`\``
            : "",
          annotations,
        });
      } catch (e) {
        readOnly = true;
        core.warning(
          `${describeApiError(e, `creating the check run for ${o.path}`)}; annotating through workflow commands instead`,
        );
      }
    }
    if (readOnly && settings.annotations) emitWorkflowAnnotations(annotations);
  }
  return { failed: failures.length > 0 ? failures.join("; ") : undefined, outcomes };
}

/** Plan hashes approved by a valid `/terfyn approve` comment (permission checked with the API). */
async function approvedHashes(
  client: GitHubClient,
  pr: PullRequestContext,
  required: PermissionLevel,
  comments: readonly IssueComment[],
  outcomes: readonly ProjectOutcome[],
): Promise<Set<string>> {
  const current = outcomes.flatMap((o) => (o.plan ? [o.plan.hash] : []));
  const out = new Set<string>();
  const permissions = new Map<string, string>();
  for (const c of comments) {
    const verdict = judgeApprovalComment(
      {
        body: c.body,
        author: c.author,
        authorType: c.authorType,
        edited: c.updatedAt !== c.createdAt,
      },
      { prAuthor: pr.author, botLogins: [], currentHashes: current },
    );
    if (!verdict?.ok) continue;
    let permission = permissions.get(c.author);
    if (permission === undefined) {
      permission = await repositoryPermission(client, pr.repo, c.author);
      permissions.set(c.author, permission);
    }
    if (meetsPermission(permission, required)) out.add(verdict.hash);
  }
  return out;
}

export async function repositoryPermission(
  client: GitHubClient,
  repo: { owner: string; repo: string },
  username: string,
): Promise<string> {
  try {
    const r = await client.rest.repos.getCollaboratorPermissionLevel({ ...repo, username });
    return r.data.permission;
  } catch (e) {
    core.warning(describeApiError(e, `checking ${username}'s permission`));
    return "none";
  }
}

export function failureReason(
  o: ProjectOutcome,
  failOn: Settings["failOn"],
  approved: ReadonlySet<string>,
): string | undefined {
  if (!o.plan) return plural(o.blocking.length, "validation error");
  if (o.tests.failed > 0) return `${plural(o.tests.failed, "capability test")} failed`;
  if (o.plan.summary.forbidden)
    return `forbidden effect: ${o.plan.policy_violations[0]?.message.replace(/`/g, "")}`;
  if (
    failOn === "widening" &&
    o.plan.authority.autonomous === "WIDENED" &&
    !approved.has(o.plan.hash)
  ) {
    return `autonomous authority WIDENED and not approved (comment \`/terfyn approve ${o.plan.hash}\`)`;
  }
  if (failOn === "any-change" && o.plan.summary.has_changes && !approved.has(o.plan.hash))
    return "the plan has changes and is not approved";
  return undefined;
}

function checkTitle(o: ProjectOutcome, reason: string | undefined): string {
  if (!o.plan) return "Terfyn: the project does not validate";
  const v = planVerdict(o.plan);
  return `Terfyn: ${v.text}${reason ? ` — ${reason}` : ""}`.slice(0, 200);
}

export function commentBody(
  o: ProjectOutcome,
  approved: ReadonlySet<string>,
  reason: string | undefined,
): string {
  if (!o.plan) {
    const text = renderDiagnosticsText(o.blocking, {
      sources: o.head.project.sources,
      displayPath: (f) => (o.path === "." ? f : `${o.path}/${f}`),
    });
    return `### ⛔ Terfyn: \`${o.path}\` does not validate\n\n\`\`\`text\n${text.slice(0, 50_000)}\n\`\`\`\n`;
  }
  const failing = o.tests.results.filter((r) => !r.passed);
  const tests =
    o.tests.results.length === 0
      ? ""
      : `\n**Capability tests:** ${o.tests.passed} passed, ${o.tests.failed} failed${failing.map((f) => `\n- ❌ ${f.test}: \`${f.text}\`: ${f.reason}`).join("")}\n`;
  const approval = approved.has(o.plan.hash)
    ? `\n✅ Approved: \`${o.plan.hash}\`\n`
    : o.plan.summary.widened && !o.plan.summary.forbidden
      ? `\nTo approve this plan, a maintainer comments:\n\n\`\`\`\n/terfyn approve ${o.plan.hash}\n\`\`\`\n`
      : "";
  const verdict = reason ? `\n**Result:** ❌ ${reason}\n` : "";
  if (
    !o.plan.summary.has_changes &&
    o.plan.policy_violations.length === 0 &&
    o.tests.failed === 0
  ) {
    return `### ✅ Terfyn plan for \`${o.path}\`: no changes\n\nNo authority changed. Plan \`${o.plan.hash}\`.\n${tests}`;
  }
  return renderPlanMarkdown(o.plan, {
    projectPath: o.path,
    budget: 55_000,
    footer: `${verdict}${tests}${approval}`.trim(),
    priorName: "the base",
  });
}

function annotationsFor(o: ProjectOutcome): Annotation[] {
  const prefix = o.path === "." ? "" : `${o.path}/`;
  const out: Annotation[] = [];
  for (const d of o.blocking) {
    out.push({
      path: `${prefix}${d.span.file}`,
      start_line: d.span.line,
      end_line: d.span.endLine,
      annotation_level: "failure",
      title: `${d.code}`,
      message: d.message,
    });
  }
  for (const r of o.tests.results.filter((t) => !t.passed && t.culprit)) {
    const c = r.culprit!;
    out.push({
      path: `${prefix}${c.file}`,
      start_line: c.line,
      end_line: c.endLine,
      annotation_level: "failure",
      title: `Capability test failed: ${r.kind}`,
      message: `${r.text}: ${r.reason}`,
    });
  }
  if (o.plan) out.push(...renderPlanAnnotations(o.plan, { pathPrefix: prefix }));
  const rank = { failure: 0, warning: 1, notice: 2 };
  return out.sort((a, b) => rank[a.annotation_level] - rank[b.annotation_level]);
}

/** Annotations through workflow commands: they need no token, so they work on forks. */
function emitWorkflowAnnotations(annotations: readonly Annotation[]): void {
  for (const a of annotations) {
    const props = { file: a.path, startLine: a.start_line, endLine: a.end_line, title: a.title };
    if (a.annotation_level === "failure") core.error(a.message, props);
    else if (a.annotation_level === "warning") core.warning(a.message, props);
    else core.notice(a.message, props);
  }
}

async function writeSummary(outcomes: readonly ProjectOutcome[]): Promise<void> {
  const parts: string[] = [];
  for (const o of outcomes) {
    if (!o.plan) {
      parts.push(commentBody(o, new Set(), "validation errors"));
      continue;
    }
    const v = planVerdict(o.plan);
    parts.push(
      `## ${v.icon} Terfyn plan for \`${o.path}\`: ${v.text}\n\n\`\`\`text\n${renderPlanText(o.plan, { priorName: "the base" })}\`\`\`\n`,
    );
  }
  try {
    await core.summary.addRaw(parts.join("\n")).write();
  } catch (e) {
    core.warning(`cannot write the job summary: ${(e as Error).message}`);
  }
}

function setOutputs(outcomes: readonly ProjectOutcome[]): void {
  const plans = outcomes.flatMap((o) => (o.plan ? [planToJson(o.plan)] : []));
  const hashes = outcomes.map((o) => o.plan?.hash ?? "");
  core.setOutput(
    "plan-hash",
    outcomes.length === 1
      ? hashes[0]
      : sha256(outcomes.map((o, i) => ({ project: o.path, hash: hashes[i] }))),
  );
  core.setOutput("widened", String(outcomes.some((o) => o.plan?.summary.widened)));
  core.setOutput(
    "forbidden",
    String(outcomes.some((o) => o.plan?.summary.forbidden || o.tests.failed > 0)),
  );
  core.setOutput("plan-json", JSON.stringify(outcomes.length === 1 ? (plans[0] ?? null) : plans));
}
