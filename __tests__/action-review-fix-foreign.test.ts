/**
 * The Action's `mode: review-fix` across jobs on a repository unlike examples/review-fix
 * (__tests__/fixtures/foreign-review): Python run by `python3 -m unittest`, no .gitignore, file
 * names with spaces, non-ASCII letters and a leading dash, an AGENTS.md in its own words, a
 * default branch `trunk`, the pull request's branch `feature/fix-sum`, review threads with real
 * GitHub-shaped ids (one on a file whose name has a space, a question, a praise, one edited after
 * the trigger, one resolved). Offline like action-review-fix-run.test.ts: a bare remote on disk,
 * GitHub faked with nock (net connect disabled, every request checked against the OpenAPI
 * description), the model played by the fixture's model script; every job on a fresh runs
 * directory.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { ModelRouter } from "../src/adapters/models/model-router.ts";
import { ScriptedModel } from "../src/adapters/models/model-script.ts";
import { parseLedger } from "../src/core/app/triggers.ts";
import { parseAgentsMd } from "../src/core/review/repo-facts.ts";
import { API, OWNER, REPO } from "./helpers/action-harness.ts";
import { LATER, reviewFixJob } from "./helpers/app-runner.ts";
import { type FakeComment, fakeGitHub, humanComment } from "./helpers/fake-github.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

const BOT = "github-actions[bot]";
const PR = 31;
const BRANCH = "feature/fix-sum";
const FIXTURE = join(import.meta.dirname, "fixtures", "foreign-review");
/** The odd names, NFC, as git stores them. */
const MODULE = "pkg/my m\u00f3dulo.py";
const NOTES = "notes/-changelog \u00fc.md";
const NEW_TEST = "tests/test_gr\u00f6\u00dfe.py";
const T = {
  fix: "PRRT_kwDOKq9-Zs5def",
  question: "PRRT_kwDOKq9-Zs5qst",
  praise: "PRRT_kwDOKq9-Zs5prs",
  edited: "PRRT_kwDOKq9-Zs5edt",
  resolved: "PRRT_kwDOKq9-Zs5rsv",
};

interface Built {
  origin: string;
  head: string;
  base: string;
  threads: string;
  script: string;
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
  }).trim();

/** Paths git lists NUL-separated (never quoted), as the exact strings. */
const zList = (cwd: string, ...args: string[]) =>
  git(cwd, ...args, "-z")
    .split("\0")
    .filter((p) => p !== "");

function build(): Built {
  const out = join(mkdtempSync(join(tmpdir(), "terfyn-foreign-")), "fixture");
  return JSON.parse(
    execFileSync(process.execPath, [join(FIXTURE, "build-repo.mjs"), out], { encoding: "utf8" }),
  ) as Built;
}

/**
 * GitHub's GraphQL side for the fixture's threads (reviewThreads as the API returns them, on
 * pull request #31 of branch feature/fix-sum), replies added by the mutation and listed in their
 * thread from then on; the compare route and issues as fakeGraphql serves them.
 */
