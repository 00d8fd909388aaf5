/**
 * The command tool adapter with real processes: a fixed argv and no shell, input on stdin or as
 * `--key value`, exactly the allowlisted environment, a timeout that kills the process group,
 * capped output, the exit status in the result, and only granted operations in a run.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { argsFromInput } from "../src/adapters/tools/command-tool.ts";
import { buildToolPort, ToolSetupError } from "../src/adapters/workspace/tool-router.ts";
import { testSandbox } from "./helpers/sandbox.ts";
import { toolProject } from "./helpers/tool-project.ts";

const PATH = process.env.PATH ?? "/usr/bin:/bin";

function toolYaml(command: string, operations: string): string {
  return `apiVersion: terfyn.dev/v1
kind: Tool
metadata: { name: t }
spec:
  adapter: command
  command:
${command
  .trim()
  .split("\n")
  .map((l) => `    ${l}`)
  .join("\n")}
  operations:
${operations
  .trim()
  .split("\n")
  .map((l) => `    ${l}`)
  .join("\n")}
`;
}

/** A project root holding `scripts`, and a port for the tool `t` with the granted operations. */
async function port(
  scripts: Record<string, string>,
  command: string,
  operations: string,
  grants: string[],
  env: Record<string, string | undefined> = { PATH },
  effects: string[] = ["process.exec"],
) {
  const root = mkdtempSync(join(tmpdir(), "terfyn-cmd-"));
  for (const [name, text] of Object.entries(scripts))
    writeFileSync(join(root, name), text, { mode: 0o755 });
  const { project, program } = toolProject(toolYaml(command, operations), grants, effects);
  const tools = await buildToolPort(project, program, {
    projectRoot: root,
    cwd: root,
    env,
    sandbox: testSandbox,
  });
  const call = (operation: string, input: unknown) =>
    tools.execute({ tool: "t", operation, input, idempotencyKey: "k" });
  return { root, call };
}

const PRINT_ENV = "process.stdout.write(JSON.stringify(process.env));\n";
const ECHO = `let s = ""; process.stdin.on("data", (c) => (s += c)); process.stdin.on("end", () => {
  process.stdout.write(JSON.stringify({ stdin: s, args: process.argv.slice(2) }));
  process.exit(Number(process.env.CODE ?? 0));
});
`;

