/**
 * `terfyn init` (issue 23, item 6), and a newcomer's path: in an empty repository, init, then
 * validate, test and plan, all green; the workflow it writes is the one the docs recommend;
 * nothing existing is ever overwritten.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { git } from "./helpers/action-harness.ts";
import { runTerfyn } from "./helpers/cli.ts";

const DOCS = join(import.meta.dirname, "..", "docs", "github-action.md");

function emptyRepository(): string {
  const dir = mkdtempSync(join(tmpdir(), "terfyn-init-"));
  git(dir, "init", "-q", "-b", "main");
  return dir;
}

describe("terfyn init", () => {
  it("a newcomer's path: init in an empty repository, then validate, test and plan, all green", async () => {
    const repo = emptyRepository();
    const init = await runTerfyn(["init", "agents"], repo);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain("Next: terfyn plan --project agents");
    for (const f of [
      "terfyn.yaml",
      "main.agent",
      "tools.yaml",
      "policies.yaml",
      "tests/capabilities.yaml",
    ])
      expect(existsSync(join(repo, "agents", f)), f).toBe(true);
    for (const args of [
      ["validate", "--project", "agents"],
      ["test", "--project", "agents"],
      ["plan", "--project", "agents"],
    ]) {
      const r = await runTerfyn(args, repo);
      expect(r.code, `${args[0]}: ${r.stdout}${r.stderr}`).toBe(0);
    }
    // The Action's files at the repository's root, planning the new project.
    const wf = parse(readFileSync(join(repo, ".github/workflows/terfyn.yml"), "utf8"));
    expect(wf.jobs.plan.steps[1].with.project).toBe("agents");
    const judge = parse(readFileSync(join(repo, ".github/terfyn.yml"), "utf8"));
    expect(judge).toEqual({ approvers: "maintain", "fail-on": "widening" });
    // The same workflow docs/github-action.md recommends, but for the project's path.
    const docs = readFileSync(DOCS, "utf8");
    const block = [...docs.matchAll(/```yaml\n([\s\S]*?)```/g)]
      .map((m) => m[1] ?? "")
      .find((b) => b.startsWith("# .github/workflows/terfyn.yml"));
    const recommended = parse(block ?? "");
    for (const job of ["plan", "approve"])
      for (const step of recommended.jobs[job].steps)
        if (step.with?.project) step.with.project = "agents";
    expect(wf).toEqual(recommended);
  });

  it("never overwrites: a project file that exists stops it before anything is written", async () => {
    const dir = mkdtempSync(join(tmpdir(), "terfyn-init-"));
    writeFileSync(join(dir, "main.agent"), "// mine\n");
    const r = await runTerfyn(["init"], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "already has main.agent; nothing was written (init never overwrites)",
    );
    expect(readFileSync(join(dir, "main.agent"), "utf8")).toBe("// mine\n");
    expect(existsSync(join(dir, "terfyn.yaml"))).toBe(false);
  });

  it("leaves an existing workflow file alone and names it", async () => {
    const repo = emptyRepository();
    mkdirSync(join(repo, ".github/workflows"), { recursive: true });
    writeFileSync(join(repo, ".github/workflows/terfyn.yml"), "name: mine\n");
    const r = await runTerfyn(["init", "agents"], repo);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /Left as they are \(they exist\):\n {2}\.github\/workflows\/terfyn\.yml/,
    );
    expect(readFileSync(join(repo, ".github/workflows/terfyn.yml"), "utf8")).toBe("name: mine\n");
  });

  it("outside a repository, the Action's files go beside the project, planning .", async () => {
    const dir = mkdtempSync(join(tmpdir(), "terfyn-init-"));
    const r = await runTerfyn(["init"], dir);
    expect(r.code, r.stderr).toBe(0);
    const wf = parse(readFileSync(join(dir, ".github/workflows/terfyn.yml"), "utf8"));
    expect(wf.jobs.plan.steps[1].with.project).toBe(".");
  });
});
