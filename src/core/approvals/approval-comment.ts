/**
 * Approval comments: `/terfyn approve sha256:…` on its own line. Quoted lines (`> …`) and code
 * never count, so quoting someone's approval in a reply cannot approve anything. Pure.
 */

const APPROVE = /^\/terfyn\s+approve\s+(sha256:[0-9a-f]{64})\s*$/;
const APPROVE_LOOSE = /^\/terfyn\s+approve\b\s*(\S*)/;

export type ApprovalCommand =
  | { kind: "approve"; hash: string }
  | { kind: "malformed"; text: string }
  | undefined;

/** The approval command in a comment body, if it has one outside quotes and code blocks. */
export function parseApprovalComment(body: string): ApprovalCommand {
  let inFence = false;
  for (const raw of body.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.startsWith("```") || line.startsWith("~~~")) {
      inFence = !inFence;
      continue;
    }
    if (inFence || line.startsWith(">")) continue;
    const exact = APPROVE.exec(line);
    if (exact) return { kind: "approve", hash: exact[1] as string };
    const loose = APPROVE_LOOSE.exec(line);
    if (loose) return { kind: "malformed", text: line.slice(0, 200) };
  }
  return undefined;
}

/** GitHub's repository permission levels, weakest first. */
export const PERMISSION_LEVELS = ["none", "read", "triage", "write", "maintain", "admin"] as const;
export type PermissionLevel = (typeof PERMISSION_LEVELS)[number];

export function meetsPermission(actual: string, required: PermissionLevel): boolean {
  const a = PERMISSION_LEVELS.indexOf(actual as PermissionLevel);
  return a >= 0 && a >= PERMISSION_LEVELS.indexOf(required);
}

export interface CommentFacts {
  body: string;
  author: string;
  authorType: string;
  /** True when the comment was changed after it was posted. */
  edited: boolean;
}

export type ApprovalVerdict =
  | { ok: true; hash: string }
  | { ok: false; reason: string; hash?: string };

/**
 * Whether a comment approves `currentHash` (permission is checked separately, through the API).
 * Refusals say why, for the reply.
 */
export function judgeApprovalComment(
  c: CommentFacts,
  ctx: { prAuthor: string; botLogins: readonly string[]; currentHashes: readonly string[] },
): ApprovalVerdict | undefined {
  const command = parseApprovalComment(c.body);
  if (!command) return undefined;
  if (command.kind === "malformed") {
    return {
      ok: false,
      reason: "the approval must name a full plan hash: `/terfyn approve sha256:<64 hex digits>`",
    };
  }
  if (c.authorType === "Bot" || c.author.endsWith("[bot]") || ctx.botLogins.includes(c.author)) {
    return { ok: false, reason: "approvals from bots never count", hash: command.hash };
  }
  if (c.edited)
    return {
      ok: false,
      reason: "an edited comment never counts as an approval; post a new comment",
      hash: command.hash,
    };
  if (c.author === ctx.prAuthor) {
    return {
      ok: false,
      reason: "the pull request's author cannot approve its own plan",
      hash: command.hash,
    };
  }
  if (!ctx.currentHashes.includes(command.hash)) {
    return {
      ok: false,
      reason: "that is not the plan the current head produces",
      hash: command.hash,
    };
  }
  return { ok: true, hash: command.hash };
}
