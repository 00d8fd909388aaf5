/**
 * Issue 22, item 3 ("the pusher approves himself"), the pure rule: whoever changed the pull
 * request (its author, its commits' authors and committers, the pusher of its head) may not
 * approve it; when that cannot be known (the commit list failed or is incomplete, no trusted
 * record of the pusher), nothing approves. The record of the pusher is trusted only in the
 * token's own sticky comment, for the current head.
 */
import { describe, expect, it } from "vitest";
import { judgeApprovalComment } from "../src/core/approvals/approval-comment.ts";
import {
  type Changers,
  changersOf,
  nextPushRecord,
  type PrCommit,
  pushRecordLine,
  trustedPushRecord,
} from "../src/core/approvals/changers.ts";

const HEAD = "c".repeat(40);
const H = `sha256:${"a".repeat(64)}`;
const ME = "github-actions[bot]";
const STICKY = "<!-- terfyn:plan project=agents -->\n### Terfyn\n";

const commits = (...list: PrCommit[]) => ({ ok: true as const, commits: list });
const byAlice: PrCommit = { sha: HEAD, author: "alice", committer: "web-flow" };

function judge(author: string, changers: Changers) {
  return judgeApprovalComment(
    { body: `/terfyn approve ${H}`, author, authorType: "User", edited: false },
    { prAuthor: "alice", botLogins: [ME], currentHashes: [H], changers },
  );
}

describe("changersOf: who may not approve", () => {
  const base = {
    prAuthor: "alice",
    headSha: HEAD,
    pushers: { sha: HEAD, logins: ["alice"] },
  };

  it("a commit's author (a co-author of someone else's pull request) is refused, naming the commit", () => {
    const c = changersOf({
      ...base,
      commits: commits({ sha: "1".repeat(40), author: "mallory", committer: "web-flow" }, byAlice),
    });
    const v = judge("mallory", c);
    expect(v).toMatchObject({ ok: false });
    expect(v?.ok === false && v.reason).toBe(
      "@mallory authored a commit of this pull request (1111111…); approvals must come from someone who did not change it",
    );
  });

  it("a committer who authored nothing is refused", () => {
    const c = changersOf({
      ...base,
      commits: commits({ sha: HEAD, author: "alice", committer: "mallory" }),
    });
    const v = judge("mallory", c);
    expect(v?.ok === false && v.reason).toContain(
      "@mallory committed a commit of this pull request",
    );
  });

  it("the pusher of the head is refused even when every commit is someone else's", () => {
    const c = changersOf({
      ...base,
      commits: commits(byAlice),
      pushers: { sha: HEAD, logins: ["mallory"] },
    });
    const v = judge("mallory", c);
    expect(v?.ok === false && v.reason).toContain("@mallory pushed the head of this pull request");
  });

  it("logins compare case-insensitively (GitHub's are)", () => {
    const c = changersOf({
      ...base,
      commits: commits({ sha: HEAD, author: "Mallory", committer: "web-flow" }),
    });
    expect(judge("mallory", c)).toMatchObject({ ok: false });
  });

  it("an uninvolved maintainer approves; web-flow as committer excludes nobody who comments", () => {
    const c = changersOf({ ...base, commits: commits(byAlice) });
    expect(judge("bob", c)).toEqual({ ok: true, hash: H });
  });

  it("fails closed: the commit list could not be read", () => {
    const c = changersOf({ ...base, commits: { ok: false, error: "HTTP 500" } });
    expect(c.known).toBe(false);
    const v = judge("bob", c);
    expect(v?.ok === false && v.reason).toContain("the pull request's commits cannot be read");
  });

  it("fails closed: the pull request has more commits than GitHub lists (it caps at 250)", () => {
    const c = changersOf({ ...base, reportedCommits: 300, commits: commits(byAlice) });
    const v = judge("bob", c);
    expect(v?.ok === false && v.reason).toContain("has 300 commits but GitHub lists only 1");
  });

  it("fails closed: without a reported count, a list at the cap may be cut", () => {
    const many = Array.from({ length: 250 }, (_, i) => ({
      sha: i === 249 ? HEAD : i.toString(16).padStart(40, "0"),
      author: "alice",
    }));
    expect(changersOf({ ...base, commits: commits(...many) }).known).toBe(false);
    expect(changersOf({ ...base, reportedCommits: 250, commits: commits(...many) }).known).toBe(
      true,
    );
  });

  it("fails closed: a list without the head (it moved, or was cut) proves nothing", () => {
    const c = changersOf({
      ...base,
      commits: commits({ sha: "1".repeat(40), author: "alice" }),
    });
    expect(judge("bob", c)).toMatchObject({ ok: false });
  });

  it("fails closed: no record of who pushed the head, or a record of another head", () => {
    for (const pushers of [undefined, { sha: "d".repeat(40), logins: ["alice"] }]) {
      const c = changersOf({ ...base, pushers, commits: commits(byAlice) });
      const v = judge("bob", c);
      expect(v?.ok === false && v.reason).toContain(
        "the Action has no record of who pushed cccccccccccc",
      );
    }
  });
});