function foreignGraphql(b: Built, branch = BRANCH) {
  const nodes = (JSON.parse(readFileSync(b.threads, "utf8")) as { threads: Loose[] }).threads;
  const replies: { threadId: string; body: string }[] = [];
  const issues: { title: string; body: string }[] = [];
  let head = b.head;
  nock(API)
    .persist()
    .post("/graphql")
    .reply((_u, body) => {
      const q = body as { query: string; variables: Record<string, unknown> };
      if (q.query.includes("TerfynThreadReply")) {
        replies.push({ threadId: String(q.variables.threadId), body: String(q.variables.body) });
        return [
          200,
          {
            data: {
              addPullRequestReviewThreadReply: {
                comment: { id: `PRRC_reply${replies.length}`, url: "u" },
              },
            },
          },
        ];
      }
      expect(q.variables).toMatchObject({ owner: OWNER, repo: REPO, number: PR });
      return [
        200,
        {
          data: {
            repository: {
              pullRequest: {
                number: PR,
                headRefName: branch,
                headRefOid: head,
                baseRefOid: b.base,
                isCrossRepository: false,
                reviewThreads: {
                  pageInfo: { hasNextPage: false, endCursor: null },
                  nodes: nodes.map((t) => ({
                    ...t,
                    comments: {
                      pageInfo: { hasNextPage: false, endCursor: null },
                      nodes: [
                        ...t.comments,
                        ...replies
                          .filter((r) => r.threadId === t.id)
                          .map((r, i) => ({
                            ...t.comments[0],
                            id: `PRRC_bot${i}`,
                            fullDatabaseId: `99${i}`,
                            author: { login: "github-actions", __typename: "Bot" },
                            body: r.body,
                            createdAt: LATER,
                            lastEditedAt: null,
                          })),
                      ],
                    },
                  })),
                },
              },
            },
          },
        },
      ];
    })
    .get(new RegExp(`^/repos/${OWNER}/${REPO}/compare/`))
    .reply((uri) => {
      const [from, to] = decodeURIComponent(uri.split("/compare/")[1]!.split("?")[0]!).split("...");
      const ahead = Number(git(b.origin, "rev-list", "--count", `${from}..${to}`));
      return [200, { ahead_by: ahead, behind_by: 0, status: "ahead" }];
    })
    .get(`/repos/${OWNER}/${REPO}/issues`)
    .query(true)
    .reply(() => [200, []])
    .post(`/repos/${OWNER}/${REPO}/issues`)
    .reply((_u, body) => {
      issues.push(body as { title: string; body: string });
      return [201, { number: 500 + issues.length, html_url: "https://github.com/x/y/issues/1" }];
    });
  return {
    replies,
    issues,
    setHead: (sha: string) => {
      head = sha;
    },
  };
}

// biome-ignore lint/suspicious/noExplicitAny: GraphQL nodes read from the fixture's JSON
type Loose = Record<string, any>;

function setup(branch = BRANCH) {
  const b = build();
  if (branch !== BRANCH) git(b.origin, "branch", branch, BRANCH);
  const gh = fakeGitHub({
    me: BOT,
    roles: {
      "lin-w": { role_name: "write", permission: "write" },
      "kai-author": { role_name: "write", permission: "write" },
      "t-riage": { role_name: "triage", permission: "triage" },
    },
    pr: { headSha: b.head, baseSha: b.base, author: "kai-author", headRef: branch },
  });
  const fake = foreignGraphql(b, branch);
  return { b, gh, fake };
}

/** One job on a fresh machine, with the inputs a dispatch gives; `calls` records the agents asked. */
const job = (b: Built, inputs: Record<string, string>, calls: string[] = []) =>
  reviewFixJob(b.origin, inputs, async () => {
    const m = new ModelRouter({
      script: await ScriptedModel.load(b.script),
      forceScript: true,
      env: {},
    });
    return {
      turn: (r: Parameters<typeof m.turn>[0]) => {
        calls.push(r.agent);
        return m.turn(r);
      },
    };
  });

function status(comments: FakeComment[]) {
  const mine = comments.filter((c) => c.user.login === BOT && parseLedger(c.body));
  expect(mine).toHaveLength(1);
  return { body: mine[0]!.body, ledger: parseLedger(mine[0]!.body)! };
}

function say(comments: FakeComment[], login: string, body: string, edited = false): void {
  const c = humanComment(login, body);
  c.created_at = LATER;
  c.updated_at = edited ? "2026-12-01T11:05:00Z" : LATER;
  comments.push(c);
}

const stateRef = (b: Built, run: string) =>
  git(b.origin, "rev-parse", "--verify", `refs/terfyn/runs/${run}`);
const inState = (b: Built, run: string, path: string) =>
  git(b.origin, "show", `refs/terfyn/runs/${run}:${path}`);

/** The Builder's and TestWriter's files, byte for byte, from the filled model script. */
function scriptedFiles(b: Built): Map<string, string> {
  const s = parseYaml(readFileSync(b.script, "utf8")) as {
    agents: Record<string, { toolCalls?: { tool: string; input: Loose }[] }[]>;
  };
  const out = new Map<string, string>();
  for (const agent of ["TestWriter", "Builder"])
    for (const turn of s.agents[agent] ?? [])
      for (const c of turn.toolCalls ?? [])
        if (c.tool === "tool.workspace.write_file") out.set(c.input.path, c.input.content);
  return out;
}

