/**
 * The effects of a review-response run for the GitHub App (core/review/effects.ts), the same
 * ports local mode implements, differing only in intake and publishing (doctrine 9):
 *
 * - intake: the pull request's review threads through GraphQL (review-threads.ts), as the same
 *   request.json text a local run reads, snapshotted at the label's time; commits behind head
 *   from the compare API (the clone answers what the API did not);
 * - the work tree: a clone of the pull request's repository (made by the runner, outside the run
 *   directory) with the run's own linked worktree, exactly local mode's LocalWorkTree, except
 *   that "where the branch is now" is asked of GitHub (the clone's branch never moves);
 * - agents and commands: local mode's engine agents and repository commands, in that worktree;
 * - commit: one commit on the request's head, pushed fast-forward only to the pull request's
 *   branch with the remote expected at the request's head (never forced);
 * - replies: `addPullRequestReviewThreadReply`, one per reply, each with a hidden marker
 *   `<!-- terfyn:reply run=… item=… hash=… -->`; replies whose marker the App already posted are
 *   not posted again (a resumed or redelivered publish);
 * - tickets: an issue per ticket with a hidden `terfyn:ticket` marker, recorded in the run
 *   directory as each is created and looked for among the App's issues on GitHub before one is
 *   created, so a repeated publish creates none twice even when the run directory was lost;
 *   issues disabled (HTTP 410) leaves the tickets unopened with a notice, never fails the run.
 *
 * Every publisher calls the publish gate check itself first. Nothing here resolves a thread,
 * minimizes a comment or force-pushes; the gateway refuses those requests anyway.
 */

import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ModelPort } from "../../core/engine/ports.ts";
import type { ResolvedProject } from "../../core/model/project.ts";
import type {
  CommitPublisher,
  IntakePort,
  ReplyPublisher,
  ReviewEffects,
  TicketPublisher,
} from "../../core/review/effects.ts";
import { type ApprovalEntry, artifactHash, assertGate } from "../../core/review/gates.ts";
import type { PublishArtifact } from "../../core/review/ports.ts";
import { type BranchWriterOptions, BranchWriterRefusal } from "../git/branch-writer.ts";
import {
  EngineAgents,
  type LocalEffectsConfig,
  LocalWorkTree,
  WorktreeCommands,
} from "../review/local-effects.ts";
import type { Sandbox } from "../sandbox/sandbox.ts";
import { describeApiError } from "./client.ts";
import type { GitHubGateway, RepoRef } from "./gateway.ts";
import {
  REVIEW_THREADS_QUERY,
  THREAD_COMMENTS_QUERY,
  THREAD_REPLY_MUTATION,
} from "./graphql-documents.ts";
import { type GitHubIntake, type LeftOut, readReviewRequest } from "./review-threads.ts";

export interface AppEffectsConfig {
  gateway: GitHubGateway;
  repo: RepoRef;
  pullRequest: number;
  /** The label event's time: the intake's snapshot. */
  triggerAt: string;
  run: string;
  /** The App's slug: its comments are `<slug>[bot]`'s (REST) or the Bot `<slug>`'s (GraphQL). */
  appSlug: string;
  /** The clone of the pull request's repository (made by the runner). */
  cloneDir: string;
  /** The run's own worktree of the clone. */
  worktreeDir: string;
  /** The run directory (outside the clone). */
  runDir: string;
  /** How git runs (identity; GIT_CONFIG_GLOBAL naming the config that carries the token). */
  git: BranchWriterOptions;
  agents: ResolvedProject;
  model: ModelPort;
  /** Where the repository's commands and the agents' tests run. */
  sandbox: Sandbox;
  progress: (line: string) => void;
  passEnv?: readonly string[];
  env?: Readonly<Record<string, string | undefined>>;
  commandTimeoutMs?: number;
  /** What the run had written in a worktree that is gone (LocalEffectsConfig.restoreWork). */
  restoreWork?: LocalEffectsConfig["restoreWork"];
}

/** Where the intake's left-out comments are kept for the status comment (not an artifact). */
export const LEFT_OUT_FILE = "github-left-out.json";
/** The tickets created so far, by marker (not an artifact). */
export const TICKETS_FILE = "github-tickets.json";
/** What a publisher could not do without failing the run (issues disabled), one line each. */
export const NOTICES_FILE = "github-notices.json";

