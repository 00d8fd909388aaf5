/**
 * Crash and resume with real processes: the example workflow runs as a child `terfyn` process
 * that SIGKILLs itself right after its k-th journal event (TERFYN_TEST_KILL_AFTER_EVENT), for
 * every k, and `terfyn run --resume` must finish it exactly as an uninterrupted run would:
 * same result, same workspace, every effect once, no model turn asked twice; a non-idempotent
 * effect whose outcome is unknown stops the run `in-doubt`. Also HITL approvals across
 * processes, a torn journal line, and a project edited under a paused run.
 */
import { spawn } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, type ExpectStatic, it } from "vitest";
import { copyExample, EXAMPLE, edit } from "./helpers/example-project.ts";

const BIN = join(import.meta.dirname, "..", "bin", "terfyn.mjs");
const TASK = join(EXAMPLE, "fixtures", "task.json");
const WORKFLOW = "workflow/ImplementAndReview";
const TEST_COMMAND = "echo ran >> .count";
/** Children run at once: each is mostly CPU (tsx start-up), so a small batch is enough. */
const WORKERS = 3;

const V1 = "package add\n\n// TODO: Add\n";
const V2 = "package add\n\nfunc Add(a, b int) int { return a + b }\n";

/**
 * Two iterations: the Reviewer tries a write it is not granted (denied), runs the tests and
 * rejects; the Implementer rewrites src/add.go with new content and runs the tests again; the
 * Reviewer approves. Three test runs, two writes with different content, one denied call.
 */
const SCRIPT = `agents:
  Implementer:
    - toolCalls:
        - { tool: tool.workspace.write_file, input: { path: src/add.go, content: ${JSON.stringify(V1)} } }
        - { tool: tool.workspace.run_tests, input: {} }
    - output: { task: "add two ints", approved: false, feedback: "stub written" }
    - toolCalls:
        - { tool: tool.workspace.write_file, input: { path: src/add.go, content: ${JSON.stringify(V2)} } }
        - { tool: tool.workspace.run_tests, input: {} }
    - output: { task: "add two ints", approved: false, feedback: "Add implemented" }
  Reviewer:
    - toolCalls:
        - { tool: tool.workspace.write_file, input: { path: src/add.go, content: "" } }
        - { tool: tool.workspace.run_tests, input: {} }
    - output: { task: "add two ints", approved: false, feedback: "src/add.go: Add is missing" }
    - output: { task: "add two ints", approved: true, feedback: "ok" }
`;

type Event = { type: string } & Record<string, unknown>;

interface Child {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

interface Case {
  base: string;
  ws: string;
  runDir: string;
}

/** The parent's environment without anything Terfyn- or loader-related, plus `extra`. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith("TERFYN_") || k === "NODE_OPTIONS") continue;
    env[k] = v;
  }
  return { ...env, NO_COLOR: "1", ...extra };
}

function terfyn(args: string[], cwd: string, env: Record<string, string>): Promise<Child> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env: childEnv(env),
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

let scriptPath = "";
let plainProject = "";

/** Temporary directories this file made, removed at the end. */
const made: string[] = [];

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

function projectCopy(prefix: string): string {
  const dir = copyExample(prefix);
  made.push(dir);
  return dir;
}

function freshCase(prefix = "terfyn-crash-"): Case {
  const base = tempDir(prefix);
  const ws = join(base, "ws");
  mkdirSync(ws);
  return { base, ws, runDir: join(base, "run") };
}

function wsEnv(c: Case, extra: Record<string, string> = {}): Record<string, string> {
  return { TERFYN_WORKSPACE_ROOT: c.ws, TERFYN_WORKSPACE_TEST_COMMAND: TEST_COMMAND, ...extra };
}

function startRun(c: Case, project: string, extra: Record<string, string> = {}): Promise<Child> {
  return terfyn(
    [
      "run",
      WORKFLOW,
      "--project",
      project,
      "--input-file",
      TASK,
      "--model-script",
      scriptPath,
      "--run-dir",
      c.runDir,
    ],
    c.base,
    wsEnv(c, extra),
  );
}

function resume(c: Case, extra: Record<string, string> = {}): Promise<Child> {
  return terfyn(["run", "--resume", c.runDir], c.base, wsEnv(c, extra));
}

function approve(c: Case, hash: string): Promise<Child> {
  return terfyn(["approve", "--run", c.runDir, "--hash", hash], c.base, {});
}

/** Every line of the journal parsed; `bad` holds the lines that are not JSON. */
function readJournal(runDir: string): { events: Event[]; bad: string[]; text: string } {
  const text = readFileSync(join(runDir, "journal.jsonl"), "utf8");
  const events: Event[] = [];
  const bad: string[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      events.push(JSON.parse(line) as Event);
    } catch {
      bad.push(line);
    }
  }
  return { events, bad, text };
}

