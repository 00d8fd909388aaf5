/**
 * Plan scenarios against the state: each case applies a "before" version of the example,
 * edits it into "after", and compares `terfyn plan` with a golden file under
 * __tests__/golden/plan/ (UPDATE_GOLDEN=1 to refresh).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runTerfyn } from "./helpers/cli.ts";
import {
  copyExample,
  edit,
  grant,
  NO_REVIEWER_POLICY,
  ungrant,
  write,
} from "./helpers/example-project.ts";

const goldenDir = join(import.meta.dirname, "golden", "plan");
const update = process.env.UPDATE_GOLDEN === "1";

interface Scenario {
  name: string;
  before?: (dir: string) => void;
  after: (dir: string) => void;
  exit: number;
  args?: string[];
}

const withoutReviewerPolicy = (dir: string) => write(dir, "policies.yaml", NO_REVIEWER_POLICY);

const scenarios: Scenario[] = [
  {
    name: "seed-reviewer-widened",
    before: withoutReviewerPolicy,
    after: (d) => grant(d, "Reviewer", "tool.workspace.write_file"),
    exit: 0,
  },
  {
    name: "reviewer-widened-forbidden",
    after: (d) => grant(d, "Reviewer", "tool.workspace.write_file"),
    exit: 1,
  },
  {
    name: "narrowing",
    after: (d) => ungrant(d, "Reviewer", "tool.workspace.run_tests"),
    exit: 0,
  },
  {
    name: "new-agent",
    after: (d) =>
      write(
        d,
        "deployer.agent",
        `agent Deployer {\n  input CodingState\n  output CodingState\n  instructions "Ship the approved change."\n  grants {\n    tool.workspace.read_file\n    tool.workspace.run_tests requires approval\n  }\n}\n`,
      ),
    exit: 0,
  },
  {
    name: "removed-agent",
    before: (d) =>
      write(
        d,
        "linter.agent",
        `agent Linter {\n  input CodingState\n  output CodingState\n  grants {\n    tool.workspace.read_file\n  }\n}\n`,
      ),
    after: (d) => write(d, "linter.agent", "// Linter retired\n"),
    exit: 0,
  },
  {
    name: "gated-grant",
    before: withoutReviewerPolicy,
    after: (d) => grant(d, "Reviewer", "tool.workspace.write_file requires approval"),
    exit: 0,
  },
  {
    name: "gated-to-autonomous",
    before: (d) =>
      edit(
        d,
        "main.agent",
        "    tool.workspace.write_file\n",
        "    tool.workspace.write_file requires approval\n",
      ),
    after: (d) =>
      edit(
        d,
        "main.agent",
        "    tool.workspace.write_file requires approval\n",
        "    tool.workspace.write_file\n",
      ),
    exit: 0,
  },
  {
    name: "loop-limit-raised",
    after: (d) => edit(d, "main.agent", "limit 3", "limit 5"),
    exit: 0,
  },
  {
    name: "no-changes",
    after: () => {},
    exit: 0,
    args: ["--detailed-exitcode"],
  },
];

describe("terfyn plan against the state", () => {
  for (const s of scenarios) {
    it(s.name, async () => {
      const dir = copyExample();
      s.before?.(dir);
      const applied = await runTerfyn(["apply", "--project", ".", "--auto-approve"], dir);
      expect(applied.code, applied.stderr + applied.stdout).toBe(0);
      s.after(dir);
      const run = await runTerfyn(["plan", "--project", ".", ...(s.args ?? [])], dir);
      const golden = join(goldenDir, `${s.name}.txt`);
      const actual = run.stderr === "" ? run.stdout : `${run.stdout}--- stderr ---\n${run.stderr}`;
      if (update || !existsSync(golden)) writeFileSync(golden, actual);
      expect(actual).toBe(readFileSync(golden, "utf8"));
      expect(run.code).toBe(s.exit);
    });
  }

  it("reproduces the seed's lines word for word, in order", async () => {
    const text = readFileSync(join(goldenDir, "seed-reviewer-widened.txt"), "utf8");
    const seed = `~ update Agent/Reviewer
  spec.tools.2: -> "tool.workspace.write_file"

Effect bound (Agent/Reviewer):
- [high] effect_bound: workspace.write autonomous Agent/Reviewer may select tool.workspace.write_file

Capability delta:
  Agent/Reviewer
    + tool.workspace.write_file

Authority:
  autonomous -> WIDENED

Risk delta:
  high:
  - [high] authority_widening: AUTONOMOUS authority WIDENED.
`;
    expect(text.startsWith(seed)).toBe(true);
  });

  it("lists the whole effect bound of every agent when there is no state", async () => {
    const dir = copyExample();
    const run = await runTerfyn(["plan", "--project", "."], dir);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Effect bound (Agent/Reviewer):
- [high] effect_bound: process.exec autonomous Agent/Reviewer may select tool.workspace.run_tests
- [high] effect_bound: workspace.read autonomous Agent/Reviewer may select tool.workspace.read_file
`);
    expect(run.stdout).toContain("+ create Agent/Implementer");
    expect(run.stdout).not.toContain("workspace.write autonomous Agent/Reviewer");
  });

  it("--detailed-exitcode: 2 with changes, 0 without, 1 on errors", async () => {
    const dir = copyExample();
    expect((await runTerfyn(["plan", "--project", ".", "--detailed-exitcode"], dir)).code).toBe(2);
    await runTerfyn(["apply", "--project", ".", "--auto-approve"], dir);
    expect((await runTerfyn(["plan", "--project", ".", "--detailed-exitcode"], dir)).code).toBe(0);
    edit(dir, "main.agent", "limit 3", "");
    const broken = await runTerfyn(["plan", "--project", ".", "--detailed-exitcode"], dir);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain("error TF1012");
    expect(broken.stdout).toContain("cannot be planned");
  });
});

describe("terfyn apply", () => {
  it("refuses a --plan-hash that is not the recomputed plan and leaves the state untouched", async () => {
    const dir = copyExample();
    const first = await runTerfyn(["plan", "--project", ".", "--json"], dir);
    const hash = JSON.parse(first.stdout).hash as string;
    expect(hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    edit(dir, "main.agent", "limit 3", "limit 4");
    const refused = await runTerfyn(["apply", "--project", ".", "--plan-hash", hash], dir);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`approved: ${hash}`);
    expect(existsSync(join(dir, ".terfyn", "state.json"))).toBe(false);

    const second = JSON.parse((await runTerfyn(["plan", "--project", ".", "--json"], dir)).stdout)
      .hash as string;
    const applied = await runTerfyn(["apply", "--project", ".", "--plan-hash", second], dir);
    expect(applied.code).toBe(0);
    const state = JSON.parse(readFileSync(join(dir, ".terfyn", "state.json"), "utf8"));
    expect(state.applied_plan).toBe(second);
    expect(state.serial).toBe(1);
    const stateBefore = readFileSync(join(dir, ".terfyn", "state.json"), "utf8");
    edit(dir, "main.agent", "limit 4", "limit 2");
    expect((await runTerfyn(["apply", "--project", ".", "--plan-hash", second], dir)).code).toBe(1);
    expect(readFileSync(join(dir, ".terfyn", "state.json"), "utf8")).toBe(stateBefore);
  });

  it("needs --auto-approve or --plan-hash without a terminal, and refuses policy violations", async () => {
    const dir = copyExample();
    const noConsent = await runTerfyn(["apply", "--project", "."], dir);
    expect(noConsent.code).toBe(1);
    expect(noConsent.stderr).toContain("--plan-hash");
    grant(dir, "Reviewer", "tool.workspace.write_file");
    const forbidden = await runTerfyn(["apply", "--project", ".", "--auto-approve"], dir);
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toContain("violates policy");
    expect(existsSync(join(dir, ".terfyn", "state.json"))).toBe(false);
  });

  it("reports a corrupt state file clearly", async () => {
    const dir = copyExample();
    await runTerfyn(["apply", "--project", ".", "--auto-approve"], dir);
    write(dir, ".terfyn/state.json", "{ not json");
    const run = await runTerfyn(["plan", "--project", "."], dir);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/state file .*state\.json is not valid JSON/);
  });
});
