/**
 * The Action's decisions besides each project's verdict (outcome.ts): which approvals count,
 * the `terfyn/approval` commit status, the pull request's labels, whether the sticky comment is
 * updated, created or left alone, the step outputs and the failure message. Pure functions of
 * the outcomes, the verdicts and what the pull request already holds; src/action/report-flow.ts
 * carries them out at the edge and decides nothing itself.
 */
import { sha256 } from "../plan/canonical-hash.ts";
import type { Plan } from "../plan/plan.ts";
import { plainText } from "../render/escape.ts";
import { planToJson } from "../render/plan-json.ts";
import { projectLabel } from "../render/pr-report.ts";
import type { Approval, ProjectOutcomeVerdict, Verdict } from "./outcome.ts";

/** What these decisions read of a project's outcome (src/action's ProjectOutcome is one). */
export interface PlannedProject {
  /** Relative to the repository root; "." for the root. */
  path: string;
  /** Undefined when the project could not be planned. */
  plan?: Plan;
  tests: { failed: number };
}

/** How every sticky comment's hidden marker starts. */
export const STICKY_PREFIX = "<!-- terfyn:plan project=";

/** The sticky comment's hidden marker: one per project. */
export function stickyMarker(projectPath: string): string {
  return `${STICKY_PREFIX}${encodeURIComponent(projectPath)} -->`;
}

/** One approval per plan hash, the first given (the extra approvals come before the comments'). */
export function firstApprovalPerHash(approvals: readonly Approval[]): Approval[] {
  return approvals.filter((a, i) => approvals.findIndex((b) => b.hash === a.hash) === i);
}

export interface ApprovalStatus {
  state: "failure" | "pending" | "success";
  description: string;
}

/**
 * The head's one `terfyn/approval` status: failure while any project is blocked (no approval
 * changes that), pending while any needs an approval, success otherwise. `paths[i]` is the
 * project `verdicts[i]` judges.
 */
export function approvalStatus(
  paths: readonly string[],
  verdicts: readonly ProjectOutcomeVerdict[],
): ApprovalStatus {
  const withVerdict = (v: Verdict) => paths.filter((_p, i) => verdicts[i]!.verdict === v);
  const blocked = withVerdict("blocked");
  const waiting = withVerdict("needs-approval");
  const approved = verdicts.filter((v) => v.verdict === "approved");
  const names = (list: readonly string[]) => plainText(list.map((p) => projectLabel(p)).join(", "));
  if (blocked.length > 0) return { state: "failure", description: `blocked: ${names(blocked)}` };
  if (waiting.length > 0)
    return { state: "pending", description: `needs /terfyn approve: ${names(waiting)}` };
  return {
    state: "success",
    description:
      approved.length > 0
        ? `approved by ${approved.map((v) => `@${v.approval?.login}`).join(", ")}`
        : "no approval needed",
  };
}

/** True when any project's plan widens authority (or relaxes a guard). */
export function anyWidened(projects: readonly PlannedProject[]): boolean {
  return projects.some((p) => p.plan?.summary.widened);
}

/** The labels Terfyn sets and removes; every other label of the pull request is left alone. */
export const TERFYN_LABELS: readonly string[] = ["terfyn:widened", "terfyn:forbidden"];

/**
 * The pull request's next label set: its labels other than Terfyn's, then `terfyn:widened` when
 * a plan widens and `terfyn:forbidden` when a project is blocked by a forbidden effect or a
 * failing capability test. `changed` is false when the set is the one it has (then no call).
 */
export function nextLabels(
  current: readonly string[],
  verdicts: readonly ProjectOutcomeVerdict[],
  widened: boolean,
): { labels: string[]; changed: boolean } {
  const want = new Set<string>();
  if (widened) want.add("terfyn:widened");
  if (
    verdicts.some((v) => v.verdict === "blocked" && v.counts.forbidden + v.counts.failedTests > 0)
  )
    want.add("terfyn:forbidden");
  const labels = [...current.filter((l) => !TERFYN_LABELS.includes(l)), ...want];
  const same = labels.length === current.length && labels.every((l) => current.includes(l));
  return { labels, changed: !same };
}

/** What the sticky comment needs of a pull request's comment. */
export interface ExistingComment {
  id: number;
  body: string;
  author: string;
  url: string;
}

export type CommentAction =
  | { kind: "update"; id: number }
  | { kind: "unchanged"; url: string }
  | { kind: "create" }
  | { kind: "skip" };

/**
 * What to do with a project's sticky comment. Ours is the comment that starts with the marker
 * AND is authored by our identity: a comment someone else planted with our marker is never
 * edited (and never trusted). Ours is kept current whatever the mode; a new one is written with
 * `comment: always`, or with `comment: changes` when the plan is not plain "no authority
 * change" or has changes (or there is no plan).
 */
export function commentAction(input: {
  mode: "changes" | "always";
  verdict: Verdict;
  /** The plan's `summary.has_changes`; undefined without a plan. */
  hasChanges: boolean | undefined;
  comments: readonly ExistingComment[];
  /** The login the token comments as; undefined when unknown (then no comment is ours). */
  me: string | undefined;
  marker: string;
  /** The comment as it would be written now. */
  body: string;
}): CommentAction {
  const mine = input.comments.find((c) => c.body.startsWith(input.marker) && c.author === input.me);
  if (mine) {
    if (mine.body === input.body) return { kind: "unchanged", url: mine.url };
    return { kind: "update", id: mine.id };
  }
  const worthSaying =
    input.mode === "always" ||
    input.verdict !== "no-authority-change" ||
    (input.hasChanges ?? true);
  return worthSaying ? { kind: "create" } : { kind: "skip" };
}