interface State {
  run_id: string;
  status: string;
  iteration: number;
  cursor: string;
  awaiting?: { hash: string; step: string; label: string; kind: string };
  result?: unknown;
  error?: string;
}

function readState(runDir: string): State {
  return JSON.parse(readFileSync(join(runDir, "state.json"), "utf8")) as State;
}

/** Events with the run id (which is in every effect key) replaced, to compare across runs. */
function normalize(events: Event[], runId: string): Event[] {
  return JSON.parse(JSON.stringify(events).replaceAll(runId, "RUN")) as Event[];
}

/** Every file under `dir`, by relative path. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(dir, p)] = readFileSync(p, "utf8");
    }
  };
  walk(dir);
  return out;
}

function counterLines(ws: string): number {
  const p = join(ws, ".count");
  return existsSync(p)
    ? readFileSync(p, "utf8")
        .split("\n")
        .filter((l) => l !== "").length
    : 0;
}

function countBy<T>(items: T[], key: (t: T) => string): Map<string, number> {
  const m = new Map<string, number>();
  for (const i of items) m.set(key(i), (m.get(key(i)) ?? 0) + 1);
  return m;
}

function duplicates(items: Event[], type: string, key: (e: Event) => string): string[] {
  return [
    ...countBy(
      items.filter((e) => e.type === type),
      key,
    ),
  ]
    .filter(([, n]) => n > 1)
    .map(([k, n]) => `${k} x${n}`);
}

/**
 * The once-only properties of a journal: every effect has one intent and one result, no model
 * turn, step start or step end is recorded twice, no denial twice.
 */
function expectOnce(
  expect: ExpectStatic,
  events: Event[],
  label: string,
  inDoubtKey?: string,
): void {
  const intents = countBy(
    events.filter((e) => e.type === "effect.intent"),
    (e) => String(e.key),
  );
  const results = countBy(
    events.filter((e) => e.type === "effect.result"),
    (e) => String(e.key),
  );
  for (const key of new Set([...intents.keys(), ...results.keys()])) {
    expect
      .soft(results.get(key) ?? 0, `${label}: effect.result events for ${key}`)
      .toBe(key === inDoubtKey ? 0 : 1);
    expect.soft(intents.get(key) ?? 0, `${label}: effect.intent events for ${key}`).toBe(1);
  }
  expect
    .soft(
      duplicates(events, "model.turn", (e) => `${e.step}#${e.turn}`),
      `${label}: model.turn asked twice`,
    )
    .toEqual([]);
  expect
    .soft(
      duplicates(events, "step.start", (e) => String(e.step)),
      `${label}: step.start twice`,
    )
    .toEqual([]);
  expect
    .soft(
      duplicates(events, "step.end", (e) => String(e.step)),
      `${label}: step.end twice`,
    )
    .toEqual([]);
  expect
    .soft(
      duplicates(events, "tool.denied", (e) => String(e.key)),
      `${label}: tool.denied twice`,
    )
    .toEqual([]);
}

/** Runs `f` over `items` with at most `size` at a time. */
async function inPool<T>(items: T[], size: number, f: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await f(items[next++] as T);
  };
  await Promise.all(Array.from({ length: size }, worker));
}

