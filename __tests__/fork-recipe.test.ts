/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: workflow expressions are the data here */
/**
 * The fork recipe of docs/github-action.md ("Forks", issue 22 item 1), run as the docs write it:
 * its YAML blocks are parsed out of the page and their steps run in order in a temporary
 * "runner", against a real bare repository and the stateful fake GitHub. `run:` steps run in
 * bash; `actions/upload-artifact` and `actions/download-artifact` copy the artifact's files
 * (into the `path` the step names, the workspace by default); `actions/checkout` clones into
 * the workspace and, as checkout does, reuses a `.git` already there whose origin is the
 * repository (cleaning and resetting it with plain git); `terfyn/terfyn` is the bundled Action
 * with the step's `with:` inputs.
 *
 * The fork is hostile: it controls its own workflow, so its artifact holds, besides
 * `pr-number.txt`, a `.git/` whose origin is the repository, whose `core.fsmonitor` appends to
 * a marker file, and whose `refs/replace/` make the pull request's head and merge commits look
 * like the base. The recipe downloads into `${{ runner.temp }}`: the marker is never written,
 * nothing of the artifact reaches the workspace, and the real head (a forbidden widening) is
 * planned and blocked. The recipe as it was (download into the workspace) is run too: checkout
 * reuses the artifact's .git and runs its fsmonitor; the Action then refuses that checkout by
 * naming the key, and runs nothing there itself.
 */
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { run } from "../src/action/run.ts";
import {
  type ActionRun,
  fixture,
  OWNER,
  REPO,
  recordRequests,
  runAction,
} from "./helpers/action-harness.ts";
import { EXAMPLE, grant } from "./helpers/example-project.ts";
import { fakeGitHub } from "./helpers/fake-github.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

const DOC = readFileSync(join(import.meta.dirname, "..", "docs", "github-action.md"), "utf8");
const PR = 7;

interface Step {
  id?: string;
  if?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}

/** The ```yaml blocks of the docs' "Forks" section, parsed. */
function forkBlocks(): unknown[] {
  const at = DOC.indexOf("\n## Forks\n");
  const end = DOC.indexOf("\n## ", at + 1);
  const section = DOC.slice(at, end < 0 ? DOC.length : end);
  return [...section.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => parse(m[1] as string));
}

/** The fork's steps (added to its plan job) and the trusted workflow's job steps. */
function recipe(): { forkSteps: Step[]; trusted: Step[]; trustedIf: string } {
  const blocks = forkBlocks();
  const forkSteps = blocks.find((b) => Array.isArray(b)) as Step[] | undefined;
  // biome-ignore lint/suspicious/noExplicitAny: a parsed workflow file, read field by field
  const workflow = blocks.find((b: any) => b?.on?.workflow_run) as any;
  const jobs = Object.values(workflow?.jobs ?? {}) as { if?: string; steps: Step[] }[];
  if (!forkSteps || jobs.length !== 1) throw new Error("docs: the Forks recipe is not two blocks");
  return { forkSteps, trusted: jobs[0]!.steps, trustedIf: jobs[0]!.if ?? "" };
}

/** git as a runner's steps run it: the runner's own config only (none here). */
function rgit(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH ?? "",
      HOME: cwd,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.com",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.com",
      GIT_AUTHOR_DATE: "2026-12-01T09:00:00Z",
      GIT_COMMITTER_DATE: "2026-12-01T09:00:00Z",
    },
  }).trim();
}

interface Upstream {
  /** The bare repository GitHub serves (origin). */
  url: string;
  base: string;
  head: string;
  /** GitHub's test merge commit: base + head. */
  merge: string;
}

