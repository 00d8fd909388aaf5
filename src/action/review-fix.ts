/**
 * The Action's `mode: review-fix`: a review-fix run on the repository's own GitHub Actions
 * runners, dispatched by the Terfyn App with `placement: actions` (a `workflow_dispatch` on the
 * default branch with the pull request, its head and the run as inputs;
 * docs/github-app-placement.md), or by hand.
 *
 * One job runs the core until the run pauses at a gate or ends, then saves the run's files as
 * the commit at `refs/terfyn/runs/<run>` (adapters/github/run-state-ref.ts) and exits. The next
 * dispatch (the App sends one for each `/terfyn approve` or `/terfyn stop` of a writer, and on a
 * push) loads that state on a fresh machine and decides from the pull request alone:
 * - the branch moved since the run's head: the run ends `stuck` (approvals are void);
 * - a writer's `/terfyn stop` posted since the run began: the run ends `stuck`;
 * - at a gate, an approval reconstructed from the comments (a person with the write role, not
 *   the pull request's author, not a bot, unedited, after the gate began, naming exactly the
 *   hash the saved state awaits): recorded and the run goes on;
 * - otherwise it still waits, and the status comment says so.
 * Nothing from the dispatch is trusted beyond which pull request to look at: the head must be
 * the pull request's head by the API, a fork is refused, and the state loaded must be the one
 * the run's own status comment names (`state` in its ledger).
 *
 * The run itself is the in-process runner (src/adapters/review/review-runner.ts) over the same core:
 * the clone and the fast-forward push with the workflow's token (in git's environment only),
 * replies and tickets through the guarded gateway, the run's status comment and check run.
 */

import { existsSync } from "node:fs";
import { lstat, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative, sep } from "node:path";
import { ReviewRunStore } from "../adapters/fs/review-run-store.ts";
import { describeApiError } from "../adapters/github/client.ts";
import type { GitHubGateway, IssueComment, RepoRef } from "../adapters/github/gateway.ts";
import { MIN_STATE_KEY_BYTES, RUN_ID, RunStateRef } from "../adapters/github/run-state-ref.ts";
import { endedWell, findLedger, statusReporter } from "../adapters/github/status-reporter.ts";
import type { WorkFiles } from "../adapters/review/local-effects.ts";
import { loadPriceTable } from "../adapters/review/model-budget.ts";
import {
  gitAuthEnv,
  inProcessRunner,
  modelFromEnv,
  parseSavedJob,
  REVIEW_AGENT_NAMES,
  type SavedJob,
  shippedAgents,
} from "../adapters/review/review-runner.ts";
import { openSandbox } from "../adapters/sandbox/open-sandbox.ts";
import { type Sandbox, SandboxUnavailable } from "../adapters/sandbox/sandbox.ts";
import {
  approvalCandidates,
  LABEL_ROLE,
  type Ledger,
  parseCommentCommand,
} from "../core/app/triggers.ts";
import { meetsPermission } from "../core/approvals/approval-comment.ts";
import type { ModelPort } from "../core/engine/ports.ts";
import { type AgentModels, parseAgentModels } from "../core/model/agent-models.ts";
import { POSITIVE_WHOLE, positiveWholeNumber } from "../core/model/budget-number.ts";
import type { ResolvedProject } from "../core/model/project.ts";
import { readArtifact } from "../core/review/artifacts.ts";
import type { ReviewRunState } from "../core/review/ports.ts";
import { WRITTEN_FILE } from "../core/review/steps.ts";

export class ReviewFixInputError extends Error {}

export interface ReviewFixInputs {
  pullRequest: number;
  headSha: string;
  /** The run to go on with (the App's id); absent: a new run. */
  run?: string;
  /** The run's model-call and token budgets over all its jobs; absent: the runner's defaults. */
  maxModelCalls?: number;
  maxTokens?: number;
  /** Agents on another model than they declare (input `agent-models`). */
  agentModels?: AgentModels;
  /** The key of the run state's MAC (input `state-key`): never printed. */
  stateKey: Buffer;
}

