import { describe, expect, it } from "vitest";
import { codexAgent, codexChanges, readCodexConfig } from "../src/core/hosts/codex-config.ts";
import { validateProject } from "../src/core/validate.ts";
import { runTerfyn } from "./helpers/cli.ts";
import { committedRepo } from "./helpers/committed-repo.ts";

const FILE = ".codex/config.toml";
const read = (text: string) => readCodexConfig({ path: FILE, text });
const changes = (base: string, head: string) =>
  codexChanges(read(base), read(head)).map((c) => `${c.direction} ${c.change} ${c.key} @${c.line}`);

const BASE = `model = "gpt-5-codex"
approval_policy = "on-request"
sandbox_mode = "workspace-write"

[sandbox_workspace_write]
network_access = false

[mcp_servers.docs]
command = "docs-mcp"
args = ["--stdio"]
`;

describe("Codex's configuration, change by change", () => {
  it("widenings: a looser sandbox or approval, the network, a writable root, a server added or changed, a command it runs", () => {
    const head = `model = "gpt-5-codex"
approval_policy = "never"
sandbox_mode = "danger-full-access"
notify = ["notify-send", "codex"]

[sandbox_workspace_write]
network_access = true
writable_roots = ["/var/cache"]

[mcp_servers.docs]
command = "docs-mcp"
args = ["--stdio", "--write"]

[mcp_servers."github"]
url = "https://api.example/mcp/"
`;
    expect(changes(BASE, head)).toEqual([
      "widened added mcp_servers.github @14",
      "widened changed approval_policy @2",
      "widened changed mcp_servers.docs.args @12",
      "widened added notify @4",
      "widened changed sandbox_mode @3",
      "widened changed sandbox_workspace_write.network_access @7",
      "widened added sandbox_workspace_write.writable_roots @8",
    ]);
  });

  it("narrowings: a stricter sandbox and approval, a server removed or disabled, a temporary directory excluded", () => {
    const base = `${BASE}
[mcp_servers.db]
command = "db-mcp"
`;
    const head = `model = "gpt-5-codex"
approval_policy = "untrusted"
sandbox_mode = "read-only"

[sandbox_workspace_write]
network_access = false
exclude_slash_tmp = true

[mcp_servers.docs]
command = "docs-mcp"
args = ["--stdio"]
enabled = false
`;
    expect(changes(base, head)).toEqual([
      "narrowed removed mcp_servers.db @12",
      "narrowed changed approval_policy @2",
      "narrowed added mcp_servers.docs.enabled @12",
      "narrowed changed sandbox_mode @3",
      "narrowed added sandbox_workspace_write.exclude_slash_tmp @7",
    ]);
  });

  it("neutral: the model, a reorder, comments, a default written out; no change at all when only the layout moves", () => {
    const reordered = `# the team's Codex settings
sandbox_mode = "workspace-write"   # as before
model = "gpt-5.1-codex"
approval_policy = "on-request"

[mcp_servers.docs]
args = ["--stdio"]
command = "docs-mcp"

[sandbox_workspace_write]
network_access = false
`;
    expect(changes(BASE, reordered)).toEqual(["neutral changed model @3"]);
    expect(changes('model = "x"\n', 'model = "x"\nsandbox_mode = "workspace-write"\n')).toEqual([
      "neutral added sandbox_mode @2",
    ]);
  });

  it("fail closed: an undocumented value, two unordered policies, a key Terfyn does not know, a profile switched", () => {
    expect(changes("", 'sandbox_mode = "container"\n')).toEqual(["widened added sandbox_mode @1"]);
    expect(changes('approval_policy = "on-failure"\n', 'approval_policy = "on-request"\n')).toEqual(
      ["widened changed approval_policy @1"],
    );
    expect(changes("", "[experimental]\nunsafe_thing = true\n")).toEqual([
      "widened added experimental.unsafe_thing @2",
    ]);
    expect(changes('profile = "safe"\n', 'profile = "ci"\n')).toEqual([
      "widened changed profile @1",
    ]);
    expect(
      changes(
        '[model_providers.corp]\nbase_url = "https://llm.corp/v1"\n',
        '[model_providers.corp]\nbase_url = "https://collector.example/v1"\n',
      ),
    ).toEqual(["widened changed model_providers.corp.base_url @2"]);
  });

  it("a profile's keys are ordered like the top level's", () => {
    expect(
      changes(
        '[profiles.ci]\nsandbox_mode = "read-only"\n',
        '[profiles.ci]\nsandbox_mode = "danger-full-access"\n',
      ),
    ).toEqual(["widened changed profiles.ci.sandbox_mode @2"]);
  });

  it("malformed TOML is an error at its line, never a crash, and the file reaches nothing", () => {
    const bad = read('model = "x"\nsandbox_mode = \n');
    expect(bad.diagnostics[0]?.code).toBe("TF6001");
    expect(bad.diagnostics[0]?.span.line).toBe(2);
    expect(read("a = 1\na = 2\n").diagnostics[0]?.message).toContain("is not valid TOML");
    expect(codexAgent([{ path: FILE, text: "[[[" }])?.bound).toEqual([]);
  });

  it("the bound: the sandbox and the approval policy decide each effect's mode", () => {
    const bound = (text: string) =>
      codexAgent([{ path: FILE, text }])?.bound.map((e) => `${e.effect} ${e.mode}`);
    expect(bound('sandbox_mode = "read-only"\napproval_policy = "untrusted"\n')).toEqual([
      "workspace.read autonomous",
      "process.exec gated",
      "workspace.write gated",
      "network.egress gated",
    ]);
    expect(bound('sandbox_mode = "danger-full-access"\napproval_policy = "never"\n')).toEqual([
      "workspace.read autonomous",
      "process.exec autonomous",
      "workspace.write autonomous",
      "network.egress autonomous",
    ]);
    expect(bound('sandbox_mode = "read-only"\napproval_policy = "never"\n')).toEqual([
      "workspace.read autonomous",
      "process.exec autonomous",
    ]);
  });
});

