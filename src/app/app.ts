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
import { findLedger, statusReporter } from "../adapters/github/status-reporter.ts";
import type {
  InterruptedRun,
  ReviewRunner,
  RunJob,
  RunReporter,
} from "../adapters/review/review-runner-port.ts";
import {
  approvalCandidates,
  decideLabel,
  LABEL_ROLE,
  type Ledger,
  parseCommentCommand,
  parseLedger,
} from "../core/app/triggers.ts";
import { meetsPermission } from "../core/approvals/approval-comment.ts";

export type { InterruptedRun, ReviewRunner, RunJob, RunReporter };

/**
 * Where a review run executes: in this process (the runner), or on the repository's own GitHub
 * Actions runners, dispatched as `workflow_dispatch` of `workflow` on the default branch with
 * the pull request and its head as inputs (the Action's `mode: review-fix` runs it).
 */
export type Placement = { kind: "in-process" } | { kind: "actions"; workflow: string };

export const DEFAULT_WORKFLOW = "terfyn-review-fix.yml";

/**
 * TERFYN_APP_PLACEMENT (in-process, the default, or actions) and TERFYN_APP_WORKFLOW (a workflow
 * file name under .github/workflows, default terfyn-review-fix.yml). Throws on anything else.
 */
export function placementFromEnv(env: Record<string, string | undefined>): Placement {
  const kind = env.TERFYN_APP_PLACEMENT?.trim() || "in-process";
  if (kind === "in-process") return { kind };
  if (kind !== "actions")
    throw new Error(
      `TERFYN_APP_PLACEMENT must be in-process or actions, not ${JSON.stringify(env.TERFYN_APP_PLACEMENT)}`,
    );
  const workflow = env.TERFYN_APP_WORKFLOW?.trim() || DEFAULT_WORKFLOW;
  if (!/^[A-Za-z0-9_.-]+\.ya?ml$/.test(workflow) || workflow.startsWith("."))
    throw new Error(
      `TERFYN_APP_WORKFLOW must be a workflow file name under .github/workflows (e.g. ${DEFAULT_WORKFLOW}), not ${JSON.stringify(env.TERFYN_APP_WORKFLOW)}`,
    );
  return { kind, workflow };
}

export interface AppOptions {
  runner: ReviewRunner;
  /** Where runs execute (default in-process). */
  placement?: Placement;
  /** The App's slug (its bot login is `<slug>[bot]`). */
  appSlug: string;
  /**
   * The web address of the GitHub the App serves, for links (default https://github.com; on
   * GitHub Enterprise the server's, from the same settings as the API, never from a payload).
   */
  webUrl?: string;
  now?: () => Date;
}

type Ctx = Context<
  | "pull_request.labeled"
  | "issue_comment.created"
  | "pull_request.synchronize"
  | "workflow_run.completed"
>;

function gatewayOf(context: Ctx): {
  gateway: GitHubGateway;
  repo: RepoRef;
  token: () => Promise<string>;
  installation?: number;
} {
  const repo = context.repo();
  const installation = (context.payload as { installation?: { id?: unknown } }).installation?.id;
  return {
    ...gatewayFor(context.octokit, { owner: repo.owner, repo: repo.repo }),
    ...(typeof installation === "number" ? { installation } : {}),
  };
}

/** The guarded gateway over an installation's Octokit, and its token for git. */
function gatewayFor(
  octokit: unknown,
  repo: RepoRef,
): { gateway: GitHubGateway; repo: RepoRef; token: () => Promise<string> } {
  const auth = octokit as { auth(o: unknown): Promise<unknown> };
  return {
    gateway: gatewayForClient(octokit as GitHubClient, repo),
    repo,
    // The installation token Probot's Octokit holds (refreshed by it when it expires).
    token: async () => {
      const a = (await auth.auth({ type: "installation" })) as { token?: unknown };
      if (typeof a?.token !== "string" || a.token === "")
        throw new Error("the App's installation token is not available");
      return a.token;
    },
  };
}

/** The workflow's runs on GitHub (at `web`), where a dispatched run is followed (and cancelled). */
function workflowRunsUrl(web: string, repo: RepoRef, workflow: string): string {
  return `${web}/${repo.owner}/${repo.repo}/actions/workflows/${encodeURIComponent(workflow)}`;
}

/**
 * Whether a run the App dispatched has ended, by the status comment its workflow job keeps (a
 * bot's comment with the run's ledger). It only lets a new label start a new run; nothing the
 * App does for the run itself depends on it.
 */