/** Dispatch → plan gate → a writer's approval: the run waits at the publish gate. */
async function toPublishGate(b: Built, gh: ReturnType<typeof fakeGitHub>) {
  const first = await job(b, { "pull-request": String(PR), "head-sha": b.head });
  expect(first).toMatchObject({ state: "awaiting-approval" });
  const run = first.run!;
  const plan = status(gh.comments).ledger;
  expect(plan.gate).toBe("plan");
  say(gh.comments, "lin-w", `/terfyn approve ${plan.hash}`);
  const second = await job(b, { "pull-request": String(PR), "head-sha": b.head, run });
  expect(second).toMatchObject({ run, state: "awaiting-approval" });
  const publish = status(gh.comments).ledger;
  expect(publish.gate).toBe("publish");
  return { run, planHash: plan.hash!, publishHash: publish.hash! };
}

/** Someone else's commit on the pull request's branch, pushed to the bare remote. */
function pushForeignCommit(b: Built): string {
  const work = mkdtempSync(join(tmpdir(), "terfyn-foreign-push-"));
  git(work, "clone", "-q", "-b", BRANCH, b.origin, ".");
  execFileSync("sh", ["-c", "printf 'more\\n' >> COPYING"], { cwd: work });
  git(work, "-c", "user.name=o", "-c", "user.email=o@x", "commit", "-qam", "Someone else's push");
  git(work, "push", "-q", "origin", `HEAD:${BRANCH}`);
  return git(work, "rev-parse", "HEAD");
}

