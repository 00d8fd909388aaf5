/**
 * `terfyn run workflow/NAME …` and `terfyn run --resume DIR`: execute a workflow on execir
 * with the capability gate, the sandboxed workspace, a journal and exact resume. Progress on
 * stderr; the result as JSON on stdout. Exit 0 completed, 2 awaiting approval, 1 otherwise.
 */
import { randomBytes } from "node:crypto";
import { relative, resolve } from "node:path";
import { RunDirectoryError, type RunState, RunStore } from "../../adapters/fs/run-store.ts";
import { ModelRouter } from "../../adapters/models/model-router.ts";
import { ScriptedModel } from "../../adapters/models/model-script.ts";
import {
  budgeted,
  describeSpend,
  loadPriceTable,
  type ModelSpend,
} from "../../adapters/review/model-budget.ts";
import { openSandbox } from "../../adapters/sandbox/open-sandbox.ts";
import type { Sandbox } from "../../adapters/sandbox/sandbox.ts";
import { buildToolPort } from "../../adapters/workspace/tool-router.ts";
import { type RunOutcome, runProgram } from "../../core/engine/interpreter.ts";
import { compileProgram } from "../../core/engine/ir.ts";
import type { JournalEvent } from "../../core/engine/journal.ts";
import { schemaIssues } from "../../core/engine/values.ts";
import { addUsage, type PriceTable, type TokenCounts } from "../../core/model/prices.ts";
import { nestingProblem } from "../../core/nesting.ts";
import { renderApprovalSubject } from "../../core/render/approval-text.ts";
import { escapeTerminalText } from "../../core/render/terminal-text.ts";
import {
  environmentDrift,
  type RunEnvironment,
  resolveRunEnvironment,
} from "../../core/runs/run-environment.ts";
import type { LockOwner } from "../../core/runs/run-lock.ts";
import { didYouMean } from "../../core/suggest.ts";
import { plural } from "../../core/words.ts";
import { parseFlags, wholeNumber } from "../args.ts";
import {
  readFileArg,
  readStdinFor,
  refuseStdinDirectories,
  refuseTwoStdinReaders,
  STDIN,
  STDIN_LABEL,
} from "../file-args.ts";
import { type CliIo, UsageError, UserError } from "../io.ts";
import { signalExitCode, watchSignals } from "../signals.ts";
import { loadProject, printDiagnostics } from "./project-context.ts";
import { refuseMisplacedRunDir, refuseUsedRunDir, takeRunLock } from "./run-directory.ts";

export const RUN_HELP = `Usage: terfyn run workflow/NAME --project DIR --input-file FILE [--model-script FILE] [--run-dir DIR]
                  [--max-model-calls N] [--max-tokens N] [--prices FILE]
       terfyn run --resume RUN_DIR [--model-script FILE] [--max-model-calls N] [--max-tokens N] [--prices FILE]

Run a workflow. Loops run at most their limit; every tool call is checked against the calling
agent's grants (a call outside them is denied and journaled; nothing executes); workspace
reads and writes stay inside the sandbox root; gated grants and approve statements pause the
run until \`terfyn approve\`. Every step and effect is journaled, and --resume continues
without repeating a completed effect.

Progress goes to stderr (each call, and how it ended: refused by the sandbox or by its input
schema, tests passed or failed); the workflow's result is printed as JSON on stdout. A pause
shows exactly what is approved: the operation and every input field, a long value folded with
its size and sha256 (\`terfyn runs show RUN_DIR --json\` has it in full).

SIGINT or SIGTERM stops the run: a running tool's process group is killed (SIGTERM, then
SIGKILL after 2 s; a second signal kills it and exits at once), the interruption is journaled,
and the resume command is printed. A cut-short call that is not idempotent may have had its
effect, so resuming stops there as in doubt; an idempotent one is issued again.

Exit 0 completed, 2 awaiting approval, 1 failed, in doubt, or bad input, 130 interrupted by
SIGINT, 143 by SIGTERM.

Options:
  --project DIR        the directory holding terfyn.yaml (default: .)
  --input-file FILE    JSON input for the workflow's parameter (an object keyed by parameter
                       name when it has several); - reads it from standard input
  --model-script FILE  drive every agent with this model script (offline, deterministic);
                       - reads it from standard input, and the run keeps a copy for --resume
  --run-dir DIR        where to keep the run (default: the project's runs directory/<run id>)
  --resume RUN_DIR     continue a run that paused or stopped
  --max-model-calls N  the most model calls the run may make over all its sessions (default:
                       no budget beyond each agent's maxTurns); past it the next call is
                       refused and the run fails, resumable with a larger budget
  --max-tokens N       the most tokens (input of every kind and output, as the model reports
                       them) the run may spend over all its sessions
  --prices FILE        the price table for the cost estimate (YAML: provider/model: { input,
                       output, cacheWrite?, cacheRead? } in US dollars per million tokens), laid
                       over the shipped prices; default TERFYN_PRICES (docs/cli.md)
  --unconfined         run run_tests and command tools WITHOUT the sandbox, with this
                       process's own powers, files and network (say so only for code you
                       trust; the first line of the run's output says it)
  -h, --help           show this help

The workspace tool's sandbox root and test command come from its declaration in .agent
(tool NAME { workspace { root "…" testCommand "…" } }), else TERFYN_WORKSPACE_ROOT and
TERFYN_WORKSPACE_TEST_COMMAND. Command and http tools run as their Tool resource declares
(docs/tools.md); an external tool cannot run.

run_tests and command tools execute inside a bubblewrap sandbox (docs/sandbox.md): only their
directory writable, the run directory and state hidden, no network, nothing left running.
Where no sandbox can be made the run is refused, saying what to install or enable.
`;

