/**
 * The engine section of `npm run bench`: what the workflow interpreter (runProgram) costs per
 * agent step, per journaled effect, and to resume a run from a journal of 10,000+ events.
 *
 * The project is built in memory (validateProject): one `external` tool operation with no
 * effects, granted to two agents, and two workflows `while !s.done limit N { s = Agent(s) }`.
 * The model port answers instantly from a script held in memory and the tool port does nothing,
 * so what is measured is the engine itself plus its journal:
 *   - per agent step: the agent answers with its output at once (no tool calls); the journal is
 *     a real RunStore in a temporary directory (one fsync'd line per event, three events a step)
 *     and, for comparison, an in-memory array;
 *   - per effect: the agent asks for K tool calls on its first turn and answers on its second,
 *     so the effects' two fsync'd events each (effect.intent, effect.result) dominate; the figure
 *     is the whole run divided by its effects, so the steps' own events are included, amortized;
 *   - for both, the run's exact events appended alone to a fresh RunStore, in the same rounds:
 *     the disk's share (fsync latency moves with the machine's load; the engine's share does not).
 *     The report gives the engine's share separately (each round's fsync run minus its journal
 *     alone, median over rounds), and beside it the fsync latency measured directly (a small
 *     append + fsync, and a directory fsync) and the file system the journals are on;
 *   - resume: a run of the effects workflow journaled to at least 10,000 events, then
 *     RunStore.readJournal() + runProgram over that history to completion. Every step replays
 *     from the journal: the model and tool ports throw if called, and nothing new is journaled.
 * The checkpoint and progress ports are no-ops (what `terfyn run` does at a checkpoint, writing
 * state.json atomically, is measured separately and reported for information, not as a target).
 * Every run's outcome and journal are checked; a wrong one is a broken benchmark, not a figure.
 */