/** The repository: `agents/loop` is the example; the pull request grants the Reviewer a write. */
function upstream(root: string): Upstream {
  const url = join(root, "origin.git");
  rgit(root, "init", "-q", "--bare", "-b", "main", url);
  const work = join(root, "maintainer");
  rgit(root, "init", "-q", "-b", "main", work);
  mkdirSync(join(work, "agents"));
  cpSync(EXAMPLE, join(work, "agents", "loop"), { recursive: true });
  rmSync(join(work, "agents", "loop", ".terfyn"), { recursive: true, force: true });
  rgit(work, "add", "-A");
  rgit(work, "commit", "-qm", "base");
  const base = rgit(work, "rev-parse", "HEAD");
  rgit(work, "checkout", "-q", "-b", "fork-branch");
  grant(join(work, "agents", "loop"), "Reviewer", "tool.workspace.write_file");
  rgit(work, "commit", "-qam", "let the reviewer write");
  const head = rgit(work, "rev-parse", "HEAD");
  rgit(work, "checkout", "-q", "main");
  rgit(work, "merge", "-q", "--no-ff", "-m", "test merge", "fork-branch");
  const merge = rgit(work, "rev-parse", "HEAD");
  rgit(work, "push", "-q", url, `${base}:refs/heads/main`);
  rgit(work, "push", "-q", url, `${head}:refs/pull/${PR}/head`, `${merge}:refs/pull/${PR}/merge`);
  return { url, base, head, merge };
}

interface Runner {
  temp: string;
  workspace: string;
  outputs: Record<string, Record<string, string>>;
  /** What the fork uploaded, by artifact name. */
  artifacts: Record<string, string>;
  event: Record<string, unknown>;
}

function newRunner(root: string, name: string): Runner {
  const temp = join(root, name, "_temp");
  const workspace = join(root, name, "work", REPO, REPO);
  mkdirSync(temp, { recursive: true });
  mkdirSync(workspace, { recursive: true });
  return { temp, workspace, outputs: {}, artifacts: {}, event: {} };
}

/** `${{ … }}` resolved as the runner would; an expression the recipe does not use fails. */
function resolve(text: string, r: Runner): string {
  return text.replace(/\$\{\{\s*(.*?)\s*\}\}/g, (_m, expr: string) => {
    const value = lookup(expr, r);
    if (value === undefined) throw new Error(`the runner does not know \${{ ${expr} }}`);
    return String(value);
  });
}

function lookup(expr: string, r: Runner): unknown {
  if (expr === "runner.temp") return r.temp;
  if (expr === "github.workspace") return r.workspace;
  if (expr === "github.token") return "test-token";
  const step = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(expr);
  if (step) return r.outputs[step[1]!]?.[step[2]!] ?? "";
  if (expr.startsWith("github.event."))
    return expr
      .split(".")
      .slice(2)
      .reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], r.event);
  return undefined;
}

function withInputs(step: Step, r: Runner): Record<string, string> {
  return Object.fromEntries(
    Object.entries(step.with ?? {}).map(([k, v]) => [k, resolve(String(v), r)]),
  );
}

/** A path a step names: relative ones are the workspace's, as the runner resolves them. */
const at = (r: Runner, p: string | undefined) =>
  p === undefined || p === "" ? r.workspace : isAbsolute(p) ? p : join(r.workspace, p);

/** actions/checkout: reuses a .git whose origin is the repository (clean, reset), else clones. */
function checkout(r: Runner, up: Upstream): void {
  const ws = r.workspace;
  let reuse = false;
  if (existsSync(join(ws, ".git"))) {
    try {
      reuse = rgit(ws, "config", "--get", "remote.origin.url") === up.url;
      if (reuse) {
        rgit(ws, "clean", "-ffdx");
        rgit(ws, "reset", "--hard", "HEAD");
      }
    } catch {
      reuse = false;
    }
  }
  if (!reuse) {
    for (const n of readdirSync(ws)) rmSync(join(ws, n), { recursive: true, force: true });
    rgit(ws, "init", "-q");
    rgit(ws, "remote", "add", "origin", up.url);
  }
  // workflow_run: GITHUB_SHA is the default branch's tip.
  rgit(
    ws,
    "fetch",
    "-q",
    "--no-tags",
    "--depth=1",
    "origin",
    `+${up.base}:refs/remotes/origin/main`,
  );
  rgit(ws, "checkout", "-q", "--force", "-B", "main", "refs/remotes/origin/main");
}