export async function runCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags("run", argv, {
    project: { type: "string" },
    "input-file": { type: "string" },
    "model-script": { type: "string" },
    "run-dir": { type: "string" },
    resume: { type: "string" },
    unconfined: { type: "boolean" },
    "max-model-calls": { type: "string" },
    "max-tokens": { type: "string" },
    prices: { type: "string" },
  });
  if (values.help) {
    io.stdout(RUN_HELP);
    return 0;
  }
  const scriptArg = values["model-script"] as string | undefined;
  const unconfined = values.unconfined === true;
  const spending: Spending = {
    budget: {
      ...optional("calls", wholeNumber("run", values["max-model-calls"], "--max-model-calls")),
      ...optional("tokens", wholeNumber("run", values["max-tokens"], "--max-tokens")),
    },
    prices: await loadPrices(values.prices as string | undefined, io),
  };
  refuseTwoStdinReaders("run", {
    "--input-file": values["input-file"],
    "--model-script": scriptArg,
  });
  refuseStdinDirectories("run", {
    "--project": { value: values.project, what: "the directory holding terfyn.yaml" },
    "--run-dir": { value: values["run-dir"], what: "where the run is kept" },
    "--resume": { value: values.resume, what: "the run directory to continue" },
  });
  if (values.resume !== undefined) {
    if (
      positionals.length > 0 ||
      values["input-file"] !== undefined ||
      values["run-dir"] !== undefined
    ) {
      throw new UsageError(
        "run: --resume RUN_DIR takes no workflow, --input-file or --run-dir (they are in the run directory)",
      );
    }
    return resumeRun(resolve(io.cwd, values.resume as string), scriptArg, io, unconfined, spending);
  }
  const target = positionals[0];
  if (target === undefined || positionals.length > 1)
    throw new UsageError("run: name one workflow, as workflow/NAME");
  const m = /^[Ww]orkflow\/([A-Za-z_][A-Za-z0-9_]*)$/.exec(target);
  if (!m) throw new UsageError(`run: \`${target}\` is not of the form workflow/NAME`);
  const workflow = m[1] as string;
  if (values["input-file"] === undefined)
    throw new UsageError("run: --input-file FILE is required (the workflow's input as JSON)");

  const ctx = await loadProject(io, values.project as string | undefined);
  const errors = ctx.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) {
    printDiagnostics(io, ctx, errors, io.stderr);
    throw new UserError(
      `${ctx.where} has ${plural(errors.length, "error")}; fix them (terfyn validate) before running`,
    );
  }
  const project = ctx.validation.project;
  const wf = project.workflows.get(workflow);
  if (!wf) {
    const hint = didYouMean(workflow, project.workflows.keys());
    throw new UserError(
      `no workflow ${workflow} in ${ctx.where}${hint ? ` (${hint.replace("`", "`workflow/")})` : ""}; workflows: ${[...project.workflows.keys()].join(", ") || "(none)"}`,
    );
  }

  const inputArg = values["input-file"] as string;
  let inputText: string;
  try {
    inputText = await readFileArg(io, "--input-file", inputArg);
  } catch (e) {
    if (e instanceof UserError) throw e;
    throw new UserError(
      (e as NodeJS.ErrnoException).code === "ENOENT"
        ? `input file ${inputArg} does not exist`
        : `cannot read input file ${inputArg}: ${(e as Error).message}`,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(inputText);
  } catch (e) {
    throw new UserError(`input file ${inputArg} is not valid JSON: ${(e as Error).message}`);
  }
  // Checked before anything recursive (schema checks, JSON.stringify, hashing) touches it.
  if (nestingProblem(raw, MAX_INPUT_DEPTH) !== undefined) {
    throw new UserError(
      `input file ${values["input-file"]} nests deeper than ${MAX_INPUT_DEPTH} levels; a workflow input that deep is not supported: flatten it`,
    );
  }
  const args =
    wf.params.length === 1
      ? [raw]
      : wf.params.map((p) => (raw as Record<string, unknown> | null)?.[p.name]);
  for (const [i, p] of wf.params.entries()) {
    const schema = project.schemas.get(p.type)?.schema;
    const issues = schema ? schemaIssues(schema, args[i]) : [];
    if (issues.length > 0)
      throw new UserError(
        `input file ${values["input-file"]} does not match ${p.type} (parameter ${p.name}): ${issues.join("; ")}`,
      );
  }

  const runId = `${new Date().toISOString().replace(/[-:]/g, "").replace(/\..*$/, "").replace("T", "-")}-${randomBytes(3).toString("hex")}`;
  const runDir =
    values["run-dir"] !== undefined
      ? resolve(io.cwd, values["run-dir"] as string)
      : resolve(ctx.root, project.settings.runsPath, runId);
  // A script on standard input is kept in the run directory once it exists (startRun), and
  // that copy is what the run records for --resume: standard input is not there again.
  const scriptText = scriptArg === STDIN ? await readStdinFor(io, "--model-script") : undefined;
  const scriptPath =
    scriptArg !== undefined
      ? scriptArg === STDIN
        ? undefined
        : resolve(io.cwd, scriptArg)
      : project.settings.modelScript !== undefined
        ? resolve(ctx.root, project.settings.modelScript)
        : undefined;
  const script =
    scriptText !== undefined
      ? ScriptedModel.parse(STDIN_LABEL, scriptText)
      : scriptPath !== undefined
        ? await ScriptedModel.load(scriptPath)
        : undefined;
  const program = compileProgram(project, workflow);
  const prepared = await prepare(project, program, script, ctx.root, io, {
    unconfined,
    hide: hiddenFromExecutedCode(ctx.root, project, runDir),
  });
  const environment = resolveRunEnvironment(project, program, {
    projectRoot: ctx.root,
    cwd: io.cwd,
    env: io.env,
  });
  refuseMisplacedRunDir(io, runDir, workspaceGuards(environment), "--run-dir");
  const store = await RunStore.create(runDir, io.env);
  const lock = takeRunLock(io, runDir, `terfyn run ${target}`);
  try {
    refuseUsedRunDir(io, runDir, "terfyn run --resume");
    store.guard = () => lock.verify();
    return await startRun(io, store, {
      runId,
      workflow,
      root: ctx.root,
      program,
      project,
      prepared,
      environment,
      scriptPath,
      scriptText,
      scriptArg,
      raw,
      args,
      params: wf.params.length,
      spending,
    });
  } finally {
    lock.release();
  }
}