/** The inputs, validated; throws ReviewFixInputError naming the input and what it accepts. */
export function readReviewFixInputs(getInput: (name: string) => string): ReviewFixInputs {
  const pr = getInput("pull-request").trim();
  if (!/^[1-9][0-9]{0,9}$/.test(pr))
    throw new ReviewFixInputError(
      `mode review-fix needs input \`pull-request\`: a pull request number (a positive integer), not ${JSON.stringify(pr)}`,
    );
  const head = getInput("head-sha").trim();
  if (!/^[0-9a-f]{40}$/i.test(head))
    throw new ReviewFixInputError(
      `mode review-fix needs input \`head-sha\`: the pull request's head commit, 40 hex digits, not ${JSON.stringify(head)}`,
    );
  const run = getInput("run").trim();
  if (run !== "" && !RUN_ID.test(run))
    throw new ReviewFixInputError(
      `input \`run\` must be a run id (letters, digits, '.', '_' and '-', at most 128, not starting with a punctuation mark), not ${JSON.stringify(run)}`,
    );
  const budget = (name: string): number | undefined => {
    const v = getInput(name).trim();
    if (v === "") return undefined;
    const n = positiveWholeNumber(v);
    if (n === undefined)
      throw new ReviewFixInputError(
        `input \`${name}\` must be ${POSITIVE_WHOLE}, not ${JSON.stringify(v)}`,
      );
    return n;
  };
  const maxModelCalls = budget("max-model-calls");
  const maxTokens = budget("max-tokens");
  const models = parseAgentModels(
    getInput("agent-models"),
    REVIEW_AGENT_NAMES,
    "input `agent-models`",
  );
  if ("problem" in models) throw new ReviewFixInputError(models.problem);
  // Fail closed: a state this job cannot verify is no state, so without a key nothing runs.
  const stateKey = Buffer.from(getInput("state-key").trim(), "utf8");
  if (stateKey.length < MIN_STATE_KEY_BYTES)
    throw new ReviewFixInputError(
      `mode review-fix needs input \`state-key\`: a secret of at least ${MIN_STATE_KEY_BYTES} characters (this one has ${stateKey.length}) that signs the run's state between jobs, so a job loads only state a job of this workflow saved. Make one with \`openssl rand -hex 32\`, store it as the secret TERFYN_STATE_KEY, and pass \`state-key: \${{ secrets.TERFYN_STATE_KEY }}\` (docs/github-app-placement.md)`,
    );
  return {
    stateKey,
    pullRequest: Number(pr),
    headSha: head.toLowerCase(),
    ...(run !== "" ? { run } : {}),
    ...(maxModelCalls !== undefined ? { maxModelCalls } : {}),
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    ...(Object.keys(models.models).length > 0 ? { agentModels: models.models } : {}),
  };
}

/** GITHUB_REPOSITORY as owner and name. */
export function repoFromEnv(env: Readonly<Record<string, string | undefined>>): RepoRef {
  const m = /^([^/\s]+)\/([^/\s]+)$/.exec(env.GITHUB_REPOSITORY ?? "");
  if (!m) throw new ReviewFixInputError("GITHUB_REPOSITORY is not set to owner/name");
  return { owner: m[1] as string, repo: m[2] as string };
}

type PullRequest = Awaited<ReturnType<GitHubGateway["getPullRequest"]>>;

/** Why a pull request is not one review-fix may run on (a fork's), or undefined. */
function forkProblem(number: number, pr: PullRequest, repo: RepoRef): string | undefined {
  const own = `${repo.owner}/${repo.repo}`;
  // A deleted fork has no head repository: not ours either.
  if (pr.headRepo?.toLowerCase() !== own.toLowerCase())
    return `pull request #${number} comes from ${pr.headRepo ? `the fork ${pr.headRepo}` : "a fork that no longer exists"}: review-fix pushes to the pull request's branch, so it runs only on branches of ${own}`;
  return undefined;
}

/**
 * Checks a dispatch for a new run against the API (reads only): the head must be the pull
 * request's current head (a push since the dispatch voids it), and the pull request not a
 * fork's. Returns why it may not run, or undefined.
 */
