import { describe, expect, it } from "vitest";
import {
  actionAgent,
  actionChanges,
  readActionWorkflow,
} from "../src/core/hosts/claude-code-action.ts";
import { modeByBound } from "../src/core/hosts/host-agents.ts";
import { validateProject } from "../src/core/validate.ts";
import { runTerfyn } from "./helpers/cli.ts";
import { committedRepo } from "./helpers/committed-repo.ts";

const FILE = ".github/workflows/claude.yml";

function workflow(
  o: {
    args?: string;
    withMore?: string;
    permissions?: string | null;
    on?: string;
    stepId?: string;
  } = {},
) {
  const perms =
    o.permissions === null
      ? ""
      : `permissions:\n${o.permissions ?? "  contents: read\n  pull-requests: write\n"}`;
  const args = (o.args ?? '--allowedTools "Bash(git log:*),Read"')
    .split("\n")
    .map((l) => `            ${l}`)
    .join("\n");
  return `name: Claude
on:
${o.on ?? "  issue_comment:\n    types: [created]\n"}${perms}jobs:
  claude:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - id: ${o.stepId ?? "claude"}
        uses: anthropics/claude-code-action@v1
        with:
          prompt: Review this pull request
          claude_args: |
${args}
${o.withMore ?? ""}`;
}

const read = (text: string) => readActionWorkflow({ path: FILE, text });
const changes = (base: string, head: string) =>
  actionChanges(read(base), read(head)).map(
    (c) =>
      `${c.direction} ${c.change} ${c.rule !== undefined ? `${c.list} ${c.rule}` : c.key} @${c.line}`,
  );

