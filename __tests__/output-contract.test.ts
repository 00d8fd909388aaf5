/**
 * One output contract: `--format text|json` (and `--json`) on validate, plan, test, runs list
 * and runs show, every JSON document versioned by `format_version`; and `terfyn run`'s progress
 * lines say when the sandbox or the input schema refused a call and whether run_tests passed.
 * Through the CLI, on real temp directories.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runTerfyn } from "./helpers/cli.ts";
import { EXAMPLE, exampleRunArgs } from "./helpers/example-project.ts";

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});
function temp(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  made.push(d);
  return d;
}

/** A copy of the example whose model script is replaced by `script`. */
function example(script: string): string {
  const dir = join(temp("terfyn-contract-"), "p");
  cpSync(EXAMPLE, dir, { recursive: true });
  rmSync(join(dir, ".terfyn"), { recursive: true, force: true });
  writeFileSync(join(dir, "fixtures", "model-script.yaml"), script);
  return dir;
}

const PROGRESS_SCRIPT = `agents:
  Implementer:
    - toolCalls:
        - { tool: tool.workspace.write_file, input: { path: ../outside.txt, content: "x" } }
        - { tool: tool.workspace.write_file, input: { path: add.go } }
        - { tool: tool.workspace.run_tests, input: {} }
        - { tool: tool.workspace.write_file, input: { path: add.go, content: "a + b" } }
        - { tool: tool.workspace.run_tests, input: {} }
    - output: { task: t, approved: false, feedback: f }
  Reviewer:
    - output: { task: t, approved: true, feedback: ok }
`;

describe("--format text|json on every reporting command", () => {
  it("validate, plan, test, runs list and runs show each print text or versioned JSON", async () => {
    const dir = example(PROGRESS_SCRIPT);
    const ws = temp("terfyn-contract-ws-");
    const run = await runTerfyn(exampleRunArgs(dir, join(dir, ".terfyn", "runs", "r1")), dir, {
      TERFYN_WORKSPACE_ROOT: ws,
      TERFYN_WORKSPACE_TEST_COMMAND: "grep -q 'a + b' add.go",
    });
    expect(run.code, run.stderr).toBe(0);
    const commands: string[][] = [
      ["validate", "--project", dir],
      ["plan", "--project", dir],
      ["test", "--project", dir],
      ["runs", "list", "--project", dir],
      ["runs", "show", join(dir, ".terfyn", "runs", "r1")],
    ];
    for (const c of commands) {
      const text = await runTerfyn([...c, "--format", "text"], dir);
      const plain = await runTerfyn(c, dir);
      expect(text.code, c.join(" ")).toBe(0);
      expect(text.stdout, c.join(" ")).toBe(plain.stdout);
      expect(() => JSON.parse(text.stdout), c.join(" ")).toThrow();
      for (const flags of [["--format", "json"], ["--json"]]) {
        const j = await runTerfyn([...c, ...flags], dir);
        expect(j.code, `${c.join(" ")} ${flags.join(" ")}`).toBe(0);
        const doc = JSON.parse(j.stdout);
        expect(doc.format_version, c.join(" ")).toBeTypeOf("string");
      }
      const bad = await runTerfyn([...c, "--format", "xml"], dir);
      expect(bad.code, c.join(" ")).toBe(1);
      expect(bad.stderr, c.join(" ")).toMatch(/--format must be/);
    }
    const t = JSON.parse((await runTerfyn(["test", "--project", dir, "--json"], dir)).stdout);
    expect(t).toMatchObject({ ok: true, failed: 0, validated: true });
    expect(t.passed).toBeGreaterThan(0);
    expect(t.results[0]).toMatchObject({ status: "PASS", kind: "forbidEffect" });
  });

  it("test --format json on a failing project counts errors as failures, passes as SKIP", async () => {
    const dir = example(PROGRESS_SCRIPT);
    writeFileSync(join(dir, "broken.agent"), "agent Broken { model 'x' }\n");
    const r = await runTerfyn(["test", "--project", dir, "--format", "json"], dir);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(doc.ok).toBe(false);
    expect(doc.passed).toBe(0);
    expect(doc.validated).toBe(false);
    expect(doc.errors.length).toBeGreaterThan(0);
    expect(doc.results.every((x: { status: string }) => x.status === "SKIP")).toBe(true);
  });
});

describe("terfyn run's progress lines", () => {
  it("say when the sandbox or the input schema refused a call, and whether run_tests passed", async () => {
    const dir = example(PROGRESS_SCRIPT);
    const ws = temp("terfyn-progress-ws-");
    mkdirSync(join(ws, "sub"));
    const r = await runTerfyn(exampleRunArgs(dir, join(temp("terfyn-progress-run-"), "run")), dir, {
      TERFYN_WORKSPACE_ROOT: ws,
      TERFYN_WORKSPACE_TEST_COMMAND: "grep -q 'a + b' add.go",
    });
    expect(r.code, r.stderr).toBe(0);
    const e = r.stderr;
    expect(e).toContain(
      "terfyn: Implementer -> tool.workspace.write_file: refused by the sandbox: path ../outside.txt contains ..",
    );
    expect(e).toMatch(
      /terfyn: refused: Implementer -> tool\.workspace\.write_file \(its input does not match the operation's input schema: .*content/,
    );
    expect(e).toContain("terfyn: Implementer -> tool.workspace.run_tests: tests failed (exit 2)");
    expect(e).toContain("terfyn: Implementer -> tool.workspace.write_file: wrote add.go (5 bytes)");
    expect(e).toContain("terfyn: Implementer -> tool.workspace.run_tests: tests passed (exit 0)");
  });
});