/** What the commands a run executes must not see, even inside their directory: the runs, the state. */
function hiddenFromExecutedCode(
  root: string,
  project: import("../../core/model/project.ts").ResolvedProject,
  runDir: string,
): string[] {
  return [
    resolve(root, project.settings.runsPath),
    runDir,
    resolve(root, project.settings.statePath),
  ];
}

/** The workspace roots a run directory must stay out of. */
function workspaceGuards(environment: RunEnvironment): { label: string; path: string }[] {
  return environment.workspaces.map((w) => ({
    label: `the workspace root of tool ${w.tool} (from ${w.root_from === "declaration" ? "its declaration" : "TERFYN_WORKSPACE_ROOT"})`,
    path: w.root,
  }));
}

async function startRun(
  io: CliIo,
  store: RunStore,
  x: {
    runId: string;
    workflow: string;
    root: string;
    program: import("../../core/engine/ir.ts").IrProgram;
    project: import("../../core/model/project.ts").ResolvedProject;
    prepared: Prepared;
    environment: RunEnvironment;
    scriptPath: string | undefined;
    /** The model script's text when it came from standard input: kept in the run directory. */
    scriptText: string | undefined;
    scriptArg: string | undefined;
    raw: unknown;
    args: unknown[];
    params: number;
    spending: Spending;
  },
): Promise<number> {
  const { runId, workflow, program, scriptArg, raw, args } = x;
  let scriptPath = x.scriptPath;
  if (x.scriptText !== undefined) {
    scriptPath = await store.writeModelScript(x.scriptText);
    // Named by its copy from here on, as a resume will name it.
    x.prepared.script = ScriptedModel.parse(scriptPath, x.scriptText);
  }
  const runDir = store.dir;
  const now = () => (io.now?.() ?? new Date()).toISOString();
  const state: RunState = {
    run_id: runId,
    workflow,
    project: x.root,
    ir_hash: program.hash,
    status: "running",
    iteration: 0,
    cursor: "",
    environment: x.environment,
    started_at: now(),
    updated_at: now(),
  };
  if (scriptPath !== undefined) state.model_script = scriptPath;
  if (scriptArg !== undefined) (state as RunState & { force_script?: boolean }).force_script = true;
  if (Object.keys(x.spending.budget).length > 0) state.budget = x.spending.budget;
  await store.writeInput(x.params === 1 ? args[0] : raw);
  await store.writeState(state);
  io.stderr(
    `terfyn: run ${runId} of workflow ${workflow} in ${relative(io.cwd, runDir) || runDir}\n`,
  );
  await store.append({
    type: "run.start",
    run: runId,
    workflow,
    ir_hash: program.hash,
    input: raw,
  });
  return execute({
    io,
    store,
    state,
    project: x.project,
    program,
    args,
    history: [],
    prepared: x.prepared,
    forceScript: scriptArg !== undefined,
    prices: x.spending.prices,
  });
}