describe("claude-code-action steps, change by change", () => {
  it("widenings: a broader allow, an edit tool, a looser mode, a token scope raised, a new event; a covered rule removed is neutral", () => {
    const base = workflow();
    const head = workflow({
      args: '--allowedTools "Bash(git *),Read" "Edit"\n--permission-mode acceptEdits',
      permissions: "  contents: write\n  pull-requests: write\n",
      on: "  issue_comment:\n    types: [created]\n  pull_request_target:\n",
    });
    expect(changes(base, head)).toEqual([
      "widened added allow Bash(git *) @19",
      "widened added allow Edit @19",
      "neutral removed allow Bash(git log:*) @18",
      "widened added jobs.claude.steps.claude --permission-mode @20",
      "widened changed jobs.claude.steps.claude permissions.contents @7",
      "widened added on.pull_request_target @5",
    ]);
  });

  it("narrowings: a deny added, a permissions block where the default token was, a step removed", () => {
    const base = workflow({ permissions: null });
    const head = workflow({
      args: '--allowedTools "Bash(git log:*),Read"\n--disallowed-tools "Bash(git push *)" WebFetch',
      permissions: "  contents: read\n",
    });
    const rows = changes(base, head);
    expect(rows.filter((r) => !r.startsWith("narrowed"))).toEqual([]);
    expect(rows).toContain("narrowed added deny Bash(git push *) @18");
    expect(rows).toContain("narrowed added deny WebFetch @18");
    expect(rows).toContain("narrowed changed jobs.claude.steps.claude permissions.contents @6");
    expect(rows).toContain("narrowed changed jobs.claude.steps.claude permissions.issues @6");
    const gone = changes(base, workflow({ permissions: null, stepId: "other" }));
    expect(gone).toEqual([
      "widened added jobs.claude.steps.other @11",
      "narrowed removed jobs.claude.steps.claude @11",
    ]);
  });

  it("read as the action reads it: comment lines dropped, several values per flag, the older inputs, the skip flag", () => {
    const wf = read(
      workflow({
        args: '# --allowedTools "Bash(*)"\n--allowed-tools "Bash(npm test)" Grep\n--dangerously-skip-permissions',
        withMore:
          "          allowed_tools: |\n            Bash(make lint)\n            Glob\n          disallowed_tools: WebSearch,WebFetch\n",
      }),
    );
    const step = wf.steps[0];
    expect(step?.rules.allow.map((r) => r.text)).toEqual([
      "Bash(npm test)",
      "Grep",
      "Bash(make lint)",
      "Glob",
    ]);
    // From v1 on the action ignores `disallowed_tools`: no deny (an allow it might read counts).
    expect(step?.rules.deny.map((r) => r.text)).toEqual([]);
    const beta = read(
      workflow({ withMore: "          disallowed_tools: WebSearch,WebFetch\n" }).replace(
        "claude-code-action@v1",
        "claude-code-action@beta",
      ),
    );
    expect(beta.steps[0]?.rules.deny.map((r) => r.text)).toEqual(["WebSearch", "WebFetch"]);
    expect(step?.mode?.value).toBe("bypassPermissions");
    const bound = actionAgent({
      path: FILE,
      text: workflow({ args: "--dangerously-skip-permissions" }),
    })?.bound;
    expect(bound?.map((e) => `${e.effect} ${e.mode}`)).toEqual(
      expect.arrayContaining([
        "process.exec autonomous",
        "network.egress autonomous",
        "github.pull-requests.write autonomous",
      ]),
    );
  });

  it("claude_args as the action and Claude Code split it: unquoted parentheses, glob words, an empty word, --flag=value, a space-separated list, the skip flag's priority", () => {
    const rules = (args: string) => {
      const s = read(workflow({ args })).steps[0];
      return {
        allow: s?.rules.allow.map((r) => r.text),
        deny: s?.rules.deny.map((r) => r.text),
        mode: s?.mode?.value,
      };
    };
    expect(rules("--allowedTools Read Bash --disallowedTools Bash(git:*)")).toMatchObject({
      allow: ["Read", "Bash"],
      deny: ["Bash(git:*)"],
    });
    expect(rules("--allowedTools Read mcp__github__*").allow).toEqual(["Read", "mcp__github__*"]);
    expect(rules("--allowedTools Read Bash --disallowedTools '' Bash")).toMatchObject({
      allow: ["Read", "Bash"],
      deny: [],
    });
    expect(rules("--allowedTools=Bash --permission-mode=acceptEdits")).toMatchObject({
      allow: ["Bash"],
      mode: "acceptEdits",
    });
    expect(rules("--allowedTools 'Read Bash(git log *),Edit'").allow).toEqual([
      "Read",
      "Bash(git log *)",
      "Edit",
    ]);
    expect(rules("--dangerously-skip-permissions --permission-mode default").mode).toBe(
      "bypassPermissions",
    );
  });

  it("a GitHub expression in claude_args is a value nobody can read here: the step is bounded by nothing, never a crash", () => {
    const base = workflow();
    const head = workflow({ args: `--allowedTools Read ${"$"}{{ github.event.comment.body }}` });
    const rows = changes(base, head);
    expect(rows).toContain("widened added jobs.claude.steps.claude --permission-mode @18");
    expect(rows.some((r) => r.includes("allow \uE010"))).toBe(false);
    const bound = actionAgent({ path: FILE, text: head })?.bound.map(
      (e) => `${e.effect} ${e.mode}`,
    );
    expect(bound).toContain("process.exec autonomous");
  });

  it("aliases resolved, mixed-case uses read, same-named steps told apart", () => {
    const aliased = `on: issue_comment
env:
  ARGS: &args --dangerously-skip-permissions
jobs:
  claude:
    runs-on: ubuntu-latest
    permissions: &perm write-all
    steps:
      - id: claude
        uses: Anthropics/Claude-Code-Action@v1
        with:
          claude_args: *args
`;
    const s = read(aliased).steps[0];
    expect(s?.mode?.value).toBe("bypassPermissions");
    expect(s?.permissions?.get("contents")?.value).toBe("write");
    const twice = `on: issue_comment
jobs:
  claude:
    runs-on: ubuntu-latest
    steps:
      - name: Claude
        uses: anthropics/claude-code-action@v1
        with:
          claude_args: --dangerously-skip-permissions
      - name: Claude
        uses: anthropics/claude-code-action@v1
`;
    expect(read(twice).steps.map((x) => x.key)).toEqual([
      "jobs.claude.steps.Claude",
      "jobs.claude.steps.Claude#2",
    ]);
  });

  it("an unknown input or flag changed widens; the prompt and the turn limit are neutral", () => {
    const base = workflow();
    expect(
      changes(base, workflow({ withMore: "          path_to_claude_code_executable: ./claude\n" })),
    ).toEqual(["widened added jobs.claude.steps.claude.path_to_claude_code_executable @19"]);
    expect(changes(base, base.replace("Review this pull request", "Review it"))).toEqual([
      "neutral changed jobs.claude.steps.claude.prompt @16",
    ]);
    expect(
      changes(
        base,
        workflow({ args: '--allowedTools "Bash(git log:*),Read"\n--mcp-config ./mcp.json' }),
      ),
    ).toEqual(["widened added jobs.claude.steps.claude.claude_args --mcp-config @19"]);
  });

  it("a workflow without a claude-code-action step is no agent; malformed YAML is an error, never a crash", () => {
    expect(
      actionAgent({
        path: ".github/workflows/ci.yml",
        text: "on: push\njobs:\n  t:\n    steps:\n      - run: make\n",
      }),
    ).toBeUndefined();
    const bad = read("on: push\njobs:\n  t: [\n");
    expect(bad.diagnostics[0]?.code).toBe("TF6001");
    expect(bad.diagnostics[0]?.span.file).toBe(FILE);
  });
});