function dispatchedRunEnded(comments: readonly IssueComment[], ledger: Ledger): boolean {
  if (ledger.phase !== "dispatched" || ledger.terminal) return false;
  return comments.some((c) => {
    if (c.authorType !== "Bot") return false;
    const l = parseLedger(c.body);
    return l?.run === ledger.run && l.phase !== "dispatched" && l.terminal !== undefined;
  });
}

function reporterFor(
  gateway: GitHubGateway,
  issue: number,
  existing: IssueComment | undefined,
): RunReporter {
  return statusReporter(gateway, issue, existing);
}

/**
 * At startup: every run the runner finds left `running` by a process that is gone is resumed
 * (the runner decides; it holds the run's lock while it works), reported on its own status
 * comment through its installation. A failure is logged, never thrown.
 */
async function recoverInterrupted(app: Probot, runner: ReviewRunner, appLogin: string) {
  let runs: InterruptedRun[];
  try {
    runs = (await runner.interrupted?.()) ?? [];
  } catch (e) {
    app.log.error(`terfyn: cannot list interrupted runs: ${(e as Error).message}`);
    return;
  }
  for (const saved of runs) {
    try {
      if (saved.installation === undefined) {
        app.log.warn(`terfyn: run ${saved.run} has no installation recorded; it is not resumed`);
        continue;
      }
      const { gateway, repo, token } = gatewayFor(await app.auth(saved.installation), saved.repo);
      const found = findLedger(
        await gateway.listIssueComments(saved.pullRequest),
        appLogin,
        saved.run,
      );
      const ledger: Ledger = found?.ledger ?? {
        run: saved.run,
        pull_request: saved.pullRequest,
        head: saved.head,
        phase: "intake",
      };
      runner.recover?.(
        {
          repo,
          pullRequest: saved.pullRequest,
          head: saved.head,
          run: saved.run,
          triggerAt: saved.triggerAt,
          gateway,
          branch: saved.branch,
          token,
          installation: saved.installation,
        },
        ledger,
        reporterFor(gateway, saved.pullRequest, found?.comment),
      );
    } catch (e) {
      app.log.error(describeApiError(e, `terfyn: recovering run ${saved.run}`));
    }
  }
}