export async function checkDispatch(
  inputs: ReviewFixInputs,
  repo: RepoRef,
  gateway: Pick<GitHubGateway, "getPullRequest">,
): Promise<string | undefined> {
  const pr = await gateway.getPullRequest(inputs.pullRequest);
  return newRunProblem(inputs, pr, repo);
}

function newRunProblem(
  inputs: ReviewFixInputs,
  pr: PullRequest,
  repo: RepoRef,
): string | undefined {
  if (pr.headSha.toLowerCase() !== inputs.headSha)
    return `pull request #${inputs.pullRequest}'s head is ${pr.headSha.slice(0, 12)}, not the dispatched ${inputs.headSha.slice(0, 12)}: the branch moved since the run was dispatched, so it does not run (label the pull request again)`;
  return forkProblem(inputs.pullRequest, pr, repo);
}

export interface ReviewFixDeps {
  gatewayFor: (token: string, repo: RepoRef) => GitHubGateway;
  info: (line: string) => void;
  /** The repository's git URL (tests: a local bare repository). Default GITHUB_SERVER_URL/owner/repo.git. */
  repoUrl?: string;
  /** Where the job keeps the run's files. Default RUNNER_TEMP (else the OS temp dir)/terfyn-review-fix. */
  runsDir?: string;
  /** A model for the session. Default: TERFYN_MODEL_SCRIPT, else the agents' declared models. */
  model?: () => Promise<ModelPort> | ModelPort;
  /** The review-response agents. Default: the ones shipped with the Action. */
  agents?: ResolvedProject;
  now?: () => Date;
  /** Where the repository's commands run. Default: bubblewrap, proven on this runner, or the job fails. */
  sandbox?: () => Promise<Sandbox>;
}

export interface ReviewFixResult {
  /** Why the step fails; undefined when the run paused at a gate or ended well. */
  failed?: string;
  run?: string;
  /** The run's state now: `awaiting-approval`, or the terminal state. */
  state?: string;
  comment?: string;
}

/** The user the workflow's token acts as, whose status comment holds the run's ledger. */
const ACTIONS_BOT = "github-actions[bot]";

/**
 * The mode's whole flow. Returns why the step fails (a bad input, a refused dispatch, a run
 * that ended badly), or no failure when the run paused at a gate or ended well.
 */
export async function reviewFix(
  getInput: (name: string) => string,
  env: Readonly<Record<string, string | undefined>>,
  deps: ReviewFixDeps,
): Promise<ReviewFixResult> {
  let inputs: ReviewFixInputs;
  let repo: RepoRef;
  try {
    inputs = readReviewFixInputs(getInput);
    repo = repoFromEnv(env);
  } catch (e) {
    if (e instanceof ReviewFixInputError) return { failed: e.message };
    throw e;
  }
  const token = getInput("github-token");
  if (token === "") return { failed: "mode review-fix needs input `github-token`" };
  const gateway = deps.gatewayFor(token, repo);
  let pr: PullRequest;
  try {
    pr = await gateway.getPullRequest(inputs.pullRequest);
  } catch (e) {
    return { failed: describeApiError(e, `reading pull request #${inputs.pullRequest}`) };
  }
  // A new run needs the dispatched head to be the pull request's; a run going on checks its own.
  const why = inputs.run
    ? forkProblem(inputs.pullRequest, pr, repo)
    : newRunProblem(inputs, pr, repo);
  if (why) return { failed: why };
  try {
    return await runJob(inputs, repo, token, pr, gateway, env, deps);
  } catch (e) {
    return { failed: describeApiError(e, `review-fix on pull request #${inputs.pullRequest}`) };
  }
}

interface SavedFiles {
  commit: string;
  job: SavedJob;
  comment?: { id: number; url: string };
}

