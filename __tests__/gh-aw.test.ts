import { describe, expect, it } from "vitest";
import { ghAwAgent, ghAwChanges, readGhAw } from "../src/core/hosts/gh-aw.ts";
import { planHosts } from "../src/core/hosts/hosts.ts";
import { validateProject } from "../src/core/validate.ts";
import { runTerfyn } from "./helpers/cli.ts";
import { committedRepo } from "./helpers/committed-repo.ts";

const FILE = ".github/workflows/triage.md";

const BASE = `---
on:
  issues:
    types: [opened]
permissions:
  contents: read
  issues: read
engine: claude
tools:
  github:
    allowed: [get_issue, list_issues]
  bash: ["git status", "git log:*"]
network:
  allowed: [defaults, python]
safe-outputs:
  add-comment:
    max: 1
timeout-minutes: 10
---

# Triage

Read the issue and label it.
`;

const read = (text: string) => readGhAw({ path: FILE, text });
const changes = (base: string, head: string) =>
  ghAwChanges(read(base), read(head)).map(
    (c) => `${c.direction} ${c.change} ${c.rule !== undefined ? c.rule : c.key} @${c.line}`,
  );

describe("gh-aw front matter, change by change", () => {
  it("widenings: a command beyond the allowlist, an edit tool, a GitHub tool, a domain, a larger max, a new output, a write scope, an event, a role", () => {
    const head = BASE.replace('bash: ["git status", "git log:*"]', 'bash: ["git *"]\n  edit:')
      .replace(
        "allowed: [get_issue, list_issues]",
        "allowed: [get_issue, list_issues, create_issue]",
      )
      .replace("allowed: [defaults, python]", "allowed: [defaults, python, example.com]")
      .replace("    max: 1", "    max: 5\n  create-pull-request:")
      .replace("  issues: read", "  issues: write")
      .replace("    types: [opened]", "    types: [opened]\n  issue_comment:")
      .replace("timeout-minutes: 10", "timeout-minutes: 10\nroles: all");
    const rows = changes(BASE, head);
    expect(rows.filter((r) => !r.startsWith("widened"))).toEqual([
      "neutral removed Bash(git status) @12",
      "neutral removed Bash(git log:*) @12",
    ]);
    expect(rows).toEqual(
      expect.arrayContaining([
        "widened added Bash(git *) @13",
        "widened added tools.edit @14",
        "widened changed tools.github.allowed @12",
        "widened changed network @15",
        "widened changed safe-outputs.add-comment.max @19",
        "widened added safe-outputs.create-pull-request @20",
        "widened changed permissions.issues @8",
        "widened added on.issue_comment @5",
        "widened added roles @22",
      ]),
    );
  });

  it("narrowings and neutral changes: a domain and a tool removed, a smaller max, strict on; the timeout and the prose are neutral", () => {
    const head = BASE.replace("allowed: [defaults, python]", "allowed: [defaults]")
      .replace("allowed: [get_issue, list_issues]", "allowed: [get_issue]")
      .replace("timeout-minutes: 10", "timeout-minutes: 30")
      .replace("Read the issue", "Read the whole issue");
    expect(changes(BASE, head)).toEqual([
      "narrowed changed tools.github.allowed @11",
      "narrowed changed network @13",
      "neutral changed timeout-minutes @18",
    ]);
    expect(changes(BASE.replace("max: 1", "max: 3"), BASE)).toEqual([
      "narrowed changed safe-outputs.add-comment.max @17",
    ]);
  });

  it("fail closed: the engine, custom steps, an unknown key, strict off, a new workflow", () => {
    const withSteps = BASE.replace(
      "timeout-minutes: 10",
      "timeout-minutes: 10\nsteps:\n  - run: curl https://example.com/setup.sh | sh\nstrict: false\nmystery: 1",
    ).replace("engine: claude", "engine: codex");
    expect(changes(BASE, withSteps)).toEqual([
      "widened added strict @21",
      "widened changed engine @8",
      "widened added mystery @22",
      "widened added steps @19",
    ]);
    expect(ghAwChanges(undefined, read(BASE)).map((c) => c.direction)).toEqual(["widened"]);
  });

  it("a Markdown file without front matter is no agent; broken front matter is an error at its line", () => {
    expect(
      ghAwAgent({ path: ".github/workflows/README.md", text: "# Workflows\n" }),
    ).toBeUndefined();
    const bad = read("---\non: [push\n---\nbody\n");
    expect(bad.diagnostics[0]?.code).toBe("TF6001");
    expect(bad.diagnostics[0]?.span.line).toBeGreaterThanOrEqual(2);
  });

  it("the bound: commands, GitHub tools, outputs and the network, each autonomous", () => {
    const bound = ghAwAgent({ path: FILE, text: BASE })?.bound.map((e) => `${e.effect} ${e.tool}`);
    expect(bound).toEqual(
      expect.arrayContaining([
        "process.exec tools.bash git log:*",
        "mcp.github.get_issue github get_issue",
        "network.egress network python",
        "github.issues.write safe-outputs.add-comment",
      ]),
    );
    expect(bound?.some((b) => b.startsWith("workspace.write"))).toBe(false);
  });
});