export function terfynApp(options: AppOptions) {
  const appLogin = `${options.appSlug}[bot]`;
  const now = options.now ?? (() => new Date());
  const claims = new Set<string>();
  const placement: Placement = options.placement ?? { kind: "in-process" };
  const web = (options.webUrl ?? "https://github.com").replace(/\/+$/, "");
  const runsUrlOf = (repo: RepoRef, workflow: string) => workflowRunsUrl(web, repo, workflow);
  // Runs placed on Actions are never resumed in this process: the webhook handler keeps none.
  const recover =
    placement.kind === "actions" ? undefined : options.runner.recover?.bind(options.runner);
  return (app: Probot) => {
    if (options.runner.interrupted && placement.kind === "in-process")
      void recoverInterrupted(app, options.runner, appLogin);
    app.on("pull_request.labeled", async (context) => {
      const p = context.payload;
      const pr = p.pull_request;
      const base = {
        label: p.label?.name ?? "",
        sender: { login: p.sender.login, type: p.sender.type },
        appLogin,
        fork: (pr.head.repo?.full_name ?? "") !== (pr.base.repo?.full_name ?? ""),
        head: pr.head.sha,
      };
      // Another label, a bot, the App's own label: ignored before anything is read or held.
      const first = decideLabel(base);
      if (first.action === "ignore") {
        context.log.info(`terfyn: ${first.reason}`);
        return;
      }
      // Two label events for one head at once (two labels, a redelivery) start one run: the
      // head is held from before the comments are read until the status comment is posted, in
      // this process (claims) and across processes (the runner's lock file).
      const { gateway, repo, token, installation } = gatewayOf(context);
      const key = `${repo.owner}/${repo.repo}#${pr.number}@${pr.head.sha}`;
      if (claims.has(key)) {
        context.log.info(`terfyn: another label event for ${key} is being handled`);
        return;
      }
      const held = options.runner.claim ? options.runner.claim(key) : { release() {} };
      if (!held) {
        context.log.info(`terfyn: another process is handling a label event for ${key}`);
        return;
      }
      claims.add(key);
      try {
        await onLabel();
      } finally {
        claims.delete(key);
        held.release();
      }

      async function onLabel() {
        const comments = await gateway.listIssueComments(pr.number);
        let current = findLedger(comments, appLogin);
        // A run placed on Actions reports its end in the workflow's own status comment: once
        // that says it ended, the App's "dispatched" ledger no longer holds the head.
        if (current && dispatchedRunEnded(comments, current.ledger)) current = undefined;
        const event = { ...base, ...(current ? { current: current.ledger } : {}) };
        let decision = decideLabel(event);
        if (decision.action === "needs-role") {
          const role = await gateway.collaboratorRole(p.sender.login);
          decision = decideLabel({ ...event, role: role.level });
        }
        if (decision.action === "ignore") {
          context.log.info(`terfyn: ${decision.reason}`);
          return;
        }
        if (decision.action === "existing" && current) {
          context.log.info(`terfyn: ${decision.reason}`);
          // A redelivery starts nothing; a run left working by a restart is found again.
          recover?.(
            {
              repo,
              pullRequest: pr.number,
              head: current.ledger.head,
              run: current.ledger.run,
              triggerAt: current.ledger.since ?? "",
              gateway,
              token,
              ...(installation !== undefined ? { installation } : {}),
            },
            current.ledger,
            reporterFor(gateway, pr.number, current.comment),
          );
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
        if (placement.kind === "actions") {
          await dispatch(placement.workflow, ledger, reporter);
          return;
        }
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
            ...(installation !== undefined ? { installation } : {}),
          },
          reporter,
        );
      }

      /**
       * The run goes to the repository's own runners: one workflow_dispatch on the default
       * branch (the workflow file there, never the pull request's copy of it), the pull request
       * and head as inputs. The status comment links the workflow's runs; nothing runs here.
       */
      async function dispatch(workflow: string, ledger: Ledger, reporter: RunReporter) {
        const ref = (p.repository as { default_branch?: string }).default_branch ?? "";
        const runsUrl = runsUrlOf(repo, workflow);
        if (ref === "") {
          await reporter.update(
            { ...ledger, terminal: "stuck" },
            {
              note: "The repository's default branch is not in the event; nothing was dispatched.",
            },
          );
          return;
        }
        try {
          await gateway.dispatchWorkflow(workflow, ref, {
            "pull-request": String(pr.number),
            "head-sha": pr.head.sha,
            run: ledger.run,
          });
        } catch (e) {
          await reporter.update(
            { ...ledger, terminal: "stuck" },
            {
              note: `${describeApiError(e, `dispatching the workflow ${workflow} on ${ref}`)}. The workflow file must be on the default branch with a workflow_dispatch trigger (docs/github-app-placement.md), and the App needs the actions: write permission.`,
              runUrl: runsUrl,
            },
          );
          return;
        }
        await reporter.update(
          { ...ledger, phase: "dispatched" },
          {
            note: `The run was dispatched to GitHub Actions: the workflow ${workflow} on ${ref}, for head ${pr.head.sha.slice(0, 12)}. Follow it in the workflow's runs (the link below).`,
            runUrl: runsUrl,
          },
        );
      }
    });

    app.on("issue_comment.created", async (context) => {
      const p = context.payload;
      if (!p.issue.pull_request) return;
      const author = p.comment.user?.login ?? "";
      if (author === appLogin || p.comment.user?.type === "Bot") return;
      const command = parseCommentCommand(p.comment.body ?? "");
      if (!command) return;
      const { gateway, repo, token, installation } = gatewayOf(context);
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
        ...(installation !== undefined ? { installation } : {}),
      };
      if (command.kind === "status") {
        await reporter.update(ledger, { note: `Status asked by @${author}.` });
        // A run the ledger says is working but no process runs (a restart) is found again.
        // (Not one the model's outage paused: that one waits for a writer's `/terfyn resume`.)
        if (!ledger.terminal && !ledger.gate && !ledger.interrupted)
          recover?.(job, ledger, reporter);
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
      if (ledger.phase === "dispatched" && !ledger.terminal && placement.kind === "actions") {
        // The run is on the repository's runners and keeps its state there: the App passes the
        // command on as a new dispatch for the run, and the job decides from the pull request's
        // comments (the same rules: role, not the author, unedited, the awaited hash).
        if (command.kind === "approve" && author === pr.author) {
          await gateway.createIssueComment(
            number,
            "❌ Not approved: the pull request's author cannot approve.",
          );
          return;
        }
        const defaultBranch = (p.repository as { default_branch?: string }).default_branch ?? "";
        const runsUrl = runsUrlOf(repo, placement.workflow);
        try {
          if (defaultBranch === "") throw new Error("the event names no default branch");
          await gateway.dispatchWorkflow(placement.workflow, defaultBranch, {
            "pull-request": String(number),
            "head-sha": pr.headSha,
            run: ledger.run,
          });
        } catch (e) {
          await gateway.createIssueComment(
            number,
            `❌ \`/terfyn ${command.kind}\` was not passed on to run \`${ledger.run}\` on GitHub Actions: ${describeApiError(e, `dispatching ${placement.workflow}`)}.`,
          );
          return;
        }
        await reporter.update(ledger, {
          note: `@${author}'s \`/terfyn ${command.kind}\` was passed on to the run on GitHub Actions (a new job of ${placement.workflow}); the run's own status comment there shows what it did.`,
          runUrl: runsUrl,
        });
        return;
      }
      if (command.kind === "stop") {
        options.runner.stop(job, ledger, `stopped by @${author}`, reporter);
        return;
      }
      if (command.kind === "resume") {
        const why = ledger.terminal
          ? `the run already ended (${ledger.terminal})`
          : ledger.gate
            ? `the run waits at the ${ledger.gate} gate for \`/terfyn approve ${ledger.hash ?? ""}\``
            : undefined;
        if (why) await gateway.createIssueComment(number, `❌ Not resumed: ${why}.`);
        // A session that has the run already does nothing; else the run goes on at its phase.
        else recover?.(job, ledger, reporter);
        return;
      }
      const approvals = approvalCandidates(ledger, comments, {
        appLogin,
        prAuthor: pr.author,
        currentHead: pr.headSha,
      }).filter((a) => a.login === author);
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
      if (found.ledger.phase === "dispatched" && placement.kind === "actions") {
        // The job a dispatch starts sees the branch moved and ends the run there.
        const reason = `a push moved the branch from ${found.ledger.head.slice(0, 12)} to ${p.pull_request.head.sha.slice(0, 12)}: approvals are void and the run stops (never a force-push)`;
        let note = `${reason}; the run on GitHub Actions was told so (a new job of ${placement.workflow}).`;
        try {
          await gateway.dispatchWorkflow(
            placement.workflow,
            (p.repository as { default_branch?: string }).default_branch ?? "",
            {
              "pull-request": String(p.pull_request.number),
              "head-sha": p.pull_request.head.sha,
              run: found.ledger.run,
            },
          );
        } catch (e) {
          note = `${reason}; telling the run on GitHub Actions failed (${describeApiError(e, `dispatching ${placement.workflow}`)}): cancel it from the workflow's runs.`;
        }
        await reporter.update(
          { ...found.ledger, terminal: "stuck" },
          { note, runUrl: runsUrlOf(repo, placement.workflow) },
        );
        return;
      }
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

    app.on("workflow_run.completed", async (context) => {
      // A job of the placement workflow that ended without the run reporting an end (cancelled,
      // timed out, a crash before its first save) would leave the status comment saying
      // "dispatched" for ever: the App says so. Its title (the workflow's run-name) names the
      // run and the pull request; it is only used to find the App's own ledger.
      if (placement.kind !== "actions") return;
      const p = context.payload as {
        workflow?: { path?: string } | null;
        workflow_run: {
          path?: string;
          conclusion?: string | null;
          display_title?: string;
          html_url?: string;
        };
      };
      const path = p.workflow?.path ?? p.workflow_run.path ?? "";
      if (path !== `.github/workflows/${placement.workflow}`) return;
      const conclusion = p.workflow_run.conclusion ?? "unknown";
      if (conclusion === "success") return;
      const m = /^terfyn review-fix ([A-Za-z0-9][A-Za-z0-9._-]{0,127}) on #([1-9][0-9]{0,9})$/.exec(
        p.workflow_run.display_title ?? "",
      );
      if (!m) return;
      const [, run, number] = m as unknown as [string, string, string];
      const { gateway, repo } = gatewayOf(context);
      const comments = await gateway.listIssueComments(Number(number));
      const found = findLedger(comments, appLogin, run);
      if (!found || found.ledger.terminal || found.ledger.phase !== "dispatched") return;
      if (dispatchedRunEnded(comments, found.ledger)) return;
      // The payload's link only when it is on the configured GitHub.
      const url = (p.workflow_run.html_url ?? "").startsWith(`${web}/`)
        ? (p.workflow_run.html_url as string)
        : runsUrlOf(repo, placement.workflow);
      await reporterFor(gateway, Number(number), found.comment).update(found.ledger, {
        note: `A job of ${placement.workflow} for this run ended ${conclusion} before the run reported a gate or an end. The run's state is what its last finished job saved; a writer's \`/terfyn approve\`, \`/terfyn resume\` or \`/terfyn stop\` starts a new job for it, or remove the label and add it again to start over.`,
        runUrl: url,
      });
    });

    app.onError(async (error) => {
      app.log.error(describeApiError(error, "handling a webhook"));
    });
  };
}