/** GitHub caps a step output; above this `plan-json` is left empty and the file is the plan. */
export const OUTPUT_LIMIT = 1_000_000;

/**
 * The step outputs besides `comment-url` and `check-run-id` (which the API calls give), in the
 * order they are set, and the warning to give when the plan JSON is over the output limit.
 */
export function stepOutputs(
  projects: readonly PlannedProject[],
  verdicts: readonly ProjectOutcomeVerdict[],
  planFile: string,
): { outputs: Record<string, string>; warning?: string } {
  const plans = projects.flatMap((p) => (p.plan ? [planToJson(p.plan)] : []));
  const hashes = projects.map((p) => p.plan?.hash ?? "");
  const json = JSON.stringify(projects.length === 1 ? (plans[0] ?? null) : plans);
  const fits = json.length <= OUTPUT_LIMIT;
  const outputs: Record<string, string> = {
    "plan-hash":
      projects.length === 1
        ? (hashes[0] ?? "")
        : sha256(projects.map((p, i) => ({ project: p.path, hash: hashes[i] }))),
    widened: String(anyWidened(projects)),
    forbidden: String(projects.some((p) => p.plan?.summary.forbidden || p.tests.failed > 0)),
    "has-changes": String(projects.some((p) => p.plan?.summary.has_changes)),
    approved: String(
      verdicts.some((v) => v.verdict === "approved") &&
        !verdicts.some((v) => v.verdict === "needs-approval" || v.verdict === "blocked"),
    ),
    "plan-json": fits ? json : "",
    "plan-json-file": planFile,
  };
  if (fits) return { outputs };
  return {
    outputs,
    warning: `the plan JSON is ${json.length} characters, over the 1 MB output limit; plan-json is empty and the plan is in the file named by plan-json-file`,
  };
}

/** Why CI fails: each failing project and its reasons, or undefined when none fails. */
export function failureMessage(
  paths: readonly string[],
  verdicts: readonly ProjectOutcomeVerdict[],
): string | undefined {
  const failures = paths.flatMap((p, i) => {
    const v = verdicts[i]!;
    return v.failing ? [plainText(`${p}: ${v.reasons.join("; ")}`)] : [];
  });
  return failures.length > 0 ? failures.join("; ") : undefined;
}

/** Another open pull request whose head is this commit, judged as its own job would judge it. */
export interface SharedHeadPullRequest {
  number: number;
  /** Its base branch's name. */
  base: string;
  paths: readonly string[];
  verdicts: readonly ProjectOutcomeVerdict[];
}

const STATE_ORDER: readonly ApprovalStatus["state"][] = ["success", "pending", "failure"];
/** GitHub keeps a commit status's description to 140 characters. */
const STATUS_DESCRIPTION_LIMIT = 140;

/**
 * The head commit's `terfyn/approval` when other open pull requests share it: a status and a
 * check run belong to the commit, so every pull request with that head shows them. Success
 * only when each of them is acceptable; otherwise the worst state, and the description names
 * each pull request that is not. `others` undefined means they could not be listed: success
 * cannot be shown then (pending, saying why).
 */
export function sharedHeadStatus(
  own: { number: number; status: ApprovalStatus },
  others: readonly SharedHeadPullRequest[] | undefined,
): ApprovalStatus {
  if (others === undefined)
    return own.status.state === "success"
      ? {
          state: "pending",
          description: "cannot list the other pull requests with this head; re-run the job",
        }
      : own.status;
  if (others.length === 0) return own.status;
  const all = [
    { number: own.number, status: own.status },
    ...others.map((o) => ({
      number: o.number,
      base: o.base,
      status: approvalStatus(o.paths, o.verdicts),
    })),
  ];
  const worst = all.reduce(
    (w, p) => (STATE_ORDER.indexOf(p.status.state) > STATE_ORDER.indexOf(w) ? p.status.state : w),
    "success" as ApprovalStatus["state"],
  );
  const shown = worst === "success" ? all : all.filter((p) => p.status.state !== "success");
  const description = plainText(
    shown
      .map((p) => `#${p.number}${"base" in p ? ` (into ${p.base})` : ""}: ${p.status.description}`)
      .join("; "),
  );
  return {
    state: worst,
    description:
      description.length <= STATUS_DESCRIPTION_LIMIT
        ? description
        : `${description.slice(0, STATUS_DESCRIPTION_LIMIT - 1)}…`,
  };
}

/**
 * Whether a project's check run on a shared head fails: when this pull request's verdict for
 * it fails, or any other pull request's verdict for the same project does.
 */
export function sharedHeadFailing(
  path: string,
  own: ProjectOutcomeVerdict,
  others: readonly SharedHeadPullRequest[] | undefined,
): boolean {
  if (own.failing) return true;
  return (others ?? []).some((o) => o.paths.some((p, i) => p === path && o.verdicts[i]?.failing));
}