async function runJob(
  inputs: ReviewFixInputs,
  repo: RepoRef,
  token: string,
  pr: PullRequest,
  gateway: GitHubGateway,
  env: Readonly<Record<string, string | undefined>>,
  deps: ReviewFixDeps,
): Promise<ReviewFixResult> {
  const now = deps.now ?? (() => new Date());
  const run =
    inputs.run ??
    `pr${inputs.pullRequest}-${pr.headSha.slice(0, 12)}-${now().getTime().toString(36)}`;
  const url =
    deps.repoUrl ??
    `${(env.GITHUB_SERVER_URL ?? "https://github.com").replace(/\/+$/, "")}/${repo.owner}/${repo.repo}.git`;
  const runsDir = deps.runsDir ?? join(env.RUNNER_TEMP || tmpdir(), "terfyn-review-fix");
  const auth = /^https?:\/\//.test(url) ? gitAuthEnv(new URL(url).origin, token) : {};
  const agents = deps.agents ?? (await shippedAgents());
  // The repository's commands run only in the sandbox; a runner that cannot make one runs none.
  let sandbox: Sandbox;
  try {
    sandbox = await (deps.sandbox ?? (() => openSandbox({ env })))();
  } catch (e) {
    if (!(e instanceof SandboxUnavailable)) throw e;
    return {
      failed: `${e.message} On a GitHub-hosted ubuntu-24.04 runner, add the step from docs/sandbox.md before this one.`,
    };
  }
  const me = (await gateway.identity()) ?? ACTIONS_BOT;

  const states = new RunStateRef({
    gitDir: join(runsDir, `${run}.state.git`),
    url,
    auth,
    identity: { name: ACTIONS_BOT, email: "41898282+github-actions[bot]@users.noreply.github.com" },
    key: inputs.stateKey,
  });
  let restored: WorkFiles | undefined;
  const r = inProcessRunner({
    appSlug: me.replace(/\[bot\]$/, ""),
    runsDir,
    agents,
    sandbox,
    // The workflow's own input only: `{}` keeps the App's TERFYN_APP_AGENT_MODELS out of a job.
    model: deps.model ?? modelFromEnv(env, inputs.agentModels ?? {}),
    cloneUrl: () => url,
    now,
    log: deps.info,
    env,
    restoreWork: async () => restored,
    ...(inputs.maxModelCalls !== undefined ? { maxModelCalls: inputs.maxModelCalls } : {}),
    ...(inputs.maxTokens !== undefined ? { maxTokens: inputs.maxTokens } : {}),
    prices: await loadPriceTable(undefined, env),
  });
  const p = r.paths(run);

  const comments = await gateway.listIssueComments(inputs.pullRequest);
  const loaded = await states.load(run);
  let saved: SavedFiles | undefined;
  // The run's status comment: the token's user's, for this run.
  const own = findLedger(comments, me, run);
  if (loaded) {
    saved = await restore(loaded, p, inputs, repo, run);
    restored = await workFiles(loaded.files);
    // The state must be the one the run's own status comment names: a ref pushed by anyone
    // else (anyone who can push to the repository can push it) is not the run's.
    if (!own || own.comment.id !== saved.comment?.id || own.ledger.state !== loaded.commit)
      return {
        failed: `the state at refs/terfyn/runs/${run} (${loaded.commit.slice(0, 12)}) is not the one run ${run}'s status comment names${own?.ledger.state ? ` (${own.ledger.state.slice(0, 12)})` : own ? "" : " (the comment is gone)"}: it was changed outside the run, so the run does not go on`,
        run,
      };
  }
  const job = {
    repo,
    pullRequest: inputs.pullRequest,
    head: saved?.job.head ?? pr.headSha,
    run,
    triggerAt: saved?.job.triggerAt ?? now().toISOString(),
    gateway,
    branch: saved?.job.branch ?? pr.headRef ?? "",
    token: async () => token,
  };
  let stateCommit = loaded?.commit;
  const base = statusReporter(gateway, inputs.pullRequest, saved?.comment);
  let last: { ledger: Ledger; details?: Parameters<typeof base.update>[1] } | undefined;
  const reporter = {
    async update(ledger: Ledger, details?: Parameters<typeof base.update>[1], progress?: boolean) {
      if (!progress) last = { ledger, ...(details ? { details } : {}) };
      await base.update(
        { ...ledger, ...(stateCommit ? { state: stateCommit } : {}) },
        details,
        progress,
      );
    },
  };

  const state = loaded ? await readState(p.run) : undefined;
  const ledger: Ledger = {
    run,
    pull_request: inputs.pullRequest,
    head: job.head,
    phase: state?.phase ?? "intake",
    ...(state?.status === "awaiting-approval" && state.awaiting
      ? { gate: state.awaiting.gate, hash: state.awaiting.hash, since: state.updated_at }
      : {}),
  };
  if (!loaded) {
    const why = newRunProblem(inputs, pr, repo);
    if (why) return { failed: why };
    // A run that already reported (a status comment of this token's user names it) but has no
    // state: its state was deleted, or it failed before its first save. It never starts over
    // under the same id (a second comment, a fresh budget, a newer snapshot).
    if (own)
      return {
        failed: `run ${run} has a status comment on pull request #${inputs.pullRequest} but no state at refs/terfyn/runs/${run} (it was deleted, or the run ended before its first save): it does not start over under the same id; dispatch without \`run\` (or label the pull request again) to start a new run`,
        run,
      };
    deps.info(
      `terfyn: review-fix run ${run} starts on pull request #${inputs.pullRequest} at ${pr.headSha}`,
    );
    await reporter.update(ledger, {
      note: "The run started on GitHub Actions: reading the review threads.",
    });
    r.start(job, reporter);
  } else if (state?.status === "ended") {
    deps.info(`terfyn: run ${run} already ended (${state.terminal ?? "?"}); nothing to do`);
    const terminal = state.terminal ?? "stuck";
    return {
      run,
      state: terminal,
      ...(endedWell(terminal)
        ? {}
        : { failed: `run ${run} ended ${terminal}: ${state.reason ?? ""}` }),
    };
  } else if (pr.headSha.toLowerCase() !== job.head) {
    r.stop(
      job,
      ledger,
      `a push moved the branch from ${job.head.slice(0, 12)} to ${pr.headSha.slice(0, 12)}: approvals are void and the run stops (never a force-push)`,
      reporter,
    );
  } else {
    const stop = await writersStop(comments, job.triggerAt, me, gateway);
    if (stop) r.stop(job, ledger, `stopped by @${stop}`, reporter);
    else if (state?.status === "interrupted") {
      // Stopped by the model's API in an earlier job, with its state saved: a dispatch (a
      // writer's `/terfyn resume`, or anyone who may dispatch the workflow) goes on there.
      deps.info(`terfyn: run ${run} resumes in phase ${state.phase ?? "?"}: ${state.reason ?? ""}`);
      r.recover?.(job, ledger, reporter);
    } else if (ledger.gate && ledger.hash) {
      const candidates = approvalCandidates(ledger, comments, {
        appLogin: me,
        prAuthor: pr.author,
        currentHead: pr.headSha.toLowerCase(),
      });
      let approver: { login: string; role: string } | undefined;
      const refused: string[] = [];
      for (const c of candidates) {
        const role = await gateway.collaboratorRole(c.login);
        if (meetsPermission(role.level, LABEL_ROLE)) {
          approver = { login: c.login, role: role.name };
          break;
        }
        refused.push(`@${c.login} has the ${role.name} role`);
      }
      if (approver) r.approve(job, ledger, approver, reporter);
      else
        await reporter.update(ledger, {
          note: `The run still waits at the ${ledger.gate} gate for approval of ${ledger.hash}: no comment approves it${refused.length > 0 ? ` (${refused.join("; ")}; approving needs ${LABEL_ROLE} or higher)` : ""}.`,
        });
    } else {
      r.stop(
        job,
        ledger,
        `the run was left in phase ${ledger.phase} by an earlier job that ended before it saved the run (cancelled or timed out); what that job did is not known here, so the run stops`,
        reporter,
      );
    }
  }
  await r.idle();

  const after = await readState(p.run);
  if (after) {
    const files = await collect(p, after.status === "ended" ? undefined : after);
    const id = base.comment();
    if (id) files.set("status.json", Buffer.from(`${JSON.stringify({ comment: id })}\n`));
    stateCommit = await states.save(run, files, loaded?.commit);
    // The status comment names the state just saved: the only one the next job will load (the
    // check run already shows this end or gate).
    if (last) await reporter.update(last.ledger, last.details, true);
  }
  const comment = base.comment()?.url;
  if (after?.status === "interrupted") {
    // Not a failure of the job: the run is paused, its state saved, and the status comment
    // says how to go on.
    deps.info(
      `terfyn: run ${run} stopped in phase ${after.phase ?? "?"}, resumable: ${after.reason ?? ""}`,
    );
    return { run, state: "interrupted", ...(comment ? { comment } : {}) };
  }
  if (after?.status === "awaiting-approval") {
    deps.info(
      `terfyn: run ${run} waits at the ${after.awaiting?.gate} gate for ${after.awaiting?.hash}`,
    );
    return { run, state: "awaiting-approval", ...(comment ? { comment } : {}) };
  }
  const terminal = after?.terminal ?? "stuck";
  return {
    run,
    state: terminal,
    ...(comment ? { comment } : {}),
    ...(endedWell(terminal)
      ? {}
      : {
          failed: `run ${run} ended ${terminal}: ${after?.reason ?? last?.details?.note ?? "no state was written"}`,
        }),
  };
}