async function resumeRun(
  runDir: string,
  scriptArg: string | undefined,
  io: CliIo,
  unconfined: boolean,
  spending: Spending,
): Promise<number> {
  const store = new RunStore(runDir, io.env);
  // Read first, without the lock: a directory that is not a run is refused before anything is
  // created in it. Everything from here on is read again under the lock.
  await store.readState();
  const lock = takeRunLock(io, runDir, `terfyn run --resume`);
  try {
    store.guard = () => lock.verify();
    return await resumeLocked(store, scriptArg, io, lock.tookOver, unconfined, spending);
  } finally {
    lock.release();
  }
}

async function resumeLocked(
  store: RunStore,
  scriptArg: string | undefined,
  io: CliIo,
  tookOver: LockOwner | undefined,
  unconfined: boolean,
  spending: Spending,
): Promise<number> {
  const runDir = store.dir;
  const state = (await store.readState()) as RunState & { force_script?: boolean };
  const shown = relative(io.cwd, runDir) || runDir;
  if (state.status === "completed") {
    io.stderr(`terfyn: run ${state.run_id} already completed\n`);
    io.stdout(`${JSON.stringify(state.result, null, 2)}\n`);
    return 0;
  }
  if (state.status === "in-doubt") {
    throw new UserError(
      `run ${state.run_id} stopped in doubt: ${state.error ?? "an effect's outcome is unknown"}`,
    );
  }
  const ctx = await loadProject(io, state.project);
  const errors = ctx.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) {
    printDiagnostics(io, ctx, errors, io.stderr);
    throw new UserError(
      `the project of run ${state.run_id} now has ${plural(errors.length, "error")}; it cannot be resumed`,
    );
  }
  const project = ctx.validation.project;
  if (!project.workflows.has(state.workflow))
    throw new UserError(
      `workflow ${state.workflow} no longer exists in ${ctx.where}; the run cannot be resumed`,
    );
  const program = compileProgram(project, state.workflow);
  const environment = resolveRunEnvironment(project, program, {
    projectRoot: ctx.root,
    cwd: io.cwd,
    env: io.env,
  });
  if (state.environment !== undefined) {
    const drift = environmentDrift(state.environment, environment);
    if (drift.length > 0) {
      throw new UserError(
        `run ${state.run_id} cannot be resumed as it was approved: ${drift.join("; ")}`,
      );
    }
  }
  refuseMisplacedRunDir(io, runDir, workspaceGuards(environment), "new run directory");
  if (program.hash !== state.ir_hash) {
    throw new UserError(
      `the project changed since run ${state.run_id} started (IR ${state.ir_hash} -> ${program.hash}); resuming would run different agents, grants or steps than the run began with. Start a new run.`,
    );
  }
  const wf = project.workflows.get(state.workflow);
  const input = await store.readInput();
  const args =
    wf && wf.params.length === 1
      ? [input]
      : (wf?.params ?? []).map((p) => (input as Record<string, unknown> | null)?.[p.name]);
  const history = await store.readJournal();
  const last = history.at(-1);
  if (last?.type === "run.end" && last.status === "completed") {
    // Killed after the run ended but before state.json said so: record it, repeat nothing.
    await store.writeState({
      ...state,
      status: "completed",
      result: last.result,
      updated_at: (io.now?.() ?? new Date()).toISOString(),
    });
    io.stderr(`terfyn: run ${state.run_id} had already completed\n`);
    io.stdout(`${JSON.stringify(last.result, null, 2)}\n`);
    return 0;
  }
  // A script given again on resume is this session's only; standard input is read here, once.
  const script =
    scriptArg === STDIN
      ? ScriptedModel.parse(STDIN_LABEL, await readStdinFor(io, "--model-script"))
      : scriptArg !== undefined || state.model_script !== undefined
        ? await ScriptedModel.load(
            scriptArg !== undefined ? resolve(io.cwd, scriptArg) : (state.model_script as string),
          )
        : undefined;
  const prepared = await prepare(project, program, script, ctx.root, io, {
    unconfined,
    hide: hiddenFromExecutedCode(ctx.root, project, runDir),
  });
  io.stderr(
    `terfyn: resuming run ${state.run_id} (${history.length} journaled events) in ${shown}\n`,
  );
  await store.append({
    type: "run.resume",
    ir_hash: program.hash,
    ...(tookOver
      ? { took_over: { pid: tookOver.pid, host: tookOver.host, since: tookOver.since } }
      : {}),
  });
  // A budget given again replaces the run's (a run refused at its budget goes on with a larger one).
  const budget = { ...state.budget, ...spending.budget };
  return execute({
    io,
    store,
    state: {
      ...state,
      status: "running",
      ...(Object.keys(budget).length > 0 ? { budget } : {}),
    },
    prices: spending.prices,
    project,
    program,
    args,
    history,
    prepared,
    forceScript: scriptArg !== undefined || state.force_script === true,
  });
}

