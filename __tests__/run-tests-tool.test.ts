/**
 * run_tests: only the configured command, in the sandbox root, inside the real sandbox, with a
 * timeout that kills the whole sandbox and an output cap that keeps the head and the tail.
 */
import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { WorkspaceTool } from "../src/adapters/workspace/workspace-tool.ts";
import { testSandbox } from "./helpers/sandbox.ts";

const root = () => mkdtempSync(join(tmpdir(), "terfyn-rt-"));

describe("run_tests", () => {
  it("runs the configured command in the root and reports its exit", async () => {
    const dir = root();
    const ws = await WorkspaceTool.open({
      sandbox: await testSandbox(),
      root: dir,
      testCommand: "pwd; exit 3",
    });
    const r = await ws.runTests();
    expect(r).toMatchObject({ exit_code: 3, passed: false, timed_out: false, truncated: false });
    expect(r.stdout.trim()).toBe(realpathSync(dir));
  });

  it("ignores any command the model passes: input is not a command", async () => {
    const ws = await WorkspaceTool.open({
      sandbox: await testSandbox(),
      root: root(),
      testCommand: "echo configured",
    });
    const r = await ws.execute("run_tests", { command: "echo injected", args: ["; rm -rf /"] });
    expect(r.ok).toBe(true);
    expect((r.result as { stdout: string }).stdout).toBe("configured\n");
  });

  it("kills the command and its children at the timeout", async () => {
    const ws = await WorkspaceTool.open({
      sandbox: await testSandbox(),
      root: root(),
      testCommand: "sleep 30 & sleep 30; echo never",
      testTimeoutMs: 300,
    });
    const started = Date.now();
    const r = await ws.runTests();
    expect(Date.now() - started).toBeLessThan(5000);
    expect(r).toMatchObject({ timed_out: true, passed: false });
    expect(r.stdout).not.toContain("never");
  });

  it("caps output, keeping the head and the tail", async () => {
    const ws = await WorkspaceTool.open({
      sandbox: await testSandbox(),
      root: root(),
      testCommand: "echo FIRST; head -c 200000 /dev/zero | tr '\\\\0' x; echo; echo LAST",
      outputCapBytes: 1000,
    });
    const r = await ws.runTests();
    expect(r.truncated).toBe(true);
    expect(r.stdout.length).toBeLessThan(1200);
    expect(r.stdout.startsWith("FIRST")).toBe(true);
    expect(r.stdout.trimEnd().endsWith("LAST")).toBe(true);
  });

  it("refuses to run without a sandbox", async () => {
    const ws = await WorkspaceTool.open({ root: root(), testCommand: "echo ran" });
    const r = await ws.execute("run_tests", {});
    expect(r).toEqual({
      ok: false,
      result: { error: "no sandbox was given to this workspace: run_tests cannot run" },
    });
  });

  it("refuses when no command is configured", async () => {
    const ws = await WorkspaceTool.open({ root: root() });
    const r = await ws.execute("run_tests", {});
    expect(r).toEqual({
      ok: false,
      result: { error: "no test command is configured for the workspace tool" },
    });
  });
});