/** Runs `steps` in order; returns the Action's run when a step is terfyn/terfyn. */
async function runSteps(
  steps: Step[],
  r: Runner,
  up: Upstream,
  actionEvent: { name: string; payload: unknown },
): Promise<ActionRun | undefined> {
  let action: ActionRun | undefined;
  for (const step of steps) {
    if (step.if !== undefined && lookup(step.if, r) !== true)
      throw new Error(`the runner cannot decide if: ${step.if}`);
    if (step.run !== undefined) {
      const output = join(r.temp, `output-${step.id ?? "step"}`);
      writeFileSync(output, "");
      execFileSync(
        "bash",
        ["--noprofile", "--norc", "-eo", "pipefail", "-c", resolve(step.run, r)],
        {
          cwd: r.workspace,
          env: {
            PATH: process.env.PATH ?? "",
            GITHUB_OUTPUT: output,
            GITHUB_WORKSPACE: r.workspace,
            RUNNER_TEMP: r.temp,
          },
        },
      );
      if (step.id)
        r.outputs[step.id] = Object.fromEntries(
          readFileSync(output, "utf8")
            .split("\n")
            .filter((l) => l.includes("="))
            .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
        );
      continue;
    }
    const uses = step.uses ?? "";
    const inputs = withInputs(step, r);
    if (uses.startsWith("actions/upload-artifact@")) {
      const dir = mkdtempSync(join(tmpdir(), "terfyn-artifact-"));
      cpSync(at(r, inputs.path), join(dir, inputs.path ?? ""), { recursive: true });
      r.artifacts[inputs.name ?? "artifact"] = dir;
    } else if (uses.startsWith("actions/download-artifact@")) {
      const artifact = r.artifacts[inputs.name ?? ""];
      if (!artifact) throw new Error(`no artifact ${inputs.name}`);
      const into = at(r, inputs.path);
      mkdirSync(into, { recursive: true });
      cpSync(artifact, into, { recursive: true });
    } else if (uses.startsWith("actions/checkout@")) {
      checkout(r, up);
    } else if (uses.startsWith("terfyn/terfyn@")) {
      action = await runAction({
        event: actionEvent.name,
        payload: actionEvent.payload,
        workspace: r.workspace,
        inputs,
        env: { RUNNER_TEMP: r.temp },
      });
    } else {
      throw new Error(`the runner cannot run ${uses}`);
    }
  }
  return action;
}

/**
 * The fork's run: its plan job's recipe steps make and upload `pr-number.txt`; then, being the
 * fork's own workflow, it adds a `.git/` to the artifact.
 */
function forkArtifact(
  root: string,
  up: Upstream,
  forkSteps: Step[],
  plantedWorkspace: string,
  marker: string,
): Promise<string> {
  const r = newRunner(root, "fork-runner");
  r.event = { pull_request: { number: PR, head: { repo: { fork: true } } } };
  return runSteps(forkSteps, r, up, { name: "pull_request", payload: {} }).then(() => {
    const artifact = r.artifacts["terfyn-pr"];
    if (!artifact) throw new Error("the fork's steps uploaded no terfyn-pr artifact");
    rgit(artifact, "init", "-q", "-b", "main");
    rgit(artifact, "remote", "add", "origin", up.url);
    rgit(
      artifact,
      "fetch",
      "-q",
      "origin",
      "main",
      `refs/pull/${PR}/head`,
      `refs/pull/${PR}/merge`,
    );
    rgit(artifact, "update-ref", "refs/heads/main", up.base);
    rgit(artifact, "read-tree", up.base);
    // Harmless stand-ins: the base's tree, with the parents the real commits have.
    const tree = rgit(artifact, "rev-parse", `${up.base}^{tree}`);
    const fakeHead = rgit(artifact, "commit-tree", tree, "-p", up.base, "-m", "harmless");
    const fakeMerge = rgit(artifact, "commit-tree", tree, "-p", up.base, "-p", up.head, "-m", "m");
    rgit(artifact, "replace", up.head, fakeHead);
    rgit(artifact, "replace", up.merge, fakeMerge);
    // Plain git is fooled: the head shows the base's file, without the new grant.
    const file = (c: string) => rgit(artifact, "show", `${c}:agents/loop/main.agent`);
    expect(file(up.head)).toBe(file(up.base));
    expect(file(up.head)).not.toBe(
      execFileSync("git", ["-C", up.url, "show", `${up.head}:agents/loop/main.agent`], {
        encoding: "utf8",
      }).trim(),
    );
    // Where the .git lands when the trusted job downloads into its workspace.
    const hook = join(plantedWorkspace, ".git", "fsmonitor-hook");
    writeFileSync(
      join(artifact, ".git", "fsmonitor-hook"),
      `#!/bin/sh\necho "fsmonitor ran in $PWD" >> '${marker}'\nexit 1\n`,
    );
    chmodSync(join(artifact, ".git", "fsmonitor-hook"), 0o755);
    rgit(artifact, "config", "core.fsmonitor", hook);
    return artifact;
  });
}

