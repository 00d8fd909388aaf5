/**
 * The bundled Action (dist/index.js), run as the runner runs it, against real git repositories
 * with base, head and merge commits; GitHub is a stateful fake on nock (no network) and every
 * request is checked against GitHub's OpenAPI description.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Nodes } from "mdast";
import { fromMarkdown } from "mdast-util-from-markdown";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  commitAll,
  copyInto,
  fixture,
  git,
  newRepo,
  OWNER,
  REPO,
  runAction,
} from "./helpers/action-harness.ts";
import { EXAMPLE, edit, grant, prRepo, write } from "./helpers/example-project.ts";
import { type FakeComment, fakeGitHub, humanComment } from "./helpers/fake-github.ts";

const GOLDEN = join(import.meta.dirname, "golden", "action");

beforeAll(() => {
  nock.disableNetConnect();
});
afterEach(() => {
  nock.cleanAll();
});

// biome-ignore lint/suspicious/noExplicitAny: webhook example payloads are loose JSON, adapted field by field
type Loose = Record<string, any>;

function prPayload(head: string, base: string, author = "alice", labels: string[] = []): Loose {
  const p = fixture("pull_request.opened") as Loose;
  p.number = 7;
  p.pull_request.number = 7;
  p.pull_request.head.sha = head;
  p.pull_request.base.sha = base;
  p.pull_request.user.login = author;
  p.pull_request.merge_commit_sha = null;
  p.pull_request.labels = labels.map((name) => ({ name }));
  p.repository.name = REPO;
  p.repository.owner.login = OWNER;
  p.repository.full_name = `${OWNER}/${REPO}`;
  return p;
}

function commentPayload(opts: { body: string; user: string; type?: string; action?: string }) {
  const name =
    opts.action === "edited"
      ? "issue_comment.edited"
      : opts.action === "deleted"
        ? "issue_comment.deleted"
        : "issue_comment.created";
  const p = fixture(name) as Loose;
  p.action = opts.action ?? "created";
  p.issue.number = 7;
  p.issue.pull_request = { url: `https://api.github.com/repos/${OWNER}/${REPO}/pulls/7` };
  p.comment.body = opts.body;
  p.comment.user.login = opts.user;
  p.comment.user.type = opts.type ?? "User";
  p.comment.created_at = "2026-12-01T10:00:00Z";
  p.comment.updated_at = "2026-12-01T10:00:00Z";
  p.repository.name = REPO;
  p.repository.owner.login = OWNER;
  return p;
}

const inputs = (extra: Record<string, string> = {}) => ({ project: "agents", ...extra });

async function openPr(
  r: { repo: string; base: string; head: string },
  gh: ReturnType<typeof fakeGitHub>,
  extra: Record<string, string> = {},
  sha?: string,
) {
  gh.pr ??= { headSha: r.head, baseSha: r.base, author: "alice" };
  return runAction({
    event: "pull_request",
    payload: prPayload(r.head, r.base),
    workspace: r.repo,
    inputs: inputs(extra),
    ...(sha ? { sha } : {}),
  });
}

/** The plan job's sticky comments (each ends with its record of who pushed the head). */
const stickies = (gh: ReturnType<typeof fakeGitHub>) =>
  gh.comments.filter((c) => c.body.startsWith("<!-- terfyn:plan project="));

const planComment = (gh: ReturnType<typeof fakeGitHub>, project = "agents") =>
  gh.comments.find((c) => c.body.startsWith(`<!-- terfyn:plan project=${project} -->`));