interface ExecuteInput {
  io: CliIo;
  store: RunStore;
  state: RunState;
  project: import("../../core/model/project.ts").ResolvedProject;
  program: import("../../core/engine/ir.ts").IrProgram;
  args: unknown[];
  history: JournalEvent[];
  prepared: Prepared;
  forceScript: boolean;
  prices: PriceTable;
}

/** A run's model budgets, and what its cost is estimated with. */
interface Spending {
  budget: { calls?: number; tokens?: number };
  prices: PriceTable;
}

/** `{ [key]: value }` when the value is given, else nothing. */
function optional<K extends string>(key: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, number>);
}

async function loadPrices(path: string | undefined, io: CliIo): Promise<PriceTable> {
  try {
    return await loadPriceTable(path === undefined ? undefined : resolve(io.cwd, path), io.env);
  } catch (e) {
    throw new UserError(`run: ${(e as Error).message}`);
  }
}

/**
 * What the run's model calls spent, from its journal: every answered turn of every session
 * (a resume asks no turn the journal holds, so nothing is counted twice).
 */
function spendOf(history: readonly JournalEvent[], budget: RunState["budget"]): ModelSpend {
  const spend: ModelSpend = {
    calls: 0,
    limit: budget?.calls ?? Number.POSITIVE_INFINITY,
    input_tokens: 0,
    output_tokens: 0,
    token_limit: budget?.tokens ?? Number.POSITIVE_INFINITY,
    by_model: {},
  };
  for (const e of history) {
    if (e.type !== "model.turn") continue;
    spend.calls++;
    if (!e.usage) continue;
    addUsage(spend.by_model as Record<string, TokenCounts>, e.model ?? "unknown", e.usage);
    spend.input_tokens += e.usage.input_tokens;
    spend.output_tokens += e.usage.output_tokens;
    if (e.usage.cache_creation_input_tokens)
      spend.cache_creation_input_tokens =
        (spend.cache_creation_input_tokens ?? 0) + e.usage.cache_creation_input_tokens;
    if (e.usage.cache_read_input_tokens)
      spend.cache_read_input_tokens =
        (spend.cache_read_input_tokens ?? 0) + e.usage.cache_read_input_tokens;
  }
  return spend;
}

