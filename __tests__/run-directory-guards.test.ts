/**
 * The run directory's guards (issues 10 and 13): one writer per run directory (a lock naming its
 * holder; a stale lock taken over), no run directory inside the workspace or the repository
 * under review, no fresh run into a used directory, and no resume against a different
 * workspace root, test command or tool declaration than the run started with. Concurrency is
 * tested with real processes, as users hit it; the refusals in-process.
 */
import { spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileRunLock, RunLockHeldError, RunLockLostError } from "../src/adapters/fs/run-lock.ts";
import { runTerfyn } from "./helpers/cli.ts";
import { copyExample, edit } from "./helpers/example-project.ts";

const BIN = join(import.meta.dirname, "..", "bin", "terfyn.mjs");
const WORKFLOW = "workflow/ImplementAndReview";
const LOCK = ".terfyn-run.lock";
const TRIALS = 20;

/** Two iterations, three test runs (the non-idempotent effect), as in crash-resume.test.ts. */
const SCRIPT = `agents:
  Implementer:
    - toolCalls:
        - { tool: tool.workspace.write_file, input: { path: src/add.go, content: "v1" } }
        - { tool: tool.workspace.run_tests, input: {} }
    - output: { task: "add two ints", approved: false, feedback: "stub written" }
    - toolCalls:
        - { tool: tool.workspace.write_file, input: { path: src/add.go, content: "v2" } }
        - { tool: tool.workspace.run_tests, input: {} }
    - output: { task: "add two ints", approved: false, feedback: "Add implemented" }
  Reviewer:
    - toolCalls:
        - { tool: tool.workspace.run_tests, input: {} }
    - output: { task: "add two ints", approved: false, feedback: "src/add.go: Add is missing" }
    - output: { task: "add two ints", approved: true, feedback: "ok" }
`;
const TEST_RUNS = 3;

const made: string[] = [];
function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

let project = "";
let gatedProject = "";
let scriptPath = "";

