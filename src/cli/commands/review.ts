/**
 * `terfyn review --repo PATH --request FILE --run-dir DIR [--model-script FILE]` and
 * `terfyn review --resume DIR` and `terfyn review --stop DIR`: a review-response run in local
 * mode, from a plain request file,
 * with no GitHub at all. Exit 0 when the run ended done, done-but-unproven or nothing-to-do, 2
 * when a gate awaits approval (report.md says which, and the command that approves it), 1 when
 * it ended bad-input, stuck or not-approved, and on errors. The terminal state is in state.json
 * and report.md.
 */

import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import writeFileAtomic from "write-file-atomic";
import {
  agentsCacheKey,
  readAgentsCache,
  writeAgentsCache,
} from "../../adapters/fs/agents-cache.ts";
import { readProjectDirectory } from "../../adapters/fs/read-project.ts";
import { gitToplevel } from "../../adapters/fs/real-path.ts";
import { ReviewRunStore } from "../../adapters/fs/review-run-store.ts";
import { RunLockHeldError } from "../../adapters/fs/run-lock.ts";
import { MODEL_SCRIPT_COPY } from "../../adapters/fs/run-store.ts";
import { ModelRouter, modelProblem } from "../../adapters/models/model-router.ts";
import { ScriptedModel } from "../../adapters/models/model-script.ts";
import { localEffects } from "../../adapters/review/local-effects.ts";
import {
  budgeted,
  defaultModelBudget,
  defaultTokenBudget,
  describeSpend,
  loadPriceTable,
  readSpendFile,
} from "../../adapters/review/model-budget.ts";
import { openSandbox } from "../../adapters/sandbox/open-sandbox.ts";
import { type Sandbox, SandboxUnavailable } from "../../adapters/sandbox/sandbox.ts";
import type { RuntimeProject } from "../../core/engine/runtime-project.ts";
import { parseAgentModels } from "../../core/model/agent-models.ts";
import type { PriceTable } from "../../core/model/prices.ts";
import { escapeTerminalText } from "../../core/render/terminal-text.ts";
import {
  abandonedRecord,
  isAbandoned,
  type ReviewPorts,
  runReview,
  stopReview,
} from "../../core/review/orchestrator.ts";
import type { TerminalState } from "../../core/review/phases.ts";
import { DoctrineSteps } from "../../core/review/steps.ts";
import { plural } from "../../core/words.ts";
import { parseFlags, wholeNumber } from "../args.ts";
import {
  readStdinFor,
  refuseStdinDirectories,
  refuseTwoStdinReaders,
  STDIN,
  STDIN_LABEL,
} from "../file-args.ts";
import { type CliIo, UsageError, UserError } from "../io.ts";
import { signalExitCode, watchSignals } from "../signals.ts";
import { VERSION } from "../version.ts";
import { approver } from "./approve.ts";
import { printDiagnostics, validateRead } from "./project-context.ts";
import { refuseMisplacedRunDir, refuseUsedRunDir, takeRunLock } from "./run-directory.ts";

/** What a run was started with (run.json); a resume reads it back. */
interface RunConfig {
  repo: string;
  request: string;
  modelScript?: string;
  prior?: string;
  push?: boolean;
  /**
   * The model the agents run on: `anthropic/<model>` for every agent, `declared` for each
   * agent's own (agents/review-response/main.agent); absent, the offline mock. A model script
   * wins over it.
   */
  model?: string;
  /** The run's model-call and token budgets over all its sessions (--max-model-calls, --max-tokens). */
  maxModelCalls?: number;
  maxTokens?: number;
  /** Agents run on another model than the one `model` gives them (--agent-model NAME=MODEL). */
  agentModels?: Record<string, string>;
  /** Some session of the run ran the repository's commands without the sandbox (--unconfined). */
  unconfined?: boolean;
  /** This session's price table (never written to run.json). */
  prices?: PriceTable;
}

/** Where a run keeps the request it was given on standard input (`--request -`). */
const REQUEST_COPY = "request.stdin.json";

/** What every agent runs on when neither --model nor --model-script says otherwise. */
const DEFAULT_MODEL = "mock/gpt-4";

/** The review-response agents a run uses, and how its run directory keeps a copy of them. */
interface AgentsProject {
  project: RuntimeProject;
  /** The copy's key (agents-cache.ts); undefined when the files could not all be read. */
  key?: string;
  /** Whether the project came from the run directory's copy rather than from validation. */
  fromCopy: boolean;
}

