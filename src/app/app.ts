/**
 * The Terfyn GitHub App (Probot): label-triggered review-fix runs, driven by PR comments.
 * Handlers are a few lines each: payload → core decision (core/app/triggers.ts) → ports. No
 * agent work happens inside a webhook request: a run is handed to the `ReviewRunner` port and
 * the handler returns, well inside GitHub's 10-second limit. The handler keeps no state: the
 * run's ledger lives in hidden markers of the App's own status comment and approvals are
 * reconstructed from the PR's comments on every event. GitHub is reached only through the
 * guarded gateway (no resolve, merge, minimize, delete or force verb exists or can be sent).
 */
import type { Context, Probot } from "probot";
import { describeApiError, type GitHubClient } from "../adapters/github/client.ts";
import {
  type GitHubGateway,
  gatewayForClient,
  type IssueComment,
  type RepoRef,
} from "../adapters/github/gateway.ts";
import {
  approvalCandidates,
  decideLabel,
  LABEL_ROLE,
  type Ledger,
  parseCommentCommand,
  parseLedger,
} from "../core/app/triggers.ts";
import { meetsPermission } from "../core/approvals/approval-comment.ts";
import { type RunStatusDetails, renderRunStatus } from "../core/render/run-status.ts";

/** Where the App reports a run's progress: the status comment and a check run on the head. */
export interface RunReporter {
  update(ledger: Ledger, details?: RunStatusDetails): Promise<void>;
}

export interface RunJob {
  repo: RepoRef;
  pullRequest: number;
  head: string;
  run: string;
  /** The label event's time: the intake's snapshot. */
  triggerAt: string;
  gateway: GitHubGateway;
  /** The pull request's branch (known at the label; a resumed run reads it from its own files). */
  branch?: string;
  /** The installation token, for git (the runner's clone and push); fresh on every call. */
  token?: () => Promise<string>;
}

/** Executes review runs; `start` must return at once (the work continues outside the request). */
export interface ReviewRunner {
  start(job: RunJob, reporter: RunReporter): void;
  approve(
    job: RunJob,
    ledger: Ledger,
    by: { login: string; role: string },
    reporter: RunReporter,
  ): void;
  stop(job: RunJob, ledger: Ledger, reason: string, reporter: RunReporter): void;
}

export interface AppOptions {
  runner: ReviewRunner;
  /** The App's slug (its bot login is `<slug>[bot]`). */
  appSlug: string;
  now?: () => Date;
}

type Ctx = Context<"pull_request.labeled" | "issue_comment.created" | "pull_request.synchronize">;

function gatewayOf(context: Ctx): {
  gateway: GitHubGateway;
  repo: RepoRef;
  token: () => Promise<string>;
} {
  const repo = context.repo();
  const octokit = context.octokit as unknown as { auth(o: unknown): Promise<unknown> };
  return {
    gateway: gatewayForClient(context.octokit as unknown as GitHubClient, repo),
    repo: { owner: repo.owner, repo: repo.repo },
    // The installation token Probot's Octokit holds (refreshed by it when it expires).
    token: async () => {
      const auth = (await octokit.auth({ type: "installation" })) as { token?: unknown };
      if (typeof auth?.token !== "string" || auth.token === "")
        throw new Error("the App's installation token is not available");
      return auth.token;
    },
  };
}

/** The App's own status comment and its ledger: only comments the App wrote are trusted. */
function findLedger(
  comments: readonly IssueComment[],
  appLogin: string,
): { comment: IssueComment; ledger: Ledger } | undefined {
  for (const c of [...comments].reverse()) {
    if (c.author !== appLogin) continue;
    const ledger = parseLedger(c.body);
    if (ledger) return { comment: c, ledger };
  }
  return undefined;
}

function reporterFor(
  gateway: GitHubGateway,
  issue: number,
  existing: IssueComment | undefined,
): RunReporter {
  let id = existing?.id;
  return {
    async update(ledger, details) {
      const body = renderRunStatus(ledger, details);
      if (id === undefined) id = (await gateway.createIssueComment(issue, body)).id;
      else await gateway.updateIssueComment(id, body);
      const conclusion = !ledger.terminal
        ? "neutral"
        : ["done", "nothing-to-do", "done-but-unproven"].includes(ledger.terminal)
          ? "success"
          : "failure";
      await gateway.createCheckRun({
        name: "terfyn: review-fix",
        headSha: ledger.head,
        conclusion,
        externalId: ledger.run,
        output: {
          title:
            ledger.terminal ?? (ledger.gate ? `waiting at the ${ledger.gate} gate` : ledger.phase),
          summary: body,
        },
        annotations: [],
      });
    },
  };
}