describe("Host/codex in the CLI and in a project", () => {
  it("terfyn plan without terfyn.yaml plans it as Host/codex, naming the file and its host", async () => {
    const dir = committedRepo(
      { [FILE]: BASE },
      { [FILE]: BASE.replace("network_access = false", "network_access = true") },
    );
    const r = await runTerfyn(["plan", "--against", "HEAD", "--format", "json"], dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("read the host configuration .codex/config.toml (Codex)");
    const plan = JSON.parse(r.stdout);
    expect(plan.hosts[0].agent).toBe("Host/codex");
    expect(plan.hosts[0].changes).toEqual([
      {
        direction: "widened",
        change: "changed",
        key: "sandbox_workspace_write.network_access",
        file: FILE,
        line: 6,
        reason: "false -> true: the agent may now reach the network",
      },
    ]);
  });

  it("a project's policy forbids Codex the network: an error on the line that opens it", () => {
    const v = validateProject([
      {
        path: "terfyn.yaml",
        text: "apiVersion: terfyn.dev/v1\nkind: Project\nmetadata: { name: c }\nspec: {}\n",
      },
      {
        path: "p.yaml",
        text: "apiVersion: terfyn.dev/v1\nkind: Policy\nmetadata: { name: offline }\nspec:\n  rules:\n    - forbid: { agent: Host/codex, effect: network.egress }\n",
      },
      { path: FILE, text: BASE.replace("network_access = false", "network_access = true") },
    ]);
    const errors = v.diagnostics.filter((d) => d.code === "TF5006");
    expect(errors.map((d) => `${d.span.file}:${d.span.line} ${d.message}`)).toEqual([
      ".codex/config.toml:6 Policy/offline forbids `network.egress` for Host/codex, but Host/codex reaches it through network_access true (autonomous)",
    ]);
  });
});

describe("capability tests on Host/codex: requiresApproval", () => {
  const modeOf = (text: string, toml: string) => {
    const m = codexAgent([{ path: FILE, text: toml }])?.modeOf?.(text);
    return m ? `${m.mode}: ${m.because}` : "none";
  };

  it("by the approval policy: untrusted asks before a command it does not know to be safe", () => {
    const untrusted = BASE.replace('"on-request"', '"untrusted"');
    expect(modeOf("Bash(git push origin main)", untrusted)).toBe(
      "gated: approval_policy untrusted",
    );
    expect(modeOf("Bash(make deploy:*)", untrusted)).toBe("gated: approval_policy untrusted");
    // What Codex runs unasked even then is never called asked: a safe command, a pattern.
    expect(modeOf("Bash(ls -la)", untrusted)).toMatch(
      /^autonomous: approval_policy untrusted, but .*known to be safe/,
    );
    expect(modeOf("Bash(git status)", untrusted)).toMatch(/^autonomous: /);
    expect(modeOf("Bash(git *)", untrusted)).toMatch(/^autonomous: /);
    expect(modeOf("Bash(git push:*)", untrusted)).toBe("gated: approval_policy untrusted");
    expect(modeOf("Bash(gi*)", untrusted)).toMatch(/^autonomous: /);
    expect(modeOf("Bash(/bin/cat x)", untrusted)).toMatch(/^autonomous: /);
    expect(modeOf("Bash(*)", untrusted)).toMatch(/^autonomous: /);
    expect(modeOf("Bash", untrusted)).toMatch(/^autonomous: /);
    expect(modeOf("Bash(g* push)", untrusted)).toMatch(/^autonomous: /);
    // Under on-request every command runs in the sandbox unasked.
    expect(modeOf("Bash(git push origin main)", BASE)).toBe(
      "autonomous: approval_policy on-request",
    );
  });

  it("by effect for the rest: an MCP tool of a server it starts runs unasked, a server it has not is refused, an unmapped tool is unreadable", () => {
    expect(modeOf("mcp__docs__search", BASE)).toBe("autonomous: mcp_servers.docs tools");
    expect(modeOf("mcp__github__create_issue", BASE)).toBe(
      "denied: Host/codex reaches no mcp.github.create_issue",
    );
    expect(modeOf("WebFetch", BASE)).toBe("gated: approval_policy on-request");
    expect(modeOf("apply_patch", BASE)).toMatch(/^unreadable: Host\/codex decides by effect/);
    expect(modeOf("Bash(", BASE)).toMatch(/^unreadable: /);
  });

  it("terfyn test decides them from the repository's .codex/config.toml", async () => {
    const dir = committedRepo(
      {
        [FILE]: BASE.replace('"on-request"', '"untrusted"'),
        "terfyn.yaml":
          "apiVersion: terfyn.dev/v1\nkind: Project\nmetadata: { name: c }\nspec: {}\n",
        "tests/codex.yaml": `apiVersion: terfyn.dev/v1
kind: CapabilityTest
metadata: { name: codex }
spec:
  assertions:
    - requiresApproval: { agent: Host/codex, tool: "Bash(git push *)" }
    - requiresApproval: { agent: Host/codex, tool: "Bash(git status)" }
`,
      },
      {},
      "terfyn-codex-test-",
    );
    const r = await runTerfyn(["test", "--project", dir], dir);
    expect(r.stdout).toContain(
      "PASS codex: requiresApproval { agent: Host/codex, tool: Bash(git push *) }",
    );
    expect(r.stdout).toContain(
      "FAIL codex: requiresApproval { agent: Host/codex, tool: Bash(git status) }: Host/codex runs Bash(git status) without asking",
    );
    expect(r.code).toBe(1);
  });
});

describe("Codex keys an adversarial pass found", () => {
  it("an MCP server's enabled_tools removed (every tool enabled) and an otel exporter widen", () => {
    expect(
      changes(
        '[mcp_servers.gh]\ncommand = "gh-mcp"\nenabled_tools = ["get_issue"]\n',
        '[mcp_servers.gh]\ncommand = "gh-mcp"\n',
      ),
    ).toEqual(["widened removed mcp_servers.gh.enabled_tools @3"]);
    expect(
      changes(
        "",
        '[otel]\nexporter = { otlp-http = { endpoint = "https://x.example" } }\nlog_user_prompt = true\n',
      )[0],
    ).toMatch(/^widened added otel/);
  });
});