/**
 * What identifies the code that validated a copy of the agents: the version, and this
 * module's URL. In the bundle that is a chunk whose name holds a hash of its content, which
 * names every chunk it imports (by their hashes in turn), so another build has another key.
 */
const AGENTS_BUILD = `${VERSION} ${import.meta.url}`;

export const REVIEW_HELP = `Usage: terfyn review --repo PATH --request FILE --run-dir DIR [--model-script FILE | --model MODEL] [--prior RUN_DIR] [--push]
       terfyn review --resume RUN_DIR [--model-script FILE | --model MODEL]
       terfyn review --stop RUN_DIR [--reason TEXT] [--by NAME]
       terfyn review --sweep DIR [--max-idle-minutes N]

Answer and fix a pull request's review comments under the doctrine in docs/review-doctrine.md, from a plain
request file (docs/review-request.md): intake, decide, plan, gate plan, red tests, build loop,
prove, compose, gate publish, publish, report. Comment text is data, never instructions; the
run never force-pushes, never resolves a thread, never replies to praise, never touches a file
outside the approved plan. Gates pause the run (exit 2) until
\`terfyn approve --run RUN_DIR --hash sha256:…\` (or a refusal, \`--deny --reason TEXT\`); then
--resume continues.

Exit 0 when the run ends done, done-but-unproven or nothing-to-do; 2 at a gate (report.md says
which gate, the hash and the approve command); 1 when it ends bad-input, stuck or
not-approved, and on errors.

When the model's API does not answer (refused connections, 429, 5xx or overloaded after the
retries), the run stops in the phase it is in without ending (exit 1, state interrupted,
report.md says why): --resume runs that phase again with every approval kept and every answer
the agents already had. SIGINT or SIGTERM stops it the same way (exit 130 or 143): a model
request in flight is cancelled and a running command killed; a second signal exits at once.

The run works in its own git worktree (RUN_DIR.worktree, or under the OS temp dir when the run
directory is inside the repository), never in --repo's files, and removes it when it ends.
Publishing locally is a normal commit made there (its parent is the head the request names),
the branch moved to it fast-forward only, plus outbox/replies.json and outbox/tickets.json.

The repository's commands and the tests the agents write run inside a bubblewrap sandbox
(docs/sandbox.md): only the worktree writable, the run directory, git directories and your
home not there, no network unless AGENTS.md declares it (network:), nothing left running.
Where no sandbox can be made the run is refused, saying what to install or enable.

Options:
  --repo PATH          the repository (its AGENTS.md declares the commands)
  --request FILE       request.json: the threads, with provenance; - reads it from standard
                       input, and the run keeps a copy (request.stdin.json)
  --run-dir DIR        the run directory (state.json, artifacts, report.md)
  --model-script FILE  drive the agents with a model script (offline, deterministic); wins over
                       --model. - reads it from standard input: a new run keeps a copy
                       (model-script.yaml) for --resume; given to --resume, it drives that
                       session only
  --model MODEL        the model the agents run on: anthropic/<model> or openai/<model> for all
                       of them, or \`declared\` for each agent's own (agents/review-response/
                       main.agent: the Decider and Planner on a stronger tier than the
                       TestWriter and Builder). Needs ANTHROPIC_API_KEY or OPENAI_API_KEY
                       (none for OPENAI_BASE_URL on this machine), checked before anything starts.
                       Default: the offline mock (mock/gpt-4). Kept in run.json for --resume
  --max-model-calls N  the model calls the run may make over all its sessions (default: every
                       agent step the doctrine can take, at its agent's maxTurns). Reaching it
                       ends the run stuck with the spend. Kept in run.json; given to --resume,
                       it replaces the run's
  --max-tokens N       the tokens the run may spend over all its sessions as the model reports
                       them: input, output, and input written to and read from the prompt cache
                       (default 32,768 per call of the call budget). Kept like --max-model-calls.
                       Every report says the spend (RUN_DIR/model-spend.json) and its cost
  --prices FILE        the price table of the cost estimate (YAML: provider/model: { input,
                       output, cacheWrite?, cacheRead? } in US dollars per million tokens), laid
                       over the shipped prices; default TERFYN_PRICES; for this session only
  --agent-model NAME=MODEL
                       run agent NAME (Decider, Planner, TestWriter, Builder,
                       StandardsReviewer) on MODEL instead, whatever --model says; repeat it
                       for several. Kept in run.json; given to
                       --resume, it joins (and wins over) the run's earlier ones
  --resume RUN_DIR     continue a run
  --stop RUN_DIR       end a run that is paused or not running: stuck, with the reason
                       "stopped by WHO: TEXT", a report, and its worktree removed; refused
                       for a run that already ended (exit 0 stopped, 1 refused)
  --reason TEXT        with --stop: why
  --by NAME            with --stop: who (default: the git identity, else the OS user)
  --prior RUN_DIR      an earlier run on the same pull request: its decisions are an input, and
                       each matching item must be reaffirmed (freshly verified) or reversed
  --push               publish by pushing the commit to the branch's remote (branch.<name>.remote,
                       else origin), fast-forward only, instead of moving the local branch; a
                       rejected push or a remote that moved ends the run stuck with the reason
  --unconfined         run the repository's commands and the agents' code WITHOUT the sandbox,
                       with your own powers, files and network; every report of the run says
                       so first. Only for a repository and reviewers you trust
  --sweep DIR          record every run under DIR abandoned mid-flight (no progress for
                       --max-idle-minutes, default 60) as stuck, with a report
  -h, --help           show this help
`;