/** The run's state.json, as the run store reads it (undefined before the first write). */
async function readState(runDir: string): Promise<ReviewRunState | undefined> {
  return (await ReviewRunStore.open(runDir)).readState();
}

/** The login of a writer whose comment since `since` says `/terfyn stop`, if any. */
async function writersStop(
  comments: readonly IssueComment[],
  since: string,
  me: string,
  gateway: GitHubGateway,
): Promise<string | undefined> {
  const from = Date.parse(since);
  for (const c of comments) {
    if (c.author === me || c.authorType === "Bot" || c.author.endsWith("[bot]")) continue;
    if (Number.isFinite(from) && Date.parse(c.createdAt) < from) continue;
    if (parseCommentCommand(c.body)?.kind !== "stop") continue;
    const role = await gateway.collaboratorRole(c.author);
    if (meetsPermission(role.level, LABEL_ROLE)) return c.author;
  }
  return undefined;
}

/** Names a saved state may hold, and where each goes under the run's base directory. */
const TOP_FILES = new Set(["job.json", "model-spend.json", "status.json", "work.json"]);

/** Puts a loaded state's files under the run's base directory, empty first; returns what it says. */
async function restore(
  loaded: { commit: string; files: Map<string, Buffer> },
  p: { base: string; run: string },
  inputs: ReviewFixInputs,
  repo: RepoRef,
  run: string,
): Promise<SavedFiles> {
  const bad = (why: string): never => {
    throw new Error(`the state at refs/terfyn/runs/${run} is not a run's state: ${why}`);
  };
  await rm(p.base, { recursive: true, force: true });
  for (const [path, bytes] of loaded.files) {
    if (path.startsWith("work/")) continue;
    if (!TOP_FILES.has(path) && !path.startsWith("run/")) bad(`it holds ${JSON.stringify(path)}`);
    if (path === "run/run.lock") continue;
    const target = join(p.base, ...path.split("/"));
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, bytes, { flag: "wx" });
  }
  const job = parseSavedJob(loaded.files.get("job.json"));
  if (!job) return bad("its job.json is missing or not a run's job");
  if (
    job.run !== run ||
    job.pullRequest !== inputs.pullRequest ||
    job.repo.owner.toLowerCase() !== repo.owner.toLowerCase() ||
    job.repo.repo.toLowerCase() !== repo.repo.toLowerCase()
  )
    bad(`its job.json is for another run or pull request`);
  let comment: SavedFiles["comment"];
  const status = loaded.files.get("status.json");
  if (status) {
    try {
      const v = JSON.parse(status.toString("utf8")) as {
        comment?: { id?: unknown; url?: unknown };
      };
      if (typeof v.comment?.id === "number")
        comment = { id: v.comment.id, url: typeof v.comment.url === "string" ? v.comment.url : "" };
    } catch {
      bad("its status.json is not JSON");
    }
  }
  return { commit: loaded.commit, job, ...(comment ? { comment } : {}) };
}