const isRunTestsIntent = (e: Event | undefined) =>
  e?.type === "effect.intent" && e.tool === "tool.workspace.run_tests";

/** The clean, uninterrupted run everything is compared with. */
interface Clean {
  runId: string;
  events: Event[];
  normalized: Event[];
  result: unknown;
  workspace: Record<string, string>;
  count: number;
}
let clean: Clean;

beforeAll(async () => {
  const dir = tempDir("terfyn-crash-script-");
  scriptPath = join(dir, "script.yaml");
  writeFileSync(scriptPath, SCRIPT);
  plainProject = projectCopy("terfyn-crash-project-");

  const c = freshCase();
  const r = await startRun(c, plainProject);
  if (r.code !== 0) throw new Error(`the clean run failed (${r.code}): ${r.stderr}`);
  const { events } = readJournal(c.runDir);
  const runId = readState(c.runDir).run_id;
  clean = {
    runId,
    events,
    normalized: normalize(events, runId),
    result: JSON.parse(r.stdout),
    workspace: snapshot(c.ws),
    count: counterLines(c.ws),
  };
}, 60_000);

afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

describe.concurrent("an uninterrupted run (the reference)", () => {
  it("exercises two iterations, several writes, test runs and a denied call", ({ expect }) => {
    const { events, result, workspace } = clean;
    expect(result).toEqual({ task: "add two ints", approved: true, feedback: "ok" });
    expect(events[0]?.type).toBe("run.start");
    expect(events.at(-1)).toMatchObject({ type: "run.end", status: "completed" });
    const steps = events.filter((e) => e.type === "step.start").map((e) => e.step);
    expect(steps).toEqual(["c0@1", "c1@1", "c0@2", "c1@2"]);
    const writes = events.filter(
      (e) => e.type === "effect.intent" && e.tool === "tool.workspace.write_file",
    );
    expect(writes.map((e) => (e.input as { content: string }).content)).toEqual([V1, V2]);
    expect(events.filter(isRunTestsIntent)).toHaveLength(3);
    expect(events.filter((e) => e.type === "tool.denied")).toMatchObject([
      { agent: "Reviewer", tool: "tool.workspace.write_file" },
    ]);
    expect(workspace).toEqual({
      ".count": "ran\nran\nran\n",
      "src/add.go": V2,
    });
    expect(clean.count).toBe(3);
    expectOnce(expect, events, "clean run");
  });
});