/** The shipped agents project, found from this file whether it runs from src/ or the dist/ bundle. */
function agentsProject(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, "agents", "review-response");
    if (existsSync(join(candidate, "terfyn.yaml"))) return candidate;
    dir = dirname(dir);
  }
  throw new UserError(
    "cannot find agents/review-response, the review-response agents shipped with Terfyn",
  );
}

export async function reviewCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags("review", argv, {
    repo: { type: "string" },
    request: { type: "string" },
    "run-dir": { type: "string" },
    "model-script": { type: "string" },
    resume: { type: "string" },
    prior: { type: "string" },
    push: { type: "boolean" },
    sweep: { type: "string" },
    "max-idle-minutes": { type: "string" },
    model: { type: "string" },
    "agent-model": { type: "string", multiple: true },
    "max-model-calls": { type: "string" },
    "max-tokens": { type: "string" },
    prices: { type: "string" },
    stop: { type: "string" },
    reason: { type: "string" },
    by: { type: "string" },
    unconfined: { type: "boolean" },
  });
  if (values.help) {
    io.stdout(REVIEW_HELP);
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError(`review: unexpected argument \`${positionals[0]}\``);
  refuseTwoStdinReaders("review", {
    "--request": values.request,
    "--model-script": values["model-script"],
  });
  refuseStdinDirectories("review", {
    "--repo": { value: values.repo, what: "the repository under review" },
    "--run-dir": { value: values["run-dir"], what: "the run directory" },
    "--resume": { value: values.resume, what: "the run directory to continue" },
    "--prior": { value: values.prior, what: "an earlier run's directory" },
    "--sweep": { value: values.sweep, what: "the directory whose runs are swept" },
    "--stop": { value: values.stop, what: "the run directory to stop" },
  });
  if (values.sweep !== undefined) {
    return sweep(
      resolve(io.cwd, values.sweep as string),
      values["max-idle-minutes"] as string | undefined,
      io,
    );
  }
  if (values.stop !== undefined) {
    for (const flag of [
      "repo",
      "request",
      "run-dir",
      "resume",
      "model",
      "agent-model",
      "max-model-calls",
      "max-tokens",
      "model-script",
      "unconfined",
    ] as const)
      if (values[flag] !== undefined) throw new UsageError(`review: --stop takes no --${flag}`);
    return stop(
      resolve(io.cwd, values.stop as string),
      values.reason as string | undefined,
      values.by as string | undefined,
      io,
    );
  }
  for (const flag of ["reason", "by"] as const)
    if (values[flag] !== undefined) throw new UsageError(`review: --${flag} goes with --stop`);
  let runDir: string;
  let config: RunConfig;
  /** A script given on standard input at --resume: this session's only. */
  let sessionScript: ScriptedModel | undefined;
  /** What came from standard input for a new run, kept in its run directory once it is locked. */
  const copies: { name: string; text: string }[] = [];
  if (values.resume !== undefined) {
    runDir = resolve(io.cwd, values.resume as string);
    try {
      config = JSON.parse(await readFile(join(runDir, "run.json"), "utf8"));
    } catch {
      throw new UserError(`${values.resume} is not a review run directory (no run.json)`);
    }
    if (values["model-script"] === STDIN) {
      sessionScript = ScriptedModel.parse(STDIN_LABEL, await readStdinFor(io, "--model-script"));
      // Only this session's (run.json is not rewritten with it), as a script file given here is.
      config.modelScript = STDIN_LABEL;
    } else if (values["model-script"] !== undefined)
      config.modelScript = resolve(io.cwd, values["model-script"] as string);
    if (values.model !== undefined) config.model = values.model as string;
    if (values.unconfined) config.unconfined = true;
  } else {
    for (const flag of ["repo", "request", "run-dir"] as const) {
      if (values[flag] === undefined)
        throw new UsageError(`review: --${flag} is required (or --resume RUN_DIR)`);
    }
    runDir = resolve(io.cwd, values["run-dir"] as string);
    // Standard input is not there for --resume: what it gave is kept in the run directory, and
    // run.json names that copy.
    const fromStdin = async (flag: string, name: string, check?: (text: string) => void) => {
      const text = await readStdinFor(io, flag);
      check?.(text);
      copies.push({ name, text });
      return join(runDir, name);
    };
    config = {
      repo: resolve(io.cwd, values.repo as string),
      request:
        values.request === STDIN
          ? await fromStdin("--request", REQUEST_COPY)
          : resolve(io.cwd, values.request as string),
      ...(values.prior !== undefined ? { prior: resolve(io.cwd, values.prior as string) } : {}),
      ...(values.push ? { push: true } : {}),
      ...(values.model !== undefined ? { model: values.model as string } : {}),
      ...(values.unconfined ? { unconfined: true } : {}),
    };
    if (values["model-script"] === STDIN)
      config.modelScript = await fromStdin("--model-script", MODEL_SCRIPT_COPY, (text) => {
        ScriptedModel.parse(STDIN_LABEL, text);
      });
    else if (values["model-script"] !== undefined)
      config.modelScript = resolve(io.cwd, values["model-script"] as string);
  }
  // The agents, and whether the models they would run on can run at all, before anything starts.
  // Budgets: given at the start they are the run's; given to --resume they replace its own.
  const budgets = {
    maxModelCalls: wholeNumber("review", values["max-model-calls"], "--max-model-calls"),
    maxTokens: wholeNumber("review", values["max-tokens"], "--max-tokens"),
  };
  for (const [k, v] of Object.entries(budgets))
    if (v !== undefined) config[k as keyof typeof budgets] = v;
  // The price table of this session's cost estimate (not kept: a resume reads TERFYN_PRICES or its own --prices).
  const pricesFile =
    values.prices === undefined ? undefined : resolve(io.cwd, values.prices as string);
  try {
    config.prices = await loadPriceTable(pricesFile, io.env);
  } catch (e) {
    throw new UserError(`review: ${(e as Error).message}`);
  }
  const agents = await loadAgents(io, values.resume !== undefined ? runDir : undefined);
  const overrides = values["agent-model"] as string[] | undefined;
  if (overrides !== undefined && overrides.length > 0) {
    const parsed = parseAgentModels(
      overrides.join("\n"),
      [...agents.project.agents.keys()],
      "review: --agent-model",
    );
    if ("problem" in parsed) throw new UsageError(parsed.problem);
    // Given on resume, they join (and win over) the run's earlier ones, for later resumes too.
    config.agentModels = { ...config.agentModels, ...parsed.models };
  }
  refuseUnrunnableModels(config, agents, io);
  // The repository's commands run in the sandbox, or nothing runs: refused here, before the
  // run starts or resumes, with what to install or enable.
  const sandbox = await openReviewSandbox(io, values.unconfined === true);
  // The agents work in a worktree of this repository: a run directory inside it could be written
  // by them (its approvals, its cursor).
  const top = gitToplevel(config.repo);
  refuseMisplacedRunDir(
    io,
    runDir,
    [
      { label: "the repository under review (--repo)", path: config.repo },
      ...(top !== undefined
        ? [{ label: "the git toplevel of the repository under review", path: top }]
        : []),
    ],
    values.resume === undefined ? "--run-dir" : "new run directory",
  );
  const store = await ReviewRunStore.open(runDir, io.env);
  const lock = takeRunLock(
    io,
    runDir,
    values.resume === undefined ? "terfyn review" : "terfyn review --resume",
  );
  try {
    if (values.resume === undefined) {
      refuseUsedRunDir(io, runDir, "terfyn review --resume");
      for (const copy of copies) await writeFile(join(runDir, copy.name), copy.text);
      await writeFile(
        join(runDir, "run.json"),
        `${JSON.stringify({ ...config, prices: undefined }, null, 2)}\n`,
      );
    } else if (
      values.model !== undefined ||
      overrides?.length ||
      budgets.maxModelCalls !== undefined ||
      budgets.maxTokens !== undefined ||
      values.unconfined
    ) {
      // A --model or --agent-model given on resume is the run's from now on, for the next
      // resume too; an --unconfined session is said in every report of the run from now on.
      const saved = JSON.parse(await readFile(join(runDir, "run.json"), "utf8")) as RunConfig;
      await writeFile(
        join(runDir, "run.json"),
        `${JSON.stringify({ ...saved, ...(values.model !== undefined ? { model: config.model } : {}), ...(config.agentModels ? { agentModels: config.agentModels } : {}), ...(budgets.maxModelCalls !== undefined ? { maxModelCalls: budgets.maxModelCalls } : {}), ...(budgets.maxTokens !== undefined ? { maxTokens: budgets.maxTokens } : {}), ...(values.unconfined ? { unconfined: true } : {}) }, null, 2)}\n`,
      );
    }
    store.guard = () => lock.verify();
    await keepAgentsCopy(runDir, agents);
    return await reviewLocked(io, runDir, store, config, agents, sandbox, sessionScript);
  } finally {
    lock.release();
  }
}

