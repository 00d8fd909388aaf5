/**
 * The Markdown files through which a repository gives Claude Code authority: a command's or a
 * skill's `allowed-tools` are allow rules of Host/claude-code (ordered by containment with the
 * settings' rules), a subagent's `permissionMode` is ordered as modes are, and its hooks and
 * servers run programs; found by `terfyn plan` without terfyn.yaml, nested commands included.
 */
import { describe, expect, it } from "vitest";
import { claudeCodeAgent } from "../src/core/hosts/host-agents.ts";
import { planClaudeCode } from "../src/core/hosts/host-plan.ts";
import type { HostFile } from "../src/core/hosts/json-nodes.ts";
import { runTerfyn } from "./helpers/cli.ts";
import { committedRepo } from "./helpers/committed-repo.ts";

const command = (tools: string, path = ".claude/commands/git/commit.md"): HostFile => ({
  path,
  text: `---\ndescription: Commit the staged work\nallowed-tools: ${tools}\n---\nCommit it.\n`,
});
const subagent = (front: string): HostFile => ({
  path: ".claude/agents/reviewer.md",
  text: `---\nname: reviewer\ndescription: Reviews\n${front}---\nReview.\n`,
});
const settings = (p: Record<string, unknown>): HostFile => ({
  path: ".claude/settings.json",
  text: `${JSON.stringify({ permissions: p })}\n`,
});
const rows = (base: HostFile[], head: HostFile[]) =>
  planClaudeCode(base, head).changes.map(
    (c) =>
      `${c.direction} ${c.change} ${c.list ? `${c.list} ` : ""}${c.rule ?? c.key} @${c.file}:${c.line}`,
  );

describe("Claude Code's commands, skills and subagents", () => {
  it("a command's allowed-tools are allow rules, at their line, ordered by containment with the settings' rules", () => {
    const base = [command("Bash(git add:*), Bash(git status:*)")];
    expect(rows(base, [command("Bash(git add:*), Bash(git status:*), Bash(git push:*)")])).toEqual([
      "widened added allow Bash(git push:*) @.claude/commands/git/commit.md:3",
    ]);
    // Already allowed by the settings: neutral; denied by them: it gives nothing.
    expect(
      rows(
        [...base, settings({ allow: ["Bash(git *)"] })],
        [command("Bash(git add:*), Bash(git push:*)"), settings({ allow: ["Bash(git *)"] })],
      ),
    ).toEqual([
      "neutral added allow Bash(git push:*) @.claude/commands/git/commit.md:3",
      "neutral removed allow Bash(git status:*) @.claude/commands/git/commit.md:3",
    ]);
    expect(rows(base, [])).toEqual([
      "narrowed removed allow Bash(git add:*) @.claude/commands/git/commit.md:3",
      "narrowed removed allow Bash(git status:*) @.claude/commands/git/commit.md:3",
    ]);
  });

  it("a skill's allowed-tools as a YAML list, each at its own line; a pitfall in one is said", () => {
    const skill: HostFile = {
      path: ".claude/skills/deploy/SKILL.md",
      text: "---\nname: deploy\nallowed-tools:\n  - Bash(kubectl apply *)\n  - Bash(npx *)\n---\n",
    };
    expect(rows([], [skill])).toEqual([
      "widened added allow Bash(kubectl apply *) @.claude/skills/deploy/SKILL.md:4",
      "widened added allow Bash(npx *) @.claude/skills/deploy/SKILL.md:5",
    ]);
    const agent = claudeCodeAgent([skill]);
    expect(agent?.diagnostics.map((d) => `${d.code}@${d.span.line}`)).toEqual(["TF6005@5"]);
    expect(agent?.bound.map((e) => `${e.effect} ${e.mode} ${e.tool}`)).toContain(
      "process.exec autonomous allow Bash(kubectl apply *)",
    );
  });

  it("a subagent's permissionMode is ordered as modes are; its hooks run commands; its tools list widens nothing", () => {
    expect(
      rows(
        [subagent("tools: Read\n")],
        [subagent("tools: Read, Bash\npermissionMode: bypassPermissions\n")],
      ),
    ).toEqual(["widened added subagents.reviewer.permissionMode @.claude/agents/reviewer.md:5"]);
    expect(
      rows([subagent("permissionMode: acceptEdits\n")], [subagent("permissionMode: plan\n")]),
    ).toEqual(["narrowed changed subagents.reviewer.permissionMode @.claude/agents/reviewer.md:4"]);
    expect(
      rows(
        [subagent("")],
        [
          subagent(
            "hooks:\n  PreToolUse:\n    - hooks: [{ type: command, command: ./audit.sh }]\n",
          ),
        ],
      ),
    ).toEqual(["widened added subagents.reviewer.hooks @.claude/agents/reviewer.md:4"]);
    const bypass = claudeCodeAgent([subagent("permissionMode: bypassPermissions\n")]);
    expect(bypass?.bound.map((e) => `${e.effect} ${e.mode} ${e.tool}`)).toContain(
      "process.exec autonomous subagents.reviewer.permissionMode bypassPermissions: Bash",
    );
  });

  it("front matter that does not parse is an error at its line; a file without front matter gives nothing", () => {
    const broken = claudeCodeAgent([
      { path: ".claude/commands/x.md", text: "---\nallowed-tools: [unclosed\n---\n" },
    ]);
    expect(broken?.diagnostics.map((d) => `${d.code}@${d.span.line}`)).toEqual(["TF6002@2"]);
    expect(rows([], [{ path: ".claude/commands/plain.md", text: "Just a prompt.\n" }])).toEqual([]);
  });

  it("terfyn plan without terfyn.yaml finds nested commands, skills and subagents, and plans them against a revision", async () => {
    const dir = committedRepo(
      { ".claude/commands/git/commit.md": command("Bash(git add:*)").text },
      {
        ".claude/commands/git/commit.md": command("Bash(git add:*), Bash(git push:*)").text,
        ".claude/agents/reviewer.md": subagent("permissionMode: bypassPermissions\n").text,
      },
      "terfyn-claude-md-",
    );
    const r = await runTerfyn(["plan", "--against", "HEAD", "--format", "json"], dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      "read the host configurations .claude/commands/git/commit.md, .claude/agents/reviewer.md (Claude Code)",
    );
    const changes = JSON.parse(r.stdout).hosts[0].changes.map(
      (c: { direction: string; rule?: string; key?: string }) =>
        `${c.direction} ${c.rule ?? c.key}`,
    );
    expect(changes).toEqual([
      "widened Bash(git push:*)",
      "widened subagents.reviewer.permissionMode",
    ]);
  });
});