/** A GitHub call whose failure becomes one clear sentence (the run's reason when it ends there). */
async function api<T>(what: string, f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    throw new Error(describeApiError(e, what));
  }
}

/** The hidden marker of a reply: which run, which item, which approved publish artifact. */
export function replyMarker(run: string, item: string, hash: string): string {
  return `<!-- terfyn:reply run=${run} item=${item} hash=${hash} -->`;
}

export function ticketMarker(run: string, item: string, hash: string): string {
  return `<!-- terfyn:ticket run=${run} item=${item} hash=${hash} -->`;
}

/** Text from an agent, with anything that could pose as a marker (or end one) defused. */
function defused(text: string): string {
  return text.replace(/<!--/g, "&lt;!--").replace(/-->/g, "--&gt;");
}

/** The clone's work tree; where the branch is now comes from GitHub, not from the clone. */
class AppWorkTree extends LocalWorkTree {
  constructor(
    c: LocalEffectsConfig,
    private readonly a: AppEffectsConfig,
  ) {
    super(c);
  }

  override async currentHead(): Promise<string | undefined> {
    const pr = await api(`reading pull request #${this.a.pullRequest}`, () =>
      this.a.gateway.getPullRequest(this.a.pullRequest),
    );
    return pr.headSha;
  }
}

class GitHubIntakePort implements IntakePort {
  private intake: GitHubIntake | undefined;

  constructor(
    private readonly a: AppEffectsConfig,
    private readonly tree: AppWorkTree,
  ) {}

  async receive() {
    const intake = await api(`reading the review threads of #${this.a.pullRequest}`, () =>
      readReviewRequest(this.a.gateway, this.a.repo, this.a.pullRequest, this.a.triggerAt),
    );
    this.intake = intake;
    await writeFile(
      join(this.a.runDir, LEFT_OUT_FILE),
      `${JSON.stringify(intake.leftOut, null, 2)}\n`,
    );
    return {
      text: `${JSON.stringify(intake.request, null, 2)}\n`,
      source: `pull request #${this.a.pullRequest}`,
    };
  }

  async branchTip(branch: string) {
    return (await this.tree.repo()).branchTip(branch);
  }

  async commitsBetween(from: string, to: string) {
    const known = this.intake?.commitsBehind[from];
    if (known !== undefined && this.intake?.request.head === to) return known;
    return (await this.tree.repo()).commitsBetween(from, to);
  }
}

/**
 * One commit on the request's head in the run's worktree, pushed fast-forward only to the pull
 * request's branch, the remote expected at the request's head. A publish repeated after the
 * push (the same run, resumed) finds its commit already made and already on the remote.
 */
class AppCommit implements CommitPublisher {
  constructor(private readonly tree: AppWorkTree) {}

  async publish(
    artifact: PublishArtifact,
    text: string,
    approvals: readonly ApprovalEntry[],
    target: { branch: string; head: string },
  ) {
    assertGate("publish", text, approvals);
    const git = this.tree.git();
    const at = await git.head();
    let commit: string;
    if (at === target.head)
      // Exactly the approved bytes (an artifact that binds none commits nothing).
      commit = await git.commit(artifact.commit_message, artifact.files, target.head, {
        bound: artifact.content ?? [],
      });
    else if ((await git.commitsBetween(target.head, at)) === 1) commit = at;
    else
      throw new BranchWriterRefusal(
        "branch-moved",
        `the run's worktree is at ${at}, which is not the request's head ${target.head} nor one commit on it; nothing was pushed`,
      );
    const remote = await (await this.tree.repo()).remoteOf(target.branch);
    try {
      await git.push(remote, target.branch, target.head);
    } catch (e) {
      // Already pushed by an earlier attempt of this run: the remote is exactly at the commit.
      if (!(e instanceof BranchWriterRefusal) || e.code !== "remote-moved") throw e;
      const again = await git.push(remote, target.branch, commit).catch(() => undefined);
      if (!again || again.pushed) throw e;
    }
    return { commit };
  }
}

interface ThreadComments {
  id: string;
  comments: { author: { login: string; __typename: string } | null; body: string }[];
}