describe("Workflow/claude-code-action in the CLI and in a project", () => {
  it("terfyn plan without terfyn.yaml: only the workflows that run Claude are read and planned", async () => {
    const dir = committedRepo(
      {
        [FILE]: workflow(),
        ".github/workflows/ci.yml":
          "on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - run: make\n",
      },
      { [FILE]: workflow({ args: '--allowedTools "Bash(*)"' }) },
    );
    const r = await runTerfyn(["plan", "--against", "HEAD", "--format", "json"], dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      "read the host configuration .github/workflows/claude.yml (claude-code-action)",
    );
    const plan = JSON.parse(r.stdout);
    expect(plan.hosts.map((h: { agent: string }) => h.agent)).toEqual([
      "Workflow/claude-code-action/claude.yml",
    ]);
    expect(plan.summary.widened).toBe(1);
  });

  it("a project's policy forbids the step's token to write contents: an error on the scope's line", () => {
    const v = validateProject([
      {
        path: "terfyn.yaml",
        text: "apiVersion: terfyn.dev/v1\nkind: Project\nmetadata: { name: c }\nspec: {}\n",
      },
      {
        path: "p.yaml",
        text: "apiVersion: terfyn.dev/v1\nkind: Policy\nmetadata: { name: read-only-claude }\nspec:\n  rules:\n    - forbid: { agent: Workflow/claude-code-action/claude.yml, effect: github.contents.write }\n",
      },
      { path: FILE, text: workflow({ permissions: "  contents: write\n" }) },
    ]);
    const errors = v.diagnostics.filter((d) => d.code === "TF5006");
    expect(errors.map((d) => `${d.span.file}:${d.span.line}`)).toEqual([`${FILE}:6`]);
  });
});

describe("what gates a step (an adversarial pass)", () => {
  it("a job's if removed, an event's types changed, a step's env added: each widens", () => {
    const base = workflow().replace(
      "    runs-on: ubuntu-latest\n",
      "    runs-on: ubuntu-latest\n    if: github.actor == 'maintainer'\n",
    );
    const head = workflow({ on: "  issue_comment:\n    types: [created, edited]\n" })
      .replace(
        "          prompt: Review this pull request\n",
        "          prompt: Review this pull request\n",
      )
      .replace(
        "        uses: anthropics/claude-code-action@v1\n",
        "        uses: anthropics/claude-code-action@v1\n        env:\n          NODE_OPTIONS: --require ./x.js\n",
      );
    const rows = changes(base, head);
    expect(rows.filter((r) => !r.startsWith("widened"))).toEqual([]);
    expect(rows).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^widened removed jobs\.claude\.steps\.claude\.\(job if\)/),
        expect.stringMatching(/^widened added jobs\.claude\.steps\.claude\.\(step env\)/),
        expect.stringMatching(/^widened changed on\.issue_comment/),
      ]),
    );
  });
});

describe("flags with several values (an adversarial pass)", () => {
  it("a second --add-dir or --mcp-config value is compared too", () => {
    expect(
      changes(
        workflow({ args: "--allowedTools Read --add-dir ../a" }),
        workflow({ args: "--allowedTools Read --add-dir ../a /" }),
      ),
    ).toEqual(["widened changed jobs.claude.steps.claude.claude_args --add-dir @18"]);
  });
});

describe("capability tests on a claude-code-action agent: requiresApproval by its bound", () => {
  it("a tool it allows runs unasked; one it neither allows nor may reach is refused (no one is there to ask)", () => {
    const agent = actionAgent({ path: FILE, text: workflow() });
    if (!agent) throw new Error("no agent");
    const mode = (t: string) => {
      const m = agent.modeOf?.(t) ?? modeByBound(agent, t);
      return `${m.mode}: ${m.because}`;
    };
    expect(mode("Bash(git log --oneline)")).toBe(
      "autonomous: jobs.claude.steps.claude allow Bash(git log:*)",
    );
    // Coarse, never open: any command allowed makes every command "run unasked".
    expect(mode("Bash(git push *)")).toBe(
      "autonomous: jobs.claude.steps.claude allow Bash(git log:*)",
    );
    expect(mode("WebFetch")).toBe(
      "denied: Workflow/claude-code-action/claude.yml reaches no network.egress",
    );
    expect(mode("Edit(src/**)")).toMatch(/^denied: /);
    const skip = actionAgent({
      path: FILE,
      text: workflow({ args: "--dangerously-skip-permissions" }),
    });
    if (!skip) throw new Error("no agent");
    expect(modeByBound(skip, "Edit(src/**)").mode).toBe("autonomous");
  });
});
