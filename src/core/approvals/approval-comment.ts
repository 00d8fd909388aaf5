/**
 * Approval comments: `/terfyn approve sha256:…` as a line of its own in the comment's visible
 * prose. The body is parsed as CommonMark (mdast-util-from-markdown), not matched with regexes,
 * so a command inside a fenced or indented code block, a code span, a block quote, an HTML
 * block or an HTML comment never counts: quoting someone's approval, or hiding one in a comment
 * that renders as nothing, cannot approve anything. Pure.
 */
import type { Nodes, Parent, PhrasingContent } from "mdast";
import { fromMarkdown } from "mdast-util-from-markdown";
import type { Changers } from "./changers.ts";

/** A whole prose line that approves: `/terfyn approve sha256:<64 hex>`. */
export const APPROVE_LINE = /^\/terfyn[ \t]+approve[ \t]+(sha256:[0-9a-f]{64})$/;
const APPROVE_LOOSE = /^\/terfyn[ \t]+approve\b/;
/** A body larger than any real comment is not parsed (GitHub caps comments at 65,536). */
const MAX_BODY = 70_000;

export type ApprovalCommand =
  | { kind: "approve"; hash: string }
  | { kind: "malformed"; text: string }
  | undefined;

/** Node types whose content is not prose a person reads as a command. */
const OPAQUE = new Set(["code", "blockquote", "html", "inlineCode", "definition"]);

/** The visible lines of prose in a Markdown body: each paragraph split at its line breaks. */
export function proseLines(body: string): string[] {
  if (body.length > MAX_BODY) return [];
  let tree: Nodes;
  try {
    tree = fromMarkdown(body);
  } catch {
    return [];
  }
  const lines: string[] = [];
  const visit = (node: Nodes) => {
    if (OPAQUE.has(node.type)) return;
    if (node.type === "paragraph") {
      lines.push(...paragraphLines(node.children));
      return;
    }
    if ("children" in node) for (const c of (node as Parent).children) visit(c as Nodes);
  };
  visit(tree);
  return lines;
}

/**
 * A paragraph's lines. A line counts only when it is plain text from end to end: a line that
 * holds an HTML comment, a code span, a link or emphasis anywhere is marked impure, so it can
 * never equal the command.
 */
function paragraphLines(children: readonly PhrasingContent[]): string[] {
  const out: string[] = [];
  let current = "";
  let pure = true;
  const end = () => {
    out.push(pure ? current : "\u0000");
    current = "";
    pure = true;
  };
  for (const child of children) {
    if (child.type === "break") {
      end();
    } else if (child.type === "text") {
      const parts = child.value.split("\n");
      parts.forEach((part, i) => {
        if (i > 0) end();
        current += part;
      });
    } else {
      // Emphasis, links, code spans, inline HTML (comments too): the lines they touch are not
      // plain prose. A node spanning lines makes every line it touches impure.
      pure = false;
      const span = child.position ? child.position.end.line - child.position.start.line : 0;
      for (let i = 0; i < span; i++) {
        end();
        pure = false;
      }
    }
  }
  end();
  return out;
}

/** The approval command in a comment body, if a line of its visible prose is one. */
export function parseApprovalComment(body: string): ApprovalCommand {
  for (const raw of proseLines(body)) {
    const line = raw.trim();
    const exact = APPROVE_LINE.exec(line);
    if (exact) return { kind: "approve", hash: exact[1] as string };
    if (APPROVE_LOOSE.test(line)) return { kind: "malformed", text: line.slice(0, 200) };
  }
  return undefined;
}

/** GitHub's repository roles, weakest first. */
export const PERMISSION_LEVELS = ["none", "read", "triage", "write", "maintain", "admin"] as const;
export type PermissionLevel = (typeof PERMISSION_LEVELS)[number];

/**
 * The effective role from GitHub's collaborator-permission answer. `role_name` carries the
 * real role (maintain, triage, and custom roles by their own name); the legacy `permission`
 * field folds maintain into write and triage into read, so it is the last resort. A custom role
 * is ranked by the strongest base permission GitHub reports in `user.permissions`.
 */
export function effectiveRole(answer: {
  role_name?: string | null;
  permission?: string | null;
  user?: { permissions?: Record<string, boolean | undefined> | null } | null;
}): { level: PermissionLevel; name: string } {
  const name = (answer.role_name ?? "").toLowerCase();
  if ((PERMISSION_LEVELS as readonly string[]).includes(name))
    return { level: name as PermissionLevel, name };
  const p = answer.user?.permissions ?? {};
  const fromFlags: PermissionLevel = p.admin
    ? "admin"
    : p.maintain
      ? "maintain"
      : p.push
        ? "write"
        : p.triage
          ? "triage"
          : p.pull
            ? "read"
            : "none";
  if (name !== "" && fromFlags !== "none") return { level: fromFlags, name: answer.role_name! };
  const legacy = (answer.permission ?? "none").toLowerCase();
  const level = (PERMISSION_LEVELS as readonly string[]).includes(legacy)
    ? (legacy as PermissionLevel)
    : "none";
  const best =
    PERMISSION_LEVELS.indexOf(fromFlags) > PERMISSION_LEVELS.indexOf(level) ? fromFlags : level;
  return { level: best, name: answer.role_name || best };
}

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
 * Whether a comment approves one of `currentHashes` (the role is checked separately, through
 * the API). Refusals say why, for the reply. `changers` (changers.ts) are who changed the pull
 * request and may not approve it; when they cannot be known, nothing approves.
 */
export function judgeApprovalComment(
  c: CommentFacts,
  ctx: {
    prAuthor: string;
    botLogins: readonly string[];
    currentHashes: readonly string[];
    changers?: Changers;
  },
): ApprovalVerdict | undefined {
  const command = parseApprovalComment(c.body);
  if (!command) return undefined;
  if (command.kind === "malformed") {
    return {
      ok: false,
      reason: "the approval must name a full plan hash: `/terfyn approve sha256:<64 hex digits>`",
    };
  }
  if (
    c.authorType === "Bot" ||
    c.author.endsWith("[bot]") ||
    ctx.botLogins.includes(c.author) ||
    c.author === ""
  ) {
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
  // Whoever changed the pull request may not approve it; when that cannot be known, nobody may.
  if (ctx.changers && !ctx.changers.known)
    return { ok: false, reason: ctx.changers.reason, hash: command.hash };
  const changed = ctx.changers?.excluded.get(c.author.toLowerCase());
  if (changed) return { ok: false, reason: changed, hash: command.hash };
  return { ok: true, hash: command.hash };
}