export function terfynApp(options: AppOptions) {
  const appLogin = `${options.appSlug}[bot]`;
  const now = options.now ?? (() => new Date());
  return (app: Probot) => {
    app.on("pull_request.labeled", async (context) => {
      const p = context.payload;
      const { gateway, repo, token } = gatewayOf(context);
      const pr = p.pull_request;
      const comments = await gateway.listIssueComments(pr.number);
      const current = findLedger(comments, appLogin);
      const event = {
        label: p.label?.name ?? "",
        sender: { login: p.sender.login, type: p.sender.type },
        appLogin,
        fork: (pr.head.repo?.full_name ?? "") !== (pr.base.repo?.full_name ?? ""),
        head: pr.head.sha,
        ...(current ? { current: current.ledger } : {}),
      };
      let decision = decideLabel(event);
      if (decision.action === "needs-role") {
        const role = await gateway.collaboratorRole(p.sender.login);
        decision = decideLabel({ ...event, role: role.level });
      }
      if (decision.action === "ignore") {
        context.log.info(`terfyn: ${decision.reason}`);
        return;
      }
      const run = `pr${pr.number}-${pr.head.sha.slice(0, 12)}-${now().getTime().toString(36)}`;
      const ledger: Ledger = { run, pull_request: pr.number, head: pr.head.sha, phase: "intake" };
      const reporter = reporterFor(gateway, pr.number, undefined);
      if (decision.action === "decline") {
        await reporter.update({ ...ledger, terminal: "bad-input" }, { note: decision.reason });
        return;
      }
      await gateway.addReaction(pr.number, "eyes");
      await reporter.update(ledger, { note: "The run started: reading the review threads." });
      options.runner.start(
        {
          repo,
          pullRequest: pr.number,
          head: pr.head.sha,
          run,
          triggerAt: now().toISOString(),
          gateway,
          branch: pr.head.ref,
          token,
        },
        reporter,
      );
    });

    app.on("issue_comment.created", async (context) => {
      const p = context.payload;
      if (!p.issue.pull_request) return;
      const author = p.comment.user?.login ?? "";
      if (author === appLogin || p.comment.user?.type === "Bot") return;
      const command = parseCommentCommand(p.comment.body ?? "");
      if (!command) return;
      const { gateway, repo, token } = gatewayOf(context);
      const number = p.issue.number;
      const comments = await gateway.listIssueComments(number);
      const found = findLedger(comments, appLogin);
      if (!found) {
        await gateway.createIssueComment(
          number,
          "There is no Terfyn review-fix run on this pull request. Add the label `terfyn:review-fix` to start one.",
        );
        return;
      }
      const { ledger, comment } = found;
      const reporter = reporterFor(gateway, number, comment);
      const pr = await gateway.getPullRequest(number);
      const job: RunJob = {
        repo,
        pullRequest: number,
        head: ledger.head,
        run: ledger.run,
        triggerAt: ledger.since ?? "",
        gateway,
        token,
      };
      if (command.kind === "status") {
        await reporter.update(ledger, { note: `Status asked by @${author}.` });
        return;
      }
      const role = await gateway.collaboratorRole(author);
      if (!meetsPermission(role.level, LABEL_ROLE)) {
        await gateway.createIssueComment(
          number,
          `❌ @${author} has the \`${role.name}\` role; \`/terfyn ${command.kind}\` needs ${LABEL_ROLE} or higher.`,
        );
        return;
      }
      if (command.kind === "stop") {
        options.runner.stop(job, ledger, `stopped by @${author}`, reporter);
        return;
      }
      const approvals = approvalCandidates(
        ledger,
        comments.map((c) => ({
          author: c.author,
          authorType: c.authorType,
          body: c.body,
          createdAt: c.createdAt,
          updatedAt: c.updatedAt,
        })),
        { appLogin, prAuthor: pr.author, currentHead: pr.headSha },
      ).filter((a) => a.login === author);
      if (approvals.length === 0) {
        const why = ledger.terminal
          ? `the run already ended (${ledger.terminal})`
          : !ledger.gate
            ? "the run is not waiting at a gate"
            : ledger.head !== pr.headSha
              ? "the branch moved since the gate began; the approval is void"
              : author === pr.author
                ? "the pull request's author cannot approve"
                : `the run awaits \`${ledger.hash}\``;
        await gateway.createIssueComment(number, `❌ Not approved: ${why}.`);
        return;
      }
      options.runner.approve(job, ledger, { login: author, role: role.name }, reporter);
    });

    app.on("pull_request.synchronize", async (context) => {
      const p = context.payload;
      const { gateway, repo } = gatewayOf(context);
      const comments = await gateway.listIssueComments(p.pull_request.number);
      const found = findLedger(comments, appLogin);
      if (!found || found.ledger.terminal || found.ledger.head === p.pull_request.head.sha) return;
      const reporter = reporterFor(gateway, p.pull_request.number, found.comment);
      options.runner.stop(
        {
          repo,
          pullRequest: p.pull_request.number,
          head: found.ledger.head,
          run: found.ledger.run,
          triggerAt: "",
          gateway,
        },
        found.ledger,
        `a push moved the branch from ${found.ledger.head.slice(0, 12)} to ${p.pull_request.head.sha.slice(0, 12)}: approvals are void and the run stops (never a force-push)`,
        reporter,
      );
    });

    app.onError(async (error) => {
      app.log.error(describeApiError(error, "handling a webhook"));
    });
  };
}
