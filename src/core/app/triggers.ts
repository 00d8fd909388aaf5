/**
 * The App's decisions on webhook events, pure: whether a label starts a review run, what a
 * comment command asks, and the run's ledger kept in hidden markers of the App's own status
 * comment (so the webhook handler keeps no state: everything is reconstructed from the PR).
 *
 * Guards: the label counts only from a person (never a bot, never the App itself: the
 * self-trigger loop) whose repository role is write or higher (role_name through the API, never
 * `author_association`); a fork's pull request is declined (an installation token cannot push
 * there); one run per pull request and head at a time, so a redelivered webhook starts nothing.
 */
import {
  APPROVE_LINE,
  judgeApprovalComment,
  meetsPermission,
  type PermissionLevel,
  proseLines,
} from "../approvals/approval-comment.ts";

export const REVIEW_FIX_LABEL = "terfyn:review-fix";
/** The role a sender needs for the label to count. */
export const LABEL_ROLE: PermissionLevel = "write";

export interface LabelEvent {
  label: string;
  sender: { login: string; type: string };
  /** The App's own bot login (`<slug>[bot]`). */
  appLogin: string;
  /** The sender's repository role, looked up only when the cheaper checks pass. */
  role?: PermissionLevel;
  fork: boolean;
  head: string;
  /** The ledger of the run already on this pull request, if any. */
  current?: Ledger;
}

export type LabelDecision =
  | { action: "start" }
  | { action: "ignore"; reason: string }
  /** A run already on this head: start nothing, but let the runner find it again if it was interrupted. */
  | { action: "existing"; reason: string }
  | { action: "needs-role" }
  | { action: "decline"; reason: string };

export function decideLabel(e: LabelEvent): LabelDecision {
  if (e.label !== REVIEW_FIX_LABEL)
    return { action: "ignore", reason: `label ${e.label} is not ${REVIEW_FIX_LABEL}` };
  if (e.sender.login === e.appLogin)
    return { action: "ignore", reason: "the App labelled it itself" };
  if (e.sender.type === "Bot" || e.sender.login.endsWith("[bot]"))
    return {
      action: "ignore",
      reason: `${e.sender.login} is a bot; only people start review runs`,
    };
  if (e.current && !e.current.terminal && e.current.head === e.head)
    return {
      action: "existing",
      reason: `run ${e.current.run} is already working on ${e.head.slice(0, 12)}`,
    };
  if (e.role === undefined) return { action: "needs-role" };
  if (!meetsPermission(e.role, LABEL_ROLE))
    return {
      action: "decline",
      reason: `@${e.sender.login} has the ${e.role} role; starting a review run needs ${LABEL_ROLE} or higher`,
    };
  if (e.fork)
    return {
      action: "decline",
      reason:
        "this pull request comes from a fork: the App cannot push a fix to it, so it runs no review-fix",
    };
  return { action: "start" };
}

/** A command in a comment's prose (never in code, quotes or HTML comments). */
export type CommentCommand =
  | { kind: "approve"; hash: string }
  | { kind: "stop" }
  | { kind: "status" }
  | { kind: "resume" }
  | undefined;

export function parseCommentCommand(body: string): CommentCommand {
  for (const raw of proseLines(body)) {
    const line = raw.trim();
    const approve = APPROVE_LINE.exec(line);
    if (approve) return { kind: "approve", hash: approve[1] as string };
    if (/^\/terfyn[ \t]+stop$/.test(line)) return { kind: "stop" };
    if (/^\/terfyn[ \t]+status$/.test(line)) return { kind: "status" };
    if (/^\/terfyn[ \t]+resume$/.test(line)) return { kind: "resume" };
  }
  return undefined;
}

/** What the App records about a run, in its status comment. */
export interface Ledger {
  run: string;
  pull_request: number;
  head: string;
  phase: string;
  /** The gate the run waits at, and the artifact hash it awaits. */
  gate?: "plan" | "publish";
  hash?: string;
  /** When the gate began waiting (approvals older than this never count). */
  since?: string;
  terminal?: string;
  /**
   * The run stopped in `phase` from outside (the model's API did not answer): paused, not
   * ended; a writer's `/terfyn resume` goes on.
   */
  interrupted?: true;
  /**
   * With `placement: actions`, the commit at `refs/terfyn/runs/<run>` the run's files were last
   * saved as: the next job loads only that state.
   */
  state?: string;
}

const LEDGER = /<!-- terfyn:ledger ([A-Za-z0-9_-]+) -->/;

/** The hidden marker: base64url JSON, so no `-->` or Markdown inside can end it early. */
export function ledgerMarker(l: Ledger): string {
  return `<!-- terfyn:ledger ${Buffer.from(JSON.stringify(l), "utf8").toString("base64url")} -->`;
}

/** The ledger in a body, if it holds a well-formed one. Only call it on the App's own comments. */
export function parseLedger(body: string): Ledger | undefined {
  const m = LEDGER.exec(body);
  if (!m) return undefined;
  try {
    const v = JSON.parse(Buffer.from(m[1] as string, "base64url").toString("utf8")) as Ledger;
    if (
      typeof v.run !== "string" ||
      typeof v.pull_request !== "number" ||
      typeof v.head !== "string" ||
      !/^[0-9a-f]{40}$/.test(v.head) ||
      typeof v.phase !== "string" ||
      (v.hash !== undefined && !/^sha256:[0-9a-f]{64}$/.test(v.hash)) ||
      (v.gate !== undefined && v.gate !== "plan" && v.gate !== "publish") ||
      (v.interrupted !== undefined && v.interrupted !== true) ||
      (v.state !== undefined && (typeof v.state !== "string" || !/^[0-9a-f]{40}$/.test(v.state)))
    )
      return undefined;
    return v;
  } catch {
    return undefined;
  }
}

export interface PrComment {
  author: string;
  authorType: string;
  body: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * The approval of the gate a ledger awaits, reconstructed from the pull request's comments:
 * a person (not a bot, not the App, not the PR's author), an unedited comment posted after the
 * gate began, whose prose names exactly the awaited hash, and (checked by the caller through
 * the API) a role of write or higher. A push voids it: the ledger's head must be the PR's head.
 */
export function approvalCandidates(
  ledger: Ledger,
  comments: readonly PrComment[],
  ctx: { appLogin: string; prAuthor: string; currentHead: string },
): { login: string; hash: string }[] {
  if (!ledger.gate || !ledger.hash || ledger.terminal) return [];
  if (ledger.head !== ctx.currentHead) return [];
  const since = ledger.since ? Date.parse(ledger.since) : Number.NEGATIVE_INFINITY;
  const out: { login: string; hash: string }[] = [];
  for (const c of comments) {
    if (Date.parse(c.createdAt) < since) continue;
    // The same judgement as the Action's: a person, not the App, not the author, unedited.
    const verdict = judgeApprovalComment(
      {
        body: c.body,
        author: c.author,
        authorType: c.authorType,
        edited: c.updatedAt !== c.createdAt,
      },
      { prAuthor: ctx.prAuthor, botLogins: [ctx.appLogin], currentHashes: [ledger.hash] },
    );
    if (verdict?.ok) out.push({ login: c.author, hash: verdict.hash });
  }
  return out;
}