/**
 * The shipped review-response agents, validated; or, given the run directory of a run that
 * was started, its copy of them when the copy's key is that of the files as they are now.
 */
async function loadAgents(io: CliIo, runDir?: string): Promise<AgentsProject> {
  const agentsDir = agentsProject();
  const read = await readProjectDirectory(agentsDir);
  const key = read.diagnostics.length === 0 ? agentsCacheKey(read.files, AGENTS_BUILD) : undefined;
  if (key !== undefined && runDir !== undefined) {
    const copy = await readAgentsCache(runDir, key);
    if (copy !== undefined) return { project: copy, key, fromCopy: true };
  }
  const agentsCtx = validateRead({ ...io, cwd: agentsDir }, agentsDir, read);
  const errors = agentsCtx.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) {
    printDiagnostics(io, agentsCtx, errors, io.stderr);
    throw new UserError("the review-response agents do not validate");
  }
  return { project: agentsCtx.validation.project, ...(key ? { key } : {}), fromCopy: false };
}

/** Writes the run directory's copy of freshly validated agents (under the run's lock). */
async function keepAgentsCopy(runDir: string, agents: AgentsProject): Promise<void> {
  if (agents.fromCopy || agents.key === undefined) return;
  await writeAgentsCache(runDir, agents.key, agents.project);
}

