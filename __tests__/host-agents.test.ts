/**
 * Host configurations inside a project (a directory with terfyn.yaml): `Host/claude-code` is an
 * agent of the authority model, so policies and capability tests name it, `terfyn plan` lists
 * its changes rule by rule with their direction (against git and against the state), and the
 * renderers (annotations, the pull-request report) show each widened rule at its line.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { claudeCodeAgent } from "../src/core/hosts/host-agents.ts";
import type { Plan } from "../src/core/plan/plan.ts";
import { renderPlanAnnotations } from "../src/core/render/plan-annotations.ts";
import { widenedRows } from "../src/core/render/pr-report.ts";
import { validateProject } from "../src/core/validate.ts";
import { runTerfyn } from "./helpers/cli.ts";

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@x", ...args], {
    cwd,
    encoding: "utf8",
  });

const PROJECT = `apiVersion: terfyn.dev/v1
kind: Project
metadata: { name: hosted }
spec: {}
`;

const settings = (p: Record<string, unknown>, more: Record<string, unknown> = {}) =>
  `${JSON.stringify({ permissions: p, ...more }, null, 2)}\n`;

const doc = (kind: string, name: string, spec: string) =>
  `apiVersion: terfyn.dev/v1\nkind: ${kind}\nmetadata: { name: ${name} }\nspec:\n${spec}`;

/** A project directory with terfyn.yaml, the given files, committed once; then `head` written. */
function project(base: Record<string, string>, head: Record<string, string> = {}): { dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "terfyn-host-agents-"));
  const write = (files: Record<string, string>) => {
    for (const [p, text] of Object.entries(files)) {
      mkdirSync(join(dir, p, ".."), { recursive: true });
      writeFileSync(join(dir, p), text);
    }
  };
  write({ "terfyn.yaml": PROJECT, ...base });
  git(dir, "init", "-q");
  git(dir, "add", "-A");
  git(dir, "commit", "-qm", "base");
  write(head);
  return { dir };
}

const files = (entries: Record<string, string>) =>
  Object.entries({ "terfyn.yaml": PROJECT, ...entries }).map(([path, text]) => ({ path, text }));

