/**
 * `terfyn plan --against GITREF` in real git repositories made by the test: the project is
 * read at the revision with git (no checkout), including when it did not exist there.
 */
import { cpSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { git } from "./helpers/action-harness.ts";
import { runTerfyn } from "./helpers/cli.ts";
import { EXAMPLE, grant, NO_REVIEWER_POLICY, write } from "./helpers/example-project.ts";

function repoWithProject(subdir: string): { repo: string; project: string } {
  const repo = mkdtempSync(join(tmpdir(), "terfyn-git-"));
  git(repo, "init", "-q", "-b", "main");
  write(repo, "README.md", "a repository\n");
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "before the project");
  const project = join(repo, subdir);
  mkdirSync(project, { recursive: true });
  cpSync(EXAMPLE, project, { recursive: true });
  write(project, "policies.yaml", NO_REVIEWER_POLICY);
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "add the project");
  return { repo, project };
}

describe("terfyn plan --against", () => {
  it("diffs the working tree against HEAD~1 in a repository created by the test", async () => {
    const { repo, project } = repoWithProject("agents/review");
    grant(project, "Reviewer", "tool.workspace.write_file");
    git(repo, "commit", "-qam", "widen the reviewer");
    const run = await runTerfyn(
      ["plan", "--project", "agents/review", "--against", "HEAD~1"],
      repo,
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(
      run.stdout.startsWith(`~ update Agent/Reviewer
  spec.tools.2: -> "tool.workspace.write_file"

Effect bound (Agent/Reviewer):
- [high] effect_bound: workspace.write autonomous Agent/Reviewer may select tool.workspace.write_file
`),
    ).toBe(true);
    expect(run.stdout).toContain("autonomous -> WIDENED");

    const json = JSON.parse(
      (
        await runTerfyn(
          ["plan", "--project", "agents/review", "--against", "HEAD~1", "--json"],
          repo,
        )
      ).stdout,
    );
    expect(json.prior).toEqual({
      source: "git",
      ref: "HEAD~1",
      commit: git(repo, "rev-parse", "HEAD~1").trim(),
    });
    expect(json.summary).toMatchObject({ change: 1, widened: true, forbidden: false });
  });

  it("plans everything as new when the project did not exist at the revision", async () => {
    const { repo } = repoWithProject("p");
    const run = await runTerfyn(["plan", "--project", "p", "--against", "HEAD~1", "--json"], repo);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("has no terfyn.yaml at HEAD~1");
    const plan = JSON.parse(run.stdout);
    expect(plan.summary.add).toBe(7); // 2 agents, 1 workflow, 1 tool, 1 schema, 1 policy, 1 capability test
    expect(plan.changes.every((c: { action: string }) => c.action === "create")).toBe(true);
  });

  it("compares with HEAD itself as no changes, whatever the working tree's untracked files", async () => {
    const { repo } = repoWithProject(".");
    write(repo, "notes.txt", "untracked\n");
    const run = await runTerfyn(
      ["plan", "--project", ".", "--against", "HEAD", "--detailed-exitcode"],
      repo,
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("No changes. The configuration matches HEAD");
  });

  it("explains an unknown revision and a directory outside git", async () => {
    const { repo } = repoWithProject("p");
    const unknown = await runTerfyn(
      ["plan", "--project", "p", "--against", "no-such-branch"],
      repo,
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("unknown git revision `no-such-branch`");
    const outside = mkdtempSync(join(tmpdir(), "terfyn-nogit-"));
    cpSync(EXAMPLE, outside, { recursive: true });
    const noGit = await runTerfyn(["plan", "--project", ".", "--against", "HEAD"], outside);
    expect(noGit.code).toBe(1);
    expect(noGit.stderr).toContain("not inside a git repository");
  });
});
