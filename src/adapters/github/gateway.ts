/**
 * The only way Terfyn reaches GitHub: a narrow gateway of named verbs over one Octokit client.
 * Raw Octokit never leaves src/adapters/github. There is no verb to merge, delete, resolve,
 * minimize or force-update anything, and a request hook refuses every route that is not on the
 * allowlist below (and every GraphQL mutation that is not), so even a future caller holding the
 * client cannot send one: the request fails before it leaves the process.
 */
import { effectiveRole, type PermissionLevel } from "../../core/approvals/approval-comment.ts";
import type { Annotation } from "../../core/render/plan-annotations.ts";
import { type ClientOptions, createGitHubClient, type GitHubClient } from "./client.ts";
import { GRAPHQL_DOCUMENTS } from "./graphql-documents.ts";

export interface RepoRef {
  owner: string;
  repo: string;
}

export interface IssueComment {
  id: number;
  body: string;
  author: string;
  authorType: string;
  createdAt: string;
  updatedAt: string;
  url: string;
}

/** Routes the gateway may call, as `METHOD /template`. Everything else is refused. */
export const ALLOWED_ROUTES: readonly string[] = [
  "GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
  "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
  "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}",
  "POST /repos/{owner}/{repo}/check-runs",
  "PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}",
  "POST /repos/{owner}/{repo}/statuses/{sha}",
  "GET /repos/{owner}/{repo}/collaborators/{username}/permission",
  "GET /repos/{owner}/{repo}/pulls/{pull_number}",
  "GET /repos/{owner}/{repo}/commits/{commit_sha}/pulls",
  "GET /repos/{owner}/{repo}/pulls/{pull_number}/commits",
  "PUT /repos/{owner}/{repo}/issues/{issue_number}/labels",
  "GET /user",
  "POST /graphql",
  "GET /repos/{owner}/{repo}/compare/{basehead}",
  "POST /repos/{owner}/{repo}/issues/{issue_number}/reactions",
  "POST /repos/{owner}/{repo}/issues",
  "GET /repos/{owner}/{repo}/issues",
  "POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches",
  // How a GitHub App's Octokit gets its installation token (with the App's JWT): every
  // handler's first request makes it. Nothing else under /app is ever sent.
  "POST /app/installations/{installation_id}/access_tokens",
];

/** GraphQL mutations that must never be sent, whatever asks (checked on every request). */
export const FORBIDDEN_GRAPHQL = [
  "resolveReviewThread",
  "unresolveReviewThread",
  "minimizeComment",
  "mergePullRequest",
  "enablePullRequestAutoMerge",
  "updateRef",
  "updateRefs",
  "deleteRef",
  "deleteIssueComment",
  "deletePullRequestReviewComment",
  "deletePullRequestReview",
  "closePullRequest",
  "dismissPullRequestReview",
];

export class ForbiddenRequestError extends Error {}

/** GitHub's limit of annotations per check-run request. */
export const ANNOTATIONS_PER_REQUEST = 50;