describe("Host/claude-code under policies", () => {
  const noNet = doc(
    "Policy",
    "claude-offline",
    "  rules:\n    - forbid: { agent: Host/claude-code, effect: network.egress }\n",
  );

  it("a forbidden effect is an error on the line of the rule that reaches it, and on the mode that asks for it", () => {
    const v = validateProject(
      files({
        "policy.yaml": noNet,
        ".claude/settings.json": settings({ allow: ["Bash(git *)", "WebFetch(domain:x.dev)"] }),
      }),
    );
    const errors = v.diagnostics.filter((d) => d.code === "TF5006");
    // WebFetch and WebSearch ask by the default mode (no line of their own: the file's first).
    expect(errors.map((d) => `${d.span.file}:${d.span.line}`).sort()).toEqual([
      ".claude/settings.json:1",
      ".claude/settings.json:1",
      ".claude/settings.json:5",
    ]);
    expect(errors.map((d) => d.message).join("\n")).toContain(
      "Host/claude-code reaches it through allow WebFetch(domain:x.dev) (autonomous)",
    );
    expect(errors.map((d) => d.hint).join("\n")).toContain(
      "add `WebFetch` to permissions.deny in .claude/settings.json",
    );
  });

  it("denying the web tools satisfies it; an ask rule reaches it gated, which a forbid still refuses", () => {
    const denied = settings({ allow: ["Bash(git *)"], deny: ["WebFetch", "WebSearch"] });
    expect(
      validateProject(files({ "policy.yaml": noNet, ".claude/settings.json": denied })).ok,
    ).toBe(true);
    const asked = settings({ ask: ["WebFetch(domain:x.dev)"], deny: ["WebSearch"] });
    const v = validateProject(files({ "policy.yaml": noNet, ".claude/settings.json": asked }));
    expect(v.ok).toBe(false);
    expect(v.diagnostics.map((d) => d.message).join("\n")).toContain(
      "through ask WebFetch(domain:x.dev) (gated)",
    );
  });

  it("a denied rule and a denied tool reach nothing; the mode still asks for what no deny names", () => {
    const host = claudeCodeAgent([
      {
        path: ".claude/settings.json",
        text: settings({
          allow: ["Bash(git *)", "Bash(rm -rf build)", "mcp__github__create_issue"],
          deny: ["Bash(rm *)", "Bash(git push *)", "Edit", "WebFetch", "WebSearch", "mcp__github"],
        }),
      },
    ]);
    expect(host?.bound.map((e) => `${e.effect} ${e.mode} ${e.tool}`)).toEqual([
      "process.exec autonomous allow Bash(git *)",
      "process.exec gated default mode: Bash",
      "workspace.read autonomous default mode: Read",
    ]);
  });

  it("requireApproval refuses a rule the host runs unasked, and a bypassPermissions mode", () => {
    const rule = doc(
      "Policy",
      "ask-first",
      "  rules:\n    - requireApproval: { effect: process.exec }\n",
    );
    const allowed = validateProject(
      files({ "p.yaml": rule, ".claude/settings.json": settings({ allow: ["Bash(npm test)"] }) }),
    );
    expect(allowed.diagnostics.map((d) => `${d.code} ${d.span.line}`)).toContain("TF5007 4");
    const bypass = validateProject(
      files({
        "p.yaml": rule,
        ".claude/settings.json": settings({ defaultMode: "bypassPermissions" }),
      }),
    );
    expect(bypass.diagnostics.map((d) => d.message).join("\n")).toContain(
      "through defaultMode bypassPermissions: Bash",
    );
    const asked = validateProject(
      files({ "p.yaml": rule, ".claude/settings.json": settings({ ask: ["Bash(npm test)"] }) }),
    );
    expect(asked.ok, JSON.stringify(asked.diagnostics)).toBe(true);
  });

  it("a hook and an enabled plugin run commands unasked: requireApproval refuses them; a plugin set false runs nothing", () => {
    const rule = doc(
      "Policy",
      "ask-first",
      "  rules:\n    - requireApproval: { effect: process.exec }\n",
    );
    const hooked = validateProject(
      files({
        "p.yaml": rule,
        ".claude/settings.json": settings(
          {},
          {
            hooks: { PostToolUse: [{ hooks: [{ type: "command", command: "npm run fmt" }] }] },
            enabledPlugins: { "on@tools": true, "off@tools": false },
          },
        ),
      }),
    );
    const messages = hooked.diagnostics.map((d) => d.message).join("\n");
    expect(messages).toContain("through hooks.PostToolUse");
    expect(messages).toContain("through enabledPlugins.on@tools");
    expect(messages).not.toContain("off@tools");
  });

  it("a forbid for every agent (`*`) covers the host agent too", () => {
    const v = validateProject(
      files({
        "p.yaml": doc(
          "Policy",
          "p",
          '  rules:\n    - forbid: { agent: "*", effect: process.exec }\n',
        ),
        ".claude/settings.json": settings({ allow: ["Bash(make)"], deny: ["Bash"] }),
        ".mcp.json": `${JSON.stringify({ mcpServers: { db: { command: "db-mcp" } } })}\n`,
      }),
    );
    expect(v.diagnostics.filter((d) => d.code === "TF5006").map((d) => d.message)).toEqual([
      "Policy/p forbids `process.exec` for every agent, but Host/claude-code reaches it through mcpServers.db (gated)",
    ]);
  });

  it("a policy or test naming a host agent the project does not have is an error, with the name it has", () => {
    const v = validateProject(
      files({
        "p.yaml": doc(
          "Policy",
          "p",
          "  rules:\n    - forbid: { agent: Host/claude-cod, effect: process.exec }\n",
        ),
        ".claude/settings.json": settings({ allow: ["Read"] }),
      }),
    );
    const unknown = v.diagnostics.find((d) => d.code === "TF3011");
    expect(unknown?.message).toContain("`Host/claude-cod`, which is not declared");
    expect(unknown?.hint).toContain("Host/claude-code");
    // And with no host configuration at all, the name is unknown: a guard that guards nothing.
    const none = validateProject(
      files({
        "p.yaml": doc(
          "Policy",
          "p",
          "  rules:\n    - forbid: { agent: Host/claude-code, effect: process.exec }\n",
        ),
      }),
    );
    expect(none.diagnostics.map((d) => d.code)).toContain("TF3011");
  });

  it("a malformed settings file is a diagnostic of the project with its file and line, never a crash", () => {
    const v = validateProject(
      files({ ".claude/settings.json": '{\n  "permissions": { "allow": ["Bash(git *)",] }\n}\n' }),
    );
    const d = v.diagnostics.find((x) => x.code === "TF6001");
    expect(d?.span.file).toBe(".claude/settings.json");
    expect(d?.span.line).toBe(2);
  });
});