beforeAll(() => {
  project = copyExample("terfyn-guards-project-");
  made.push(project);
  gatedProject = copyExample("terfyn-guards-gated-");
  made.push(gatedProject);
  edit(
    gatedProject,
    "main.agent",
    /(agent Implementer \{[\s\S]*?)tool\.workspace\.write_file\n/,
    "$1tool.workspace.write_file requires approval\n",
  );
  scriptPath = join(tempDir("terfyn-guards-script-"), "script.yaml");
  writeFileSync(scriptPath, SCRIPT);
});

afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

interface Case {
  base: string;
  ws: string;
  runDir: string;
  /** Outside the workspace: the test command appends a line here each time it runs. */
  counter: string;
  env: Record<string, string>;
}

function freshCase(): Case {
  const base = tempDir("terfyn-guards-");
  const ws = join(base, "ws");
  mkdirSync(ws);
  // Inside the workspace root: the test command runs in the sandbox, where nothing else is writable.
  const counter = join(ws, "test-runs.log");
  return {
    base,
    ws,
    runDir: join(base, "run"),
    counter,
    env: {
      TERFYN_WORKSPACE_ROOT: ws,
      TERFYN_WORKSPACE_TEST_COMMAND: `echo ran >> ${JSON.stringify(counter)}`,
    },
  };
}

const testRuns = (c: Case) =>
  existsSync(c.counter)
    ? readFileSync(c.counter, "utf8")
        .split("\n")
        .filter((l) => l !== "").length
    : 0;

const startArgs = (c: Case, p = project) => [
  "run",
  WORKFLOW,
  "--project",
  p,
  "--input-file",
  join(p, "fixtures", "task.json"),
  "--model-script",
  scriptPath,
  "--run-dir",
  c.runDir,
];

type Event = { type: string } & Record<string, unknown>;
const journal = (dir: string): Event[] =>
  readFileSync(join(dir, "journal.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Event);

interface Child {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function terfyn(args: string[], cwd: string, env: Record<string, string>): Promise<Child> {
  const childEnv: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith("TERFYN_") && k !== "NODE_OPTIONS") childEnv[k] = v;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      // The sources, not dist/ (rebuilt only before `npm test`): these guards are what is tested.
      env: { ...childEnv, NO_COLOR: "1", TERFYN_FROM_SOURCE: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => {
      stdout += s;
    });
    child.stderr.setEncoding("utf8").on("data", (s: string) => {
      stderr += s;
    });
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

async function inPool<T>(items: T[], size: number, f: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await f(items[next++] as T);
  };
  await Promise.all(Array.from({ length: size }, worker));
}

/** The pid of a process that has exited: a lock naming it is stale on this host. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
    encoding: "utf8",
  });
  return Number(r.stdout);
}

function plantLock(dir: string, owner: { pid: number; host?: string; since?: string }): void {
  writeFileSync(
    join(dir, LOCK),
    JSON.stringify({
      pid: owner.pid,
      host: owner.host ?? hostname(),
      since: owner.since ?? "2026-01-02T03:04:05.000Z",
      command: "terfyn run --resume",
      nonce: "0123456789abcdef",
    }),
  );
}

const HELD = /is in use by pid (\d+) on host (\S+) since (\S+) \(terfyn run[^)]*\)/;

describe("one writer per run directory (real processes)", () => {
  it(`two resumes started together on one run: every test run happens exactly once (${TRIALS} trials)`, async () => {
    const trials = Array.from({ length: TRIALS }, (_, i) => i);
    const failures: string[] = [];
    /** Trials where the two resumes overlapped (one found the other holding the run). */
    let contended = 0;
    await inPool(trials, 2, async (i) => {
      const c = freshCase();
      // Killed right after run.start: the lock it held is left behind, stale; nothing ran yet.
      const killed = await terfyn(startArgs(c), c.base, {
        ...c.env,
        TERFYN_TEST_KILL_AFTER_EVENT: "1",
      });
      if (killed.signal !== "SIGKILL") {
        failures.push(`trial ${i}: the first run was not killed: ${killed.stderr}`);
        return;
      }
      const [a, b] = await Promise.all([
        terfyn(["run", "--resume", c.runDir], c.base, c.env),
        terfyn(["run", "--resume", c.runDir], c.base, c.env),
      ]);
      const runs = testRuns(c);
      const events = journal(c.runDir);
      const intents = events.filter((e) => e.type === "effect.intent").map((e) => String(e.key));
      const state = JSON.parse(readFileSync(join(c.runDir, "state.json"), "utf8"));
      const finished = [a, b].filter((r) => r.code === 0);
      const refused = [a, b].filter((r) => r.code !== 0);
      if (refused.some((r) => HELD.test(r.stderr))) contended++;
      const problems = [
        runs !== TEST_RUNS && `the test command ran ${runs} times, not ${TEST_RUNS}`,
        new Set(intents).size !== intents.length && `an effect was issued twice: ${intents}`,
        state.status !== "completed" && `state ${state.status}`,
        finished.length === 0 && "neither resume completed",
        ...refused.map(
          (r) =>
            !HELD.test(r.stderr) &&
            `the other resume exited ${r.code} without naming the holder: ${r.stderr}`,
        ),
        events.filter((e) => e.type === "run.resume").length !== 1 &&
          "not exactly one resume session in the journal",
      ].filter((p): p is string => typeof p === "string");
      if (problems.length > 0) failures.push(`trial ${i}: ${problems.join("; ")}`);
    });
    expect(failures).toEqual([]);
    // Else the trials ran one after the other and tested nothing about two writers.
    expect(contended, "trials where the resumes overlapped").toBeGreaterThan(0);
  }, 300_000);

  it("two fresh runs into one --run-dir: one runs, the other is refused; the journal has one run", async () => {
    const failures: string[] = [];
    await inPool([0, 1, 2, 3, 4], 1, async (i) => {
      const c = freshCase();
      const [a, b] = await Promise.all([
        terfyn(startArgs(c), c.base, c.env),
        terfyn(startArgs(c), c.base, c.env),
      ]);
      const codes = [a.code, b.code].sort();
      const loser = a.code === 0 ? b : a;
      const starts = journal(c.runDir).filter((e) => e.type === "run.start").length;
      const ok =
        codes[0] === 0 &&
        codes[1] === 1 &&
        starts === 1 &&
        testRuns(c) === TEST_RUNS &&
        (HELD.test(loser.stderr) || loser.stderr.includes("already holds a run"));
      if (!ok)
        failures.push(
          `trial ${i}: exits ${codes}, ${starts} run.start, ${testRuns(c)} test runs; ${loser.stderr}`,
        );
    });
    expect(failures).toEqual([]);
  }, 120_000);
});