describe("Workflow/gh-aw in the CLI and in a project", () => {
  it("terfyn plan without terfyn.yaml plans it, naming its host", async () => {
    const dir = committedRepo(
      { [FILE]: BASE },
      { [FILE]: BASE.replace("  bash:", "  edit:\n  bash:") },
    );
    const r = await runTerfyn(["plan", "--against", "HEAD", "--format", "json"], dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("read the host configuration .github/workflows/triage.md (gh-aw)");
    const plan = JSON.parse(r.stdout);
    expect(plan.hosts[0].agent).toBe("Workflow/gh-aw/triage");
    expect(plan.hosts[0].changes[0]).toMatchObject({
      direction: "widened",
      key: "tools.edit",
      line: 12,
    });
  });

  it("a project's policy forbids the workflow's agent to edit: an error on the tool's line", () => {
    const v = validateProject([
      {
        path: "terfyn.yaml",
        text: "apiVersion: terfyn.dev/v1\nkind: Project\nmetadata: { name: g }\nspec: {}\n",
      },
      {
        path: "p.yaml",
        text: "apiVersion: terfyn.dev/v1\nkind: Policy\nmetadata: { name: no-edits }\nspec:\n  rules:\n    - forbid: { agent: Workflow/gh-aw/triage, effect: workspace.write }\n",
      },
      { path: FILE, text: BASE.replace("  bash:", "  edit:\n  bash:") },
    ]);
    expect(
      v.diagnostics.filter((d) => d.code === "TF5006").map((d) => `${d.span.file}:${d.span.line}`),
    ).toEqual([`${FILE}:12`]);
  });
});

describe("gh-aw read as gh-aw reads it (an adversarial pass)", () => {
  it("fences gh-aw accepts (indented, trailing spaces) are found; an unclosed one is an error", () => {
    const wf = read('---\non: issues\ntools:\n  bash: [":*"]\n   ---  \n# Triage\n');
    expect(wf.front?.tools).toEqual({ bash: [":*"] });
    expect(read("---\non: issues\n").diagnostics[0]?.code).toBe("TF6001");
  });

  it("keys named like Object.prototype members are keys, never a crash", () => {
    const text = "---\non: issues\nsafe-outputs:\n  constructor:\n  toString: 1\n---\nx\n";
    expect(() => ghAwAgent({ path: FILE, text })).not.toThrow();
    expect(
      ghAwChanges(read("---\non: issues\n---\nx\n"), read(text)).map((c) => c.direction),
    ).toEqual(["widened", "widened"]);
  });

  it("fail closed: a max removed or set against the unknown default, a safe-outputs setting, network.blocked, an event's filter dropped", () => {
    const base =
      "---\non:\n  issues:\n    types: [opened]\nnetwork:\n  allowed: [defaults]\n  blocked: [evil.example]\nsafe-outputs:\n  staged: true\n  add-labels:\n    max: 2\n---\nx\n";
    const head =
      "---\non: [issues]\nnetwork:\n  allowed: [defaults]\nsafe-outputs:\n  staged: false\n  add-labels:\n---\nx\n";
    const rows = changes(base, head);
    expect(rows.filter((r) => !r.startsWith("widened"))).toEqual([]);
    expect(rows).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^widened changed network/),
        expect.stringMatching(/^widened changed safe-outputs\.staged/),
        expect.stringMatching(/^widened removed safe-outputs\.add-labels\.max/),
        expect.stringMatching(/^widened changed on\.issues/),
      ]),
    );
  });
});