describe("capability tests on Host/claude-code", () => {
  it("forbidEffect, allowEffect and requiresApproval are decided by the host's own precedence", async () => {
    const { dir } = project({
      ".claude/settings.json": settings({
        allow: ["Bash(git *)", "Bash(npm test)"],
        ask: ["Bash(git push *)"],
        deny: ["Edit", "Write", "WebFetch", "WebSearch"],
      }),
      ".mcp.json": `${JSON.stringify({ mcpServers: { github: { type: "http", url: "https://api.example/mcp" } } })}\n`,
      "tests/claude.yaml": doc(
        "CapabilityTest",
        "claude",
        `  assertions:
    - forbidEffect: { agent: Host/claude-code, effect: workspace.write }
    - allowEffect: { agent: Host/claude-code, effect: process.exec, mode: autonomous }
    - requiresApproval: { agent: Host/claude-code, tool: "Bash(git push origin main)" }
    - requiresApproval: { agent: Host/claude-code, tool: "Bash(git status)" }
    - forbidEffect: { agent: Host/claude-code, effect: mcp.github.* }
    - requiresApproval: { agent: Host/claude-code, tool: "Bash(make deploy)" }
    - requiresApproval: { agent: Host/claude-code, tool: "Bash(npm *)" }
`,
      ),
    });
    const r = await runTerfyn(["test", "--project", dir], dir);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      "PASS claude: requiresApproval { agent: Host/claude-code, tool: Bash(git push origin main) }",
    );
    expect(r.stdout).toContain(
      "FAIL claude: requiresApproval { agent: Host/claude-code, tool: Bash(git status) }: Host/claude-code runs Bash(git status) without asking (allow Bash(git *))",
    );
    expect(r.stdout).toContain(
      "FAIL claude: forbidEffect { agent: Host/claude-code, effect: mcp.github.* }: Host/claude-code reaches mcp.github.* through mcpServers.github tools (gated)",
    );
    // The default mode asks before any other command.
    expect(r.stdout).toContain(
      "PASS claude: requiresApproval { agent: Host/claude-code, tool: Bash(make deploy) }",
    );
    // Some npm commands (npm test) run unasked: the rule as a whole is not gated.
    expect(r.stdout).toContain(
      "FAIL claude: requiresApproval { agent: Host/claude-code, tool: Bash(npm *) }: Host/claude-code runs Bash(npm *) without asking (allow Bash(npm test))",
    );
    expect(r.stdout.trim().split("\n").at(-1)).toBe("4 passed, 3 failed");
  });
});

