/**
 * Who changed a pull request, and so may not approve its plan (issue 22, item 3: "the pusher
 * approves himself"): its author, the author and the committer of every commit in base..head
 * (as GitHub maps them to logins), and whoever pushed the current head (the sender of the
 * latest `opened`, `synchronize` or `reopened` event). An approval must come from someone who
 * changed none of it.
 *
 * Fail closed: when the commits cannot all be known (the list failed, or holds fewer commits
 * than the pull request reports: GitHub lists at most 250, or lacks the head) or there is no
 * trustworthy record of who pushed the head, nobody is known not to have changed it, so no
 * approval counts, and the reason says why.
 *
 * The record of the pusher: the `pull_request` job sees the push event; the `issue_comment`
 * job, which judges a new approval later, does not. So the `pull_request` job writes a hidden
 * last line into its own sticky plan comment, `<!-- terfyn:pushed-by <head sha> <login>… -->`,
 * and a record is trusted only in a comment that starts with the sticky marker AND is authored
 * by the token's own identity AND names the current head. A marker someone else planted is
 * never read. Pure.
 */
import { STICKY_PREFIX } from "../ci/decisions.ts";

/** A commit of the pull request as GitHub lists it; a login is absent when GitHub maps none. */
export interface PrCommit {
  sha: string;
  author?: string;
  committer?: string;
}

/** The pull request's commits as read from the API, or why they could not be. */
export type CommitList = { ok: true; commits: readonly PrCommit[] } | { ok: false; error: string };

/** Who pushed a head: every login a trusted record names for that commit. */
export interface PushRecord {
  sha: string;
  logins: readonly string[];
}

/**
 * The logins who may not approve, each with the reason a refusal gives (keys lower-cased:
 * GitHub logins are case-insensitive), or why they cannot be known (then nothing approves).
 */
export type Changers =
  | { known: true; excluded: ReadonlyMap<string, string> }
  | { known: false; reason: string };

/** The most commits GitHub's pull request commit list returns. */
export const PR_COMMITS_LIMIT = 250;

const LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$/;
const SHA = /^[0-9a-f]{40}$/;

const NO_CHANGERS = "approvals must come from someone who did not change it";
const short = (sha: string) => `${sha.slice(0, 7)}…`;

/** Why no approval counts: the reason's common tail. */
const NOTHING_COUNTS =
  "no approval counts until every commit's author and committer is known, since an approval must come from someone who did not change the pull request";

export function changersOf(input: {
  prAuthor: string;
  headSha: string;
  /** The number of commits the pull request reports, when known. */
  reportedCommits?: number;
  commits: CommitList;
  /** The trusted record of who pushed; must name `headSha`. */
  pushers: PushRecord | undefined;
}): Changers {
  const head = input.headSha.toLowerCase();
  const { commits } = input;
  if (!commits.ok)
    return {
      known: false,
      reason: `the pull request's commits cannot be read (${commits.error}); ${NOTHING_COUNTS}`,
    };
  const listed = commits.commits;
  if (input.reportedCommits !== undefined && listed.length < input.reportedCommits)
    return {
      known: false,
      reason: `the pull request has ${input.reportedCommits} commits but GitHub lists only ${listed.length} (it lists at most ${PR_COMMITS_LIMIT}); ${NOTHING_COUNTS}`,
    };
  if (input.reportedCommits === undefined && listed.length >= PR_COMMITS_LIMIT)
    return {
      known: false,
      reason: `GitHub lists ${listed.length} commits of the pull request, its limit, so some may be missing; ${NOTHING_COUNTS}`,
    };
  if (!listed.some((c) => c.sha.toLowerCase() === head))
    return {
      known: false,
      reason: `GitHub's list of the pull request's commits does not hold its head (${short(head)}); ${NOTHING_COUNTS}`,
    };
  if (!input.pushers || input.pushers.sha.toLowerCase() !== head)
    return { known: false, reason: noRecordReason(head) };
  const excluded = new Map<string, string>();
  const add = (login: string | undefined, reason: string) => {
    if (!login) return;
    const key = login.toLowerCase();
    if (!excluded.has(key)) excluded.set(key, reason);
  };
  add(input.prAuthor, "the pull request's author cannot approve its own plan");
  for (const login of input.pushers.logins)
    add(login, `@${login} pushed the head of this pull request (${short(head)}); ${NO_CHANGERS}`);
  for (const c of listed) {
    add(
      c.author,
      `@${c.author} authored a commit of this pull request (${short(c.sha)}); ${NO_CHANGERS}`,
    );
    add(
      c.committer,
      `@${c.committer} committed a commit of this pull request (${short(c.sha)}); ${NO_CHANGERS}`,
    );
  }
  return { known: true, excluded };
}

/** Why an approval is refused when nothing trustworthy says who pushed `head`. */
export function noRecordReason(head: string): string {
  return `the Action has no record of who pushed ${head.slice(0, 12)}; wait for the plan job (the \`pull_request\` run for this head) to finish and approve again. The record is kept in Terfyn's own plan comment, so approving by comment needs input \`comment\` other than \`never\``;
}

const RECORD =
  /^<!-- terfyn:pushed-by ([0-9a-f]{40})((?: [A-Za-z0-9][A-Za-z0-9-]{0,38}(?:\[bot\])?)+) -->$/;

/** The hidden last line of the sticky comment that records who pushed a head. */
export function pushRecordLine(r: PushRecord): string {
  return `<!-- terfyn:pushed-by ${r.sha.toLowerCase()} ${r.logins.join(" ")} -->`;
}

/**
 * The record of who pushed `headSha`, from the sticky comments the token itself wrote (a
 * comment that starts with the sticky marker, authored by `me`, whose last line is a record of
 * `headSha`); the logins of every such comment together. Undefined without one.
 */
export function trustedPushRecord(
  comments: readonly { body: string; author: string }[],
  me: string | undefined,
  headSha: string,
): PushRecord | undefined {
  if (!me) return undefined;
  const head = headSha.toLowerCase();
  const logins = new Set<string>();
  for (const c of comments) {
    if (c.author !== me || !c.body.startsWith(STICKY_PREFIX)) continue;
    const last = c.body.replace(/\n+$/, "").split("\n").at(-1) ?? "";
    const m = RECORD.exec(last);
    if (!m || m[1] !== head) continue;
    for (const login of (m[2] as string).trim().split(" ")) logins.add(login);
  }
  return logins.size > 0 ? { sha: head, logins: [...logins] } : undefined;
}

/**
 * The record to keep for `headSha`: the trusted one, with the event's sender added when the
 * event pushed (`opened`, `synchronize`, `reopened`). Undefined when neither names anyone.
 */
export function nextPushRecord(
  trusted: PushRecord | undefined,
  headSha: string,
  sender: string | undefined,
): PushRecord | undefined {
  const head = headSha.toLowerCase();
  if (!SHA.test(head)) return undefined;
  const logins = trusted && trusted.sha === head ? [...trusted.logins] : [];
  if (sender && LOGIN.test(sender) && !logins.includes(sender)) logins.push(sender);
  return logins.length > 0 ? { sha: head, logins } : undefined;
}

/** The pull request events whose sender pushed the head (or opened it with its commits). */
export const PUSH_ACTIONS: readonly string[] = ["opened", "synchronize", "reopened"];