describe.concurrent("SIGKILL after every journal event, then resume", () => {
  it("finishes every crashed run exactly like the clean run, or stops in doubt on a started test run", async ({
    expect,
  }) => {
    const n = clean.events.length;
    const ks = Array.from({ length: n - 1 }, (_, i) => i + 1);
    /** k is in doubt when the k-th event is a run_tests intent: killed before its result. */
    const inDoubt = ks.filter((k) => isRunTestsIntent(clean.events[k - 1]));
    expect(inDoubt).toHaveLength(3);
    const testKeys = new Set(clean.events.filter(isRunTestsIntent).map((e) => String(e.key)));

    await inPool(ks, WORKERS, async (k) => {
      const c = freshCase();
      const label = `k=${k} (${clean.events[k - 1]?.type})`;
      const killed = await startRun(c, plainProject, { TERFYN_TEST_KILL_AFTER_EVENT: String(k) });
      expect(killed.signal, `${label}: the first run was not SIGKILLed: ${killed.stderr}`).toBe(
        "SIGKILL",
      );
      const runId = readState(c.runDir).run_id;
      const before = readJournal(c.runDir);
      expect(before.bad, `${label}: torn lines after the kill`).toEqual([]);
      expect
        .soft(normalize(before.events, runId), `${label}: the journal at the kill`)
        .toEqual(clean.normalized.slice(0, k));

      const r = await resume(c);
      const state = readState(c.runDir);
      const after = readJournal(c.runDir);
      expect(after.bad, `${label}: unparseable journal lines`).toEqual([]);
      const key = inDoubt.includes(k)
        ? String(clean.events[k - 1]?.key).replace(clean.runId, runId)
        : undefined;
      expectOnce(expect, after.events, label, key);

      if (key !== undefined) {
        expect.soft(r.code, `${label}: resume exit code (in doubt): ${r.stderr}`).toBe(1);
        expect.soft(state.status, `${label}: state.json status`).toBe("in-doubt");
        expect.soft(r.stderr, `${label}: stderr names the effect`).toContain(key);
        expect
          .soft(r.stderr, `${label}: stderr names the tool`)
          .toContain("tool.workspace.run_tests");
        expect.soft(state.error ?? "", `${label}: state.json error`).toContain(key);
        expect.soft(r.stdout, `${label}: no result on stdout`).toBe("");
        // The test command never ran for the in-doubt effect, nor anything after it.
        const ran = clean.events
          .slice(0, k)
          .filter((e) => e.type === "effect.result" && testKeys.has(String(e.key))).length;
        expect.soft(counterLines(c.ws), `${label}: test runs`).toBe(ran);
        const fresh = after.events.slice(k);
        expect
          .soft(
            fresh.filter((e) => e.type.startsWith("effect.") || e.type === "model.turn"),
            `${label}: the in-doubt resume did something`,
          )
          .toEqual([]);
        return;
      }

      expect.soft(r.code, `${label}: resume exit code: ${r.stderr}`).toBe(0);
      expect.soft(r.signal, `${label}: resume signal`).toBe(null);
      let result: unknown;
      try {
        result = JSON.parse(r.stdout);
      } catch {
        result = r.stdout;
      }
      expect.soft(result, `${label}: result on stdout`).toEqual(clean.result);
      expect.soft(state.status, `${label}: state.json status`).toBe("completed");
      expect.soft(state.result, `${label}: state.json result`).toEqual(clean.result);
      expect.soft(snapshot(c.ws), `${label}: workspace`).toEqual(clean.workspace);
      expect.soft(counterLines(c.ws), `${label}: test runs`).toBe(clean.count);
      // The crash left nothing behind but the resume marker: the same events, in the same order.
      expect
        .soft(
          normalize(
            after.events.filter((e) => e.type !== "run.resume"),
            runId,
          ),
          `${label}: the resumed journal`,
        )
        .toEqual(clean.normalized);
    });
  }, 240_000);
});

describe.concurrent("a torn journal line", () => {
  /** Kill right after the first write's intent; then half of its result reaches the disk. */
  async function tornRun(expect: ExpectStatic): Promise<{ c: Case; k: number }> {
    const k = clean.events.findIndex((e) => e.type === "effect.intent") + 1;
    const c = freshCase("terfyn-torn-");
    const killed = await startRun(c, plainProject, { TERFYN_TEST_KILL_AFTER_EVENT: String(k) });
    expect(killed.signal).toBe("SIGKILL");
    const runId = readState(c.runDir).run_id;
    const next = JSON.stringify(clean.events[k]).replaceAll(clean.runId, runId);
    expect(next).toContain('"effect.result"');
    appendFileSync(join(c.runDir, "journal.jsonl"), next.slice(0, Math.floor(next.length / 2)));
    return { c, k };
  }

  it("is ignored on resume: the run finishes as the clean run did", async ({ expect }) => {
    const { c } = await tornRun(expect);
    const r = await resume(c);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(clean.result);
    expect(snapshot(c.ws)).toEqual(clean.workspace);
    expect(counterLines(c.ws)).toBe(clean.count);
    expectOnce(expect, readJournal(c.runDir).events, "torn line");
  }, 90_000);

  it("does not damage the journal for a later resume (crash again after resuming past it)", async ({
    expect,
  }) => {
    const { c } = await tornRun(expect);
    // Resume, and crash again two events into that session (run.resume, the write's result): a
    // third would be the run_tests intent, where stopping in doubt is the right answer.
    const second = await resume(c, { TERFYN_TEST_KILL_AFTER_EVENT: "2" });
    expect(second.signal, second.stderr).toBe("SIGKILL");
    // Only the last line of a journal may be torn; what the resume appended must be whole.
    const mid = readJournal(c.runDir);
    expect.soft(mid.bad, "journal lines that are not JSON events after the resume").toEqual([]);
    expect
      .soft(
        mid.events.filter((e) => e.type === "run.resume"),
        "the resume's run.resume event",
      )
      .toHaveLength(1);
    // And the run can still be resumed to the end.
    const r = await resume(c);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(clean.result);
    expect(snapshot(c.ws)).toEqual(clean.workspace);
    expect(counterLines(c.ws)).toBe(clean.count);
  }, 90_000);
});

