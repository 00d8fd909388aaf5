/**
 * Signals during `terfyn run`, with real processes: SIGINT or SIGTERM while a tool call runs
 * kills the call's whole process group, journals the interruption, leaves the run resumable,
 * prints the resume command, and exits 130 or 143. A non-idempotent call that was cut short is
 * marked in doubt (a resume stops there); an idempotent one is issued again on resume.
 * And run_tests kills its process group when it returns, so nothing it started outlives it.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const BIN = join(import.meta.dirname, "..", "bin", "terfyn.mjs");
const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

interface Done {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function start(args: string[], cwd: string, env: Record<string, string> = {}) {
  const clean: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith("TERFYN_") && k !== "NODE_OPTIONS") clean[k] = v;
  const child: ChildProcess = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...clean, NO_COLOR: "1", TERFYN_FROM_SOURCE: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (s: string) => {
    stdout += s;
  });
  child.stderr?.setEncoding("utf8").on("data", (s: string) => {
    stderr += s;
  });
  const done = new Promise<Done>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done, stderr: () => stderr };
}

/**
 * Whether a process whose command line holds `marker` is alive and not a zombie. Commands run
 * in the sandbox's own PID namespace, so a pid they print means nothing out here: each test's
 * processes carry a marker in their command line instead.
 */
function alive(marker: string): boolean {
  let listed: string;
  try {
    listed = execFileSync("pgrep", ["-f", marker], { encoding: "utf8" });
  } catch {
    return false;
  }
  return listed
    .split("\n")
    .filter((l) => l !== "")
    .some((pid) => {
      try {
        return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
      } catch {
        return false;
      }
    });
}

