/**
 * The one plan use case (src/core/plan/plan-from-sources.ts): the CLI (`plan --against`) and
 * the Action (planProjectAt) plan the same revisions of a real repository to the same plan,
 * hash included, and treat a prior that does not validate by one rule: it is not used in part,
 * everything is planned as new, and each says why.
 */
import { cpSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { planProjectAt } from "../src/action/plan-revisions.ts";
import { git } from "./helpers/action-harness.ts";
import { runTerfyn } from "./helpers/cli.ts";
import { EXAMPLE, edit, grant, NO_REVIEWER_POLICY, write } from "./helpers/example-project.ts";

function repo(): { repo: string; project: string } {
  const dir = mkdtempSync(join(tmpdir(), "terfyn-sources-"));
  git(dir, "init", "-q", "-b", "main");
  const project = join(dir, "agents");
  mkdirSync(project, { recursive: true });
  cpSync(EXAMPLE, project, { recursive: true });
  write(project, "policies.yaml", NO_REVIEWER_POLICY);
  git(dir, "add", "-A");
  git(dir, "commit", "-qm", "the project");
  return { repo: dir, project };
}

async function cliPlan(dir: string, against: string) {
  const run = await runTerfyn(["plan", "--project", "agents", "--against", against, "--json"], dir);
  return { ...run, plan: JSON.parse(run.stdout) };
}

describe("planFromSources: the CLI and the Action plan alike", () => {
  it("gives the same plan hash for the same two revisions", async () => {
    const { repo: dir, project } = repo();
    grant(project, "Reviewer", "tool.workspace.write_file");
    edit(project, "main.agent", "limit 3", "limit 9");
    git(dir, "commit", "-qam", "widen");
    const cli = await cliPlan(dir, "HEAD~1");
    const action = await planProjectAt(
      dir,
      "agents",
      "HEAD",
      git(dir, "rev-parse", "HEAD~1").trim(),
    );
    expect(action.blocking).toEqual([]);
    expect(action.plan).toBeDefined();
    expect(cli.plan.path).toBe("agents");
    expect(cli.plan.hash).toBe(action.plan?.hash);
    expect(cli.plan.summary.widened).toBe(true);
  });

  it("does not use a base that does not validate, on either side: everything is new", async () => {
    const { repo: dir, project } = repo();
    // The base's policy file is broken: what resolved of it would lack that very policy.
    write(project, "policies.yaml", `${NO_REVIEWER_POLICY}\n  broken: [\n`);
    git(dir, "commit", "-qam", "a broken base");
    write(project, "policies.yaml", NO_REVIEWER_POLICY);
    git(dir, "commit", "-qam", "fixed");
    const cli = await cliPlan(dir, "HEAD~1");
    expect(cli.code).toBe(0);
    expect(cli.stderr).toMatch(
      /the project at HEAD~1's project does not validate|does not validate/,
    );
    expect(cli.stderr).toContain("everything is planned as new");
    expect(cli.plan.changes.every((c: { action: string }) => c.action === "create")).toBe(true);
    const action = await planProjectAt(
      dir,
      "agents",
      "HEAD",
      git(dir, "rev-parse", "HEAD~1").trim(),
    );
    expect(action.baseProblem).toContain("everything is planned as new");
    expect(action.plan?.changes.every((c) => c.action === "create")).toBe(true);
    expect(cli.plan.hash).toBe(action.plan?.hash);
  });

  it("refuses to plan a checkout whose project file is unreadable as the Action refuses it", async () => {
    const { repo: dir, project } = repo();
    write(project, "bad.agent", "agent X {\n");
    const bytes = Buffer.from([0x61, 0x67, 0xff, 0xfe, 0x0a]);
    const { writeFileSync } = await import("node:fs");
    writeFileSync(join(project, "bad.agent"), bytes);
    const run = await runTerfyn(["plan", "--project", "agents", "--against", "HEAD"], dir);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("TF2009");
  });
});