import {
  closeSync,
  fsyncSync,
  openSync,
  readFileSync,
  realpathSync,
  statfsSync,
  writeSync,
} from "node:fs";
import { mkdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { directorySync } from "../src/adapters/fs/fsync-dir.ts";
import { type RunState, RunStore } from "../src/adapters/fs/run-store.ts";
import { type RunOutcome, runProgram } from "../src/core/engine/interpreter.ts";
import { compileProgram, type IrProgram } from "../src/core/engine/ir.ts";
import type { JournalEvent, ModelResponse } from "../src/core/engine/journal.ts";
import type {
  Checkpoint,
  JournalPort,
  ModelPort,
  ModelRequest,
  ToolCall,
  ToolPort,
} from "../src/core/engine/ports.ts";
import { deepEqual } from "../src/core/engine/values.ts";
import type { ResolvedProject } from "../src/core/model/project.ts";
import { validateProject } from "../src/core/validate.ts";
import { median } from "./median.ts";
import { medianAndSpread, type Target } from "./target.ts";

export const TARGET_STEP_MS = 2;
export const TARGET_EFFECT_MS = 1;
export const TARGET_RESUME_MS = 300;

/** Agent steps in one run of the per-step benchmark. */
const STEPS = 1000;
/** Steps, and tool calls per step, in one run of the per-effect benchmark. */
const EFFECT_STEPS = 100;
const CALLS_PER_TURN = 20;
/** The resume benchmark's journal holds at least this many events. */
const RESUME_MIN_EVENTS = 10_000;
/** Steps of the informational run with `terfyn run`'s state.json checkpoints. */
const CLI_CHECKPOINT_STEPS = 200;

/** Events a step journals: step.start, model.turn(s), step.end, and two per effect. */
const STEP_EVENTS = 3;
const EFFECT_STEP_EVENTS = 4 + 2 * CALLS_PER_TURN;
/** Steps the resume run needs for RESUME_MIN_EVENTS (its journal also holds run.start). */
const RESUME_STEPS = Math.ceil((RESUME_MIN_EVENTS - 1) / EFFECT_STEP_EVENTS);
const LOOP_LIMIT = Math.max(STEPS, EFFECT_STEPS, RESUME_STEPS, CLI_CHECKPOINT_STEPS);

export class EngineBenchBroken extends Error {}

export interface EngineBenchOptions {
  /** Measured repetitions and warm-up runs per figure (the median is reported). */
  reps: number;
  warmup: number;
  /** Where run directories go; created, and removed afterwards unless `keep`. */
  dir: string;
  keep: boolean;
}

export interface EngineBenchResult {
  rows: [string, string][];
  targets: Target[];
}

/** Linux statfs magic numbers of the file systems a benchmark is likely to meet. */
const FS_MAGIC = new Map<number, string>([
  [0xef53, "ext2/3/4"],
  [0x01021994, "tmpfs"],
  [0x9123683e, "btrfs"],
  [0x58465342, "xfs"],
  [0x794c7630, "overlayfs"],
  [0x2fc12fc1, "zfs"],
  [0x6969, "nfs"],
  [0x65735546, "fuse"],
  [0x858458f6, "ramfs"],
]);

/** The file system holding `dir`: its type and mount point from /proc/self/mounts, else statfs. */
export function filesystemOf(dir: string): string {
  let real = dir;
  try {
    real = realpathSync(dir);
  } catch {
    // Not there yet: the path as given.
  }
  try {
    let best: { point: string; type: string; device: string } | undefined;
    for (const line of readFileSync("/proc/self/mounts", "utf8").split("\n")) {
      const [device, point, type] = line.split(" ");
      if (!device || !point || !type) continue;
      const p = point.replace(/\\040/g, " ");
      if (
        (real === p || real.startsWith(p.endsWith("/") ? p : `${p}/`)) &&
        p.length >= (best?.point.length ?? -1)
      )
        best = { point: p, type, device };
    }
    if (best) return `${best.type} (${best.device} on ${best.point})`;
  } catch {
    // No /proc (macOS, Windows): statfs below.
  }
  try {
    const type = Number(statfsSync(dir).type);
    return FS_MAGIC.get(type) ?? `statfs type 0x${type.toString(16)}`;
  } catch {
    return "unknown";
  }
}

/** Latency of one fsync of a small append to a file in `dir`, and of an fsync of `dir` itself. */
export function fsyncLatency(
  dir: string,
  n = 100,
): { file: Series; dir: Series; dirSupported: boolean } {
  const path = join(dir, "fsync-latency.bin");
  const fd = openSync(path, "w");
  const file: number[] = [];
  const dirs: number[] = [];
  let dirSupported = true;
  try {
    const line = Buffer.from(`${"x".repeat(99)}\n`);
    for (let i = 0; i < n; i++) {
      writeSync(fd, line);
      const t = performance.now();
      fsyncSync(fd);
      file.push(performance.now() - t);
    }
    for (let i = 0; i < Math.ceil(n / 2); i++) {
      const t = performance.now();
      if (directorySync.fsync(dir) === "unsupported") dirSupported = false;
      dirs.push(performance.now() - t);
    }
  } finally {
    closeSync(fd);
  }
  return { file: series(file), dir: series(dirs), dirSupported };
}

// ── The project ───────────────────────────────────────────────────────────────────────────────

const TOOL = "tool.noop.ping";

function projectFiles(limit: number): { path: string; text: string }[] {
  return [
    {
      path: "terfyn.yaml",
      text: "apiVersion: terfyn.dev/v1\nkind: Project\nmetadata: { name: engine-bench }\nspec: {}\n",
    },
    {
      path: "resources.yaml",
      text: `apiVersion: terfyn.dev/v1
kind: Tool
metadata: { name: noop }
spec:
  adapter: external
  operations:
    ping:
      effects: []
      idempotent: true
      description: Does nothing.
      input: { type: object, required: [i], properties: { i: { type: integer } } }
---
apiVersion: terfyn.dev/v1
kind: Schema
metadata: { name: State }
spec:
  type: object
  required: [done, n]
  properties:
    done: { type: boolean }
    n: { type: integer }
`,
    },
    {
      path: "main.agent",
      text: `defaults {
  model "mock/script"
  maxTurns 4
}

tool noop {}

agent Stepper {
  input State
  output State
  instructions "Advance the state by one step."
  grants {
    ${TOOL}
  }
}

agent Worker {
  input State
  output State
  instructions "Ping, then advance the state by one step."
  grants {
    ${TOOL}
  }
}

workflow Steps(input: State) -> State
effects { }
{
  s = input
  while !s.done limit ${limit} {
    s = Stepper(s)
  }
  return s
}

workflow Effects(input: State) -> State
effects { }
{
  s = input
  while !s.done limit ${limit} {
    s = Worker(s)
  }
  return s
}
`,
    },
  ];
}

interface Setup {
  project: ResolvedProject;
  steps: IrProgram;
  effects: IrProgram;
}

function buildSetup(): Setup {
  const result = validateProject(projectFiles(LOOP_LIMIT));
  if (!result.ok || result.diagnostics.length > 0) {
    throw new EngineBenchBroken(
      `the engine benchmark's project does not validate cleanly: ${result.diagnostics
        .slice(0, 5)
        .map((d) => `${d.span.file}:${d.span.line}: ${d.code} ${d.message}`)
        .join("; ")}`,
    );
  }
  return {
    project: result.project,
    steps: compileProgram(result.project, "Steps"),
    effects: compileProgram(result.project, "Effects"),
  };
}

// ── Ports ─────────────────────────────────────────────────────────────────────────────────────

type TurnAnswer = { response: ModelResponse };

/** Answers every turn with the next state at once; `done` on the `steps`-th output. */
class StepModel implements ModelPort {
  calls = 0;
  private outputs = 0;
  constructor(private readonly steps: number) {}
  async turn(_request: ModelRequest): Promise<TurnAnswer> {
    this.calls++;
    this.outputs++;
    return {
      response: { kind: "output", output: { done: this.outputs >= this.steps, n: this.outputs } },
    };
  }
}

/** A step's first turn asks for `perTurn` tool calls; its second (after the results) answers. */
class EffectModel implements ModelPort {
  calls = 0;
  private outputs = 0;
  constructor(
    private readonly steps: number,
    private readonly perTurn: number,
  ) {}
  async turn(request: ModelRequest): Promise<TurnAnswer> {
    this.calls++;
    if (request.messages.at(-1)?.role === "tool_results") {
      this.outputs++;
      return {
        response: {
          kind: "output",
          output: { done: this.outputs >= this.steps, n: this.outputs },
        },
      };
    }
    const calls = [];
    for (let i = 0; i < this.perTurn; i++)
      calls.push({ id: `call_${i}`, tool: TOOL, input: { i } });
    return { response: { kind: "tool_calls", calls } };
  }
}

class NoopTools implements ToolPort {
  calls = 0;
  async execute(_call: ToolCall): Promise<{ ok: boolean; result: unknown }> {
    this.calls++;
    return { ok: true, result: "pong" };
  }
}

class MemoryJournal implements JournalPort {
  readonly events: JournalEvent[] = [];
  async append(event: JournalEvent): Promise<void> {
    this.events.push(event);
  }
}

/** Counts what a resume must not do: ask the model, execute a tool, or journal anything new. */
class ForbiddenPorts {
  model = 0;
  tools = 0;
  appended = 0;
  checkpoints = 0;
  readonly modelPort: ModelPort = {
    turn: async () => {
      this.model++;
      throw new Error("the model port was called during a resume that should only replay");
    },
  };
  readonly toolPort: ToolPort = {
    execute: async () => {
      this.tools++;
      throw new Error("the tool port was called during a resume that should only replay");
    },
  };
  journalPort(store: RunStore): JournalPort {
    return {
      append: async (e) => {
        this.appended++;
        await store.append(e);
      },
    };
  }
}

// ── Runs ──────────────────────────────────────────────────────────────────────────────────────

const INPUT = { done: false, n: 0 };
const noCheckpoint = async (_c: Checkpoint): Promise<void> => {};
const noProgress = (_line: string): void => {};

interface RunArgs {
  setup: Setup;
  program: IrProgram;
  model: ModelPort;
  tools: ToolPort;
  journal: JournalPort;
  history?: readonly JournalEvent[];
  checkpoint?: (c: Checkpoint) => Promise<void>;
}

function run(a: RunArgs): Promise<RunOutcome> {
  return runProgram({
    runId: "bench",
    project: a.setup.project,
    program: a.program,
    input: INPUT,
    history: a.history ?? [],
    approvals: new Set(),
    ports: {
      model: a.model,
      tools: a.tools,
      journal: a.journal,
      checkpoint: a.checkpoint ?? noCheckpoint,
      progress: noProgress,
    },
  });
}

function expectCompleted(what: string, outcome: RunOutcome, steps: number): void {
  if (outcome.status !== "completed")
    throw new EngineBenchBroken(`${what}: the run ended ${JSON.stringify(outcome)}`);
  if (!deepEqual(outcome.result, { done: true, n: steps }))
    throw new EngineBenchBroken(
      `${what}: the run returned ${JSON.stringify(outcome.result)}, not { done: true, n: ${steps} }`,
    );
}

/** Checks a journal holds exactly what `steps` steps of `perTurn` effects each should write. */
function expectJournal(
  what: string,
  events: readonly JournalEvent[],
  steps: number,
  perTurn: number,
): void {
  const count = (type: JournalEvent["type"]) => events.filter((e) => e.type === type).length;
  const want: [JournalEvent["type"], number][] = [
    ["step.start", steps],
    ["step.end", steps],
    ["model.turn", steps * (perTurn > 0 ? 2 : 1)],
    ["effect.intent", steps * perTurn],
    ["effect.result", steps * perTurn],
    ["tool.denied", 0],
  ];
  const wrong = want.filter(([type, n]) => count(type) !== n);
  if (wrong.length > 0)
    throw new EngineBenchBroken(
      `${what}: the journal holds ${wrong.map(([type, n]) => `${count(type)} ${type} (expected ${n})`).join(", ")}`,
    );
}

/** What src/cli/commands/run.ts does at every checkpoint: state.json, written atomically. */
async function stateCheckpoints(
  store: RunStore,
  program: IrProgram,
): Promise<(c: Checkpoint) => Promise<void>> {
  const now = new Date().toISOString();
  const state: RunState = {
    run_id: "bench",
    workflow: program.entry,
    project: store.dir,
    ir_hash: program.hash,
    status: "running",
    iteration: 0,
    cursor: "",
    started_at: now,
    updated_at: now,
  };
  await store.writeState(state);
  // As terfyn run does (src/cli/commands/run.ts): progress at most every 100 ms, no fsync.
  let last = 0;
  return async (c) => {
    state.iteration = c.iteration;
    state.cursor = c.cursor;
    const t = Date.now();
    if (t - last < 100) return;
    last = t;
    state.updated_at = new Date().toISOString();
    await store.writeState(state, { durable: false });
  };
}

function runStart(program: IrProgram): JournalEvent {
  return {
    type: "run.start",
    run: "bench",
    workflow: program.entry,
    ir_hash: program.hash,
    input: INPUT,
  };
}

/** A run journaled to a real RunStore in `dir`, as `terfyn run` starts one (run.start first). */
async function storeRun(
  dir: string,
  setup: Setup,
  program: IrProgram,
  model: ModelPort,
  tools: ToolPort,
  cliCheckpoints = false,
): Promise<{ ms: number; outcome: RunOutcome; store: RunStore }> {
  const store = await RunStore.create(dir);
  await store.append(runStart(program));
  const checkpoint = cliCheckpoints ? await stateCheckpoints(store, program) : undefined;
  try {
    const t = performance.now();
    const outcome = await run({
      setup,
      program,
      model,
      tools,
      journal: store,
      ...(checkpoint ? { checkpoint } : {}),
    });
    return { ms: performance.now() - t, outcome, store };
  } finally {
    store.close();
  }
}

// ── Measurement helpers ───────────────────────────────────────────────────────────────────────

interface Series {
  median: number;
  min: number;
  max: number;
  /** In measurement order, so two series measured in the same rounds can be paired. */
  samples: number[];
}

function series(xs: number[]): Series {
  return { median: median(xs), min: Math.min(...xs), max: Math.max(...xs), samples: xs };
}

/** Round by round `a - b` (measured in the same rounds), as a series. */
function paired(a: Series, b: Series): Series {
  return series(a.samples.map((x, i) => x - (b.samples[i] ?? 0)));
}

/** Runs each measurement warm-up + reps times, alternating their order each round. */
async function measure(
  opts: EngineBenchOptions,
  fns: (() => Promise<number>)[],
): Promise<Series[]> {
  const out: number[][] = fns.map(() => []);
  for (let i = 0; i < opts.warmup + opts.reps; i++) {
    const order = fns.map((_, k) => k);
    if (i % 2 === 1) order.reverse();
    for (const k of order) {
      const ms = await (fns[k] as () => Promise<number>)();
      if (i >= opts.warmup) (out[k] as number[]).push(ms);
    }
  }
  return out.map(series);
}

const fmt = (x: number, digits = 3) => `${x.toFixed(digits)} ms`;
const spread = (s: Series, per: number, digits = 3) =>
  `min ${fmt(s.min / per, digits)}, max ${fmt(s.max / per, digits)}`;
const int = (n: number) => n.toLocaleString("en-US");

// ── The benchmark ─────────────────────────────────────────────────────────────────────────────

export async function runEngineBench(opts: EngineBenchOptions): Promise<EngineBenchResult> {
  const setup = buildSetup();
  await mkdir(opts.dir, { recursive: true });
  let seq = 0;
  const freshDir = (name: string) => join(opts.dir, `${name}-${++seq}`);
  const done = async (dir: string) => {
    if (!opts.keep) await rm(dir, { recursive: true, force: true });
  };
  /**
   * The disk's share: the same events a run journals (run.start included), appended alone to a
   * fresh RunStore. Measured in the same rounds as the run, so both see the same disk.
   */
  const appendAlone = (events: readonly JournalEvent[]) => async () => {
    const dir = freshDir("append");
    const store = await RunStore.create(dir);
    const t = performance.now();
    for (const e of events) await store.append(e);
    const ms = performance.now() - t;
    store.close();
    await done(dir);
    return ms;
  };
  try {
    // 1. Per agent step: fsync'd RunStore vs memory journal.
    const stepFsync = async () => {
      const dir = freshDir("steps");
      const tools = new NoopTools();
      const r = await storeRun(dir, setup, setup.steps, new StepModel(STEPS), tools);
      expectCompleted("steps (fsync journal)", r.outcome, STEPS);
      expectJournal("steps (fsync journal)", await r.store.readJournal(), STEPS, 0);
      if (tools.calls !== 0) throw new EngineBenchBroken("steps: a tool was called");
      await done(dir);
      return r.ms;
    };
    let stepEvents: JournalEvent[] = [];
    const stepMemory = async () => {
      const journal = new MemoryJournal();
      const t = performance.now();
      const outcome = await run({
        setup,
        program: setup.steps,
        model: new StepModel(STEPS),
        tools: new NoopTools(),
        journal,
      });
      const ms = performance.now() - t;
      expectCompleted("steps (memory journal)", outcome, STEPS);
      expectJournal("steps (memory journal)", journal.events, STEPS, 0);
      stepEvents = journal.events;
      return ms;
    };
    await stepMemory();
    const stepJournal = [runStart(setup.steps), ...stepEvents];
    const [stepF, stepM, stepA] = (await measure(opts, [
      stepFsync,
      stepMemory,
      appendAlone(stepJournal),
    ])) as [Series, Series, Series];

    // Informational: a step with `terfyn run`'s checkpoints too (state.json written atomically
    // and renamed into place by RunStore.writeState (no fsync: the journal is what resume trusts), at the loop's and at the agent's checkpoint).
    const cliCheckpoint = async () => {
      const dir = freshDir("steps-cli-checkpoints");
      const r = await storeRun(
        dir,
        setup,
        setup.steps,
        new StepModel(CLI_CHECKPOINT_STEPS),
        new NoopTools(),
        true,
      );
      expectCompleted("steps (state.json checkpoints)", r.outcome, CLI_CHECKPOINT_STEPS);
      await done(dir);
      return r.ms;
    };
    const [cliStep] = (await measure(opts, [cliCheckpoint])) as [Series];

    // 2. Per journaled effect.
    const effects = EFFECT_STEPS * CALLS_PER_TURN;
    const effectFsync = async () => {
      const dir = freshDir("effects");
      const tools = new NoopTools();
      const r = await storeRun(
        dir,
        setup,
        setup.effects,
        new EffectModel(EFFECT_STEPS, CALLS_PER_TURN),
        tools,
      );
      expectCompleted("effects (fsync journal)", r.outcome, EFFECT_STEPS);
      expectJournal(
        "effects (fsync journal)",
        await r.store.readJournal(),
        EFFECT_STEPS,
        CALLS_PER_TURN,
      );
      if (tools.calls !== effects)
        throw new EngineBenchBroken(`effects: ${tools.calls} tool calls, expected ${effects}`);
      await done(dir);
      return r.ms;
    };
    let effectEvents: JournalEvent[] = [];
    const effectMemory = async () => {
      const journal = new MemoryJournal();
      const tools = new NoopTools();
      const t = performance.now();
      const outcome = await run({
        setup,
        program: setup.effects,
        model: new EffectModel(EFFECT_STEPS, CALLS_PER_TURN),
        tools,
        journal,
      });
      const ms = performance.now() - t;
      expectCompleted("effects (memory journal)", outcome, EFFECT_STEPS);
      expectJournal("effects (memory journal)", journal.events, EFFECT_STEPS, CALLS_PER_TURN);
      if (tools.calls !== effects)
        throw new EngineBenchBroken(`effects: ${tools.calls} tool calls, expected ${effects}`);
      effectEvents = journal.events;
      return ms;
    };
    await effectMemory();
    const effectJournal = [runStart(setup.effects), ...effectEvents];
    const [effF, effM, effA] = (await measure(opts, [
      effectFsync,
      effectMemory,
      appendAlone(effectJournal),
    ])) as [Series, Series, Series];

    // 3. Resume of a 10,000+-event journal: produce it once, then replay it to completion.
    const resumeDir = join(opts.dir, "resume");
    const produced = await storeRun(
      resumeDir,
      setup,
      setup.effects,
      new EffectModel(RESUME_STEPS, CALLS_PER_TURN),
      new NoopTools(),
    );
    expectCompleted("resume journal", produced.outcome, RESUME_STEPS);
    const journalBytes = (await stat(produced.store.journalPath)).size;
    let journalEvents = 0;
    let checkpoints = 0;
    const readMs: number[] = [];
    const replayMs: number[] = [];
    const resumeOnce = async (withState: boolean) => {
      const t = performance.now();
      const store = new RunStore(resumeDir);
      const history = await store.readJournal();
      const t1 = performance.now();
      const forbidden = new ForbiddenPorts();
      const writeState = withState ? await stateCheckpoints(store, setup.effects) : undefined;
      let outcome: RunOutcome;
      try {
        outcome = await run({
          setup,
          program: setup.effects,
          model: forbidden.modelPort,
          tools: forbidden.toolPort,
          journal: forbidden.journalPort(store),
          history,
          checkpoint: async (c) => {
            forbidden.checkpoints++;
            if (writeState) await writeState(c);
          },
        });
      } finally {
        store.close();
      }
      const t2 = performance.now();
      if (forbidden.model > 0 || forbidden.tools > 0 || forbidden.appended > 0)
        throw new EngineBenchBroken(
          `resume did not only replay: ${forbidden.model} model turns, ${forbidden.tools} tool calls, ${forbidden.appended} new journal events`,
        );
      expectCompleted("resume", outcome, RESUME_STEPS);
      expectJournal("resume history", history, RESUME_STEPS, CALLS_PER_TURN);
      journalEvents = history.length;
      checkpoints = forbidden.checkpoints;
      if (!withState) {
        readMs.push(t1 - t);
        replayMs.push(t2 - t1);
      }
      return t2 - t;
    };
    const [resumeS] = (await measure(opts, [() => resumeOnce(false)])) as [Series];
    // Informational: as `terfyn run --resume`, which also writes state.json at every checkpoint
    // (the loop's, once per replayed iteration).
    const [resumeStateS] = (await measure(opts, [() => resumeOnce(true)])) as [Series];
    if (journalEvents < RESUME_MIN_EVENTS)
      throw new EngineBenchBroken(
        `the resume journal holds ${journalEvents} events, fewer than ${RESUME_MIN_EVENTS}`,
      );
    // The measured rounds' phases only (the first `warmup` were warm-up).
    const readM = median(readMs.slice(opts.warmup));
    const replayM = median(replayMs.slice(opts.warmup));

    const stepMs = stepF.median / STEPS;
    const effectMs = effF.median / effects;
    // The engine's share: the run with its fsync'd journal minus the same events appended alone.
    // Paired round by round, so a slow fsync hits both sides of the same difference. fsync
    // latency on a shared disk can swing past the engine's whole cost: a negative share means
    // the disk's noise exceeded the engine's share in those rounds (see "fsync latency").
    const stepShare = paired(stepF, stepA);
    const effectShare = paired(effF, effA);
    const stepEngineMs = stepShare.median / STEPS;
    const effectEngineMs = effectShare.median / effects;
    await mkdir(opts.dir, { recursive: true });
    const latency = fsyncLatency(opts.dir);
    const fsType = filesystemOf(opts.dir);
    const perEvent = (s: Series, events: number) => fmt(s.median / events);
    const rows: [string, string][] = [
      [
        "engine: project",
        `in memory: 1 external tool op (no effects), 2 agents, 2 workflows (while !s.done limit ${LOOP_LIMIT}); scripted model, no-op tools, checkpoint and progress`,
      ],
      [
        "  repetitions",
        `${opts.reps} measured after ${opts.warmup} warm-up (median); journals in ${opts.dir}${opts.keep ? "" : " (removed afterwards)"}`,
      ],
      [
        "steps",
        `${int(STEPS)} per run (${STEP_EVENTS} journal events each, ${int(stepJournal.length)} with run.start; no tool calls)`,
      ],
      [
        "ms/step (fsync journal)",
        `${fmt(stepMs)}  (run ${fmt(stepF.median, 1)}; ${spread(stepF, STEPS)}; RunStore, one fsync per event)`,
      ],
      [
        "  engine share/step",
        `${fmt(stepEngineMs)}  (median of each round's fsync run minus its journal alone, / ${int(STEPS)} steps; ${spread(stepShare, STEPS)}; memory-journal run ${fmt(stepM.median / STEPS)})`,
      ],
      [
        "ms/step (memory journal)",
        `${fmt(stepM.median / STEPS)}  (run ${fmt(stepM.median, 1)}; ${spread(stepM, STEPS)})`,
      ],
      [
        "  journal alone",
        `${fmt(stepA.median, 1)}  (the run's events appended to a RunStore alone, same rounds: ${perEvent(stepA, stepJournal.length)}/event)`,
      ],
      [
        "  ms/step with state.json",
        `${fmt(cliStep.median / CLI_CHECKPOINT_STEPS)}  (informational: as terfyn run, fsync journal + writeState at the 2 checkpoints a step; ${int(CLI_CHECKPOINT_STEPS)} steps)`,
      ],
      [
        "effects",
        `${int(effects)} per run (${EFFECT_STEPS} steps x ${CALLS_PER_TURN} tool calls on one turn; ${int(effectJournal.length)} journal events)`,
      ],
      [
        "ms/effect (fsync journal)",
        `${fmt(effectMs)}  (run ${fmt(effF.median, 1)} / effects: intent + result fsync'd, and the steps' own events; ${spread(effF, effects)})`,
      ],
      [
        "  engine share/effect",
        `${fmt(effectEngineMs)}  (median of each round's fsync run minus its journal alone, / ${int(effects)} effects; ${spread(effectShare, effects)}; memory-journal run ${fmt(effM.median / effects)})`,
      ],
      [
        "ms/effect (memory journal)",
        `${fmt(effM.median / effects)}  (run ${fmt(effM.median, 1)}; ${spread(effM, effects)})`,
      ],
      [
        "  journal alone",
        `${fmt(effA.median, 1)}  (the run's events appended to a RunStore alone, same rounds: ${perEvent(effA, effectJournal.length)}/event)`,
      ],
      [
        "journal events",
        `${int(journalEvents)}  (${RESUME_STEPS} steps x ${CALLS_PER_TURN} effects, ${(journalBytes / 1024 / 1024).toFixed(1)} MiB; produced in ${fmt(produced.ms, 0)})`,
      ],
      [
        "resume ms",
        `${fmt(resumeS.median, 1)}  (readJournal ${fmt(readM, 1)} + runProgram ${fmt(replayM, 1)}; min ${fmt(resumeS.min, 1)}, max ${fmt(resumeS.max, 1)}; model 0, tools 0, new events 0, ${checkpoints} checkpoints)`,
      ],
      [
        "  resume with state.json",
        `${fmt(resumeStateS.median, 1)}  (informational: as terfyn run --resume, writeState at each of the ${checkpoints} checkpoints; min ${fmt(resumeStateS.min, 1)}, max ${fmt(resumeStateS.max, 1)})`,
      ],
    ];
    rows.push(
      [
        "fsync latency",
        `${fmt(latency.file.median)} per file fsync (min ${fmt(latency.file.min)}, max ${fmt(latency.file.max)}, 100 appends); directory fsync ${latency.dirSupported ? `${fmt(latency.dir.median)} (min ${fmt(latency.dir.min)}, max ${fmt(latency.dir.max)})` : "not supported here (skipped)"}`,
      ],
      ["filesystem", `${fsType}  (${opts.dir})`],
    );
    const perStep = (x: Series) =>
      medianAndSpread(x.median / STEPS, x.min / STEPS, x.max / STEPS, opts.reps, " ms", 3);
    const perEffect = (x: Series) =>
      medianAndSpread(x.median / effects, x.min / effects, x.max / effects, opts.reps, " ms", 3);
    const targets: Target[] = [
      [
        `ms/step (fsync journal) <= ${TARGET_STEP_MS} ms`,
        stepMs <= TARGET_STEP_MS,
        `${(stepMs / TARGET_STEP_MS).toFixed(2)}x the target: ${perStep(stepF)}; engine share ${fmt(stepEngineMs)}`,
      ],
      [
        `ms/effect incl. 2 fsyncs <= ${TARGET_EFFECT_MS} ms`,
        effectMs <= TARGET_EFFECT_MS,
        `${(effectMs / TARGET_EFFECT_MS).toFixed(2)}x the target: ${perEffect(effF)}; engine share ${fmt(effectEngineMs)}, fsync ${fmt(latency.file.median)} on ${fsType.split(" ")[0]}`,
      ],
      [
        `resume of ${int(RESUME_MIN_EVENTS)}+ events < ${TARGET_RESUME_MS} ms`,
        resumeS.median < TARGET_RESUME_MS,
        `${(resumeS.median / TARGET_RESUME_MS).toFixed(2)}x the target: ${medianAndSpread(resumeS.median, resumeS.min, resumeS.max, opts.reps)}`,
      ],
    ];
    return { rows, targets };
  } finally {
    if (!opts.keep) await rm(opts.dir, { recursive: true, force: true });
  }
}