/** Every review thread of the pull request with every comment's author and body (markers). */
async function threadComments(a: AppEffectsConfig): Promise<ThreadComments[]> {
  type Page = { hasNextPage: boolean; endCursor: string | null };
  type Node = {
    id: string;
    comments: { pageInfo: Page; nodes: ThreadComments["comments"] };
  };
  const out: ThreadComments[] = [];
  let after: string | null = null;
  for (let page = 0; page < 50; page++) {
    const answer: {
      repository: {
        pullRequest: { reviewThreads: { pageInfo: Page; nodes: Node[] } } | null;
      } | null;
    } = await a.gateway.graphql(REVIEW_THREADS_QUERY, {
      owner: a.repo.owner,
      repo: a.repo.repo,
      number: a.pullRequest,
      after,
    });
    const threads = answer.repository?.pullRequest?.reviewThreads;
    if (!threads) throw new Error(`pull request #${a.pullRequest} was not found`);
    for (const t of threads.nodes) {
      const comments = [...t.comments.nodes];
      let info = t.comments.pageInfo;
      for (let p = 0; info.hasNextPage && p < 20; p++) {
        const more: { node: { comments: Node["comments"] } | null } = await a.gateway.graphql(
          THREAD_COMMENTS_QUERY,
          { id: t.id, after: info.endCursor },
        );
        if (!more.node) break;
        comments.push(...more.node.comments.nodes);
        info = more.node.comments.pageInfo;
      }
      out.push({ id: t.id, comments });
    }
    if (!threads.pageInfo.hasNextPage) return out;
    after = threads.pageInfo.endCursor;
  }
  throw new Error(`pull request #${a.pullRequest} has too many review threads to check`);
}

/** Whether a comment is the App's own (REST says `<slug>[bot]`, GraphQL the Bot `<slug>`). */
function byApp(author: ThreadComments["comments"][number]["author"], slug: string): boolean {
  if (!author) return false;
  return author.login === `${slug}[bot]` || (author.login === slug && author.__typename === "Bot");
}

/** The threads the request read: a reply may go only to one of them. */
async function requestThreads(a: AppEffectsConfig): Promise<Set<string>> {
  const text = await readFile(join(a.runDir, "request.json"), "utf8");
  const request = JSON.parse(text) as { threads?: { id?: unknown }[] };
  return new Set((request.threads ?? []).map((t) => String(t.id)));
}

class ThreadReplies implements ReplyPublisher {
  constructor(private readonly a: AppEffectsConfig) {}

  async publish(artifact: PublishArtifact, text: string, approvals: readonly ApprovalEntry[]) {
    assertGate("publish", text, approvals);
    if (artifact.replies.length === 0) return 0;
    const hash = artifactHash(text);
    const allowed = await requestThreads(this.a);
    for (const r of artifact.replies)
      if (!allowed.has(r.item))
        throw new Error(
          `a reply is addressed to ${r.item}, which is not a review thread of the request; nothing was posted`,
        );
    const posted = new Set<string>();
    for (const t of await api("reading the review threads for earlier replies", () =>
      threadComments(this.a),
    ))
      for (const c of t.comments)
        if (byApp(c.author, this.a.appSlug))
          for (const m of c.body.matchAll(/<!-- terfyn:reply [^>]*-->/g)) posted.add(m[0]);
    let count = 0;
    for (const r of artifact.replies) {
      const marker = replyMarker(this.a.run, r.item, hash);
      if (!posted.has(marker)) {
        await api(`replying in review thread ${r.item}`, () =>
          this.a.gateway.graphql(THREAD_REPLY_MUTATION, {
            threadId: r.item,
            body: `${defused(r.body)}\n\n${marker}`,
          }),
        );
        posted.add(marker);
      }
      count++;
    }
    return count;
  }
}

/** Every ticket marker in a text. */
const TICKET_MARKERS = /<!-- terfyn:ticket [^>]*-->/g;

/** Whether an API failure is GitHub's "issues are disabled on this repository". */
function issuesDisabled(e: unknown): boolean {
  return (e as { status?: unknown })?.status === 410;
}

/**
 * The run's tickets as issues. Before creating one, the publisher looks for its marker first in
 * the run's own record (TICKETS_FILE), then on GitHub among the issues the App opened (open or
 * closed), so a rerun whose run directory was lost still opens nothing twice. Issues disabled
 * on the repository (HTTP 410) is not fatal: the commit and the replies are already published;
 * the tickets left unopened are written to NOTICES_FILE for the status comment and the report.
 */
class IssueTickets implements TicketPublisher {
  constructor(private readonly a: AppEffectsConfig) {}