/** Why a request may not be sent, or undefined when it may. */
export function refusal(method: string, url: string, body?: unknown): string | undefined {
  const m = method.toUpperCase();
  if (m === "DELETE") return `${m} ${url}: Terfyn never deletes anything on GitHub`;
  if (/\/graphql$/.test(url) || url === "/graphql") {
    const query = String((body as { query?: unknown } | undefined)?.query ?? "");
    for (const name of FORBIDDEN_GRAPHQL)
      if (new RegExp(`\\b${name}\\b`).test(query))
        return `GraphQL ${name}: Terfyn never merges, resolves, minimizes, deletes or force-updates`;
    // Only the documents in graphql-documents.ts, byte for byte.
    if (!GRAPHQL_DOCUMENTS.includes(query)) return "a GraphQL document Terfyn does not send";
    return undefined;
  }
  if (/\/merges?$/.test(url) || /\/pulls\/[^/]+\/merge$/.test(url))
    return `${m} ${url}: Terfyn never merges`;
  if (/\/git\/refs/.test(url)) return `${m} ${url}: Terfyn never moves refs through the API`;
  const allowed = ALLOWED_ROUTES.some((route) => {
    const [rm, template] = route.split(" ") as [string, string];
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`);
    return rm === m && pattern.test(url);
  });
  return allowed ? undefined : `${m} ${url} is not a request Terfyn makes`;
}

/**
 * A request's path as the routes above name it: without scheme and host, and without the base
 * URL's own path (GitHub Enterprise's `/api/v3`, or `/api` for its GraphQL endpoint), which a
 * paginated request's full next-page URL carries.
 */
export function routePath(url: string, baseUrl: string): string {
  const path = url.replace(/^https?:\/\/[^/]+/, "");
  let basePath = "";
  try {
    basePath = baseUrl ? new URL(baseUrl).pathname.replace(/\/+$/, "") : "";
  } catch {
    basePath = "";
  }
  return basePath !== "" && url !== path && path.startsWith(`${basePath}/`)
    ? path.slice(basePath.length)
    : path;
}

/** Installs the refusal hook: a refused request throws before anything is sent. */
export function guardClient(client: GitHubClient): GitHubClient {
  client.hook.before("request", (o) => {
    const url = routePath(String(o.url), String((o as { baseUrl?: unknown }).baseUrl ?? ""));
    const expanded = url.replace(/\{(\w+)\}/g, (_m, k: string) =>
      encodeURIComponent(String((o as Record<string, unknown>)[k] ?? k)),
    );
    const why = refusal(String(o.method), expanded.split("?")[0] as string, o);
    if (why) throw new ForbiddenRequestError(why);
  });
  return client;
}

export interface CheckRunOutput {
  title: string;
  summary: string;
  text?: string;
  annotations?: Annotation[];
}

export interface GitHubGateway {
  /** The token's own login, once known (learned from what it created, or GET /user). */
  identity(): Promise<string | undefined>;
  listIssueComments(issue: number): Promise<IssueComment[]>;
  createIssueComment(issue: number, body: string): Promise<{ id: number; url: string }>;
  updateIssueComment(id: number, body: string): Promise<{ id: number; url: string }>;
  /**
   * A completed check run: the first 50 annotations in the create request and the rest in
   * updates of 50 (the API's per-request limit), each with the same title and summary.
   */
  createCheckRun(input: {
    name: string;
    headSha: string;
    conclusion: "success" | "failure" | "neutral";
    detailsUrl?: string;
    externalId?: string;
    output: Omit<CheckRunOutput, "annotations">;
    annotations: readonly Annotation[];
  }): Promise<{ id: number; url: string }>;
  setCommitStatus(input: {
    sha: string;
    state: "pending" | "success" | "failure" | "error";
    context: string;
    description: string;
    targetUrl?: string;
  }): Promise<void>;
  /** The user's repository role, cached per login for the gateway's lifetime. */
  collaboratorRole(login: string): Promise<{ level: PermissionLevel; name: string }>;
  getPullRequest(number: number): Promise<{
    headSha: string;
    baseSha: string;
    author: string;
    mergeCommitSha?: string;
    labels: string[];
    headRepo?: string;
    /** The head branch's name (in headRepo). */
    headRef?: string;
    /** How many commits the pull request has, as GitHub reports it. */
    commits?: number;
  }>;
  /** The open pull requests whose head is exactly `sha` (the commit's statuses are theirs too). */
  openPullRequestsWithHead(sha: string): Promise<{ number: number; base: string }[]>;
  /**
   * The pull request's commits, oldest first, with the logins GitHub maps their author and
   * committer to (absent when it maps none). GitHub lists at most 250.
   */
  listPullRequestCommits(
    number: number,
  ): Promise<{ sha: string; author?: string; committer?: string }[]>;
  setLabels(issue: number, labels: readonly string[]): Promise<void>;
  /** One of the documents in graphql-documents.ts (any other is refused before it is sent). */
  graphql<T>(document: string, variables: Record<string, unknown>): Promise<T>;
  /** A reaction on the pull request (issue), e.g. 👀 when a run starts. */
  addReaction(issue: number, content: "eyes" | "rocket" | "confused"): Promise<void>;
  /**
   * The issues (never pull requests) `creator` opened, open or closed, with their bodies: where
   * the ticket publisher finds its markers again when the run's own record of them is gone.
   */
  listIssuesBy(
    creator: string,
  ): Promise<{ number: number; url: string; author: string; body: string }[]>;
  /** A new issue (a ticket for an out-of-scope review item). */
  createIssue(title: string, body: string): Promise<{ number: number; url: string }>;
  /** workflow_dispatch of a workflow file on a ref, with string inputs. */
  dispatchWorkflow(workflow: string, ref: string, inputs: Record<string, string>): Promise<void>;
  /** Commits `head` has that `base` lacks, and the reverse. */
  compareCommits(base: string, head: string): Promise<{ aheadBy: number; behindBy: number }>;
}

export function createGateway(
  token: string,
  repo: RepoRef,
  options: ClientOptions & { identityHint?: string } = {},
): GitHubGateway {
  return gatewayForClient(createGitHubClient(token, options), repo, options.identityHint);
}

/**
 * The gateway over a client made elsewhere (Probot's installation Octokit): the refusal hook is
 * installed on it first, so the App's client can send nothing the Action's cannot.
 */
export function gatewayForClient(
  unguarded: GitHubClient,
  repo: RepoRef,
  identityHint?: string,
): GitHubGateway {
  const client = guardClient(unguarded);
  let me: string | undefined = identityHint;
  let meLooked = false;
  const roles = new Map<string, { level: PermissionLevel; name: string }>();
  return {
    async identity() {
      if (me || meLooked) return me;
      meLooked = true;
      try {
        me = (await client.rest.users.getAuthenticated()).data.login;
      } catch {
        // An installation token (GITHUB_TOKEN) cannot read /user; its identity is learned from
        // the check run it creates, or falls back to the Actions bot.
        me = "github-actions[bot]";
      }
      return me;
    },
    async listIssueComments(issue) {
      const items = await client.paginate(client.rest.issues.listComments, {
        ...repo,
        issue_number: issue,
        per_page: 100,
      });
      return items.map((c) => ({
        id: c.id,
        body: c.body ?? "",
        author: c.user?.login ?? "",
        authorType: c.user?.type ?? "",
        createdAt: c.created_at,
        updatedAt: c.updated_at,
        url: c.html_url,
      }));
    },
    async createIssueComment(issue, body) {
      const r = await client.rest.issues.createComment({ ...repo, issue_number: issue, body });
      if (r.data.user?.login) me = r.data.user.login;
      return { id: r.data.id, url: r.data.html_url };
    },
    async updateIssueComment(id, body) {
      const r = await client.rest.issues.updateComment({ ...repo, comment_id: id, body });
      return { id: r.data.id, url: r.data.html_url };
    },
    async createCheckRun(input) {
      const batches: Annotation[][] = [];
      for (let i = 0; i < input.annotations.length; i += ANNOTATIONS_PER_REQUEST)
        batches.push(input.annotations.slice(i, i + ANNOTATIONS_PER_REQUEST));
      const output = (batch: Annotation[] | undefined) => ({
        ...input.output,
        ...(batch && batch.length > 0 ? { annotations: batch } : {}),
      });
      const r = await client.rest.checks.create({
        ...repo,
        name: input.name,
        head_sha: input.headSha,
        status: "completed",
        conclusion: input.conclusion,
        ...(input.detailsUrl ? { details_url: input.detailsUrl } : {}),
        ...(input.externalId ? { external_id: input.externalId } : {}),
        output: output(batches[0]),
      });
      const slug = (r.data as { app?: { slug?: string } | null }).app?.slug;
      if (slug && !me) me = `${slug}[bot]`;
      for (const batch of batches.slice(1))
        await client.rest.checks.update({
          ...repo,
          check_run_id: r.data.id,
          output: output(batch),
        });
      return { id: r.data.id, url: r.data.html_url ?? "" };
    },
    async setCommitStatus(input) {
      await client.rest.repos.createCommitStatus({
        ...repo,
        sha: input.sha,
        state: input.state,
        context: input.context,
        description: input.description.slice(0, 140),
        ...(input.targetUrl ? { target_url: input.targetUrl } : {}),
      });
    },
    async collaboratorRole(login) {
      const cached = roles.get(login);
      if (cached) return cached;
      const r = await client.rest.repos.getCollaboratorPermissionLevel({
        ...repo,
        username: login,
      });
      const role = effectiveRole(r.data as Parameters<typeof effectiveRole>[0]);
      roles.set(login, role);
      return role;
    },
    async getPullRequest(number) {
      const r = await client.rest.pulls.get({ ...repo, pull_number: number });
      return {
        headSha: r.data.head.sha,
        baseSha: r.data.base.sha,
        author: r.data.user?.login ?? "",
        ...(r.data.merge_commit_sha ? { mergeCommitSha: r.data.merge_commit_sha } : {}),
        labels: r.data.labels.map((l) => l.name),
        ...(r.data.head.repo?.full_name ? { headRepo: r.data.head.repo.full_name } : {}),
        headRef: r.data.head.ref,
        ...(typeof r.data.commits === "number" ? { commits: r.data.commits } : {}),
      };
    },
    async openPullRequestsWithHead(sha) {
      const all = await client.paginate(client.rest.repos.listPullRequestsAssociatedWithCommit, {
        ...repo,
        commit_sha: sha,
        per_page: 100,
      });
      return all
        .filter((p) => p.state === "open" && p.head.sha === sha)
        .map((p) => ({ number: p.number, base: p.base.ref }));
    },
    async listPullRequestCommits(number) {
      const items = await client.paginate(client.rest.pulls.listCommits, {
        ...repo,
        pull_number: number,
        per_page: 100,
      });
      return items.map((c) => ({
        sha: c.sha,
        ...(c.author?.login ? { author: c.author.login } : {}),
        ...(c.committer?.login ? { committer: c.committer.login } : {}),
      }));
    },
    async setLabels(issue, labels) {
      await client.rest.issues.setLabels({ ...repo, issue_number: issue, labels: [...labels] });
    },
    async graphql<T>(document: string, variables: Record<string, unknown>) {
      return (await client.graphql(document, variables)) as T;
    },
    async addReaction(issue, content) {
      await client.rest.reactions.createForIssue({ ...repo, issue_number: issue, content });
    },
    async listIssuesBy(creator) {
      const items = await client.paginate(client.rest.issues.listForRepo, {
        ...repo,
        creator,
        state: "all",
        per_page: 100,
      });
      return items
        .filter((i) => !i.pull_request)
        .map((i) => ({
          number: i.number,
          url: i.html_url,
          author: i.user?.login ?? "",
          body: i.body ?? "",
        }));
    },
    async createIssue(title, body) {
      const r = await client.rest.issues.create({ ...repo, title, body });
      return { number: r.data.number, url: r.data.html_url };
    },
    async dispatchWorkflow(workflow, ref, inputs) {
      await client.rest.actions.createWorkflowDispatch({
        ...repo,
        workflow_id: workflow,
        ref,
        inputs,
      });
    },
    async compareCommits(base, head) {
      const r = await client.rest.repos.compareCommitsWithBasehead({
        ...repo,
        basehead: `${base}...${head}`,
        per_page: 1,
      });
      return { aheadBy: r.data.ahead_by, behindBy: r.data.behind_by };
    },
  };
}