/** The worktree files a state carries (`work.json` lists them), for the worktree made anew. */
async function workFiles(files: Map<string, Buffer>): Promise<WorkFiles | undefined> {
  const manifest = files.get("work.json");
  if (!manifest) return undefined;
  let v: { write?: unknown; remove?: unknown };
  try {
    v = JSON.parse(manifest.toString("utf8"));
  } catch {
    throw new Error("the run's saved work.json is not JSON");
  }
  const strings = (x: unknown) =>
    Array.isArray(x) && x.every((s) => typeof s === "string") ? (x as string[]) : undefined;
  const write = strings(v.write);
  const remove = strings(v.remove);
  if (!write || !remove) throw new Error("the run's saved work.json does not list files");
  const out = new Map<string, Buffer>();
  for (const path of write) {
    const bytes = files.get(`work/${path}`);
    if (!bytes)
      throw new Error(
        `the run's saved work.json lists ${JSON.stringify(path)}, which it does not hold`,
      );
    out.set(path, bytes);
  }
  return { write: out, remove };
}

/**
 * The run's files to save: job.json, model-spend.json, the run directory (not its lock), and at
 * the publish gate the files the publish artifact commits, from the worktree (a fresh machine
 * has no worktree; the gate's hash check proves they came back byte for byte); for a run
 * stopped mid-phase (interrupted), the files its agents wrote so far.
 */
