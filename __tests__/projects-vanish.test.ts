/**
 * The set of projects is part of authority: every project of the base is accounted for in the
 * head (same path, moved, or deleted, each reported), and what would hide a project from the
 * Action while a checkout still loads it blocks. Each attack below got "✅ no authority
 * change" before: a symlinked terfyn.yaml or project directory, an explicit `project:` entry
 * naming nothing, a project deleted or moved out of the glob, a submodule inside a project.
 * The bundled Action runs against real git repositories (GitHub a stateful fake on nock).
 */
import { mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { planTarget } from "../src/action/report-flow.ts";
import { pullRequestTarget } from "../src/action/targets.ts";
import { decideOutcome, type FailOn } from "../src/core/ci/outcome.ts";
import {
  commitAll,
  copyInto,
  git,
  newRepo,
  pullRequestOpened,
  runAction,
} from "./helpers/action-harness.ts";
import { runTerfyn } from "./helpers/cli.ts";
import { EXAMPLE, grant } from "./helpers/example-project.ts";
import { fakeGitHub } from "./helpers/fake-github.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

// biome-ignore lint/suspicious/noExplicitAny: webhook example payloads are loose JSON
type Loose = Record<string, any>;

/** A forbidden widening (the example's policy forbids the Reviewer writing), hidden if it can be. */
const WIDEN = (project: string) => grant(project, "Reviewer", "tool.workspace.write_file");

/**
 * A repository with two projects, `teams/agents` and `teams/other` (copies of the example;
 * `teams/other` without its policies, so that removing it relaxes no policy rule: only the
 * removal itself is the widening): the base on main, `change(repo)` the head on `feature`;
 * main is checked out again.
 */
function teamsRepo(change: (repo: string) => void): { repo: string; base: string; head: string } {
  const repo = newRepo();
  copyInto(EXAMPLE, repo, "teams/agents");
  copyInto(EXAMPLE, repo, "teams/other");
  rmSync(join(repo, "teams/other/policies.yaml"));
  writeFileSync(join(repo, "README.md"), "agents\n");
  const base = commitAll(repo, "base");
  git(repo, "checkout", "-q", "-b", "feature");
  change(repo);
  const head = commitAll(repo, "head");
  git(repo, "checkout", "-q", "main");
  return { repo, base, head };
}

/** Replaces `path` (in `repo`) by a symbolic link to `target`, after moving it there. */
function moveBehindLink(repo: string, path: string, target: string): void {
  mkdirSync(join(repo, target, ".."), { recursive: true });
  renameSync(join(repo, path), join(repo, target));
  const depth = path.split("/").length - 1;
  symlinkSync(`${"../".repeat(depth)}${target}`, join(repo, path));
}

async function open(
  r: { repo: string; base: string; head: string },
  project: string,
  extra: Record<string, string> = {},
) {
  const gh = fakeGitHub({ pr: { headSha: r.head, baseSha: r.base, author: "alice" } });
  const p = pullRequestOpened(r.base, r.head) as Loose;
  p.pull_request.merge_commit_sha = null;
  const run = await runAction({
    event: "pull_request",
    payload: p,
    workspace: r.repo,
    inputs: { project, ...extra },
  });
  gh.done();
  const comment = (path: string) =>
    gh.comments.find((c) =>
      c.body.startsWith(`<!-- terfyn:plan project=${encodeURIComponent(path)} -->`),
    )?.body ?? "";
  const approval = gh.statuses.find((s) => s.context === "terfyn/approval");
  return { run, comment, approval, gh };
}

/**
 * The same pull request planned from the sources the bundled Action is built from: each
 * project's outcome, its verdict, and its first blocking message (so that a guard removed in
 * src/ fails the test without a rebuild, as scripts/mutate.ts runs it).
 */
async function fromSource(
  r: { repo: string; base: string; head: string },
  project: string,
  failOn: FailOn = "forbidden",
) {
  const target = await pullRequestTarget(
    r.repo,
    {
      number: 7,
      headSha: r.head,
      baseSha: r.base,
      author: "alice",
      labels: [],
      mergeCandidates: [],
    },
    () => {},
  );
  const outcomes = await planTarget(
    r.repo,
    target,
    project.split(",").map((p) => p.trim()),
  );
  return new Map(
    outcomes.map((o) => [
      o.path,
      {
        verdict: decideOutcome(o, failOn).verdict,
        error: o.blocking[0]?.message ?? "",
        guards: o.plan?.guards_relaxed.map((g) => g.kind) ?? [],
        movedFrom: o.movedFrom,
        removed: o.removed,
      },
    ]),
  );
}

describe("the set of projects is part of authority", () => {
  it("control: a pull request that leaves both projects alone stays green", async () => {
    const r = teamsRepo((repo) => writeFileSync(join(repo, "README.md"), "agents, twice\n"));
    const { run, approval, gh } = await open(r, "teams/*");
    expect(run.failed).toBe(false);
    expect(approval?.state).toBe("success");
    expect(gh.comments).toEqual([]);
    expect(run.stdout).toContain("planning teams/agents, teams/other");
    const src = await fromSource(r, "teams/*");
    expect([...src.keys()]).toEqual(["teams/agents", "teams/other"]);
    for (const o of src.values()) expect(o.verdict).toBe("no-authority-change");
  });

  it("control: a project moved within the selection is planned against where it was (no change)", async () => {
    const r = teamsRepo((repo) =>
      renameSync(join(repo, "teams/other"), join(repo, "teams/renamed")),
    );
    const { run, approval, comment } = await open(r, "teams/*", { comment: "always" });
    expect(run.failed).toBe(false);
    expect(approval?.state).toBe("success");
    expect(comment("teams/renamed")).toContain("Moved from `teams/other`");
    expect(comment("teams/renamed")).toContain("No resource or authority changed");
    expect(comment("teams/other")).toBe("");
    const src = await fromSource(r, "teams/*");
    expect(src.get("teams/renamed")).toMatchObject({
      verdict: "no-authority-change",
      movedFrom: "teams/other",
    });
    expect(src.has("teams/other")).toBe(false);
  });

  for (const project of ["teams/*", "teams/agents"]) {
    it(`attack 1: a terfyn.yaml that becomes a symbolic link blocks (project: ${project})`, async () => {
      const r = teamsRepo((repo) => {
        WIDEN(join(repo, "teams/agents"));
        moveBehindLink(repo, "teams/agents/terfyn.yaml", "shared/terfyn.yaml");
      });
      const { run, approval, comment } = await open(r, project);
      expect(run.failed).toBe(true);
      expect(approval?.state).toBe("failure");
      const body = comment("teams/agents");
      expect(body.split("\n")[1]).toMatch(/^### ⛔ Terfyn · `teams\/agents` · blocked/);
      expect(body).toMatch(
        /teams\/agents\/terfyn\.yaml:1:1: error TF2008: the project `teams\/agents`'s terfyn\.yaml is a symbolic link in git/,
      );
      expect(body).toContain("commit terfyn.yaml itself as a regular file");
      expect(run.stdout).toMatch(/::error::terfyn: teams\/agents: the project does not validate/);
      expect((await fromSource(r, project)).get("teams/agents")).toMatchObject({
        verdict: "blocked",
        error: expect.stringContaining("terfyn.yaml is a symbolic link in git"),
      });
    });
  }

  for (const project of ["teams/*", "teams/agents"]) {
    it(`attack 1: a project directory that becomes a symbolic link blocks (project: ${project})`, async () => {
      const r = teamsRepo((repo) => {
        WIDEN(join(repo, "teams/agents"));
        moveBehindLink(repo, "teams/agents", "real/agents");
      });
      const { run, approval, comment } = await open(r, project);
      expect(run.failed).toBe(true);
      expect(approval?.state).toBe("failure");
      expect(comment("teams/agents")).toMatch(
        /error TF2008: the project `teams\/agents` cannot be read: the project directory is a symbolic link in git \(mode 120000\)/,
      );
      expect(comment("teams/agents")).toContain(
        "commit the project's files at `teams/agents` itself",
      );
      expect((await fromSource(r, project)).get("teams/agents")).toMatchObject({
        verdict: "blocked",
        error: expect.stringContaining("the project directory is a symbolic link"),
      });
    });
  }

  it("attack 1: a directory above the projects that becomes a symbolic link blocks each of them", async () => {
    const r = teamsRepo((repo) => {
      WIDEN(join(repo, "teams/agents"));
      moveBehindLink(repo, "teams", "real-teams");
    });
    const { run, approval, comment } = await open(r, "teams/*");
    expect(run.failed).toBe(true);
    expect(approval?.state).toBe("failure");
    for (const p of ["teams/agents", "teams/other"])
      expect(comment(p)).toContain(
        `the project \`${p}\` cannot be read: \`teams\`, above it, is a symbolic link in git`,
      );
    const src = await fromSource(r, "teams/*");
    for (const p of ["teams/agents", "teams/other"])
      expect(src.get(p)).toMatchObject({
        verdict: "blocked",
        error: expect.stringContaining("`teams`, above it, is a symbolic link"),
      });
  });

  it("attack 1: a new symbolic link a glob selects, to a project elsewhere, blocks", async () => {
    const r = teamsRepo((repo) => {
      copyInto(EXAMPLE, repo, "elsewhere/evil");
      WIDEN(join(repo, "elsewhere/evil"));
      symlinkSync("../elsewhere/evil", join(repo, "teams/evil"));
    });
    const { run, approval, comment } = await open(r, "teams/*");
    expect(run.failed).toBe(true);
    expect(approval?.state).toBe("failure");
    expect(comment("teams/evil")).toContain(
      "the project `teams/evil` cannot be read: the project directory is a symbolic link",
    );
    expect((await fromSource(r, "teams/*")).get("teams/evil")).toMatchObject({
      verdict: "blocked",
      error: expect.stringContaining("the project directory is a symbolic link"),
    });
  });

  it("attack 2: an explicit project entry that matches nothing blocks, naming it", async () => {
    const r = teamsRepo((repo) => WIDEN(join(repo, "teams/agents")));
    const { run, approval, comment } = await open(r, "teams/agents, teams/missing");
    expect(run.failed).toBe(true);
    expect(approval?.state).toBe("failure");
    const body = comment("teams/missing");
    expect(body.split("\n")[1]).toMatch(/^### ⛔ Terfyn · `teams\/missing` · blocked/);
    expect(body).toMatch(
      /error TF2005: input `project` names `teams\/missing`, which is not a Terfyn project in the head/,
    );
    expect(body).toContain("fix the entry, or remove it from input `project`");
    expect(run.stdout).toMatch(/::error::terfyn: .*teams\/missing: the project does not validate/);
    // A glob that matches nothing where nothing was is no error: it names no directory.
    const glob = await open(r, "teams/agents, nothing/*");
    expect(glob.comment("nothing/*")).toBe("");
    const src = await fromSource(r, "teams/agents, teams/missing");
    expect(src.get("teams/missing")).toMatchObject({
      verdict: "blocked",
      error: expect.stringContaining("input `project` names `teams/missing`"),
    });
  });

  it("attack 2: an explicit entry naming a project the head deleted says the base has it", async () => {
    const r = teamsRepo((repo) => rmSync(join(repo, "teams/other"), { recursive: true }));
    const { run, comment } = await open(r, "teams/agents, teams/other");
    expect(run.failed).toBe(true);
    expect(comment("teams/other")).toContain(
      "no terfyn.yaml there; the base has one, so the project was deleted or moved",
    );
    expect((await fromSource(r, "teams/agents, teams/other")).get("teams/other")).toMatchObject({
      verdict: "blocked",
      error: expect.stringContaining("the base has one"),
    });
  });

  it("attack 3: a project deleted in the head is reported removed and needs an approval", async () => {
    const r = teamsRepo((repo) => rmSync(join(repo, "teams/other"), { recursive: true }));
    const dflt = await open(r, "teams/*");
    expect(dflt.run.failed).toBe(false);
    expect(dflt.approval?.state).toBe("pending");
    expect(dflt.approval?.description).toContain("teams/other");
    const body = dflt.comment("teams/other");
    expect(body.split("\n")[1]).toMatch(/^### ⚠️ Terfyn · `teams\/other` · needs approval/);
    expect(body).toContain("**Project removed**: the base has this project and the head does not");
    // The only guard the project had was itself: its removal is what needs the approval.
    expect(body).toContain(
      "project\\_removed: The project at teams/other is removed in the head: every guard it declared",
    );
    expect(body).not.toContain("policy\\_relaxed");
    expect(body).toMatch(/\/terfyn approve sha256:[0-9a-f]{64}/);
    expect(dflt.run.outputs.widened).toBe("true");
    const strict = await open(r, "teams/*", { "fail-on": "widening" });
    expect(strict.run.failed).toBe(true);
    expect(strict.run.stdout).toMatch(/::error::terfyn: teams\/other: .*guard.* relaxed/);
    expect((await fromSource(r, "teams/*")).get("teams/other")).toEqual({
      verdict: "needs-approval",
      error: "",
      guards: [...Array(4).fill("test_relaxed"), "project_removed"], // its tests went with it
      movedFrom: undefined,
      removed: {},
    });
  });

  it("attack 3: a project moved out of the glob is reported removed (moved to …) and needs an approval", async () => {
    const r = teamsRepo((repo) => {
      mkdirSync(join(repo, "archive"));
      renameSync(join(repo, "teams/other"), join(repo, "archive/other"));
      WIDEN(join(repo, "archive/other"));
    });
    const { run, approval, comment } = await open(r, "teams/*", { "fail-on": "widening" });
    expect(run.failed).toBe(true);
    expect(approval?.state).toBe("pending");
    const body = comment("teams/other");
    expect(body).toContain("it moved to `archive/other`, which input `project` does not select");
    expect(body).toContain(
      "project\\_removed: The project at teams/other moved to archive/other, which input \\`project\\` does not select",
    );
    expect((await fromSource(r, "teams/*")).get("teams/other")).toMatchObject({
      verdict: "needs-approval",
      guards: [...Array(4).fill("test_relaxed"), "project_removed"],
      removed: { movedTo: "archive/other" },
    });
  });

  it("attack 4: a submodule (gitlink) inside a project blocks", async () => {
    const r = teamsRepo((repo) => {
      git(repo, "config", "advice.addEmbeddedRepo", "false");
      const sub = join(repo, "teams/agents/vendor");
      mkdirSync(sub);
      git(sub, "init", "-q", "-b", "main");
      writeFileSync(
        join(sub, "evil.agent"),
        readFileSync(join(EXAMPLE, "main.agent"), "utf8").replaceAll("Reviewer", "Evil"),
      );
      git(sub, "add", "-A");
      git(sub, "commit", "-qm", "evil");
    });
    expect(git(r.repo, "ls-tree", r.head, "teams/agents/vendor")).toMatch(/^160000 commit /);
    const { run, approval, comment } = await open(r, "teams/*");
    expect(run.failed).toBe(true);
    expect(approval?.state).toBe("failure");
    const body = comment("teams/agents");
    expect(body.split("\n")[1]).toMatch(/^### ⛔ Terfyn · `teams\/agents` · blocked/);
    expect(body).toMatch(
      /teams\/agents\/vendor:1:1: error TF2008: is a git submodule \(a gitlink\): its files are not part of this repository's tree/,
    );
    expect((await fromSource(r, "teams/*")).get("teams/agents")).toMatchObject({
      verdict: "blocked",
      error: expect.stringContaining("is a git submodule"),
    });
    // The CLI on a checkout, where the submodule's files are on disk, refuses them alike.
    git(r.repo, "checkout", "-q", r.head);
    const out = await runTerfyn(["validate", "--project", "teams/agents"], r.repo);
    expect(out.code).toBe(1);
    expect(out.stdout).toMatch(/vendor:1:1: error TF2008: is a git submodule \(a gitlink\)/);
    expect(out.stdout).not.toContain("Evil");
  });

  it("the CLI refuses a project directory reached through a symbolic link inside the repository, as the Action does", async () => {
    const r = teamsRepo((repo) => {
      WIDEN(join(repo, "teams/agents"));
      moveBehindLink(repo, "teams/agents", "real/agents");
    });
    git(r.repo, "checkout", "-q", r.head);
    for (const args of [
      ["validate", "--project", "teams/agents"],
      ["plan", "--project", "teams/agents", "--against", r.base],
    ]) {
      const out = await runTerfyn(args, r.repo);
      expect(out.code, args[0]).toBe(1);
      expect(out.stdout).toBe("");
      expect(out.stderr).toMatch(/teams\/agents is a symbolic link inside its repository/);
    }
    // The directory it leads to is a project of its own, and is read (and judged: it widens).
    const real = await runTerfyn(["validate", "--project", "real/agents"], r.repo);
    expect(real.stderr).not.toContain("symbolic link");
    expect(real.stdout).toContain("real/agents/main.agent:58:5: error TF5006");
  });

  it("the CLI refuses a project whose terfyn.yaml is a symbolic link (validate, plan --against)", async () => {
    const r = teamsRepo((repo) => {
      WIDEN(join(repo, "teams/agents"));
      moveBehindLink(repo, "teams/agents/terfyn.yaml", "shared/terfyn.yaml");
    });
    git(r.repo, "checkout", "-q", r.head);
    for (const args of [
      ["validate", "--project", "teams/agents"],
      ["plan", "--project", "teams/agents", "--against", r.base],
    ]) {
      const out = await runTerfyn(args, r.repo);
      expect(out.code, args[0]).toBe(1);
      expect(out.stdout).toBe("");
      expect(out.stderr).toMatch(
        /teams\/agents\/terfyn\.yaml is a symbolic link; Terfyn does not follow it: .* replace the link with the file itself/,
      );
    }
  });

  it("a policy file turned into a symbolic link blocks in the Action and the CLI alike: its target is not what is reviewed", async () => {
    const r = teamsRepo((repo) => {
      WIDEN(join(repo, "teams/agents"));
      moveBehindLink(repo, "teams/agents/policies.yaml", "shared/policies.yaml");
    });
    const { run, comment } = await open(r, "teams/*");
    expect(run.failed).toBe(true);
    expect(comment("teams/agents")).toMatch(
      /teams\/agents\/policies\.yaml:1:1: error TF2008: is a symbolic link; a project file must be a regular file/,
    );
    git(r.repo, "checkout", "-q", r.head);
    const out = await runTerfyn(["validate", "--project", "teams/agents"], r.repo);
    expect(out.code).toBe(1);
    expect(out.stdout).toMatch(
      /policies\.yaml:1:1: error TF2008: is a symbolic link; a project file must be a regular file/,
    );
  });
});