describe.concurrent("approval (HITL) across processes", () => {
  it("pauses on a gated write, refuses a wrong hash, resumes at the right point, never asks twice", async ({
    expect,
  }) => {
    const project = projectCopy("terfyn-hitl-");
    edit(
      project,
      "main.agent",
      /(agent Implementer \{[\s\S]*?)tool\.workspace\.write_file\n/,
      "$1tool.workspace.write_file requires approval\n",
    );
    const c = freshCase("terfyn-hitl-run-");
    const approvals = join(c.runDir, "approvals.jsonl");

    // 1. The first write (iteration 1, Implementer turn 0) waits for approval.
    const first = await startRun(c, project);
    expect(first.code, first.stderr).toBe(2);
    const s1 = readState(c.runDir);
    expect(s1.status).toBe("awaiting-approval");
    expect(s1.awaiting).toMatchObject({ kind: "gated-grant", step: "c0@1" });
    const h1 = s1.awaiting?.hash as string;
    expect(h1).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(first.stderr).toContain(`--hash ${h1}`);
    expect(existsSync(join(c.ws, "src", "add.go"))).toBe(false);
    const j1 = readJournal(c.runDir).events;
    expect(j1.filter((e) => e.type === "approval.requested")).toMatchObject([{ hash: h1 }]);
    expect(j1.filter((e) => e.type === "effect.intent")).toEqual([]);

    // 2. A wrong hash records nothing.
    const stateText = readFileSync(join(c.runDir, "state.json"), "utf8");
    const wrong = await approve(c, `sha256:${"0".repeat(64)}`);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("nothing recorded");
    expect(wrong.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(approvals)).toBe(false);
    expect(readFileSync(join(c.runDir, "state.json"), "utf8")).toBe(stateText);

    // 3. The right hash is recorded; resuming writes V1 once and pauses on iteration 2's write.
    const ok = await approve(c, h1);
    expect(ok.code, ok.stderr).toBe(0);
    expect(readFileSync(approvals, "utf8").trim().split("\n")).toHaveLength(1);
    const second = await resume(c);
    expect(second.code, second.stderr).toBe(2);
    const s2 = readState(c.runDir);
    expect(s2).toMatchObject({ status: "awaiting-approval", iteration: 2, cursor: "c0@2" });
    expect(s2.awaiting).toMatchObject({ kind: "gated-grant", step: "c0@2" });
    const h2 = s2.awaiting?.hash as string;
    expect(h2).not.toBe(h1);
    expect(readFileSync(join(c.ws, "src", "add.go"), "utf8")).toBe(V1);
    expect(counterLines(c.ws)).toBe(2);
    const j2 = readJournal(c.runDir).events;
    const session2 = j2.slice(j2.findIndex((e) => e.type === "run.resume"));
    // The resumed session did not restart iteration 1's Implementer step nor ask its turn again.
    expect(session2.filter((e) => e.type === "step.start").map((e) => e.step)).toEqual([
      "c1@1",
      "c0@2",
    ]);
    expect(
      session2.filter((e) => e.type === "model.turn").map((e) => `${e.step}#${e.turn}`),
    ).toEqual(["c0@1#1", "c1@1#0", "c1@1#1", "c0@2#0"]);
    const granted1 = j2.findIndex((e) => e.type === "approval.granted" && e.hash === h1);
    const write1 = j2.findIndex(
      (e) => e.type === "effect.intent" && (e.input as { content?: string }).content === V1,
    );
    expect(granted1).toBeGreaterThan(0);
    expect(write1).toBeGreaterThan(granted1);
    expectOnce(expect, j2, "after the first approval");

    // 4. Approve iteration 2's write; crash right after approval.granted (event 2 of the session).
    expect((await approve(c, h2)).code).toBe(0);
    const crashed = await resume(c, { TERFYN_TEST_KILL_AFTER_EVENT: "2" });
    expect(crashed.signal, crashed.stderr).toBe("SIGKILL");
    const j3 = readJournal(c.runDir).events;
    expect(j3.at(-1)).toMatchObject({ type: "approval.granted", hash: h2 });
    expect(readFileSync(join(c.ws, "src", "add.go"), "utf8")).toBe(V1);

    // 5. Resume: the approval is neither asked nor granted again; V2 is written once; done.
    const last = await resume(c);
    expect(last.code, last.stderr).toBe(0);
    expect(last.stderr).not.toContain("awaiting approval");
    expect(JSON.parse(last.stdout)).toEqual(clean.result);
    expect(readState(c.runDir).status).toBe("completed");
    expect(snapshot(c.ws)).toEqual(clean.workspace);
    expect(counterLines(c.ws)).toBe(clean.count);
    const j = readJournal(c.runDir);
    expect(j.bad).toEqual([]);
    const session4 = j.events.slice(j.events.findLastIndex((e) => e.type === "run.resume"));
    expect(session4.filter((e) => e.type.startsWith("approval."))).toEqual([]);
    expectOnce(expect, j.events, "HITL run");
    for (const h of [h1, h2]) {
      expect(
        j.events.filter((e) => e.type === "approval.requested" && e.hash === h),
        `approval.requested ${h}`,
      ).toHaveLength(1);
      expect(
        j.events.filter((e) => e.type === "approval.granted" && e.hash === h),
        `approval.granted ${h}`,
      ).toHaveLength(1);
    }
    // Each gated write runs after its own approval, exactly once.
    for (const [h, content] of [
      [h1, V1],
      [h2, V2],
    ] as const) {
      const g = j.events.findIndex((e) => e.type === "approval.granted" && e.hash === h);
      const w = j.events.flatMap((e, i) =>
        e.type === "effect.intent" && (e.input as { content?: string }).content === content
          ? [i]
          : [],
      );
      expect(w, `write of ${JSON.stringify(content)}`).toHaveLength(1);
      expect(w[0]).toBeGreaterThan(g);
    }
    expect(readFileSync(approvals, "utf8").trim().split("\n")).toHaveLength(2);
  }, 120_000);
});

describe.concurrent("resuming after the project changed", () => {
  it("fails closed on the IR hash and leaves the run directory as it was", async ({ expect }) => {
    const project = projectCopy("terfyn-edited-");
    const c = freshCase("terfyn-edited-run-");
    const k = clean.events.findIndex((e) => e.type === "step.start" && e.step === "c1@1") + 1;
    const killed = await startRun(c, project, { TERFYN_TEST_KILL_AFTER_EVENT: String(k) });
    expect(killed.signal).toBe("SIGKILL");
    const state = readFileSync(join(c.runDir, "state.json"), "utf8");
    const journal = readFileSync(join(c.runDir, "journal.jsonl"), "utf8");
    const ws = snapshot(c.ws);

    edit(project, "main.agent", "You are the Reviewer,", "You are the strict Reviewer,");
    const r = await resume(c);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/IR sha256:[0-9a-f]{64} -> sha256:[0-9a-f]{64}/);
    expect(r.stderr).toContain("project changed");
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stdout).toBe("");
    expect(readFileSync(join(c.runDir, "state.json"), "utf8")).toBe(state);
    expect(readFileSync(join(c.runDir, "journal.jsonl"), "utf8")).toBe(journal);
    expect(snapshot(c.ws)).toEqual(ws);

    // Restoring the prompt makes the run resumable again, to the clean result.
    edit(project, "main.agent", "You are the strict Reviewer,", "You are the Reviewer,");
    const again = await resume(c);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual(clean.result);
    expect(snapshot(c.ws)).toEqual(clean.workspace);
  }, 90_000);
});