async function collect(
  p: { base: string; run: string; job: string; spend: string; worktree: string },
  paused: ReviewRunState | undefined,
): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  for (const [name, path] of [
    ["job.json", p.job],
    ["model-spend.json", p.spend],
  ] as const)
    if (existsSync(path)) files.set(name, await readFile(path));
  for (const abs of await filesBelow(p.run)) {
    const rel = relative(p.run, abs).split(sep).join("/");
    if (rel === "run.lock") continue;
    files.set(`run/${rel}`, await readFile(abs));
  }
  // The worktree's files the next job needs back: at the publish gate those the commit holds
  // (deleted ones removed); stopped mid-phase, every file the agents wrote so far (the red
  // tests, the builder's work), as it is now.
  let work: { path: string; deleted: boolean }[] | undefined;
  if (paused?.awaiting?.gate === "publish") {
    const publish = await readArtifact(await ReviewRunStore.open(p.run), "publish.json");
    work = (publish?.content ?? []).map((c) => ({ path: c.path, deleted: c.sha256 === null }));
  } else if (paused?.status === "interrupted") {
    const written = files.get(`run/${WRITTEN_FILE}`);
    let list: unknown = [];
    try {
      if (written) list = JSON.parse(written.toString("utf8"));
    } catch {
      list = undefined;
    }
    if (!Array.isArray(list) || !list.every((x) => typeof x === "string"))
      throw new Error(`the run's ${WRITTEN_FILE} is not a list of paths`);
    work = (list as string[]).map((path) => ({ path, deleted: false }));
  }
  if (work) {
    const write: string[] = [];
    const remove: string[] = [];
    for (const c of work) {
      const abs = join(p.worktree, ...c.path.split("/"));
      const st = await lstat(abs).catch(() => undefined);
      if (c.deleted || !st) {
        remove.push(c.path);
        continue;
      }
      if (!st.isFile()) throw new Error(`the run's file ${c.path} is not a regular file`);
      write.push(c.path);
      files.set(`work/${c.path}`, await readFile(abs));
    }
    files.set("work.json", Buffer.from(`${JSON.stringify({ write, remove }, null, 2)}\n`));
  }
  return files;
}

/** Every regular file below `dir` (none when it does not exist). */
async function filesBelow(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}