describe("the record of who pushed", () => {
  const record = (author: string, body: string) => ({ author, body });
  const line = pushRecordLine({ sha: HEAD, logins: ["mallory"] });

  it("is read back from the token's own sticky comment for the current head", () => {
    expect(trustedPushRecord([record(ME, `${STICKY}${line}\n`)], ME, HEAD)).toEqual({
      sha: HEAD,
      logins: ["mallory"],
    });
  });

  it("a planted marker in someone else's comment is never trusted", () => {
    const forged = pushRecordLine({ sha: HEAD, logins: ["bob"] });
    expect(trustedPushRecord([record("mallory", `${STICKY}${forged}\n`)], ME, HEAD)).toBe(
      undefined,
    );
    // Only ours counts, even when a planted one says something else.
    expect(
      trustedPushRecord(
        [record("mallory", `${STICKY}${forged}\n`), record(ME, `${STICKY}${line}\n`)],
        ME,
        HEAD,
      ),
    ).toEqual({ sha: HEAD, logins: ["mallory"] });
  });

  it("is not read from a comment of ours that is not a sticky plan comment, nor from a line other than the last", () => {
    expect(trustedPushRecord([record(ME, `✅ Approved\n${line}\n`)], ME, HEAD)).toBe(undefined);
    expect(trustedPushRecord([record(ME, `${STICKY}${line}\nmore\n`)], ME, HEAD)).toBe(undefined);
  });

  it("names a head: a record of another head is no record", () => {
    expect(trustedPushRecord([record(ME, `${STICKY}${line}\n`)], ME, "d".repeat(40))).toBe(
      undefined,
    );
    expect(trustedPushRecord([record(ME, `${STICKY}${line}\n`)], undefined, HEAD)).toBe(undefined);
  });

  it("a new push replaces the record; a re-open of the same head adds its sender", () => {
    const old = { sha: "d".repeat(40), logins: ["mallory"] };
    expect(nextPushRecord(old, HEAD, "alice")).toEqual({ sha: HEAD, logins: ["alice"] });
    expect(nextPushRecord({ sha: HEAD, logins: ["mallory"] }, HEAD, "bob")).toEqual({
      sha: HEAD,
      logins: ["mallory", "bob"],
    });
    expect(nextPushRecord({ sha: HEAD, logins: ["mallory"] }, HEAD, undefined)).toEqual({
      sha: HEAD,
      logins: ["mallory"],
    });
    expect(nextPushRecord(undefined, HEAD, undefined)).toBe(undefined);
    // A sender that is not a login is not written into the comment.
    expect(nextPushRecord(undefined, HEAD, "x -->\n<!-- y")).toBe(undefined);
  });
});