/** The models the agents will run on: none when a script drives them. */
function modelsInUse(config: RunConfig, agents: AgentsProject): string[] {
  if (config.modelScript !== undefined) return [];
  return [...agents.project.agents.values()].map((a) =>
    config.agentModels && Object.hasOwn(config.agentModels, a.name)
      ? (config.agentModels[a.name] as string)
      : config.model === "declared"
        ? a.model
        : (config.model ?? DEFAULT_MODEL),
  );
}

/** A model that cannot run (no key, no such provider) is an error before any work. */
function refuseUnrunnableModels(config: RunConfig, agents: AgentsProject, io: CliIo): void {
  const problem = modelProblem([...new Set(modelsInUse(config, agents))], io.env);
  if (problem !== undefined) throw new UserError(`review: --model: ${problem}`);
}

async function reviewLocked(
  io: CliIo,
  runDir: string,
  store: ReviewRunStore,
  config: RunConfig,
  agentsCtx: AgentsProject,
  sandbox: Sandbox,
  sessionScript?: ScriptedModel,
): Promise<number> {
  const interrupt = new AbortController();
  const ports = await localPorts(
    io,
    runDir,
    store,
    config,
    agentsCtx,
    sandbox,
    interrupt.signal,
    sessionScript,
  );
  const watch = watchSignals(
    io,
    interrupt,
    "a model request in flight is cancelled, a running command is killed",
  );
  let outcome: Awaited<ReturnType<typeof runReview>>;
  try {
    outcome = await runReview({ ...ports, signal: interrupt.signal });
  } finally {
    watch.dispose();
  }
  const shown = relative(io.cwd, runDir) || runDir;
  if (outcome.status === "awaiting-approval") {
    io.stderr(
      `terfyn: gate ${outcome.gate} awaits approval of ${outcome.artifact}\n  approve with: terfyn approve --run ${shown} --hash ${outcome.hash}\n  then resume:  terfyn review --resume ${shown}\n`,
    );
    return 2;
  }
  if (outcome.status === "interrupted") {
    io.stderr(
      `terfyn: the run stopped in phase ${outcome.phase}: ${outcome.reason}\n  nothing is lost; resume with: terfyn review --resume ${shown}\n`,
    );
    return watch.received ? signalExitCode(watch.received) : 1;
  }
  io.stdout(`${outcome.terminal}: ${outcome.reason}\nreport: ${join(shown, "report.md")}\n`);
  return SUCCESSFUL_ENDS.includes(outcome.terminal) ? 0 : 1;
}