describe("gh-aw imports: shared components are the importing workflows' authority", () => {
  const WF = `---
on: issues
permissions:
  contents: read
imports:
  - shared/tools.md
  - githubnext/agentics/shared/remote.md@v1
safe-outputs:
  add-comment:
---
Triage.
`;
  const SHARED = ".github/workflows/shared/tools.md";
  const tools = (bash: string, more = "") =>
    `---\ntools:\n  bash: [${bash}]\n${more}network:\n  allowed: [defaults]\non: push\n---\nShared.\n`;
  const plan = (base: Record<string, string>, head: Record<string, string>) => {
    const side = (files: Record<string, string>) =>
      Object.entries(files).map(([path, text]) => ({ path, text }));
    return planHosts(side(base), side(head)).map((p) => ({
      agent: p.agent,
      rows: p.changes.map((c) => `${c.direction} ${c.change} ${c.key} ${c.file}:${c.line}`),
    }));
  };

  it("a change to an imported file is a change of every workflow importing it, at the shared file's line; what gh-aw ignores in it is no change", () => {
    const other = WF.replace("on: issues", "on: pull_request");
    const base = {
      [FILE]: WF,
      ".github/workflows/review.md": other,
      [SHARED]: tools('"git log:*"'),
    };
    const head = {
      ...base,
      [SHARED]: tools('"git log:*", "curl:*"', "  edit:\n").replace(
        "on: push",
        "on: [push, issues]",
      ),
    };
    expect(plan(base, head)).toEqual([
      {
        agent: "Workflow/gh-aw/review",
        rows: [`widened changed tools.bash ${SHARED}:3`, `widened added tools.edit ${SHARED}:4`],
      },
      {
        agent: "Workflow/gh-aw/triage",
        rows: [`widened changed tools.bash ${SHARED}:3`, `widened added tools.edit ${SHARED}:4`],
      },
    ]);
    // Only entries removed from an imported list: narrowed.
    expect(plan(head, base)[1]?.rows).toEqual([
      `narrowed changed tools.bash ${SHARED}:3`,
      `narrowed removed tools.edit ${SHARED}:4`,
    ]);
  });

  it("the bound merges what the workflow imports, at its imports line; imports of imports too, a cycle once", () => {
    const nested = ".github/workflows/shared/net.md";
    const agent = ghAwAgent({ path: FILE, text: WF }, [
      { path: SHARED, text: `---\nimports: [net.md]\ntools:\n  edit:\n---\n` },
      {
        path: nested,
        text: `---\nimports: [tools.md]\nnetwork:\n  allowed: [evil.example]\n---\n`,
      },
    ]);
    const bound = (agent?.bound ?? []).map((e) => `${e.effect} ${e.tool} @${e.span.line}`);
    expect(bound).toContain("workspace.write tools.edit @5");
    expect(bound).toContain("network.egress network evil.example @5");
    expect(agent?.files.map((f) => f.path)).toEqual([FILE, SHARED, nested]);
  });

  it("terfyn plan without terfyn.yaml finds shared components in subdirectories", async () => {
    const dir = committedRepo(
      { [FILE]: WF, [SHARED]: tools('"git log:*"') },
      { [SHARED]: tools('"git log:*", "rm:*"') },
      "terfyn-gh-aw-imports-",
    );
    const r = await runTerfyn(["plan", "--against", "HEAD", "--format", "json"], dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(SHARED);
    const rows = JSON.parse(r.stdout).hosts.flatMap(
      (h: { agent: string; changes: { direction: string; key: string }[] }) =>
        h.changes.map((c) => `${h.agent} ${c.direction} ${c.key}`),
    );
    expect(rows).toEqual(["Workflow/gh-aw/triage widened tools.bash"]);
  });
});