  private async created(): Promise<Record<string, number>> {
    try {
      return JSON.parse(await readFile(join(this.a.runDir, TICKETS_FILE), "utf8"));
    } catch {
      return {};
    }
  }

  /** The ticket markers on issues the App opened, with their issue numbers. */
  private async onGitHub(): Promise<Map<string, number>> {
    const login = `${this.a.appSlug}[bot]`;
    const found = new Map<string, number>();
    // Only the App's own issues (the API's creator filter): a marker copied into someone else's
    // issue proves nothing.
    for (const issue of await this.a.gateway.listIssuesBy(login)) {
      for (const m of issue.body.matchAll(TICKET_MARKERS))
        if (!found.has(m[0])) found.set(m[0], issue.number);
    }
    return found;
  }

  async publish(artifact: PublishArtifact, text: string, approvals: readonly ApprovalEntry[]) {
    assertGate("publish", text, approvals);
    const hash = artifactHash(text);
    const created = await this.created();
    const save = async () => {
      await mkdir(this.a.runDir, { recursive: true });
      await writeFile(join(this.a.runDir, TICKETS_FILE), `${JSON.stringify(created, null, 2)}\n`);
    };
    let remote: Map<string, number> | undefined;
    let count = 0;
    for (const [i, t] of artifact.tickets.entries()) {
      const marker = ticketMarker(this.a.run, t.item, hash);
      let what = "looking for the App's earlier tickets among the repository's issues";
      try {
        if (created[marker] === undefined) {
          remote ??= await this.onGitHub();
          what = `creating the ticket for ${t.item}`;
          const existing = remote.get(marker);
          if (existing !== undefined) {
            this.a.progress(`ticket for ${t.item} already open as #${existing}; not opened again`);
            created[marker] = existing;
          } else {
            const issue = await this.a.gateway.createIssue(
              defused(t.title).slice(0, 256),
              `${defused(t.body)}\n\nFrom the review of #${this.a.pullRequest} (review thread ${t.item}), run \`${this.a.run}\`.\n\n${marker}`,
            );
            created[marker] = issue.number;
          }
          await save();
        }
      } catch (e) {
        if (!issuesDisabled(e)) throw new Error(describeApiError(e, what));
        const left = artifact.tickets.slice(i).map((x) => x.item);
        await this.notice(
          `Issues are disabled on this repository (HTTP 410): ${left.length} ticket${left.length === 1 ? " was" : "s were"} not opened (${left.join(", ")}); the commit and the replies were published.`,
        );
        this.a.progress(`issues are disabled: ${left.length} ticket(s) not opened`);
        return count;
      }
      count++;
    }
    return count;
  }

  private async notice(line: string): Promise<void> {
    const file = join(this.a.runDir, NOTICES_FILE);
    const list = await readNotices(this.a.runDir);
    if (!list.includes(line)) list.push(line);
    await writeFile(file, `${JSON.stringify(list, null, 2)}\n`);
  }
}

/** What the publishers could not do without failing the run (for the status comment). */
export async function readNotices(runDir: string): Promise<string[]> {
  try {
    const v = JSON.parse(await readFile(join(runDir, NOTICES_FILE), "utf8")) as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
  } catch {
    return [];
  }
}

export function appEffects(a: AppEffectsConfig): ReviewEffects & { tree: AppWorkTree } {
  const local: LocalEffectsConfig = {
    repoDir: a.cloneDir,
    requestFile: join(a.runDir, "request.json"),
    runDir: a.runDir,
    worktreeDir: a.worktreeDir,
    agents: a.agents,
    model: a.model,
    sandbox: a.sandbox,
    progress: a.progress,
    push: true,
    git: a.git,
    ...(a.passEnv ? { passEnv: a.passEnv } : {}),
    ...(a.env ? { env: a.env } : {}),
    ...(a.commandTimeoutMs ? { commandTimeoutMs: a.commandTimeoutMs } : {}),
    ...(a.restoreWork ? { restoreWork: a.restoreWork } : {}),
  };
  const tree = new AppWorkTree(local, a);
  return {
    intake: new GitHubIntakePort(a, tree),
    agents: new EngineAgents(local, tree),
    commands: new WorktreeCommands(local, tree),
    tree,
    commit: new AppCommit(tree),
    replies: new ThreadReplies(a),
    tickets: new IssueTickets(a),
    progress: a.progress,
  };
}

export type { LeftOut };