const leftovers: number[] = [];
afterEach(() => {
  for (const pid of leftovers.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  delete process.env.TERFYN_CANARY_SECRET;
});

describe("command tool", () => {
  it("passes the input as JSON on stdin, parses JSON stdout, and reports the exit status", async () => {
    const { call } = await port(
      { "echo.mjs": ECHO },
      "argv: [node, echo.mjs, fixed]\nenv: [CODE]",
      "run: { effects: [process.exec] }",
      ["tool.t.run"],
      { PATH, CODE: "3" },
    );
    const r = await call("run", { note: "hi" });
    expect(r.ok).toBe(false);
    expect(r.result).toMatchObject({
      exit_code: 3,
      timed_out: false,
      truncated: false,
      stdout: { stdin: '{"note":"hi"}\n', args: ["fixed"] },
    });
  });

  it("inputAs args: each top-level field as --key value, keys sorted, values never split or shell-parsed", async () => {
    const { root, call } = await port(
      { "echo.mjs": ECHO },
      "argv: [node, echo.mjs]\ninputAs: args",
      "run: { effects: [process.exec] }",
      ["tool.t.run"],
    );
    const r = await call("run", {
      b: "x y; touch pwned",
      a: 1,
      c: { k: true },
      d: "$(touch pwned2)",
    });
    expect(r.ok).toBe(true);
    expect((r.result as { stdout: unknown }).stdout).toEqual({
      stdin: "",
      args: ["--a", "1", "--b", "x y; touch pwned", "--c", '{"k":true}', "--d", "$(touch pwned2)"],
    });
    expect(existsSync(join(root, "pwned"))).toBe(false);
    expect(existsSync(join(root, "pwned2"))).toBe(false);
    expect(() => argsFromInput({ "-rf": "x" })).toThrow(/cannot be an argument name/);
    const bad = await call("run", { "--exec": "x" });
    expect(bad.ok).toBe(false);
  });

  it("passes only the allowlisted environment variables: no PATH, no API keys, no tokens", async () => {
    process.env.TERFYN_CANARY_SECRET = "from-the-terfyn-process";
    const { root, call } = await port(
      { "env.mjs": PRINT_ENV },
      "argv: [node, env.mjs]\nenv: [ALLOWED, NOT_SET]",
      "run: { effects: [process.exec] }",
      ["tool.t.run"],
      {
        PATH,
        HOME: "/home/someone",
        ANTHROPIC_API_KEY: "sk-ant-secret",
        GITHUB_TOKEN: "ghp_secret",
        TERFYN_CANARY_SECRET: "from-io-env",
        ALLOWED: "yes",
      },
    );
    const r = await call("run", {});
    expect(r.ok).toBe(true);
    // The allowlist, plus what the sandbox itself sets: its throwaway HOME and TMPDIR, and PWD.
    expect((r.result as { stdout: unknown }).stdout).toEqual({
      ALLOWED: "yes",
      HOME: "/tmp/home",
      TMPDIR: "/tmp",
      PWD: realpathSync(root),
    });
  });

  it("kills the whole process group at the timeout", async () => {
    const SPAWNER = `import { spawn } from "node:child_process";
const c = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", MARKER], { stdio: "ignore", detached: true });
c.unref();
setInterval(() => {}, 1000);
`;
    const marker = `terfyn-cmd-timeout-${process.pid}-${Date.now()}`;
    const { call } = await port(
      { "spawner.mjs": SPAWNER.replace("MARKER", JSON.stringify(marker)) },
      "argv: [node, spawner.mjs]",
      "run: { effects: [process.exec], command: { timeoutMs: 1000 } }",
      ["tool.t.run"],
    );
    const started = Date.now();
    const r = await call("run", {});
    expect(Date.now() - started).toBeLessThan(8000);
    expect(r.ok).toBe(false);
    expect(r.result).toMatchObject({ timed_out: true, signal: "SIGKILL" });
    const alive = () => {
      try {
        return execFileSync("pgrep", ["-f", marker], { encoding: "utf8" }).trim() !== "";
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 40 && alive(); i++) await new Promise((d) => setTimeout(d, 50));
    expect(alive(), "the command's own child (in a session of its own) survived the timeout").toBe(
      false,
    );
  });

  it("has the network only in an operation that declares network.egress (the sandbox's own namespace otherwise)", async () => {
    const server = createServer((sock) => sock.end("reached\n"));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const listening = (server.address() as { port: number }).port;
    const CONNECT = `const s = require("node:net").connect(${listening}, "127.0.0.1");
s.on("data", (d) => process.stdout.write(JSON.stringify({ got: String(d).trim() })));
s.on("error", (e) => process.stdout.write(JSON.stringify({ error: e.code })));
`;
    try {
      const { call } = await port(
        { "connect.cjs": CONNECT },
        "argv: [node, connect.cjs]",
        "offline: { effects: [process.exec] }\nonline: { effects: [process.exec, network.egress] }",
        ["tool.t.offline", "tool.t.online"],
        { PATH },
        ["process.exec", "network.egress"],
      );
      const offline = await call("offline", {});
      expect((offline.result as { stdout: unknown }).stdout).toEqual({ error: "ECONNREFUSED" });
      const online = await call("online", {});
      expect((online.result as { stdout: unknown }).stdout).toEqual({ got: "reached" });
    } finally {
      server.close();
    }
  });

  it("caps stdout and says so", async () => {
    const { call } = await port(
      { "big.mjs": 'process.stdout.write("x".repeat(100000));\n' },
      "argv: [node, big.mjs]\nmaxOutputBytes: 1000",
      "run: { effects: [process.exec] }",
      ["tool.t.run"],
    );
    const r = await call("run", {});
    const result = r.result as { stdout: string; truncated: boolean; exit_code: number };
    expect(result.truncated).toBe(true);
    expect(result.stdout).toHaveLength(1000);
    expect(result.exit_code).toBe(0);
  });

  it("only the run's granted operations exist: another operation of the same tool does not run", async () => {
    const { root, call } = await port(
      {
        "touch.mjs":
          'import { writeFileSync } from "node:fs"; writeFileSync(process.argv[2], "");\n',
      },
      "argv: [node, touch.mjs, granted]",
      "run: { effects: [process.exec] }\nother: { effects: [process.exec], command: { argv: [node, touch.mjs, ungranted] } }",
      ["tool.t.run"],
    );
    const denied = await call("other", {});
    expect(denied.ok).toBe(false);
    expect(JSON.stringify(denied.result)).toContain("offers no operation other");
    expect(existsSync(join(root, "ungranted"))).toBe(false);
    expect((await call("run", {})).ok).toBe(true);
    expect(existsSync(join(root, "granted"))).toBe(true);
  });

  it("resolves argv[0] in PATH or against the project root, and refuses to start when it is missing", async () => {
    await expect(
      port({}, "argv: [./missing.sh]", "run: { effects: [process.exec] }", ["tool.t.run"]),
    ).rejects.toThrow(ToolSetupError);
    await expect(
      port({}, "argv: [no-such-program-xyz]", "run: { effects: [process.exec] }", ["tool.t.run"]),
    ).rejects.toThrow(/no-such-program-xyz is not an executable found in PATH/);
    const { call } = await port(
      { "hello.sh": "#!/bin/sh\necho hello\n" },
      "argv: [./hello.sh]",
      "run: { effects: [process.exec] }",
      ["tool.t.run"],
    );
    expect(await call("run", {})).toMatchObject({ ok: true, result: { stdout: "hello\n" } });
  });
});