describe("mode: review-fix on a foreign repository (Python, odd names, trunk, feature/fix-sum)", () => {
  it("the fixture's defect is real: the suite fails at head, and passes with the scripted fix", () => {
    const b = build();
    const work = mkdtempSync(join(tmpdir(), "terfyn-foreign-check-"));
    git(work, "clone", "-q", "-b", BRANCH, b.origin, ".");
    expect(git(b.origin, "symbolic-ref", "HEAD")).toBe("refs/heads/trunk");
    expect(zList(work, "ls-files")).toEqual(
      expect.arrayContaining([MODULE, NOTES, "AGENTS.md", "COPYING"]),
    );
    expect(zList(work, "ls-files")).not.toContain(".gitignore");
    const run = () =>
      execFileSync("sh", ["-c", "python3 -m unittest discover -s tests -t . 2>&1; echo rc=$?"], {
        cwd: work,
        encoding: "utf8",
      });
    expect(run()).toMatch(/AssertionError: 2\.0 != 3[\s\S]*rc=1/);
    for (const [path, content] of scriptedFiles(b))
      execFileSync("sh", ["-c", 'cat > "$1"', "sh", path], { cwd: work, input: content });
    expect(run()).toMatch(/Ran 3 tests[\s\S]*OK[\s\S]*rc=0/);
  }, 60_000);

  it("dispatch → plan gate → approval → publish gate → approval → done: a fast-forward of only the planned files, odd names byte for byte; replies, none for praise; the edited comment left out", async () => {
    const { b, gh, fake } = setup();
    const calls: string[] = [];
    const first = await job(b, { "pull-request": String(PR), "head-sha": b.head }, calls);
    expect(first.failed).toBeUndefined();
    expect(first).toMatchObject({ state: "awaiting-approval" });
    const run = first.run!;
    expect(run).toMatch(new RegExp(`^pr${PR}-${b.head.slice(0, 12)}-`));
    let s = status(gh.comments);
    expect(s.ledger).toMatchObject({ run, gate: "plan", head: b.head, pull_request: PR });
    expect(s.ledger.state).toBe(stateRef(b, run));
    // The snapshot: the edited comment (and so its thread) is left out and listed; the resolved
    // thread is in the request but not decided; the Decider's provenance is Terfyn's.
    const leftOut = JSON.parse(inState(b, run, "run/github-left-out.json")) as Loose[];
    expect(leftOut).toEqual([
      expect.objectContaining({
        thread: T.edited,
        comment: "2290417004",
        reason: "edited after the trigger",
      }),
    ]);
    const request = JSON.parse(inState(b, run, "run/request.json")) as Loose;
    expect(request).toMatchObject({ branch: BRANCH, head: b.head, pull_request: PR });
    expect((request.threads as Loose[]).map((t) => t.id).sort()).toEqual(
      [T.fix, T.question, T.praise, T.resolved].sort(),
    );
    expect((request.threads as Loose[]).find((t) => t.id === T.fix)?.path).toBe(MODULE);
    const decided = (JSON.parse(inState(b, run, "run/decisions.json")) as { decisions: Loose[] })
      .decisions;
    expect(decided.map((d) => d.item).sort()).toEqual([T.fix, T.question, T.praise].sort());
    expect(decided.find((d) => d.item === T.fix)?.provenance).toMatchObject({
      made_against: b.head,
      commits_behind: 0,
      anchor_moved: false,
      anchor_gone: false,
    });
    const plan = JSON.parse(inState(b, run, "run/plan.json")) as Loose;
    expect(plan.files).toEqual([MODULE, NOTES]);
    expect(plan.test_files).toEqual([NEW_TEST]);
    expect(calls).toEqual(expect.arrayContaining(["Decider", "Planner"]));

    say(gh.comments, "lin-w", `Looks right.\n\n/terfyn approve ${s.ledger.hash}`);
    const second = await job(b, { "pull-request": String(PR), "head-sha": b.head, run }, calls);
    expect(second.failed).toBeUndefined();
    expect(second).toMatchObject({ run, state: "awaiting-approval" });
    s = status(gh.comments);
    expect(s.ledger.gate).toBe("publish");
    expect(git(b.origin, "rev-parse", BRANCH)).toBe(b.head);
    expect(fake.replies).toEqual([]);
    // The built files travel in the state under their exact names (no quoting, no __pycache__).
    const stateFiles = zList(b.origin, "ls-tree", "-r", "--name-only", `refs/terfyn/runs/${run}`);
    const work = stateFiles.filter((p) => p.startsWith("work/"));
    expect(work.sort()).toEqual([`work/${MODULE}`, `work/${NEW_TEST}`, `work/${NOTES}`].sort());
    expect(JSON.parse(inState(b, run, "work.json")).write.sort()).toEqual(
      [MODULE, NEW_TEST, NOTES].sort(),
    );

    say(gh.comments, "lin-w", `/terfyn approve ${s.ledger.hash}`);
    const third = await job(b, { "pull-request": String(PR), "head-sha": b.head, run }, calls);
    expect(third.failed).toBeUndefined();
    expect(third).toMatchObject({ run, state: "done" });
    s = status(gh.comments);
    expect(s.ledger.terminal).toBe("done");

    const pushed = git(b.origin, "rev-parse", BRANCH);
    expect(pushed).not.toBe(b.head);
    expect(git(b.origin, "rev-parse", `${BRANCH}^`)).toBe(b.head);
    expect(git(b.origin, "rev-list", "--count", `${b.head}..${pushed}`)).toBe("1");
    expect(git(b.origin, "rev-parse", "trunk")).toBe(b.base);
    expect(zList(b.origin, "diff", "--name-only", "--no-renames", b.head, pushed).sort()).toEqual(
      [MODULE, NEW_TEST, NOTES].sort(),
    );
    for (const [path, content] of scriptedFiles(b))
      expect(
        execFileSync("git", ["cat-file", "blob", `${pushed}:${path}`], { cwd: b.origin }),
      ).toEqual(Buffer.from(content, "utf8"));
    // The names in the commit's tree are the NFC bytes, not quoted or normalised otherwise.
    const tree = execFileSync("git", ["ls-tree", "-r", "-z", "--name-only", pushed], {
      cwd: b.origin,
    });
    for (const name of [MODULE, NOTES, NEW_TEST])
      expect(tree.includes(Buffer.from(name))).toBe(true);
    expect(zList(b.origin, "ls-tree", "-r", "--name-only", pushed).join("\n")).not.toMatch(
      /__pycache__|\.pyc/,
    );
    expect(fake.replies.map((r) => r.threadId).sort()).toEqual([T.fix, T.question].sort());
    expect(fake.replies.find((r) => r.threadId === T.question)?.body).toMatch(/raises/);
    expect(fake.replies.some((r) => r.threadId === T.praise)).toBe(false);
    expect(fake.replies.some((r) => r.threadId === T.edited)).toBe(false);
    expect(fake.issues).toEqual([]);
    expect(Number(git(b.origin, "rev-list", "--count", `refs/terfyn/runs/${run}`))).toBe(3);

    // A dispatch after the end does nothing more.
    const again = await job(b, { "pull-request": String(PR), "head-sha": pushed, run });
    expect(again).toMatchObject({ run, state: "done" });
    expect(fake.replies).toHaveLength(2);
    expect(git(b.origin, "rev-parse", BRANCH)).toBe(pushed);
  }, 300_000);

  it("the branch moves during the publish gate: the next job ends the run stuck and publishes nothing", async () => {
    const { b, gh, fake } = setup();
    const { run, publishHash } = await toPublishGate(b, gh);
    const moved = pushForeignCommit(b);
    gh.pr = { ...gh.pr!, headSha: moved };
    fake.setHead(moved);
    say(gh.comments, "lin-w", `/terfyn approve ${publishHash}`);
    const r = await job(b, { "pull-request": String(PR), "head-sha": moved, run });
    expect(r).toMatchObject({ run, state: "stuck" });
    expect(r.failed).toMatch(/a push moved the branch/);
    expect(status(gh.comments).ledger.terminal).toBe("stuck");
    expect(git(b.origin, "rev-parse", BRANCH)).toBe(moved);
    expect(fake.replies).toEqual([]);
    expect(fake.issues).toEqual([]);
  }, 240_000);

  it("the branch moves during the publish gate but the API still shows the old head: the fast-forward is refused, nothing is published", async () => {
    const { b, gh, fake } = setup();
    const { run, publishHash } = await toPublishGate(b, gh);
    const moved = pushForeignCommit(b);
    say(gh.comments, "lin-w", `/terfyn approve ${publishHash}`);
    const r = await job(b, { "pull-request": String(PR), "head-sha": b.head, run });
    expect(r).toMatchObject({ run, state: "stuck" });
    expect(git(b.origin, "rev-parse", BRANCH)).toBe(moved);
    expect(fake.replies).toEqual([]);
    expect(fake.issues).toEqual([]);
  }, 240_000);

  it("approvals a person cannot see, or that do not count, leave the run waiting at the plan gate", async () => {
    const { b, gh } = setup();
    const first = await job(b, { "pull-request": String(PR), "head-sha": b.head });
    const run = first.run!;
    const hash = status(gh.comments).ledger.hash!;
    const hostile = [
      `> /terfyn approve ${hash}`, // quoted
      `<!--\n/terfyn approve ${hash}\n-->`, // an HTML comment (renders as nothing)
      `ok <!-- x -->\n/terfyn approve ${hash} <!-- y -->`, // inline comments on the line
      `\`\`\`\n/terfyn approve ${hash}\n\`\`\``, // a code block
      `    /terfyn approve ${hash}`, // an indented code block
      `<details>\n/terfyn approve ${hash}\n</details>`, // inside an HTML block
      `[/terfyn approve ${hash}](https://example.com)`, // a link
      `/terfyn approve ${hash.toUpperCase().replace("SHA256", "sha256")}`, // not the hash's form
      `/terfyn approve ${hash.slice(0, -1)}`, // one digit short
      `/terfyn approve\u200b ${hash}`, // a zero-width space
    ];
    for (const body of hostile) say(gh.comments, "lin-w", body);
    say(gh.comments, "lin-w", `/terfyn approve ${hash}`, true); // edited
    say(gh.comments, "kai-author", `/terfyn approve ${hash}`); // the PR's author (write)
    say(gh.comments, "t-riage", `/terfyn approve ${hash}`); // triage
    say(gh.comments, "lin-w", `> /terfyn stop`); // a quoted stop
    const r = await job(b, { "pull-request": String(PR), "head-sha": b.head, run });
    expect(r).toMatchObject({ run, state: "awaiting-approval" });
    const s = status(gh.comments);
    expect(s.ledger.gate).toBe("plan");
    expect(s.body).toMatch(/still waits at the plan gate/);
    // Logins are escaped in the comment (no mention, no Markdown): @\u2060t\\-riage.
    expect(s.body).toMatch(/t\\-riage has the triage role/);
    expect(s.body).not.toMatch(/kai-author has/);
    // No approval was recorded (the run writes approvals.jsonl with the first one).
    expect(
      zList(b.origin, "ls-tree", "-r", "--name-only", `refs/terfyn/runs/${run}`),
    ).not.toContain("run/approvals.jsonl");
    expect(stateRef(b, run)).toBe(s.ledger.state);
  }, 180_000);

  it("a run id for another pull request is refused before anything is written to GitHub", async () => {
    const { b, gh } = setup();
    const first = await job(b, { "pull-request": String(PR), "head-sha": b.head });
    const run = first.run!;
    const hash = status(gh.comments).ledger.hash!;
    say(gh.comments, "lin-w", `/terfyn approve ${hash}`);
    const before = gh.requests.length;
    const bodies = gh.bodies.length;
    const r = await job(b, { "pull-request": "32", "head-sha": b.head, run });
    expect(r.failed).toMatch(/another run or pull request/);
    expect(gh.requests.slice(before).filter((x) => !x.startsWith("GET"))).toEqual([]);
    expect(gh.bodies).toHaveLength(bodies);
    expect(stateRef(b, run)).toBe(status(gh.comments).ledger.state);
  }, 120_000);

  // Found here, fixed in src/action/review-fix.ts: a dispatch naming a run whose state ref is
  // gone was treated as a new run under that id (a second status comment, a fresh budget, a
  // newer snapshot). It is refused: the run's own status comment names it.
  it("a state ref deleted between jobs: the run does not start over under the same id", async () => {
    const { b, gh } = setup();
    const first = await job(b, { "pull-request": String(PR), "head-sha": b.head });
    const run = first.run!;
    const hash = status(gh.comments).ledger.hash!;
    git(b.origin, "update-ref", "-d", `refs/terfyn/runs/${run}`);
    say(gh.comments, "lin-w", `/terfyn approve ${hash}`);
    const calls: string[] = [];
    const r = await job(b, { "pull-request": String(PR), "head-sha": b.head, run }, calls);
    const mine = gh.comments.filter((c) => c.user.login === BOT && parseLedger(c.body));
    expect(calls).toEqual([]);
    expect(mine).toHaveLength(1);
    expect(r.failed).toMatch(/state/);
  }, 120_000);

  // Found here, fixed in src/adapters/git/branch-writer.ts (branchNameProblem): branch names
  // are judged by git's own rules, not an ASCII allowlist; `fix/año-sum` was refused before.
  it("a pull request branch with a non-ASCII name (valid for git and GitHub) reaches the plan gate", async () => {
    const { b, gh } = setup("fix/a\u00f1o-sum");
    const r = await job(b, { "pull-request": String(PR), "head-sha": b.head });
    expect(r.failed).toBeUndefined();
    expect(r.state).toBe("awaiting-approval");
    expect(status(gh.comments).ledger.gate).toBe("plan");
  }, 120_000);

  it("a branch name the run will not push (a +, which a refspec reads as force) ends the run stuck before any work, and the step says why", async () => {
    const { b, gh } = setup("fix+sum");
    const r = await job(b, { "pull-request": String(PR), "head-sha": b.head });
    expect(r.state).toBe("stuck");
    expect(r.failed).toMatch(/the pull request's branch "fix\+sum" holds \+/);
    expect(status(gh.comments).ledger.terminal).toBe("stuck");
  }, 120_000);

  // Found here, fixed in src/core/review/repo-facts.ts: a `key: value` line counts as a command
  // only with its command in backticks or in a section about commands, and never inside a fenced
  // code block. Before, `Setup: ask in #dev for access.` became the install command, `Types: we
  // use plain dicts` shadowed `mypy .`, and a YAML example's line became a gate.
  it("AGENTS.md prose and code examples are not read as commands", () => {
    const facts = parseAgentsMd(
      [
        "# Guide",
        "",
        "Setup: ask in #dev for access.",
        "Types: we use plain dicts, no dataclasses.",
        "",
        "```yaml",
        "lint: flake8",
        "```",
        "",
        "## Commands",
        "",
        "A CI example (not ours):",
        "",
        "~~~yaml",
        "format: black .",
        "~~~",
        "",
        "- test: `python3 -m unittest`",
        '- single test: `python3 -m unittest "<name>"`',
        "- typecheck: `mypy .`",
        "",
      ].join("\n"),
    );
    expect(facts.commands).toEqual({
      test: "python3 -m unittest",
      "single test": 'python3 -m unittest "<name>"',
      typecheck: "mypy .",
    });
  });
});