describe("the run directory lock (in-process)", () => {
  /** A run paused at its first gated write; its lock released. */
  async function pausedRun(): Promise<Case> {
    const c = freshCase();
    const r = await runTerfyn(startArgs(c, gatedProject), c.base, c.env);
    expect(r.code, r.stderr).toBe(2);
    expect(existsSync(join(c.runDir, LOCK)), "the lock is released when the run pauses").toBe(
      false,
    );
    return c;
  }

  it("a live holder: resume and approve exit 1 naming pid, host and since, and change nothing", async () => {
    const c = await pausedRun();
    const hash = JSON.parse(readFileSync(join(c.runDir, "state.json"), "utf8")).awaiting.hash;
    plantLock(c.runDir, { pid: process.pid });
    const before = readFileSync(join(c.runDir, "journal.jsonl"), "utf8");
    const r = await runTerfyn(["run", "--resume", c.runDir], c.base, c.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(HELD);
    expect(r.stderr).toContain(
      `pid ${process.pid} on host ${hostname()} since 2026-01-02T03:04:05`,
    );
    expect(r.stderr).toContain("Wait for it to pause or end");
    expect(r.stderr).not.toMatch(/\n\s+at /);
    const ap = await runTerfyn(["approve", "--run", c.runDir, "--hash", hash], c.base, {});
    expect(ap.code).toBe(1);
    expect(ap.stderr).toMatch(HELD);
    expect(existsSync(join(c.runDir, "approvals.jsonl"))).toBe(false);
    expect(readFileSync(join(c.runDir, "journal.jsonl"), "utf8")).toBe(before);
    expect(readFileSync(join(c.runDir, LOCK), "utf8")).toContain(String(process.pid));
  });

  it("a lock from another host is never taken over", async () => {
    const c = await pausedRun();
    plantLock(c.runDir, { pid: deadPid(), host: "elsewhere.example" });
    const r = await runTerfyn(["run", "--resume", c.runDir], c.base, c.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("on host elsewhere.example");
    expect(r.stderr).toContain("taken on another host");
  });

  it("a stale lock (its pid gone on this host) is taken over, printed and journaled", async () => {
    const c = await pausedRun();
    const hash = JSON.parse(readFileSync(join(c.runDir, "state.json"), "utf8")).awaiting.hash;
    const pid = deadPid();
    plantLock(c.runDir, { pid });
    const ap = await runTerfyn(["approve", "--run", c.runDir, "--hash", hash], c.base, {});
    expect(ap.code, ap.stderr).toBe(0);
    expect(ap.stderr).toContain(`took over the lock on run from pid ${pid}`);
    plantLock(c.runDir, { pid });
    const r = await runTerfyn(["run", "--resume", c.runDir], c.base, c.env);
    expect(r.code, r.stderr).toBe(2); // on to iteration 2's gated write
    expect(r.stderr).toContain(`from pid ${pid} on host ${hostname()}`);
    expect(journal(c.runDir).filter((e) => e.type === "run.resume")).toMatchObject([
      { took_over: { pid, host: hostname(), since: "2026-01-02T03:04:05.000Z" } },
    ]);
    expect(existsSync(join(c.runDir, LOCK))).toBe(false);
  });
});

describe("a held lock checks it is still its own", () => {
  it("stops writing once its lock file is removed or replaced, and never removes another's", () => {
    const dir = tempDir("terfyn-guards-lock-");
    const lock = new FileRunLock().acquire(dir, "terfyn run --resume");
    expect(() => new FileRunLock().acquire(dir, "terfyn approve")).toThrow(RunLockHeldError);
    lock.verify();
    rmSync(join(dir, LOCK));
    expect(() => lock.verify()).toThrow(RunLockLostError);
    plantLock(dir, { pid: process.pid });
    expect(() => lock.verify()).toThrow(RunLockLostError);
    lock.release();
    expect(readFileSync(join(dir, LOCK), "utf8")).toContain("0123456789abcdef");
  });
});

describe("the lock on a review run directory", () => {
  it("review --resume and approve exit 1 naming the holder; the sweeper leaves a held run alone", async () => {
    const base = tempDir("terfyn-guards-review-");
    const runDir = join(base, "run");
    mkdirSync(runDir);
    writeFileSync(
      join(runDir, "run.json"),
      JSON.stringify({ repo: join(base, "repo"), request: join(base, "request.json") }),
    );
    const state = JSON.stringify({
      run_id: "r",
      phase: "build",
      status: "running",
      build: { iteration: 1, identical_retries: 0, escalations: 0 },
      updated_at: "2020-01-01T00:00:00Z",
    });
    writeFileSync(join(runDir, "state.json"), state);
    plantLock(runDir, { pid: process.pid });
    const r = await runTerfyn(["review", "--resume", runDir], base, {});
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(HELD);
    const ap = await runTerfyn(["approve", "--run", runDir, "--hash", "sha256:x"], base, {});
    expect(ap.code).toBe(1);
    expect(ap.stderr).toMatch(HELD);
    const sweep = await runTerfyn(["review", "--sweep", base], base, {});
    expect(sweep.code).toBe(0);
    expect(sweep.stdout).toContain("0 abandoned runs recorded");
    expect(sweep.stderr).toMatch(HELD);
    expect(readFileSync(join(runDir, "state.json"), "utf8")).toBe(state);
    // Once the holder is gone (a stale lock), the sweeper takes it over and records the run.
    plantLock(runDir, { pid: deadPid() });
    const swept = await runTerfyn(["review", "--sweep", base], base, {});
    expect(swept.stdout, swept.stderr).toContain("1 abandoned run recorded");
  });
});

describe("a fresh run into a used run directory", () => {
  it("is refused when it holds a run, and when it holds anything else", async () => {
    const c = freshCase();
    const first = await runTerfyn(startArgs(c), c.base, c.env);
    expect(first.code, first.stderr).toBe(0);
    const before = readFileSync(join(c.runDir, "journal.jsonl"), "utf8");
    const again = await runTerfyn(startArgs(c), c.base, c.env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already holds a run; continue it with terfyn run --resume");
    expect(readFileSync(join(c.runDir, "journal.jsonl"), "utf8")).toBe(before);
    expect(testRuns(c)).toBe(TEST_RUNS);

    const d = freshCase();
    mkdirSync(d.runDir);
    writeFileSync(join(d.runDir, "notes.txt"), "mine\n");
    const other = await runTerfyn(startArgs(d), d.base, d.env);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain("is not empty (it holds notes.txt)");
    expect(existsSync(join(d.runDir, "state.json"))).toBe(false);
  });
});

describe("placement: no run directory where an agent can write", () => {
  it("refuses a run directory inside the workspace root, also through a symlink, creating nothing", async () => {
    const c = freshCase();
    const inside = { ...c, runDir: join(c.ws, ".runs", "r1") };
    const r = await runTerfyn(startArgs(inside), c.base, c.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the run directory .* is inside the workspace root of tool workspace/);
    expect(r.stderr).toContain("Choose a --run-dir outside it");
    expect(existsSync(join(c.ws, ".runs"))).toBe(false);

    const link = join(c.base, "link");
    symlinkSync(c.ws, link);
    const viaLink = await runTerfyn(startArgs({ ...c, runDir: join(link, "r2") }), c.base, c.env);
    expect(viaLink.code).toBe(1);
    expect(viaLink.stderr).toContain("is inside the workspace root of tool workspace");
    expect(existsSync(join(c.ws, "r2"))).toBe(false);

    const same = await runTerfyn(startArgs({ ...c, runDir: c.ws }), c.base, c.env);
    expect(same.code).toBe(1);
    expect(same.stderr).toContain("is the workspace root of tool workspace");
  });

  it("refuses a review run directory inside the repository under review or its git toplevel", async () => {
    const repo = join(tempDir("terfyn-guards-repo-"), "repo");
    mkdirSync(join(repo, "sub"), { recursive: true });
    expect(spawnSync("git", ["init", "-q", repo]).status).toBe(0);
    const request = join(repo, "..", "request.json");
    writeFileSync(request, "{}");
    const review = (repoArg: string, runDir: string) =>
      runTerfyn(
        ["review", "--repo", repoArg, "--request", request, "--run-dir", runDir],
        join(repo, ".."),
        {},
      );
    const inRepo = await review(repo, join(repo, ".terfyn-runs", "r1"));
    expect(inRepo.code).toBe(1);
    expect(inRepo.stderr).toContain("is inside the repository under review (--repo)");
    expect(existsSync(join(repo, ".terfyn-runs"))).toBe(false);

    const inTop = await review(join(repo, "sub"), join(repo, "runs", "r1"));
    expect(inTop.code).toBe(1);
    expect(inTop.stderr).toContain("is inside the git toplevel of the repository under review");
    expect(existsSync(join(repo, "runs"))).toBe(false);
  });
});

describe("resume runs what was approved", () => {
  async function pausedWith(c: Case): Promise<{ state: string; journal: string }> {
    const r = await runTerfyn(startArgs(c, gatedProject), c.base, c.env);
    expect(r.code, r.stderr).toBe(2);
    return {
      state: readFileSync(join(c.runDir, "state.json"), "utf8"),
      journal: readFileSync(join(c.runDir, "journal.jsonl"), "utf8"),
    };
  }
  const unchanged = (c: Case, before: { state: string; journal: string }) => {
    expect(readFileSync(join(c.runDir, "state.json"), "utf8")).toBe(before.state);
    expect(readFileSync(join(c.runDir, "journal.jsonl"), "utf8")).toBe(before.journal);
  };

  it("refuses a different workspace root, naming both", async () => {
    const c = freshCase();
    const before = await pausedWith(c);
    const other = join(c.base, "ws2");
    mkdirSync(other);
    const r = await runTerfyn(["run", "--resume", c.runDir], c.base, {
      ...c.env,
      TERFYN_WORKSPACE_ROOT: other,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `the workspace root of tool workspace was ${c.ws} when the run started and is ${other} now; resume with the same TERFYN_WORKSPACE_ROOT or start a new run`,
    );
    unchanged(c, before);
  });

  it("refuses a different test command, naming both", async () => {
    const c = freshCase();
    const before = await pausedWith(c);
    const r = await runTerfyn(["run", "--resume", c.runDir], c.base, {
      ...c.env,
      TERFYN_WORKSPACE_TEST_COMMAND: "rm -rf /tmp/nothing-here",
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `the test command of tool workspace was ${JSON.stringify(c.env.TERFYN_WORKSPACE_TEST_COMMAND)} when the run started and is "rm -rf /tmp/nothing-here" now; resume with the same TERFYN_WORKSPACE_TEST_COMMAND`,
    );
    unchanged(c, before);
  });

  it("refuses changed tool declarations (even a change the IR hash does not cover), naming both hashes", async () => {
    const c = freshCase();
    const p = copyExample("terfyn-guards-tooldecl-");
    made.push(p);
    edit(
      p,
      "main.agent",
      /(agent Implementer \{[\s\S]*?)tool\.workspace\.write_file\n/,
      "$1tool.workspace.write_file requires approval\n",
    );
    const r0 = await runTerfyn(startArgs(c, p), c.base, c.env);
    expect(r0.code, r0.stderr).toBe(2);
    const before = {
      state: readFileSync(join(c.runDir, "state.json"), "utf8"),
      journal: readFileSync(join(c.runDir, "journal.jsonl"), "utf8"),
    };
    edit(
      p,
      "tools.yaml",
      "Run the configured test command in the sandbox root.",
      "Run the configured test command; call it after every write, as often as you like.",
    );
    const r = await runTerfyn(["run", "--resume", c.runDir], c.base, c.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /the tool declarations hashed sha256:[0-9a-f]{64} when the run started and hash sha256:[0-9a-f]{64} now; restore the tool declarations the run started with, or start a new run/,
    );
    unchanged(c, before);
  });
});