interface Prepared {
  script: ScriptedModel | undefined;
  tools: import("../../core/engine/ports.ts").ToolPort;
  /** Aborted on SIGINT/SIGTERM while the run executes; the tools kill their process groups. */
  interrupt: AbortController;
  /** This session's tools execute code without the sandbox (`--unconfined`). */
  unconfined: boolean;
}

/** Everything that can be wrong before a run starts: the sandbox root, the test command. */
async function prepare(
  project: import("../../core/model/project.ts").ResolvedProject,
  program: import("../../core/engine/ir.ts").IrProgram,
  script: ScriptedModel | undefined,
  projectRoot: string,
  io: CliIo,
  confinement: { unconfined: boolean; hide: string[] },
): Promise<Prepared> {
  const interrupt = new AbortController();
  let sandbox: Promise<Sandbox> | undefined;
  const tools = await buildToolPort(project, program, {
    projectRoot,
    cwd: io.cwd,
    env: io.env,
    signal: interrupt.signal,
    hide: confinement.hide,
    sandbox: () => {
      sandbox ??= openSandbox({ env: io.env, unconfined: confinement.unconfined }).then((s) => {
        // Said first, before anything runs, and again in the result's report line.
        if (!s.confined) io.stderr(`terfyn: ${s.description}\n`);
        return s;
      });
      return sandbox;
    },
  });
  // Opened while the tools were set up, when any of them executes code.
  const unconfined = sandbox !== undefined && !(await sandbox).confined;
  return { script, tools, interrupt, unconfined };
}

async function execute(x: ExecuteInput): Promise<number> {
  const { io, store } = x;
  const now = () => (io.now?.() ?? new Date()).toISOString();
  const state = { ...x.state };
  delete state.awaiting;
  // Kept once any session ran without the sandbox: `terfyn runs show` says it first.
  if (x.prepared.unconfined) state.unconfined = true;
  let lastCheckpoint = 0;
  const spend = spendOf(x.history, state.budget);
  /** Said on stderr and kept in state.json however the session ends. */
  const spent = () => {
    if (spend.calls === 0) return;
    state.spend = describeSpend(spend, x.prices);
    io.stderr(`terfyn: model spend: ${escapeTerminalText(state.spend)}\n`);
  };
  const watch = watchSignals(io, x.prepared.interrupt, "a running tool's process group is killed");
  try {
    const { script, tools } = x.prepared;
    const approvals = new Set((await store.readApprovals()).map((a) => a.hash));
    const outcome: RunOutcome = await runProgram({
      runId: state.run_id,
      project: x.project,
      program: x.program,
      input: x.args[0],
      history: x.history,
      approvals,
      signal: x.prepared.interrupt.signal,
      ports: {
        model: budgeted(
          new ModelRouter({
            ...(script ? { script } : {}),
            forceScript: x.forceScript && script !== undefined,
            providers: Object.fromEntries(
              [...x.project.providerSettings].map(([name, p]) => [name, p.settings]),
            ),
            env: io.env,
          }),
          spend,
          async () => {},
          { calls: "--max-model-calls", tokens: "--max-tokens" },
        ),
        tools,
        journal: store,
        checkpoint: async (c) => {
          state.iteration = c.iteration;
          state.cursor = c.cursor;
          // state.json is for people and `terfyn runs`; the journal is what resume trusts. So
          // progress is written at most every 100 ms, without fsync; every ending is written durably.
          const t = Date.now();
          if (t - lastCheckpoint < CHECKPOINT_INTERVAL_MS) return;
          lastCheckpoint = t;
          state.updated_at = now();
          await store.writeState(state, { durable: false });
        },
        // Progress quotes model output and tool inputs: untrusted, so escaped.
        progress: (line) => io.stderr(`terfyn: ${escapeTerminalText(line)}\n`),
      },
    });
    spent();
    return await finish(io, store, state, outcome, now, watch.received);
  } catch (e) {
    // Bad input found while running (a damaged approvals log) is the user's to fix: the run
    // is left as it was, not marked failed.
    if (e instanceof UserError || e instanceof UsageError || e instanceof RunDirectoryError)
      throw e;
    const message = (e as Error).message;
    spent();
    state.status = "failed";
    state.error = message;
    state.updated_at = now();
    await store.append({ type: "run.end", status: "failed", error: message });
    await store.writeState(state);
    io.stderr(`terfyn run: failed: ${escapeTerminalText(message)}\n`);
    return 1;
  } finally {
    watch.dispose();
    store.close();
  }
}

