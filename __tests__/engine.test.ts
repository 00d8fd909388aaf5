/**
 * The engine through `terfyn run`, in-process: the capability gate, loop bounds, output
 * validation, HITL pauses and clear errors. (Crash and resume with real child processes are in
 * crash-resume.test.ts; sandbox escapes in sandbox-escapes.test.ts.)
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { JournalEvent } from "../src/core/engine/journal.ts";
import { runTerfyn } from "./helpers/cli.ts";
import { copyExample, edit } from "./helpers/example-project.ts";

interface Setup {
  project: string;
  workspace: string;
  runDir: string;
  env: Record<string, string>;
}

function setup(): Setup {
  const project = copyExample();
  const workspace = mkdtempSync(join(tmpdir(), "terfyn-ws-"));
  return {
    project,
    workspace,
    runDir: join(mkdtempSync(join(tmpdir(), "terfyn-run-")), "run"),
    env: { TERFYN_WORKSPACE_ROOT: workspace, TERFYN_WORKSPACE_TEST_COMMAND: "echo ran >> .count" },
  };
}

function script(s: Setup, yaml: string): string {
  const path = join(s.project, "fixtures", "script.yaml");
  writeFileSync(path, yaml);
  return path;
}

async function run(s: Setup, scriptPath: string, extra: string[] = []) {
  return runTerfyn(
    [
      "run",
      "workflow/ImplementAndReview",
      "--project",
      s.project,
      "--input-file",
      join(s.project, "fixtures", "task.json"),
      "--model-script",
      scriptPath,
      "--run-dir",
      s.runDir,
      ...extra,
    ],
    s.project,
    s.env,
  );
}

function journal(s: Setup): JournalEvent[] {
  return readFileSync(join(s.runDir, "journal.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as JournalEvent);
}

const invocations = (events: JournalEvent[], agent: string) =>
  events.filter((e) => e.type === "step.start" && e.name === agent).length;

const state = (task: string, approved: boolean, feedback?: string) =>
  `{ task: ${JSON.stringify(task)}, approved: ${approved}${feedback ? `, feedback: ${JSON.stringify(feedback)}` : ""} }`;

describe("the capability gate (port of TestImplementReviewLoop_ReviewerCannotWrite)", () => {
  it("denies the Reviewer's write_file and leaves the workspace unchanged; the Implementer's write succeeds", async () => {
    const s = setup();
    const path = script(
      s,
      `agents:
  Implementer:
    - toolCalls:
        - { tool: tool.workspace.write_file, input: { path: src/add.go, content: "package add\\n" } }
        - { tool: tool.workspace.run_tests, input: {} }
    - output: ${state("add two ints", false)}
  Reviewer:
    - toolCalls: [ { tool: tool.workspace.write_file, input: { path: src/add.go, content: "" } } ]
    - output: ${state("add two ints", true, "ok")}
`,
    );
    const r = await run(s, path);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ task: "add two ints", approved: true, feedback: "ok" });
    expect(readFileSync(join(s.workspace, "src", "add.go"), "utf8")).toBe("package add\n");
    const events = journal(s);
    const denied = events.filter((e) => e.type === "tool.denied");
    expect(denied).toHaveLength(1);
    expect(denied[0]).toMatchObject({ agent: "Reviewer", tool: "tool.workspace.write_file" });
    const reviewerEffects = events.filter(
      (e) => e.type === "effect.intent" && e.agent === "Reviewer",
    );
    expect(reviewerEffects).toEqual([]);
    expect(r.stderr).toContain("denied: Reviewer -> tool.workspace.write_file (not granted)");
  });

  it("denies a tool the agent names that does not exist at all, and one from another tool", async () => {
    const s = setup();
    const path = script(
      s,
      `agents:
  Implementer:
    - toolCalls:
        - { tool: tool.shell.exec, input: { cmd: "rm -rf /" } }
        - { tool: workspace.write_file, input: { path: x, content: y } }
    - output: ${state("t", false)}
  Reviewer:
    - output: ${state("t", true)}
`,
    );
    const r = await run(s, path);
    expect(r.code).toBe(0);
    expect(
      journal(s)
        .filter((e) => e.type === "tool.denied")
        .map((e) => (e as { tool: string }).tool),
    ).toEqual(["tool.shell.exec", "workspace.write_file"]);
    expect(existsSync(join(s.workspace, "x"))).toBe(false);
  });
});

describe("loop bounds", () => {
  it("approved on the first review exits after one iteration", async () => {
    const s = setup();
    const path = script(
      s,
      `agents:\n  Implementer:\n    - output: ${state("t", false)}\n  Reviewer:\n    - output: ${state("t", true)}\n`,
    );
    const r = await run(s, path);
    expect(r.code).toBe(0);
    const events = journal(s);
    expect([invocations(events, "Implementer"), invocations(events, "Reviewer")]).toEqual([1, 1]);
  });

  it("never approved stops after the third review and returns the final state: no fourth attempt", async () => {
    const s = setup();
    const turns = (approved: boolean, n: number) =>
      Array.from({ length: n }, (_, i) => `    - output: ${state(`t${i + 1}`, approved)}`).join(
        "\n",
      );
    const path = script(
      s,
      `agents:\n  Implementer:\n${turns(false, 4)}\n  Reviewer:\n${turns(false, 4)}\n`,
    );
    const r = await run(s, path);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ task: "t3", approved: false });
    const events = journal(s);
    expect([invocations(events, "Implementer"), invocations(events, "Reviewer")]).toEqual([3, 3]);
    expect(r.stderr).toContain("iteration 3/3");
    expect(r.stderr).not.toContain("iteration 4");
  });

  it("the offline example script runs end to end: rejected once, a denied write, approved on the second round", async () => {
    const s = setup();
    const r = await run(s, join(s.project, "fixtures", "model-script.yaml"));
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ approved: true });
    expect(readFileSync(join(s.workspace, "add.go"), "utf8")).toContain("return a + b");
    expect(readFileSync(join(s.workspace, ".count"), "utf8")).toBe("ran\nran\n");
    const events = journal(s);
    expect(events.filter((e) => e.type === "tool.denied")).toHaveLength(1);
    expect(JSON.parse(readFileSync(join(s.runDir, "state.json"), "utf8"))).toMatchObject({
      status: "completed",
      iteration: 2,
    });
  });
});

describe("agent output", () => {
  it("asks again when the output does not match the schema, then accepts a valid one", async () => {
    const s = setup();
    const path = script(
      s,
      `agents:\n  Implementer:\n    - output: { task: 3 }\n    - output: ${state("t", false)}\n  Reviewer:\n    - output: ${state("t", true)}\n`,
    );
    const r = await run(s, path);
    expect(r.code, r.stderr).toBe(0);
    expect(
      journal(s).filter((e) => e.type === "model.turn" && e.agent === "Implementer"),
    ).toHaveLength(2);
  });

  it("fails the step after the bounded corrections, with a clear error", async () => {
    const s = setup();
    const bad = Array.from({ length: 4 }, () => "    - output: { approved: maybe }").join("\n");
    const path = script(
      s,
      `agents:\n  Implementer:\n${bad}\n  Reviewer:\n    - output: ${state("t", true)}\n`,
    );
    const r = await run(s, path);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Implementer's output does not match CodingState after 2 corrections/);
    expect(JSON.parse(readFileSync(join(s.runDir, "state.json"), "utf8")).status).toBe("failed");
  });

  it("fails when the script runs out of turns, naming the agent", async () => {
    const s = setup();
    const path = script(
      s,
      `agents:\n  Implementer:\n    - output: ${state("t", false)}\n  Reviewer:\n    - output: ${state("t", false)}\n`,
    );
    const r = await run(s, path);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("has 1 turn(s) for agent Implementer; turn 2 was asked for");
  });
});

describe("approve statements", () => {
  it("pause with the value's content hash; approve records only that hash; resume completes", async () => {
    const s = setup();
    edit(
      s.project,
      "main.agent",
      "  return state\n",
      '  approve state "final state"\n  return state\n',
    );
    const path = script(
      s,
      `agents:\n  Implementer:\n    - output: ${state("t", false)}\n  Reviewer:\n    - output: ${state("t", true, "ok")}\n`,
    );
    const first = await run(s, path);
    expect(first.code).toBe(2);
    const st = JSON.parse(readFileSync(join(s.runDir, "state.json"), "utf8"));
    expect(st.status).toBe("awaiting-approval");
    expect(st.awaiting.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(first.stderr).toContain(`terfyn approve --run`);

    const wrong = await runTerfyn(
      ["approve", "--run", s.runDir, "--hash", `sha256:${"0".repeat(64)}`],
      s.project,
    );
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("nothing recorded");
    expect(existsSync(join(s.runDir, "approvals.jsonl"))).toBe(false);

    const ok = await runTerfyn(
      ["approve", "--run", s.runDir, "--hash", st.awaiting.hash],
      s.project,
    );
    expect(ok.code).toBe(0);
    const resumed = await runTerfyn(["run", "--resume", s.runDir], s.project, s.env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toEqual({ task: "t", approved: true, feedback: "ok" });
    const events = journal(s);
    expect(events.filter((e) => e.type === "approval.requested")).toHaveLength(1);
    expect(events.filter((e) => e.type === "approval.granted")).toHaveLength(1);
    expect(invocations(events, "Implementer")).toBe(1);
    expect(events.filter((e) => e.type === "model.turn")).toHaveLength(2);
  });
});

describe("clear errors", () => {
  it("names a missing sandbox root, a missing test command, an unknown workflow and bad input", async () => {
    const s = setup();
    const path = join(s.project, "fixtures", "model-script.yaml");
    const noRoot = await runTerfyn(
      [
        "run",
        "workflow/ImplementAndReview",
        "--project",
        s.project,
        "--input-file",
        join(s.project, "fixtures", "task.json"),
        "--model-script",
        path,
      ],
      s.project,
      {},
    );
    expect(noRoot.code).toBe(1);
    expect(noRoot.stderr).toContain("has no sandbox root: set TERFYN_WORKSPACE_ROOT");
    const noCmd = await runTerfyn(
      [
        "run",
        "workflow/ImplementAndReview",
        "--project",
        s.project,
        "--input-file",
        join(s.project, "fixtures", "task.json"),
        "--model-script",
        path,
      ],
      s.project,
      { TERFYN_WORKSPACE_ROOT: s.workspace },
    );
    expect(noCmd.code).toBe(1);
    expect(noCmd.stderr).toContain("has no test command: set TERFYN_WORKSPACE_TEST_COMMAND");
    const unknown = await runTerfyn(
      ["run", "workflow/ImplementAndReveiw", "--project", s.project, "--input-file", "x.json"],
      s.project,
      s.env,
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("did you mean `workflow/ImplementAndReview`?");
    writeFileSync(join(s.project, "fixtures", "bad.json"), '{ "task": 1 }');
    const bad = await runTerfyn(
      [
        "run",
        "workflow/ImplementAndReview",
        "--project",
        s.project,
        "--input-file",
        join(s.project, "fixtures", "bad.json"),
      ],
      s.project,
      s.env,
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("does not match CodingState");
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  });

  it("declared sandbox config wins over the environment, and a relative root resolves against the project", async () => {
    const s = setup();
    edit(
      s.project,
      "main.agent",
      "tool workspace {}",
      'tool workspace {\n  workspace {\n    root "sandbox"\n    testCommand "echo declared >> .count"\n  }\n}',
    );
    const { mkdirSync } = await import("node:fs");
    mkdirSync(join(s.project, "sandbox"));
    const r = await run(s, join(s.project, "fixtures", "model-script.yaml"));
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(s.project, "sandbox", ".count"), "utf8")).toBe("declared\ndeclared\n");
    expect(existsSync(join(s.workspace, "add.go"))).toBe(false);
  });
});

describe("terfyn runs", () => {
  it("lists the project's runs and shows one run's state and journal", async () => {
    const s = setup();
    const runDir = join(s.project, ".terfyn", "runs", "r1");
    const r = await runTerfyn(
      [
        "run",
        "workflow/ImplementAndReview",
        "--project",
        ".",
        "--input-file",
        "fixtures/task.json",
        "--model-script",
        "fixtures/model-script.yaml",
        "--run-dir",
        runDir,
      ],
      s.project,
      s.env,
    );
    expect(r.code, r.stderr).toBe(0);
    const list = await runTerfyn(["runs", "list", "--project", "."], s.project);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(
      /^\d{8}-\d{6}-[0-9a-f]{6} {2}ImplementAndReview {2}completed {2}iteration 2 {2}started /,
    );
    const show = await runTerfyn(["runs", "show", runDir], s.project);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain("status: completed");
    expect(show.stdout).toMatch(
      /journal: \d+ events \(run\.start 1, step\.start 4, .*tool\.denied 1/,
    );
    const missing = await runTerfyn(["runs", "show", join(s.project, "nope")], s.project);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("is not a run directory");
  });
});