function workflowRunPayload(): Record<string, unknown> {
  // biome-ignore lint/suspicious/noExplicitAny: webhook example payloads are loose JSON
  const p = fixture("workflow_run.completed") as Record<string, any>;
  p.workflow_run.event = "pull_request";
  p.repository.name = REPO;
  p.repository.owner.login = OWNER;
  p.repository.full_name = `${OWNER}/${REPO}`;
  return p;
}

async function trustedJob(
  steps: Step[],
  up: Upstream,
  artifact: string,
  r: Runner,
): Promise<{ action: ActionRun | undefined; gh: ReturnType<typeof fakeGitHub> }> {
  r.artifacts["terfyn-pr"] = artifact;
  const payload = workflowRunPayload();
  r.event = payload;
  const gh = fakeGitHub({
    pr: { headSha: up.head, baseSha: up.base, author: "mallory", mergeSha: up.merge },
  });
  const action = await runSteps(steps, r, up, { name: "workflow_run", payload });
  gh.done();
  return { action, gh };
}

/** The recipe as the docs wrote it before issue 22: the artifact into the workspace. */
const OLD_TRUSTED_STEPS = `
- uses: actions/download-artifact@v4
  with:
    name: terfyn-pr
    run-id: \${{ github.event.workflow_run.id }}
    github-token: \${{ github.token }}
- id: pr
  run: echo "number=$(head -c 12 pr-number.txt | tr -cd 0-9)" >> "$GITHUB_OUTPUT"
- uses: actions/checkout@v5
  with:
    persist-credentials: false
- uses: terfyn/terfyn@v1
  with:
    project: agents/*
    pull-request: \${{ steps.pr.outputs.number }}
`;