const CHECKPOINT_INTERVAL_MS = 100;
/** Far deeper than any workflow state has reason to be, and well inside the stack. */
const MAX_INPUT_DEPTH = 200;

async function finish(
  io: CliIo,
  store: RunStore,
  state: RunState,
  outcome: RunOutcome,
  now: () => string,
  signal: NodeJS.Signals | undefined,
): Promise<number> {
  state.updated_at = now();
  const dir = relative(io.cwd, store.dir) || store.dir;
  switch (outcome.status) {
    case "completed":
      state.status = "completed";
      state.result = outcome.result;
      await store.append({ type: "run.end", status: "completed", result: outcome.result });
      await store.writeState(state);
      io.stderr(`terfyn: completed\n`);
      io.stdout(`${JSON.stringify(outcome.result, null, 2)}\n`);
      return 0;
    case "awaiting-approval":
      state.status = "awaiting-approval";
      state.awaiting = {
        hash: outcome.hash,
        step: outcome.step,
        label: outcome.label,
        kind: outcome.kind,
        subject: outcome.subject,
      };
      await store.writeState(state);
      // What the approver reads is what runs: the operation and every input field, in full
      // (a long value folded with its size and sha256; `runs show DIR --json` has it whole).
      io.stderr(
        `terfyn: paused for approval of ${escapeTerminalText(outcome.label)}\n${renderApprovalSubject(
          outcome.subject,
          { runDir: dir },
        )
          .map((l) => `${l}\n`)
          .join(
            "",
          )}  approve with: terfyn approve --run ${escapeTerminalText(dir)} --hash ${outcome.hash}\n  then resume:  terfyn run --resume ${escapeTerminalText(dir)}\n`,
      );
      return 2;
    case "interrupted": {
      if (outcome.unavailable !== undefined && signal === undefined) {
        // The model's API did not answer: nothing of the step was kept; the run resumes there.
        await store.append({
          type: "run.interrupted",
          signal: "none",
          step: outcome.step,
          unavailable: outcome.unavailable,
        });
        state.status = "interrupted";
        state.error = `the model's API did not answer (${outcome.unavailable}); the run stopped at ${outcome.step}, with its approvals and the answers it had`;
        await store.writeState(state);
        io.stderr(
          `terfyn run: ${escapeTerminalText(state.error)}\n  when the API answers again, resume with: terfyn run --resume ${escapeTerminalText(dir)}\n`,
        );
        return 1;
      }
      const sig = signal ?? "SIGINT";
      const call = outcome.in_flight;
      const inDoubt = call !== undefined && !call.idempotent;
      await store.append({
        type: "run.interrupted",
        signal: sig,
        step: outcome.step,
        ...(call ? { in_flight: { ...call, in_doubt: inDoubt } } : {}),
      });
      state.status = "interrupted";
      state.error = call
        ? `interrupted by ${sig} during ${call.tool} (${call.key}): ${inDoubt ? "it is not idempotent and may have had its effect, so a resume stops there in doubt" : "idempotent, so a resume issues it again"}`
        : `interrupted by ${sig}`;
      await store.writeState(state);
      io.stderr(
        `terfyn: ${escapeTerminalText(state.error)}\n  resume with: terfyn run --resume ${escapeTerminalText(dir)}\n`,
      );
      return signalExitCode(sig);
    }
    case "in-doubt":
      state.status = "in-doubt";
      state.error = outcome.error;
      await store.append({ type: "run.end", status: "in-doubt", error: outcome.error });
      await store.writeState(state);
      io.stderr(`terfyn run: in doubt: ${escapeTerminalText(outcome.error)}\n`);
      return 1;
    default:
      state.status = "failed";
      state.error = outcome.error;
      await store.append({ type: "run.end", status: "failed", error: outcome.error });
      await store.writeState(state);
      io.stderr(`terfyn run: failed: ${escapeTerminalText(outcome.error)}\n`);
      return 1;
  }
}