describe("terfyn plan of a project with a host configuration", () => {
  it("a widened rule: one Host authority line at its line, the agent WIDENED, the plan widened", async () => {
    const { dir } = project(
      { ".claude/settings.json": settings({ allow: ["Bash(git log *)"], deny: ["Bash(rm *)"] }) },
      { ".claude/settings.json": settings({ allow: ["Bash(git *)", "Bash(git log *)"] }) },
    );
    const r = await runTerfyn(
      ["plan", "--project", dir, "--against", "HEAD", "--format", "json"],
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    const plan = JSON.parse(r.stdout) as Plan;
    expect(plan.summary.widened).toBe(true);
    expect(
      plan.hosts?.[0]?.changes.map((c) => `${c.direction} ${c.list} ${c.rule} @${c.line}`),
    ).toEqual(["widened deny Bash(rm *) @7", "widened allow Bash(git *) @4"]);
    expect(plan.authority.agents).toEqual([
      { address: "Host/claude-code", autonomous: "WIDENED", gated: "UNCHANGED" },
    ]);
    const text = await runTerfyn(["plan", "--project", dir, "--against", "HEAD"], dir);
    expect(text.stdout).toContain(
      "Host authority (Host/claude-code: .claude/settings.json):\n  WIDENED  removed deny Bash(rm *)  .claude/settings.json:7  (a removed deny lets through what it stopped)\n  WIDENED  added allow Bash(git *)  .claude/settings.json:4",
    );
    const notes = renderPlanAnnotations(plan, { pathPrefix: "agents/" });
    expect(notes.map((a) => `${a.path}:${a.start_line} ${a.annotation_level}`)).toEqual([
      // The removed deny has no line in the head: on the file's first line.
      "agents/.claude/settings.json:1 warning",
      "agents/.claude/settings.json:4 warning",
    ]);
    const rows = widenedRows(plan, "agents");
    expect(rows.map((x) => `${x.entry.effect} ${x.entry.tool} ${x.where}`)).toEqual([
      "process.exec removed deny Bash(rm *) agents/.claude/settings.json:7 (base)",
      "process.exec added allow Bash(git *) agents/.claude/settings.json:4",
    ]);
  });

  it("a narrowing and a reformat: changes, nothing widened", async () => {
    const before = settings({ allow: ["Bash(git *)"], ask: ["WebFetch"] });
    const { dir } = project(
      { ".claude/settings.json": before },
      {
        ".claude/settings.json": settings({
          allow: ["Bash(git log *)"],
          ask: ["WebFetch"],
          deny: ["WebSearch"],
        }),
      },
    );
    const r = await runTerfyn(
      ["plan", "--project", dir, "--against", "HEAD", "--format", "json", "--detailed-exitcode"],
      dir,
    );
    expect(r.code, r.stderr).toBe(2);
    const plan = JSON.parse(r.stdout) as Plan;
    expect(plan.summary.widened).toBe(false);
    expect(plan.authority.agents).toEqual([
      { address: "Host/claude-code", autonomous: "NARROWED", gated: "UNCHANGED" },
    ]);
    const same = project(
      { ".claude/settings.json": before },
      { ".claude/settings.json": JSON.stringify(JSON.parse(before)) },
    );
    const r2 = await runTerfyn(
      ["plan", "--project", same.dir, "--against", "HEAD", "--format", "json"],
      same.dir,
    );
    const plan2 = JSON.parse(r2.stdout) as Plan;
    expect(plan2.summary).toMatchObject({ widened: false, has_changes: true, change: 1 });
    expect(plan2.hosts).toEqual([]);
  });

  it("a removed ask is about what runs unasked; an added ask about what may be asked for", async () => {
    const { dir } = project(
      { ".claude/settings.json": settings({ allow: ["Bash(git *)"], ask: ["Bash(git push *)"] }) },
      { ".claude/settings.json": settings({ allow: ["Bash(git *)"], ask: ["mcp__db"] }) },
    );
    const plan = JSON.parse(
      (await runTerfyn(["plan", "--project", dir, "--against", "HEAD", "--format", "json"], dir))
        .stdout,
    ) as Plan;
    expect(plan.authority.agents[0]).toMatchObject({ autonomous: "WIDENED" });
    expect(plan.hosts?.[0]?.changes.map((c) => `${c.direction} ${c.change} ${c.rule}`)).toContain(
      "widened removed Bash(git push *)",
    );
  });

  it("a project without host files plans as before: no hosts field, the same hash", async () => {
    const { dir } = project({});
    const r = await runTerfyn(["plan", "--project", dir, "--format", "json"], dir);
    expect(JSON.parse(r.stdout).hosts).toBeUndefined();
  });

  it("apply records the files: a plan against the state compares rule by rule", async () => {
    const { dir } = project({
      ".claude/settings.json": settings({ allow: ["Bash(git *)"] }),
    });
    expect((await runTerfyn(["apply", "--project", dir, "--auto-approve"], dir)).code).toBe(0);
    const unchanged = await runTerfyn(["plan", "--project", dir, "--format", "json"], dir);
    expect(JSON.parse(unchanged.stdout).summary.has_changes).toBe(false);
    writeFileSync(
      join(dir, ".claude/settings.json"),
      settings({ allow: ["Bash(git *)", "Bash(git status)"] }),
    );
    const neutral = JSON.parse(
      (await runTerfyn(["plan", "--project", dir, "--format", "json"], dir)).stdout,
    ) as Plan;
    expect(neutral.summary.widened).toBe(false);
    expect(neutral.hosts?.[0]?.changes.map((c) => `${c.direction} ${c.rule}`)).toEqual([
      "neutral Bash(git status)",
    ]);
  });
});

describe("spec.hosts: host files a project lists at other paths", () => {
  const listing = `apiVersion: terfyn.dev/v1
kind: Project
metadata: { name: listed }
spec:
  hosts:
    - { kind: claude-code, path: config/claude-settings.json }
    - { kind: codex, path: config/codex.toml }
`;

  it("each listed file is read as its kind reads it, planned rule by rule against git, and policed", async () => {
    const { dir } = project({
      "terfyn.yaml": listing,
      "config/claude-settings.json": settings({ allow: ["Bash(git log *)"] }),
      "config/codex.toml": 'sandbox_mode = "read-only"\n',
    });
    writeFileSync(join(dir, "config/claude-settings.json"), settings({ allow: ["Bash(git *)"] }));
    writeFileSync(join(dir, "config/codex.toml"), 'sandbox_mode = "danger-full-access"\n');
    const r = await runTerfyn(
      ["plan", "--project", dir, "--against", "HEAD", "--format", "json"],
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    const plan = JSON.parse(r.stdout) as Plan;
    expect(
      plan.hosts?.flatMap((h) =>
        h.changes.map((c) => `${h.agent} ${c.direction} ${c.rule ?? c.key} ${c.file}:${c.line}`),
      ),
    ).toEqual([
      "Host/claude-code widened Bash(git *) config/claude-settings.json:4",
      "Host/claude-code neutral Bash(git log *) config/claude-settings.json:4",
      "Host/codex widened sandbox_mode config/codex.toml:1",
    ]);
    expect(plan.summary.widened).toBe(true);
    writeFileSync(
      join(dir, "p.yaml"),
      doc("Policy", "p", "  rules:\n    - forbid: { agent: Host/codex, effect: network.egress }\n"),
    );
    const v = await runTerfyn(["validate", "--project", dir], dir);
    expect(v.code).toBe(1);
    expect(v.stdout + v.stderr).toContain("config/codex.toml:1");
  });

  it("a listed file the project does not have is an error on its entry; a path that leaves the project is refused", () => {
    const v = validateProject([{ path: "terfyn.yaml", text: listing }]);
    expect(
      v.diagnostics
        .filter((d) => d.code === "TF3011")
        .map((d) => `${d.span.file}:${d.span.line} ${d.message}`),
    ).toEqual([
      "terfyn.yaml:6 spec.hosts lists config/claude-settings.json (claude-code), which the project does not have as a regular file: nothing of that host is planned",
      "terfyn.yaml:7 spec.hosts lists config/codex.toml (codex), which the project does not have as a regular file: nothing of that host is planned",
    ]);
    const leaving = validateProject([
      {
        path: "terfyn.yaml",
        text: listing.replace("config/codex.toml", "../.codex/config.toml"),
      },
    ]);
    expect(leaving.diagnostics.map((d) => d.message).join("\n")).toContain(
      "a path inside the project",
    );
  });
});