describe("the Forks recipe of docs/github-action.md, run as written", () => {
  it("downloads into runner.temp: the fork's .git never runs and the real head is blocked", async () => {
    const { forkSteps, trusted, trustedIf } = recipe();
    expect(trustedIf).toContain("github.event.workflow_run.event == 'pull_request'");
    const download = trusted.find((s) => s.uses?.startsWith("actions/download-artifact@"));
    expect(String(download?.with?.path)).toMatch(/^\$\{\{ runner\.temp \}\}\//);
    const root = mkdtempSync(join(tmpdir(), "terfyn-fork-recipe-"));
    const up = upstream(root);
    const r = newRunner(root, "trusted-runner");
    const marker = join(root, "fsmonitor-marker");
    const artifact = await forkArtifact(root, up, forkSteps, r.workspace, marker);
    const { action, gh } = await trustedJob(trusted, up, artifact, r);

    expect(existsSync(marker)).toBe(false);
    // Nothing of the artifact is in the workspace: not its file, not its .git's settings.
    expect(existsSync(join(r.workspace, "pr-number.txt"))).toBe(false);
    expect(existsSync(join(r.workspace, ".git", "fsmonitor-hook"))).toBe(false);
    expect(rgit(r.workspace, "for-each-ref", "refs/replace/")).toBe("");
    expect(r.outputs.pr?.number).toBe(String(PR));
    // The real head was planned: the forbidden widening blocks.
    expect(action?.failed).toBe(true);
    expect(action?.outputs.forbidden).toBe("true");
    expect(gh.statuses).toEqual([
      expect.objectContaining({ sha: up.head, state: "failure", context: "terfyn/approval" }),
    ]);
    expect(gh.statuses.some((s) => s.state === "success")).toBe(false);
    expect(gh.checkRuns[0]?.body).toMatchObject({ head_sha: up.head, conclusion: "failure" });
    expect(gh.comments[0]?.body).toContain("tool.workspace.write_file");
  });

  it("the old recipe (download into the workspace): checkout runs the fork's fsmonitor, and the Action refuses that checkout by naming it", async () => {
    const { forkSteps } = recipe();
    const root = mkdtempSync(join(tmpdir(), "terfyn-fork-recipe-old-"));
    const up = upstream(root);
    const r = newRunner(root, "trusted-runner");
    const marker = join(root, "fsmonitor-marker");
    const artifact = await forkArtifact(root, up, forkSteps, r.workspace, marker);
    const steps = parse(OLD_TRUSTED_STEPS) as Step[];
    const checkoutAt = steps.findIndex((s) => s.uses?.startsWith("actions/checkout@"));
    const before = steps.slice(0, checkoutAt + 1);
    await trustedJob(before, up, artifact, r);
    // actions/checkout reused the artifact's .git and ran git there: the fork's code ran in the
    // trusted job. This is why the recipe downloads into runner.temp.
    const ranInCheckout = readFileSync(marker, "utf8");
    expect(ranInCheckout).toContain("fsmonitor ran");

    const { action, gh } = await trustedJob(steps.slice(checkoutAt + 1), up, artifact, r);
    expect(action?.failed).toBe(true);
    const error = action?.stdout.match(/^::error::.*$/m)?.[0] ?? "";
    expect(error).toContain("::error::terfyn: the git checkout in ");
    expect(error).toContain("- core.fsmonitor (.git/config): the fsmonitor hook");
    expect(error).toContain("- refs/replace/ (2 refs)");
    expect(error).toContain("download artifacts into `${{ runner.temp }}`");
    // It ran nothing there and asked GitHub nothing: no status, no check run, no comment.
    expect(readFileSync(marker, "utf8")).toBe(ranInCheckout);
    expect(gh.requests).toEqual([]);
  });
});

describe("run() from source", () => {
  it("refuses a planted checkout before any other git command or API call", async () => {
    const ws = mkdtempSync(join(tmpdir(), "terfyn-planted-"));
    rgit(ws, "init", "-q", "-b", "main");
    rgit(ws, "commit", "-q", "--allow-empty", "-m", "a");
    rgit(ws, "config", "filter.evil.smudge", "sh -c 'touch /tmp/terfyn-pwned'");
    const saved = { ...process.env };
    for (const k of Object.keys(process.env)) if (k.startsWith("INPUT_")) delete process.env[k];
    Object.assign(process.env, {
      GITHUB_EVENT_NAME: "workflow_run",
      GITHUB_REPOSITORY: `${OWNER}/${REPO}`,
      GITHUB_WORKSPACE: ws,
      GITHUB_API_URL: "https://api.github.com",
      "INPUT_GITHUB-TOKEN": "test-token",
      "INPUT_PULL-REQUEST": String(PR),
      INPUT_PROJECT: "agents/*",
    });
    const rec = recordRequests();
    const writes: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((c: string | Uint8Array) => {
      writes.push(typeof c === "string" ? c : Buffer.from(c).toString());
      return true;
    }) as typeof process.stdout.write;
    const exitCode = process.exitCode;
    try {
      await run({ fetch: globalThis.fetch, retries: 0 });
    } finally {
      process.stdout.write = write;
      rec.stop();
      process.env = saved;
    }
    const failed = process.exitCode === 1;
    process.exitCode = exitCode;
    expect(failed).toBe(true);
    expect(writes.join("")).toContain("- filter.evil.smudge (.git/config): a filter driver");
    expect(rec.requests).toEqual([]);
  });
});