describe("pull_request: the seed's widening", () => {
  it("blocks it: a golden comment, the grant line annotated, a failed check and step, a status, 5 calls", async () => {
    const r = prRepo((p) => grant(p, "Reviewer", "tool.workspace.write_file"));
    const gh = fakeGitHub();
    const run = await openPr(r, gh);
    gh.done();
    expect(run.failed).toBe(true);
    expect(run.stdout).toContain("::error::terfyn: agents: ");
    const body = planComment(gh)?.body ?? "";
    const golden = join(GOLDEN, "seed-widening-comment.md");
    if (process.env.UPDATE_GOLDEN) writeFileSync(golden, body);
    expect(body).toBe(readFileSync(golden, "utf8"));
    expect(body.split("\n")[1]).toMatch(
      /^### ⛔ Terfyn · `agents` · blocked \(1 forbidden, 1 failing test, 1 widened/,
    );
    const check = gh.checkRuns[0]!.body as Loose;
    expect(check.conclusion).toBe("failure");
    expect(check.head_sha).toBe(r.head);
    expect(check.details_url).toBe(`https://github.com/${OWNER}/${REPO}/actions/runs/4242`);
    const failure = check.output.annotations.find((a: Loose) => a.annotation_level === "failure");
    expect(failure).toMatchObject({ path: "agents/main.agent", start_line: 58 });
    expect(git(r.repo, "show", `${r.head}:agents/main.agent`).split("\n")[57]).toBe(
      "    tool.workspace.write_file",
    );
    expect(gh.statuses).toEqual([
      expect.objectContaining({ sha: r.head, state: "failure", context: "terfyn/approval" }),
    ]);
    expect(run.outputs.widened).toBe("true");
    expect(run.outputs.forbidden).toBe("true");
    expect(run.outputs["has-changes"]).toBe("true");
    expect(run.outputs.approved).toBe("false");
    expect(run.outputs["check-run-id"]).toBe(String(gh.checkRuns[0]!.id));
    expect(run.outputs["comment-url"]).toContain("#issuecomment-");
    expect(run.outputs["plan-hash"]).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(JSON.parse(run.outputs["plan-json"] ?? "null").hash).toBe(run.outputs["plan-hash"]);
    const file = JSON.parse(readFileSync(run.outputs["plan-json-file"]!, "utf8"));
    expect(file.plan.hash).toBe(run.outputs["plan-hash"]);
    expect(run.summary).toContain("autonomous -> WIDENED");
    const annotations = check.output.annotations.length as number;
    // Comments, the pull requests sharing the head, the status, and the check run (with one
    // update per 50 annotations past the first 50).
    expect(run.requests.length).toBeLessThanOrEqual(4 + Math.ceil(annotations / 50));
  });

  it("updates its own comment in place, and never edits one someone else planted with the marker", async () => {
    const r = prRepo((p) => grant(p, "Reviewer", "tool.workspace.write_file"));
    const planted = humanComment("mallory", "<!-- terfyn:plan project=agents -->\n✅ all fine");
    const gh = fakeGitHub({ comments: [planted] });
    await openPr(r, gh);
    expect(planted.body).toBe("<!-- terfyn:plan project=agents -->\n✅ all fine");
    const mine = gh.comments.filter((c) => c.user.login === "github-actions[bot]");
    expect(mine).toHaveLength(1);
    const first = mine[0]!.body;
    // A second push changes the plan: the same comment is updated.
    git(r.repo, "checkout", "-q", "feature");
    edit(join(r.repo, "agents"), "main.agent", "limit 3", "limit 4");
    const head2 = commitAll(r.repo, "second push");
    git(r.repo, "checkout", "-q", "main");
    gh.pr = { headSha: head2, baseSha: r.base, author: "alice" };
    await openPr({ ...r, head: head2 }, gh);
    expect(gh.comments.filter((c) => c.user.login === "github-actions[bot]")).toHaveLength(1);
    expect(mine[0]!.body).not.toBe(first);
    expect(mine[0]!.body).toContain("loop_bound_raised");
    // An identical run changes nothing.
    gh.requests.length = 0;
    await openPr({ ...r, head: head2 }, gh);
    gh.done();
    expect(gh.requests).not.toContain("PATCH comment");
    expect(gh.requests).not.toContain("POST comments");
  });

  it("with a read-only token (a fork) annotates through workflow commands, 10 per level, and keeps the plan in the summary", async () => {
    const r = prRepo((p) => {
      grant(p, "Reviewer", "tool.workspace.write_file");
      for (let i = 0; i < 14; i++)
        write(
          p,
          `extra${i}.agent`,
          `agent Extra${i} {\n  input CodingState\n  output CodingState\n  grants {\n    tool.workspace.run_tests\n  }\n}\n`,
        );
    });
    const gh = fakeGitHub({ fail: { "POST check-runs": 403, "POST comments": 403 } });
    const run = await openPr(r, gh);
    gh.done();
    expect(run.failed).toBe(true);
    expect(run.stdout).toMatch(/::warning::.*fork's pull request gets a read-only token/);
    const lines = run.stdout.split("\n");
    const errors = lines.filter((l) => l.startsWith("::error title="));
    const warnings = lines.filter((l) => l.startsWith("::warning title="));
    expect(errors.some((l) => l.includes("Forbidden effect") && l.includes("line=58"))).toBe(true);
    expect(warnings.length).toBe(10);
    expect(lines.some((l) => /^::notice::\d+ more annotations are not shown/.test(l))).toBe(true);
    expect(run.summary).toContain("autonomous -> WIDENED");
    expect(run.outputs.forbidden).toBe("true");
  });
});

describe("pull_request: quiet when nothing changed", () => {
  it("creates no comment when no authority or resource changed, but sets a success check and status", async () => {
    const r = prRepo((p) => write(p, "../README.md", "agents, documented\n"));
    const gh = fakeGitHub();
    const run = await openPr(r, gh);
    gh.done();
    expect(run.failed).toBe(false);
    expect(gh.comments).toEqual([]);
    expect((gh.checkRuns[0]!.body as Loose).conclusion).toBe("success");
    expect(gh.statuses[0]).toMatchObject({ state: "success", description: "no approval needed" });
    expect(run.outputs["has-changes"]).toBe("false");
  });

  it("updates an existing comment to say so, and `comment: always` creates one", async () => {
    const r = prRepo((p) => write(p, "../README.md", "agents, documented\n"));
    const old = {
      ...humanComment("github-actions[bot]", "<!-- terfyn:plan project=agents -->\nold plan"),
      user: { login: "github-actions[bot]", type: "Bot" },
    };
    const gh = fakeGitHub({ comments: [old] });
    await openPr(r, gh);
    expect(old.body).toContain("no changes");
    gh.done();
    const gh2 = fakeGitHub();
    await openPr(r, gh2, { comment: "always" });
    gh2.done();
    expect(planComment(gh2)?.body).toContain("no changes");
  });
});

describe("pull_request: read exactly what git holds", () => {
  it("names with a newline, a tab and quotes cannot shift blobs: the forbidden widening is still found", async () => {
    const r = prRepo((p) => {
      writeFileSync(join(p, "x\nmain.agent"), "// decoy\n");
      writeFileSync(join(p, "tab\there.yaml"), "# decoy\n");
      writeFileSync(join(p, 'it\'s "q".agent'), "// a comment only\n");
      grant(p, "Reviewer", "tool.workspace.write_file");
    });
    const gh = fakeGitHub();
    const run = await openPr(r, gh);
    gh.done();
    expect(run.failed).toBe(true);
    const body = planComment(gh)?.body ?? "";
    expect(body).toContain("TF2010");
    expect(body).toContain("x\\u000amain.agent");
    expect(body).toContain("tab\\u0009here.yaml");
    expect(body).not.toContain("no changes");
  });
});

describe("pull_request: plan what would merge", () => {
  // The base has no policy against Reviewer writes; main gains one after the branch point.
  const loosen = (p: string) => {
    edit(
      p,
      "policies.yaml",
      "    - forbid: { agent: Reviewer, effect: workspace.write }\n",
      "    - maxLoopLimit: 10\n",
    );
    edit(
      p,
      "tests/capabilities.yaml",
      /\s*- forbidEffect: \{ agent: Reviewer, effect: workspace\.write \}/,
      "",
    );
  };

  it("a policy added on main after the branch point blocks the branch's widening (no fail-open)", async () => {
    const repo = newRepo();
    copyInto(EXAMPLE, repo, "agents");
    loosen(join(repo, "agents"));
    commitAll(repo, "base without the policy");
    git(repo, "checkout", "-q", "-b", "feature");
    grant(join(repo, "agents"), "Reviewer", "tool.workspace.write_file");
    const head = commitAll(repo, "widen the Reviewer");
    git(repo, "checkout", "-q", "main");
    writeFileSync(
      join(repo, "agents", "no-writes.yaml"),
      readFileSync(join(EXAMPLE, "policies.yaml"), "utf8").split("---")[0]!,
    );
    const base = commitAll(repo, "main adds the policy");
    const gh = fakeGitHub();
    const run = await openPr({ repo, base, head }, gh);
    gh.done();
    expect(run.failed).toBe(true);
    const body = planComment(gh)?.body ?? "";
    expect(body).toMatch(/· blocked \(/);
    expect(body).toContain("merge (computed tree)");
    expect(body).toContain(`base \`${base.slice(0, 12)}\``);
    expect(body).toContain(`head \`${head.slice(0, 12)}\``);
  });

  it("a narrowing made on main is not this branch's widening (no false block)", async () => {
    const repo = newRepo();
    copyInto(EXAMPLE, repo, "agents");
    commitAll(repo, "base");
    git(repo, "checkout", "-q", "-b", "feature");
    write(repo, "README.md", "docs only\n");
    const head = commitAll(repo, "docs");
    git(repo, "checkout", "-q", "main");
    edit(
      join(repo, "agents"),
      "main.agent",
      "    tool.workspace.run_tests\n  }\n}\n\nworkflow",
      "  }\n}\n\nworkflow",
    );
    const base = commitAll(repo, "main narrows the Reviewer");
    const gh = fakeGitHub();
    const run = await openPr({ repo, base, head }, gh, { "fail-on": "widening" });
    gh.done();
    expect(run.outputs.widened).toBe("false");
    expect(run.failed).toBe(false);
  });

  it("uses GitHub's test merge commit when it is exactly base + head", async () => {
    const r = prRepo((p) => grant(p, "Reviewer", "tool.workspace.write_file"));
    git(r.repo, "checkout", "-q", "--detach", r.base);
    git(r.repo, "merge", "-q", "--no-ff", "--no-edit", r.head);
    const merge = git(r.repo, "rev-parse", "HEAD");
    git(r.repo, "checkout", "-q", "main");
    const gh = fakeGitHub();
    await openPr(r, gh, {}, merge);
    gh.done();
    expect(planComment(gh)?.body).toContain(`merge \`${merge.slice(0, 12)}\``);
  });

  it("ignores a test merge commit of another base (the base moved since GitHub computed it)", async () => {
    const r = prRepo((p) => grant(p, "Reviewer", "tool.workspace.write_file"));
    git(r.repo, "checkout", "-q", "--detach", r.base);
    git(r.repo, "merge", "-q", "--no-ff", "--no-edit", r.head);
    const stale = git(r.repo, "rev-parse", "HEAD");
    git(r.repo, "checkout", "-q", "main");
    write(r.repo, "CHANGELOG.md", "moved on\n");
    const base = commitAll(r.repo, "main moved");
    const gh = fakeGitHub();
    await openPr({ ...r, base }, gh, {}, stale);
    gh.done();
    const body = planComment(gh)?.body ?? "";
    expect(body).toContain("merge (computed tree)");
    expect(body).not.toContain(stale.slice(0, 12));
  });

  it("a conflicting branch says it cannot be planned, and fails", async () => {
    const repo = newRepo();
    copyInto(EXAMPLE, repo, "agents");
    commitAll(repo, "base");
    git(repo, "checkout", "-q", "-b", "feature");
    edit(join(repo, "agents"), "main.agent", "limit 3", "limit 4");
    const head = commitAll(repo, "branch");
    git(repo, "checkout", "-q", "main");
    edit(join(repo, "agents"), "main.agent", "limit 3", "limit 5");
    const base = commitAll(repo, "main");
    const gh = fakeGitHub();
    const run = await openPr({ repo, base, head }, gh);
    gh.done();
    expect(run.failed).toBe(true);
    const body = planComment(gh)?.body ?? "";
    expect(body).toContain("conflicts with the base");
    expect(body).toContain("`agents/main.agent`");
  });

  it("a base that does not validate is named in the comment and not used as the prior", async () => {
    const r = prRepo(
      (p) => write(p, "broken.agent", "// fixed\n"),
      (p) => write(p, "broken.agent", "agent {{{\n"),
    );
    const gh = fakeGitHub();
    await openPr(r, gh);
    gh.done();
    const body = planComment(gh)?.body ?? "";
    expect(body).toContain("The base's project does not validate");
    expect(body).toContain("everything is planned as new");
  });
});

describe("a repository unlike the examples", () => {
  it("a project at the repository root among Python sources, no .gitignore", async () => {
    const repo = newRepo();
    copyInto(EXAMPLE, repo, ".");
    mkdirSync(join(repo, "app"), { recursive: true });
    mkdirSync(join(repo, "tests"), { recursive: true });
    write(repo, "app/__init__.py", "");
    write(repo, "app/main.py", "def add(a, b):\n    return a + b\n");
    write(repo, "tests/test_main.py", "import unittest\n");
    const base = commitAll(repo, "base");
    git(repo, "checkout", "-q", "-b", "feature");
    grant(repo, "Reviewer", "tool.workspace.write_file");
    write(repo, "app/main.py", "def add(a, b):\n    return b + a\n");
    const head = commitAll(repo, "widen");
    git(repo, "checkout", "-q", "main");
    const gh = fakeGitHub();
    const run = await runAction({
      event: "pull_request",
      payload: prPayload(head, base),
      workspace: repo,
      inputs: { project: "." },
    });
    gh.done();
    expect(run.failed).toBe(true);
    const body =
      gh.comments.find((c) => c.body.startsWith("<!-- terfyn:plan project=. -->"))?.body ?? "";
    expect(body.split("\n")[1]).toMatch(/^### ⛔ Terfyn · `\(repository root\)` · blocked/);
    const check = gh.checkRuns[0]!.body as Loose;
    expect(check.name).toBe("terfyn: (repository root)");
    expect(
      check.output.annotations.find((a: Loose) => a.annotation_level === "failure"),
    ).toMatchObject({ path: "main.agent", start_line: 58 });
  });

  it("a project directory whose name holds spaces and glob characters is matched literally", async () => {
    const dir = "team agents [prod]*";
    const repo = newRepo();
    copyInto(EXAMPLE, repo, dir);
    copyInto(EXAMPLE, repo, "team agents x");
    const base = commitAll(repo, "base");
    git(repo, "checkout", "-q", "-b", "feature");
    write(
      join(repo, dir),
      "deployer.agent",
      "agent Deployer {\n  input CodingState\n  output CodingState\n  grants {\n    tool.workspace.run_tests\n  }\n}\n",
    );
    const head = commitAll(repo, "widen");
    git(repo, "checkout", "-q", "main");
    const gh = fakeGitHub();
    const run = await runAction({
      event: "pull_request",
      payload: prPayload(head, base),
      workspace: repo,
      inputs: { project: "team agents x\nteam agents [prod]*" },
    });
    gh.done();
    expect(run.outputs.widened).toBe("true");
    const body =
      gh.comments.find((c) =>
        c.body.startsWith(`<!-- terfyn:plan project=${encodeURIComponent(dir)} -->`),
      )?.body ?? "";
    expect(body).toContain("+ create Agent/Deployer");
  });
});

describe("merge_group and push", () => {
  it("merge_group plans the queue's commit: a check run and outputs, no comment", async () => {
    const r = prRepo((p) => grant(p, "Reviewer", "tool.workspace.write_file"));
    const p = fixture("merge_group.checks_requested") as Loose;
    p.merge_group.head_sha = r.head;
    p.merge_group.base_sha = r.base;
    p.repository.name = REPO;
    p.repository.owner.login = OWNER;
    const gh = fakeGitHub();
    const run = await runAction({
      event: "merge_group",
      payload: p,
      workspace: r.repo,
      inputs: inputs(),
    });
    gh.done();
    expect(run.failed).toBe(true);
    expect(gh.comments).toEqual([]);
    expect((gh.checkRuns[0]!.body as Loose).head_sha).toBe(r.head);
    expect(run.outputs.forbidden).toBe("true");
  });

  it("push plans against the previous commit: job summary and outputs", async () => {
    const r = prRepo((p) =>
      write(
        p,
        "deployer.agent",
        "agent Deployer {\n  input CodingState\n  output CodingState\n  grants {\n    tool.workspace.run_tests\n  }\n}\n",
      ),
    );
    const p = fixture("push") as Loose;
    p.before = r.base;
    p.after = r.head;
    p.repository.name = REPO;
    p.repository.owner = { login: OWNER, name: OWNER };
    const gh = fakeGitHub();
    const run = await runAction({ event: "push", payload: p, workspace: r.repo, inputs: inputs() });
    gh.done();
    expect(run.failed).toBe(false);
    expect(gh.comments).toEqual([]);
    expect(run.summary).toContain("+ create Agent/Deployer");
    expect(run.outputs["has-changes"]).toBe("true");
  });
});

describe("approvals by comment", () => {
  // A widening no policy or capability test forbids: a new agent that may run the tests.
  const deployer =
    "agent Deployer {\n  input CodingState\n  output CodingState\n  grants {\n    tool.workspace.run_tests\n  }\n}\n";
  const widened = () => prRepo((p) => write(p, "deployer.agent", deployer));
  /** The sticky comments each repository's plan job left (with its record of the pusher). */
  const planned = new WeakMap<object, FakeComment[]>();

  async function hashOf(r: { repo: string; base: string; head: string }) {
    const gh = fakeGitHub();
    const run = await openPr(r, gh, { "fail-on": "widening" });
    gh.done();
    expect(run.failed).toBe(true);
    planned.set(r, stickies(gh));
    return run.outputs["plan-hash"] as string;
  }

  async function approve(
    r: { repo: string; base: string; head: string },
    gh: ReturnType<typeof fakeGitHub>,
    body: string,
    user = "bob",
    extra: { type?: string; action?: string; approvers?: string } = {},
  ) {
    gh.pr ??= { headSha: r.head, baseSha: r.base, author: "alice" };
    // The issue_comment job runs after the plan job: its sticky comment is on the pull request.
    if (gh.comments.length === 0)
      gh.comments.push(...(planned.get(r) ?? []).map((c) => ({ ...c })));
    const c = humanComment(user, body);
    if (extra.type) c.user.type = extra.type;
    gh.comments.push(c);
    return runAction({
      event: "issue_comment",
      payload: commentPayload({ body, user, ...extra }),
      workspace: r.repo,
      inputs: inputs({
        "fail-on": "widening",
        ...(extra.approvers ? { approvers: extra.approvers } : {}),
      }),
    });
  }

  it("approves exactly that hash, and re-evaluates in the same run: check, comment and status say approved by @bob (maintain)", async () => {
    const r = widened();
    const hash = await hashOf(r);
    const gh = fakeGitHub({ roles: { bob: { role_name: "maintain", permission: "write" } } });
    const run = await approve(r, gh, `LGTM\n\n/terfyn approve ${hash}`, "bob", {
      approvers: "maintain",
    });
    gh.done();
    expect(run.failed).toBe(false);
    const replies = gh.comments.filter((c) => c.user.login === "github-actions[bot]");
    expect(replies.some((c) => c.body.startsWith("✅ Approved by @bob (maintain)"))).toBe(true);
    expect(planComment(gh)?.body).toContain("approved by @bob (maintain)");
    expect(planComment(gh)?.body).not.toContain("To approve this plan");
    const check = gh.checkRuns.at(-1)!.body as Loose;
    expect(check.conclusion).toBe("success");
    expect(check.output.title).toContain("approved by @bob (maintain)");
    expect(gh.statuses.at(-1)).toMatchObject({ state: "success", context: "terfyn/approval" });
  });

  it("before approval the status is pending and the comment shows who may approve and the command", async () => {
    const r = widened();
    const gh = fakeGitHub();
    const run = await openPr(r, gh, { approvers: "maintain" });
    gh.done();
    expect(run.failed).toBe(false);
    expect(gh.statuses[0]).toMatchObject({ state: "pending", context: "terfyn/approval" });
    const body = planComment(gh)?.body ?? "";
    expect(body).toContain("· needs approval (");
    expect(body).toContain("the **maintain** role or higher");
    expect(body).toContain(`/terfyn approve ${run.outputs["plan-hash"]}`);
  });

  it("triage approvers: a triage role_name counts even though the legacy permission says read", async () => {
    const r = widened();
    const hash = await hashOf(r);
    const gh = fakeGitHub({ roles: { tina: { role_name: "triage", permission: "read" } } });
    await approve(r, gh, `/terfyn approve ${hash}`, "tina", { approvers: "triage" });
    gh.done();
    expect(gh.statuses.at(-1)).toMatchObject({ state: "success" });
  });

  const refusals: {
    name: string;
    body: (hash: string) => string;
    user: string;
    type?: string;
    role?: string;
    expect: string;
  }[] = [
    {
      name: "a wrong hash",
      body: () => `/terfyn approve sha256:${"a".repeat(64)}`,
      user: "bob",
      expect: "that is not the plan the current head produces",
    },
    {
      name: "a read role",
      body: (h) => `/terfyn approve ${h}`,
      user: "carol",
      role: "read",
      expect: "@carol has the `read` role",
    },
    {
      name: "a bot",
      body: (h) => `/terfyn approve ${h}`,
      user: "helper[bot]",
      type: "Bot",
      expect: "approvals from bots never count",
    },
    {
      name: "the pull request's author",
      body: (h) => `/terfyn approve ${h}`,
      user: "alice",
      expect: "cannot approve its own plan",
    },
  ];
  for (const x of refusals) {
    it(`refuses ${x.name}, with a reply, and approves nothing`, async () => {
      const r = widened();
      const hash = await hashOf(r);
      const gh = fakeGitHub({
        roles: { [x.user]: { role_name: x.role ?? "write", permission: x.role ?? "write" } },
      });
      const run = await approve(r, gh, x.body(hash), x.user, x.type ? { type: x.type } : {});
      gh.done();
      expect(run.failed).toBe(false);
      expect(gh.statuses).toEqual([]);
      const replies = gh.comments.filter(
        (c) => c.user.login === "github-actions[bot]" && !c.body.startsWith("<!-- terfyn:plan"),
      );
      expect(replies).toHaveLength(1);
      expect(replies[0]!.body).toContain("❌ Not approved");
      expect(replies[0]!.body).toContain(x.expect);
    });
  }

  it("a personal token's own comments never approve (the identity is read from /user)", async () => {
    const r = widened();
    const hash = await hashOf(r);
    const gh = fakeGitHub({
      me: "terfyn-robot",
      roles: { "terfyn-robot": { role_name: "admin", permission: "admin" } },
    });
    await approve(r, gh, `/terfyn approve ${hash}`, "terfyn-robot");
    gh.done();
    expect(gh.statuses).toEqual([]);
    expect(gh.comments.some((c) => c.body.includes("approvals from bots never count"))).toBe(true);
  });

  for (const action of ["edited", "deleted"]) {
    it(`an issue_comment.${action} event never approves and sends nothing`, async () => {
      const r = widened();
      const hash = await hashOf(r);
      const gh = fakeGitHub({ roles: { bob: { role_name: "admin", permission: "admin" } } });
      const run = await approve(r, gh, `/terfyn approve ${hash}`, "bob", { action });
      gh.done();
      expect(run.failed).toBe(false);
      expect(gh.requests).toEqual([]);
    });
  }

  for (const [name, body] of [
    ["a fenced code block", (h: string) => `\`\`\`\n/terfyn approve ${h}\n\`\`\``],
    ["an indented code block", (h: string) => `see:\n\n    /terfyn approve ${h}\n`],
    ["a block quote", (h: string) => `> /terfyn approve ${h}`],
    ["an HTML comment", (h: string) => `<!--\n/terfyn approve ${h}\n-->`],
    ["an inline code span", (h: string) => `\`/terfyn approve ${h}\``],
  ] as const) {
    it(`a command inside ${name} does not count`, async () => {
      const r = widened();
      const hash = await hashOf(r);
      const gh = fakeGitHub({ roles: { bob: { role_name: "admin", permission: "admin" } } });
      const run = await approve(r, gh, body(hash), "bob");
      gh.done();
      expect(run.failed).toBe(false);
      expect(gh.statuses).toEqual([]);
    });
  }

  it("a stale hash after a new push is refused, showing both hashes", async () => {
    const r = widened();
    const old = await hashOf(r);
    git(r.repo, "checkout", "-q", "feature");
    edit(join(r.repo, "agents"), "main.agent", "limit 3", "limit 4");
    const head2 = commitAll(r.repo, "new push");
    git(r.repo, "checkout", "-q", "main");
    const gh = fakeGitHub({ roles: { bob: { role_name: "write", permission: "write" } } });
    await approve({ ...r, head: head2 }, gh, `/terfyn approve ${old}`);
    gh.done();
    const reply = gh.comments.find((c) => c.body.startsWith("❌"))?.body ?? "";
    expect(reply).toContain(`You approved: \`${old}\``);
    expect(reply).toMatch(/The current head \([0-9a-f]{12}\) produces:\n- `agents`: `sha256:/);
    expect(gh.statuses).toEqual([]);
  });

  it("approval is per project: approving one project's hash leaves the other waiting", async () => {
    const repo = newRepo();
    copyInto(EXAMPLE, repo, "one");
    copyInto(EXAMPLE, repo, "two");
    edit(join(repo, "two"), "terfyn.yaml", /name: [\w-]+/, "name: two");
    const base = commitAll(repo, "base");
    git(repo, "checkout", "-q", "-b", "feature");
    write(join(repo, "one"), "deployer.agent", deployer);
    write(join(repo, "two"), "deployer.agent", deployer.replace("run_tests", "read_file"));
    const head = commitAll(repo, "head");
    git(repo, "checkout", "-q", "main");
    const first = fakeGitHub();
    const run = await runAction({
      event: "pull_request",
      payload: prPayload(head, base),
      workspace: repo,
      inputs: { project: "one, two" },
    });
    first.done();
    const hashOne = JSON.parse(run.outputs["plan-json"]!)[0].hash as string;
    const gh = fakeGitHub({
      roles: { bob: { role_name: "write", permission: "write" } },
      pr: { headSha: head, baseSha: base, author: "alice" },
      comments: stickies(first),
    });
    const c = humanComment("bob", `/terfyn approve ${hashOne}`);
    gh.comments.push(c);
    const approved = await runAction({
      event: "issue_comment",
      payload: commentPayload({ body: c.body, user: "bob" }),
      workspace: repo,
      inputs: { project: "one, two" },
    });
    gh.done();
    expect(approved.outputs.approved).toBe("false");
    expect(planComment(gh, "one")?.body).toContain("approved by @bob");
    expect(planComment(gh, "two")?.body).toContain("needs approval");
    expect(gh.statuses.at(-1)).toMatchObject({
      state: "pending",
      description: "needs /terfyn approve: two",
    });
  });
});

describe("a changed system prompt", () => {
  it("shows as a line diff in the comment, not as a character count", async () => {
    const r = prRepo((p) =>
      edit(
        p,
        "main.agent",
        "You must not modify the workspace.",
        "You may fix typos in the workspace.",
      ),
    );
    const gh = fakeGitHub();
    await openPr(r, gh);
    gh.done();
    const body = planComment(gh)?.body ?? "";
    expect(body).toContain("<code>spec.instructions</code> changed</summary>");
    expect(body).toContain(
      "```diff\n-You are the Reviewer, independent of the Implementer. You must not modify the workspace.\n+You are the Reviewer, independent of the Implementer. You may fix typos in the workspace.\n",
    );
  });
});

describe("the comment cannot be forged through repository values", () => {
  it("a capability test's agent field and an agent name inject no heading, mention, image, link or </details>", async () => {
    const evil =
      "Reviewer\n# Owned @admin ![x](https://evil.example/x.png) [click](https://evil.example) </details><script>";
    const r = prRepo((p) => {
      write(
        p,
        "tests/evil.yaml",
        `apiVersion: terfyn.dev/v1\nkind: CapabilityTest\nmetadata: { name: evil }\nspec:\n  assertions:\n    - forbidEffect: { agent: ${JSON.stringify(evil)}, effect: workspace.write }\n`,
      );
      grant(p, "Reviewer", "tool.workspace.write_file");
    });
    const gh = fakeGitHub();
    await openPr(r, gh);
    gh.done();
    const body = planComment(gh)?.body ?? "";
    const tree = fromMarkdown(body);
    const kinds = new Map<string, number>();
    const visit = (n: Nodes) => {
      kinds.set(n.type, (kinds.get(n.type) ?? 0) + 1);
      if ("children" in n) for (const c of n.children) visit(c as Nodes);
      if (n.type === "html")
        expect(n.value).toMatch(
          /^(<!-- terfyn:plan project=agents -->|<!-- terfyn:pushed-by [0-9a-f]{40} Codertocat -->|<details><summary>[^<]*<\/summary>|<\/details>)$/,
        );
      if (n.type === "heading") expect(n.depth).toBe(3);
    };
    visit(tree);
    expect(kinds.get("heading")).toBe(1);
    expect(kinds.get("image")).toBeUndefined();
    expect(kinds.get("link") ?? 0).toBe(1); // the workflow run link only
    // Mentions only happen in prose: "@admin" may appear inside code spans, never in text.
    const texts: string[] = [];
    const collect = (n: Nodes) => {
      if (n.type === "text") texts.push(n.value);
      if ("children" in n) for (const c of n.children) collect(c as Nodes);
    };
    collect(tree);
    expect(texts.join("\n")).not.toMatch(/@admin/);
  });
});

describe("settings", () => {
  it("an invalid input fails the step with one line naming the input", async () => {
    const r = prRepo((p) => grant(p, "Reviewer", "tool.workspace.write_file"));
    const run = await runAction({
      event: "pull_request",
      payload: prPayload(r.head, r.base),
      workspace: r.repo,
      inputs: inputs({ "fail-on": "sometimes" }),
    });
    expect(run.failed).toBe(true);
    expect(run.requests).toEqual([]);
    expect(run.stdout).toContain(
      "::error::terfyn: input `fail-on` must be forbidden, widening or any-change",
    );
  });

  it("a pattern that matches no project says so", async () => {
    const r = prRepo((p) => grant(p, "Reviewer", "tool.workspace.write_file"));
    const run = await runAction({
      event: "pull_request",
      payload: prPayload(r.head, r.base),
      workspace: r.repo,
      inputs: { project: "nothing/*" },
    });
    expect(run.failed).toBe(true);
    expect(run.stdout).toMatch(
      /::error::terfyn: no Terfyn project .* matches input `project`: nothing\/\*/,
    );
  });

  it("pull-request: N plans that pull request from a workflow_run job (the fork recipe), and rejects a non-number", async () => {
    const r = prRepo((p) => grant(p, "Reviewer", "tool.workspace.write_file"));
    const gh = fakeGitHub({ pr: { headSha: r.head, baseSha: r.base, author: "fork-user" } });
    const run = await runAction({
      event: "workflow_run",
      payload: { workflow_run: { id: 1 } },
      workspace: r.repo,
      inputs: inputs({ "pull-request": "7" }),
    });
    gh.done();
    expect(run.failed).toBe(true);
    expect(planComment(gh)?.body).toMatch(/· blocked \(/);
    const bad = await runAction({
      event: "workflow_run",
      payload: {},
      workspace: r.repo,
      inputs: inputs({ "pull-request": "7; rm -rf /" }),
    });
    expect(bad.stdout).toContain("input `pull-request` must be a pull request number");
    expect(bad.requests).toEqual([]);
  });

  it("labels: true adds terfyn:widened and terfyn:forbidden and keeps the other labels", async () => {
    const r = prRepo((p) => grant(p, "Reviewer", "tool.workspace.write_file"));
    const gh = fakeGitHub({ labels: ["bug"] });
    gh.pr = { headSha: r.head, baseSha: r.base, author: "alice" };
    await runAction({
      event: "pull_request",
      payload: prPayload(r.head, r.base, "alice", ["bug"]),
      workspace: r.repo,
      inputs: inputs({ labels: "true" }),
    });
    gh.done();
    expect(gh.labels.sort()).toEqual(["bug", "terfyn:forbidden", "terfyn:widened"]);
  });
});