async function until(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const t = Date.now();
  while (!ok()) {
    if (Date.now() - t > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function gone(marker: string): Promise<boolean> {
  for (let i = 0; i < 100 && alive(marker); i++) await new Promise((r) => setTimeout(r, 50));
  return !alive(marker);
}

/** A word for a test's command lines, found in no path and no other process. */
const newMarker = () => `terfyn-sigmark-${process.pid}-${Math.random().toString(36).slice(2)}`;
/** A background process that carries `marker` and lives 300 s (`sh` does not exec its last command here). */
const background = (marker: string) => `sh -c 'sleep 300; :' ${marker} &`;

/** A project whose Worker makes one call (`tool`), then gives its output. */
function project(tool: string, marker = newMarker()): { dir: string; ws: string; marker: string } {
  const dir = mkdtempSync(join(tmpdir(), "terfyn-signals-"));
  made.push(dir);
  const ws = join(dir, "ws");
  mkdirSync(ws);
  const files: Record<string, string> = {
    "terfyn.yaml":
      "apiVersion: terfyn.dev/v1\nkind: Project\nmetadata: { name: signals }\nspec: {}\n",
    "schemas.yaml":
      "apiVersion: terfyn.dev/v1\nkind: Schema\nmetadata: { name: Task }\nspec: { type: object, required: [task], properties: { task: { type: string } } }\n",
    "tools.yaml": `apiVersion: terfyn.dev/v1
kind: Tool
metadata: { name: workspace }
spec:
  adapter: workspace
  operations:
    run_tests: { effects: [process.exec], idempotent: false }
---
apiVersion: terfyn.dev/v1
kind: Tool
metadata: { name: slow }
spec:
  adapter: command
  command: { argv: [/bin/sh, slow.sh], timeoutMs: 120000 }
  operations:
    wait: { effects: [process.exec], idempotent: true }
`,
    // Records its pid and a background child's, then waits; finishes at once once `again` exists.
    "slow.sh": `if [ -e again ]; then echo '{"done": true}'; exit 0; fi\n${background(marker)}\necho started > started\nwait\n`,
    "main.agent": `agent Worker {
  model "mock/script"
  input Task
  output Task
  instructions "work"
  grants { ${tool} }
}
workflow Work(t: Task) -> Task effects { process.exec } { return Worker(t) }
`,
    "script.yaml": `agents:\n  Worker:\n    - toolCalls: [ { tool: ${tool}, input: {} } ]\n    - output: { task: done }\n`,
    "input.json": '{ "task": "t" }\n',
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return { dir, ws, marker };
}

const runArgs = (dir: string) => [
  "run",
  "workflow/Work",
  "--project",
  dir,
  "--input-file",
  join(dir, "input.json"),
  "--model-script",
  join(dir, "script.yaml"),
  "--run-dir",
  join(dir, "run"),
];

function journal(dir: string): { type: string; [k: string]: unknown }[] {
  return readFileSync(join(dir, "run", "journal.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}

describe("terfyn run under SIGINT and SIGTERM", () => {
  it("SIGINT during run_tests kills its process group, journals it in doubt, exits 130", async () => {
    const { dir, ws, marker } = project("tool.workspace.run_tests");
    const env = {
      TERFYN_WORKSPACE_ROOT: ws,
      TERFYN_WORKSPACE_TEST_COMMAND: `${background(marker)} echo started > started; wait`,
    };
    const run = start(runArgs(dir), dir, env);
    await until("the test command to start", () => existsSync(join(ws, "started")));
    expect(alive(marker)).toBe(true);
    run.child.kill("SIGINT");
    const r = await run.done;
    expect(r.code).toBe(130);
    expect(await gone(marker), "the test shell or its background child survived").toBe(true);
    expect(r.stderr).toContain("resume with: terfyn run --resume run\n");
    expect(r.stderr).toContain("interrupted by SIGINT during tool.workspace.run_tests");
    const events = journal(dir);
    const last = events.at(-1);
    expect(last).toMatchObject({
      type: "run.interrupted",
      signal: "SIGINT",
      in_flight: { tool: "tool.workspace.run_tests", idempotent: false, in_doubt: true },
    });
    // The killed call has an intent and no result: its partial outcome is not a result.
    expect(events.some((e) => e.type === "effect.result")).toBe(false);
    const state = JSON.parse(readFileSync(join(dir, "run", "state.json"), "utf8"));
    expect(state.status).toBe("interrupted");
    // Resuming does not run the non-idempotent call again: it stops in doubt, naming it.
    const resumed = await start(["run", "--resume", join(dir, "run")], dir, env).done;
    expect(resumed.code).toBe(1);
    expect(resumed.stderr).toContain("in doubt");
    expect(resumed.stderr).toContain("tool.workspace.run_tests");
  }, 60_000);

  it("SIGTERM during an idempotent command call exits 143; resume issues it again", async () => {
    const { dir, marker } = project("tool.slow.wait");
    const run = start(runArgs(dir), dir);
    await until("the command to start", () => existsSync(join(dir, "started")));
    expect(alive(marker)).toBe(true);
    run.child.kill("SIGTERM");
    const r = await run.done;
    expect(r.code).toBe(143);
    expect(await gone(marker), "the command's background child survived").toBe(true);
    expect(r.stderr).toContain("resume with: terfyn run --resume");
    expect(journal(dir).at(-1)).toMatchObject({
      type: "run.interrupted",
      signal: "SIGTERM",
      in_flight: { tool: "tool.slow.wait", idempotent: true, in_doubt: false },
    });
    writeFileSync(join(dir, "again"), "");
    const resumed = await start(["run", "--resume", join(dir, "run")], dir).done;
    expect(resumed.stderr).toContain("re-issuing idempotent effect");
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toEqual({ task: "done" });
  }, 60_000);

  it("a second SIGINT exits at once, still killing a group that ignores SIGTERM", async () => {
    const { dir, ws, marker } = project("tool.workspace.run_tests");
    const env = {
      TERFYN_WORKSPACE_ROOT: ws,
      TERFYN_WORKSPACE_TEST_COMMAND: `trap '' TERM; ${background(marker)} echo started > started; wait`,
    };
    const run = start(runArgs(dir), dir, env);
    await until("the test command to start", () => existsSync(join(ws, "started")));
    expect(alive(marker)).toBe(true);
    run.child.kill("SIGINT");
    await until("the first SIGINT to be seen", () => run.stderr().includes("SIGINT: stopping"));
    const t = Date.now();
    run.child.kill("SIGINT");
    const r = await run.done;
    // The sandbox goes with bwrap at the first SIGTERM, so the run may already be ending when
    // the second SIGINT comes: either way it exits at once, as interrupted.
    expect(r.code === 130 || r.signal === "SIGINT", `exit ${r.code} ${r.signal}`).toBe(true);
    expect(Date.now() - t).toBeLessThan(1500);
    expect(await gone(marker), "the SIGTERM-proof shell or its background child survived").toBe(
      true,
    );
  }, 60_000);

  it("run_tests kills what the test command left running when it returns", async () => {
    const { dir, ws, marker } = project("tool.workspace.run_tests");
    // The background sleep keeps the output pipes open too: without the group kill the call
    // would wait for it (300 s), and it would outlive the run.
    const env = {
      TERFYN_WORKSPACE_ROOT: ws,
      TERFYN_WORKSPACE_TEST_COMMAND: `${background(marker)} echo ok`,
    };
    const t = Date.now();
    const r = await start(runArgs(dir), dir, env).done;
    expect(r.code).toBe(0);
    expect(Date.now() - t).toBeLessThan(30_000);
    expect(r.stderr).toContain("Worker -> tool.workspace.run_tests: tests passed (exit 0)");
    expect(await gone(marker), "the test command's background sleep outlived run_tests").toBe(true);
  }, 60_000);
});