/** The ports of a local-mode run: its directory, the approvals log, and the doctrine's steps. */
async function localPorts(
  io: CliIo,
  runDir: string,
  store: ReviewRunStore,
  config: RunConfig,
  agentsCtx: AgentsProject,
  sandbox: Sandbox,
  /** Aborted on SIGINT/SIGTERM: model requests, commands and tools stop. */
  signal: AbortSignal,
  /** A script given on standard input at --resume, instead of the one run.json names. */
  sessionScript?: ScriptedModel,
): Promise<ReviewPorts> {
  const script =
    sessionScript ??
    (config.modelScript ? await ScriptedModel.load(config.modelScript) : undefined);
  const router = new ModelRouter({
    ...(script ? { script } : {}),
    forceScript: script !== undefined,
    ...(config.model !== "declared" ? { model: config.model ?? DEFAULT_MODEL } : {}),
    ...(config.agentModels ? { agentModels: config.agentModels } : {}),
    env: io.env,
  });
  // The run's model budget over all its sessions, counted in RUN_DIR/model-spend.json.
  const limit = config.maxModelCalls ?? defaultModelBudget(agentsCtx.project);
  const spendFile = join(runDir, SPEND_FILE);
  const spend = await readSpendFile(
    spendFile,
    limit,
    config.maxTokens ?? defaultTokenBudget(limit),
  );
  const model = budgeted(
    router,
    spend,
    async () => {
      store.guard();
      await writeFileAtomic(spendFile, `${JSON.stringify(spend)}\n`);
    },
    { calls: "--max-model-calls", tokens: "--max-tokens" },
  );
  const effects = localEffects({
    repoDir: config.repo,
    requestFile: config.request,
    runDir,
    ...(config.prior ? { priorRunDir: config.prior } : {}),
    ...(config.push ? { push: true } : {}),
    agents: agentsCtx.project,
    model,
    sandbox,
    signal,
    progress: (l) => io.stderr(`terfyn: ${l}\n`),
  });
  const steps = new DoctrineSteps(effects, { files: store });
  return {
    runId: runDir,
    files: store,
    readState: () => store.readState(),
    writeState: (s) => store.writeState(s),
    approvals: () => store.approvals(),
    steps,
    now: () => (io.now?.() ?? new Date()).toISOString(),
    progress: (l) => io.stderr(`terfyn: ${l}\n`),
    ...(config.unconfined ? { notice: UNCONFINED_NOTICE } : {}),
    spend: () => describeSpend(spend, config.prices),
  };
}

/** Where a run keeps its model spend across sessions. */
const SPEND_FILE = "model-spend.json";

/** The first line of every report of a run that ran (in some session) without the sandbox. */
const UNCONFINED_NOTICE =
  "UNCONFINED: this run was started or resumed with --unconfined, so the repository's commands and the code the agents wrote ran with the user's own powers, files and network; nothing in this report is evidence that the code could not reach them.";

