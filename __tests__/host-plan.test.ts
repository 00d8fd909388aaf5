/**
 * `terfyn plan` in a repository with Claude Code's settings and no terfyn.yaml: the files are
 * discovered and named on stderr, planned as Host/claude-code against a git revision (read from
 * git objects), each change with its direction and the rule exactly as written at its line.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runTerfyn } from "./helpers/cli.ts";

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@x", ...args], {
    cwd,
    encoding: "utf8",
  });

/** A repository whose first commit has `base` as .claude/settings.json (under `sub`), `head` in the work tree. */
function repo(base: string | undefined, head: string, sub = ""): { repo: string; dir: string } {
  const r = mkdtempSync(join(tmpdir(), "terfyn-host-plan-"));
  git(r, "init", "-q");
  const dir = join(r, sub);
  mkdirSync(join(dir, ".claude"), { recursive: true });
  writeFileSync(join(r, "README"), "x\n");
  if (base !== undefined) writeFileSync(join(dir, ".claude", "settings.json"), base);
  git(r, "add", "-A");
  git(r, "commit", "-qm", "base");
  writeFileSync(join(dir, ".claude", "settings.json"), head);
  return { repo: r, dir };
}

const settings = (p: Record<string, unknown>) => `${JSON.stringify({ permissions: p }, null, 2)}\n`;

describe("terfyn plan on Claude Code settings", () => {
  it("a pull request that widens: one WIDENED row per widened rule, at its line; stderr names the files read", async () => {
    const { dir } = repo(
      settings({ allow: ["Read", "Bash(git log:*)"], deny: ["Bash(rm *)"] }),
      settings({ allow: ["Bash(git *)", "Read"], deny: [] }),
    );
    const r = await runTerfyn(["plan", "--against", "HEAD", "--format", "json"], dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      "read the host configuration .claude/settings.json (Claude Code), and .claude/settings.json at HEAD",
    );
    const plan = JSON.parse(r.stdout);
    expect(plan.summary).toEqual({ widened: 2, narrowed: 0, neutral: 1, has_changes: true });
    expect(
      plan.hosts[0].changes.map(
        (c: { direction: string; rule: string; line: number }) =>
          `${c.direction} ${c.rule} @${c.line}`,
      ),
    ).toEqual(["widened Bash(rm *) @8", "widened Bash(git *) @4", "neutral Bash(git log:*) @5"]);
    expect(plan.hosts[0].agent).toBe("Host/claude-code");
  });

  it("a pull request that narrows: no widening; --detailed-exitcode says something changed", async () => {
    const { dir } = repo(
      settings({ allow: ["Bash(git *)"], defaultMode: "acceptEdits" }),
      settings({ allow: ["Bash(git log:*)"], deny: ["WebFetch"] }),
      "tools/agent",
    );
    const r = await runTerfyn(["plan", "--against", "HEAD", "--detailed-exitcode"], dir);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).not.toContain("WIDENED");
    expect(r.stdout).toContain("NARROWED added deny WebFetch");
    expect(r.stdout).toContain("NARROWED removed permissions.defaultMode");
    expect(r.stdout).toContain("Host authority against HEAD: 0 widened, 3 narrowed");
  });

  it("without --against everything is new; a file the host would refuse is an error at its line and exit 1", async () => {
    const { dir } = repo(
      undefined,
      '{\n  "permissions": {\n    // comment\n    "allow": ["Bash"]\n  }\n}\n',
    );
    const r = await runTerfyn(["plan"], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(".claude/settings.json:3:5: error TF6001:");
    expect(r.stdout).toContain("no change of authority");
  });

  it("a settings file that is a link is not followed: an error naming it", async () => {
    const { dir } = repo(undefined, settings({ allow: ["Read"] }));
    writeFileSync(join(dir, "elsewhere.json"), settings({ allow: ["Bash"] }));
    symlinkSync(join(dir, "elsewhere.json"), join(dir, ".claude", "settings.local.json"));
    const r = await runTerfyn(["plan", "--format", "json"], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("settings.local.json is not a regular file");
    expect(JSON.parse(r.stdout).hosts[0].files).toEqual([".claude/settings.json"]);
  });

  it("a format a host plan does not print is a usage error", async () => {
    const { dir } = repo(undefined, settings({ allow: ["Read"] }));
    const r = await runTerfyn(["plan", "--format", "sarif"], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("a plan of host configurations prints text or json, not sarif");
  });

  it("a repository with only .mcp.json: a new server is one widened row naming it; stderr names the file", async () => {
    const r0 = mkdtempSync(join(tmpdir(), "terfyn-host-plan-"));
    git(r0, "init", "-q");
    writeFileSync(join(r0, ".mcp.json"), '{"mcpServers": {}}\n');
    git(r0, "add", "-A");
    git(r0, "commit", "-qm", "base");
    writeFileSync(
      join(r0, ".mcp.json"),
      '{\n  "mcpServers": {\n    "db": { "command": "npx", "args": ["-y", "db-mcp"] }\n  }\n}\n',
    );
    const r = await runTerfyn(["plan", "--against", "HEAD"], r0);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("read the host configuration .mcp.json");
    expect(r.stdout).toContain(
      "WIDENED  added mcpServers.db  .mcp.json:3  (a new MCP server: it runs npx -y db-mcp)",
    );
  });

  it("every host file deleted is planned too: the base's rules removed, a removed deny a widening", async () => {
    const { dir } = repo(settings({ allow: ["Bash(git *)"], deny: ["Bash(rm *)"] }), "");
    execFileSync("git", ["rm", "-qf", ".claude/settings.json"], { cwd: dir });
    const r = await runTerfyn(["plan", "--against", "HEAD", "--format", "json"], dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("no host configuration left, and .claude/settings.json at HEAD");
    const plan = JSON.parse(r.stdout);
    expect(
      plan.hosts[0].changes.map(
        (c: { direction: string; rule: string }) => `${c.direction} ${c.rule}`,
      ),
    ).toEqual(["widened Bash(rm *)", "narrowed Bash(git *)"]);
  });
});

describe("the text plan of host configurations, against forged names", () => {
  it("an agent name from a file name is escaped: a newline or a terminal escape cannot forge lines", async () => {
    const { hostPlanText } = await import("../src/core/hosts/host-plan.ts");
    const text = hostPlanText(
      [
        {
          agent: "Workflow/claude-code-action/b\n  no change of authority\n\u001b[8m.yml",
          files: [".github/workflows/b\n.yml"],
          changes: [],
          diagnostics: [],
        },
      ],
      null,
    );
    expect(text.split("\n")[0]).not.toContain("\u001b");
    // The one line that says so is the plan's own, below the (escaped) name.
    expect(text.split("\n").filter((l) => l.startsWith("  no change of authority"))).toEqual([
      "  no change of authority",
    ]);
  });
});