/** The sandbox for a start or resume; its refusal is the user's to fix, said plainly. */
async function openReviewSandbox(io: CliIo, unconfined: boolean): Promise<Sandbox> {
  try {
    const sandbox = await openSandbox({ env: io.env, unconfined });
    if (!sandbox.confined) io.stderr(`terfyn: ${sandbox.description}\n`);
    return sandbox;
  } catch (e) {
    if (e instanceof SandboxUnavailable) throw new UserError(`review: ${e.message}`);
    throw e;
  }
}

/** What `--stop` runs commands with: nothing; stopping a run executes no repository code. */
const NOTHING_RUNS: Sandbox = {
  confined: true,
  description: "none: stopping a run executes nothing",
  run: () => Promise.reject(new Error("stopping a run executes nothing")),
};

/**
 * `--stop RUN_DIR`: ends a run that is paused or not running (a running one holds the lock and
 * is refused by it) as stuck, "stopped by WHO: TEXT", with a report, its worktree released.
 */
async function stop(
  runDir: string,
  text: string | undefined,
  by: string | undefined,
  io: CliIo,
): Promise<number> {
  const shown = relative(io.cwd, runDir) || runDir;
  let config: RunConfig;
  try {
    config = JSON.parse(await readFile(join(runDir, "run.json"), "utf8"));
  } catch {
    throw new UserError(`${shown} is not a review run directory (no run.json); nothing stopped`);
  }
  if (text !== undefined && text.trim() === "")
    throw new UsageError("review: --reason needs a text");
  const who = await approver(io, by);
  const agents = await loadAgents(io, runDir);
  const lock = takeRunLock(io, runDir, "terfyn review --stop");
  try {
    const store = await ReviewRunStore.open(runDir, io.env);
    store.guard = () => lock.verify();
    const reason = `stopped by ${who}${text !== undefined ? `: ${text.trim()}` : ""}`;
    const result = await stopReview(
      await localPorts(
        io,
        runDir,
        store,
        config,
        agents,
        NOTHING_RUNS,
        new AbortController().signal,
      ),
      reason,
    );
    if (!result.stopped)
      throw new UserError(
        `the run in ${shown} already ended ${result.state.terminal ?? "?"} (${result.state.reason ?? "no reason recorded"}); nothing stopped`,
      );
    io.stdout(
      `stopped: stuck: ${escapeTerminalText(reason)}\nreport: ${escapeTerminalText(join(shown, "report.md"))}\n`,
    );
    return 0;
  } finally {
    lock.release();
  }
}

/** Terminal states the review command exits 0 for; every other end exits 1. */
const SUCCESSFUL_ENDS: readonly TerminalState[] = ["done", "done-but-unproven", "nothing-to-do"];

/** Records the review runs under `dir` (or `dir` itself) that were abandoned mid-flight. */
async function sweep(dir: string, idleArg: string | undefined, io: CliIo): Promise<number> {
  const minutes = idleArg === undefined ? 60 : Number(idleArg);
  if (!Number.isFinite(minutes) || minutes < 0)
    throw new UsageError("review: --max-idle-minutes takes a number of minutes");
  const { readdir } = await import("node:fs/promises");
  const candidates = [
    dir,
    ...(await readdir(dir, { withFileTypes: true }).catch(() => []))
      .filter((e) => e.isDirectory())
      .map((e) => join(dir, e.name)),
  ];
  const now = io.now?.() ?? new Date();
  let swept = 0;
  for (const candidate of candidates) {
    if (!existsSync(join(candidate, "run.json"))) continue;
    // A run whose process still holds it is slow, not abandoned; and the sweeper must not
    // write its state under it.
    let lock: ReturnType<typeof takeRunLock>;
    try {
      lock = takeRunLock(io, candidate, "terfyn review --sweep");
    } catch (e) {
      if (!(e instanceof RunLockHeldError)) throw e;
      io.stderr(`terfyn: not swept: ${e.message}\n`);
      continue;
    }
    try {
      const store = await ReviewRunStore.open(candidate);
      store.guard = () => lock.verify();
      const state = await store.readState();
      if (!state || !isAbandoned(state, now.getTime(), minutes * 60_000)) continue;
      const record = abandonedRecord(state, now.toISOString());
      await store.write("report.md", record.report);
      await store.writeState(record.state);
      io.stdout(
        `abandoned: ${relative(io.cwd, candidate) || candidate} (${record.state.reason})\n`,
      );
      swept++;
    } finally {
      lock.release();
    }
  }
  io.stdout(`${plural(swept, "abandoned run")} recorded\n`);
  return 0;
}
