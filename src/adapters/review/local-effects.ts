/**
 * The effects of a review-response run in local mode (core/review/effects.ts): the request comes
 * from a file, agents run through the engine with the shipped agents project (a fresh context
 * each), commands run in the run's worktree (repo-command.ts), and publishing is a normal commit
 * on the branch (parent = the head the request named) plus outbox/replies.json and
 * outbox/tickets.json. What the run decides is core (core/review/steps.ts); this file only acts.
 *
 * The user's checkout is never touched: the run works in its own linked worktree (detached at
 * the request's head, next to the run directory or under the OS temp dir, never inside the
 * repository's work tree), reused on resume only while it is still at that head, and removed
 * when the run ends. Each agent's workspace may write only what its step may change.
 * Publishing either moves the local branch fast-forward only (compare-and-swap), or with
 * `push` pushes the commit fast-forward only to the branch's remote and leaves the local
 * branch alone.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { runAgentStep } from "../../core/engine/interpreter.ts";
import type { IrProgram } from "../../core/engine/ir.ts";
import type { JournalEvent } from "../../core/engine/journal.ts";
import { type ModelPort, ModelUnavailable, type ToolPort } from "../../core/engine/ports.ts";
import type { RuntimeProject } from "../../core/engine/runtime-project.ts";
import type {
  AgentCall,
  AgentPort,
  CommandPort,
  CommitPublisher,
  IntakePort,
  ReplyPublisher,
  ReviewEffects,
  TicketPublisher,
  WorkTreePort,
} from "../../core/review/effects.ts";
import { assertGate } from "../../core/review/gates.ts";
import { RunEnd, RunPaused } from "../../core/review/phase.ts";
import { RunStore } from "../fs/run-store.ts";
import { BranchWriter, type BranchWriterOptions } from "../git/branch-writer.ts";
import type { Sandbox } from "../sandbox/sandbox.ts";
import { WorkspaceTool } from "../workspace/workspace-tool.ts";
import { runRepoCommand } from "./repo-command.ts";

export interface LocalEffectsConfig {
  repoDir: string;
  /** An earlier run's directory on the same pull request, whose decisions must be reaffirmed or reversed. */
  priorRunDir?: string;
  requestFile: string;
  runDir: string;
  /** The review-response agents: a validated project, or the run directory's copy of one. */
  agents: RuntimeProject;
  model: ModelPort;
  progress: (line: string) => void;
  /**
   * Where the run's own worktree goes. Default: `<run dir>.worktree` next to the run directory,
   * or a directory under the OS temp dir when the run directory is inside the repository.
   */
  worktreeDir?: string;
  /** Where the repository's commands and the agents' run_tests execute (src/adapters/sandbox). */
  sandbox: Sandbox;
  /** Variables (by name) the repository's commands also see, besides PATH, HOME, LANG, TMPDIR. */
  passEnv?: readonly string[];
  /** The environment passEnv and the base variables are read from. Default: process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Timeout of each repository command. Default 10 minutes. */
  commandTimeoutMs?: number;
  /** Publish by pushing to the branch's remote (fast-forward only) instead of moving the local branch. */
  push?: boolean;
  /** How git runs for the repository and the worktree (the App: identity, and a config file outside the clone). */
  git?: BranchWriterOptions;
  /**
   * What the run had written in a worktree that is gone (a run on GitHub Actions resumed on a
   * fresh machine): put back, through the workspace's sandbox, when the worktree is made anew.
   */
  restoreWork?: () => Promise<WorkFiles | undefined>;
  /**
   * Aborted when the run is told to stop: a model request in flight is cancelled, a running
   * command or tool gets SIGTERM (then SIGKILL), and the agent's step stops at its boundary.
   */
  signal?: AbortSignal;
}

/** Files of a worktree as the run left them: bytes to write, and paths the run removed. */
export interface WorkFiles {
  write: ReadonlyMap<string, Buffer>;
  remove: readonly string[];
}

/**
 * Puts `saved` into a worktree just made at the run's head. Writes go through the workspace
 * sandbox (no symlinked parent, nothing outside the root, no `.git`); a removal only ever
 * unlinks a file or symlink whose real parent is inside the root (never a directory, never
 * `.git`).
 */
async function restoreFiles(dir: string, saved: WorkFiles): Promise<void> {
  const sandbox = await WorkspaceTool.open({ root: dir });
  const root = sandbox.root;
  // The sandbox refuses any write outside the root, through a link, or into .git.
  for (const [path, bytes] of saved.write) await sandbox.writeFile(path, bytes.toString("utf8"));
  for (const path of saved.remove) {
    const abs = resolve(root, path);
    if (/(^|\/)\.git(\/|$)/i.test(relative(root, abs)))
      throw new Error(`the run's saved files remove ${JSON.stringify(path)}, git's own file`);
    const parent = await realpath(dirname(abs)).catch(() => undefined);
    if (parent === undefined) continue;
    const rel = relative(root, parent);
    if (rel.startsWith("..") || isAbsolute(rel))
      throw new Error(`the run's saved files remove ${JSON.stringify(path)}, outside the worktree`);
    await rm(join(parent, basename(abs)), { force: true });
  }
}

const EMPTY_PROGRAM: IrProgram = { entry: "", workflows: {}, agents: [], hash: "" };

/**
 * What git said about the worktree since the last effect: which tracked files differ from HEAD,
 * which paths are untracked, and the commit at HEAD. Any effect on the worktree (an agent, a
 * repository command, a revert or restore, a file taken, a commit) drops it all before and after
 * it runs, so it never hides a change; between effects nothing the run does changes these.
 */
interface TreeFacts {
  tracked?: Promise<string[]>;
  untracked: Map<string, Promise<string[]>>;
  head?: Promise<string>;
}

/** The user's repository (read, and its branch moved at publish) and the run's worktree. */
export class LocalWorkTree implements WorkTreePort {
  private repoWriter: BranchWriter | undefined;
  private worktreeWriter: BranchWriter | undefined;
  private facts: TreeFacts = { untracked: new Map() };
  /** Files as a commit has them, by commit id then path: a commit's files never change. */
  private readonly committed = new Map<string, Map<string, Buffer | undefined>>();

  constructor(private readonly c: LocalEffectsConfig) {}

  /** Forget what git said about the worktree: something is about to change it, or just did. */
  changed(): void {
    this.facts = { untracked: new Map() };
  }

  /** Runs an effect on the worktree with what was known about it dropped before and after. */
  async effect<T>(f: () => Promise<T>): Promise<T> {
    this.changed();
    try {
      return await f();
    } finally {
      this.changed();
    }
  }

  /** A cached answer of git for this state of the worktree (a failure is not kept). */
  private remember<T>(
    get: () => Promise<T> | undefined,
    set: (p: Promise<T> | undefined) => void,
    load: () => Promise<T>,
  ): Promise<T> {
    const known = get();
    if (known) return known;
    const facts = this.facts;
    const p = load();
    set(p);
    p.catch(() => {
      if (this.facts === facts) set(undefined);
    });
    return p;
  }

  async repo(): Promise<BranchWriter> {
    this.repoWriter ??= await BranchWriter.open(this.c.repoDir, this.c.git);
    return this.repoWriter;
  }

  /**
   * The worktree's writer, once prepared, for whoever changes the worktree through it (a commit):
   * what git said about the worktree is dropped, as before any effect.
   */
  git(): BranchWriter {
    const w = this.writer();
    this.changed();
    return w;
  }

  private writer(): BranchWriter {
    if (!this.worktreeWriter) throw new Error("the run's worktree was not prepared");
    return this.worktreeWriter;
  }

  /**
   * The directory the agents and the repository's commands work in. Whoever asks may write
   * there, so what git said about the worktree is dropped.
   */
  root(): string {
    const w = this.writer();
    this.changed();
    return w.root;
  }

  location(): string {
    return this.root();
  }

  async prepare(head: string): Promise<boolean> {
    if (this.worktreeWriter) return false;
    const dir = await this.path();
    if (existsSync(dir)) {
      const w = await BranchWriter.open(dir, this.c.git);
      const at = await w.head();
      if (w.root !== (await realpath(dir)) || !at.startsWith(head))
        throw new RunEnd(
          "stuck",
          `the run's worktree ${dir} is at ${at}, not the request's head ${head}: it was changed outside the run, so what the run wrote there cannot be trusted`,
        );
      this.worktreeWriter = w;
      // The commit just read is HEAD until something changes the worktree.
      this.changed();
      this.facts.head = Promise.resolve(at);
      return false;
    }
    await mkdir(dirname(dir), { recursive: true });
    this.worktreeWriter = await (await this.repo()).addWorktree(dir, head);
    const saved = await this.c.restoreWork?.();
    if (saved) await this.effect(() => restoreFiles(this.writer().root, saved));
    return true;
  }

  async path(): Promise<string> {
    if (this.c.worktreeDir) return resolve(this.c.worktreeDir);
    const runDir = resolve(this.c.runDir);
    const repoRoot = (await this.repo()).root;
    const parent = await realpath(dirname(runDir)).catch(() => dirname(runDir));
    const rel = relative(repoRoot, parent);
    const insideRepo = rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
    if (!insideRepo) return join(parent, `${basename(runDir)}.worktree`);
    const id = createHash("sha256").update(runDir).digest("hex").slice(0, 16);
    return join(await realpath(tmpdir()), `terfyn-worktree-${id}`);
  }

  async readAtHead(path: string): Promise<string | undefined> {
    return (await this.atHead(path))?.toString("utf8");
  }

  /** A file's bytes in the commit at HEAD, read once per commit. */
  private async atHead(path: string): Promise<Buffer | undefined> {
    const facts = this.facts;
    const head = await this.remember(
      () => facts.head,
      (p) => {
        facts.head = p;
      },
      () => this.writer().head(),
    );
    let files = this.committed.get(head);
    if (!files) {
      files = new Map();
      this.committed.set(head, files);
    }
    if (!files.has(path))
      files.set(path, (await this.writer().fileVersions(path, { at: head, only: "head" })).head);
    // A copy: whoever reads it may change its bytes; the commit's stay as they are.
    const bytes = files.get(path);
    return bytes && Buffer.from(bytes);
  }

  async takeFile(path: string): Promise<string | undefined> {
    const { worktree } = await this.writer().fileVersions(path, { only: "worktree" });
    if (worktree === undefined) return undefined;
    await this.effect(() => rm(join(this.writer().root, path), { force: true }));
    return worktree.toString("utf8");
  }

  trackedChanges(): Promise<string[]> {
    const facts = this.facts;
    return this.remember(
      () => facts.tracked,
      (p) => {
        facts.tracked = p;
      },
      () => this.writer().trackedChanges(),
    ).then((l) => [...l]);
  }

  untrackedAmong(paths: readonly string[]): Promise<string[]> {
    const facts = this.facts;
    const key = JSON.stringify([...new Set(paths)].sort());
    return this.remember(
      () => facts.untracked.get(key),
      (p) => {
        if (p) facts.untracked.set(key, p);
        else facts.untracked.delete(key);
      },
      () => this.writer().untrackedAmong(paths),
    ).then((l) => [...l]);
  }

  /** The head's bytes from the commit (read once per commit), the worktree's from disk, always. */
  async fileVersions(path: string): Promise<{ head?: Buffer; worktree?: Buffer }> {
    const head = await this.atHead(path);
    const { worktree } = await this.writer().fileVersions(path, { only: "worktree" });
    return { ...(head ? { head } : {}), ...(worktree ? { worktree } : {}) };
  }

  revert(paths: readonly string[]): Promise<() => Promise<void>> {
    return this.effect(async () => {
      const git = this.writer();
      const snapshot = await git.snapshot([...paths]);
      try {
        await git.revertToHead([...paths]);
      } catch (e) {
        await git.restore(snapshot);
        throw e;
      }
      return () => this.effect(() => git.restore(snapshot));
    });
  }

  async currentHead(branch: string): Promise<string | undefined> {
    return (await this.repo()).branchTip(branch);
  }

  async release(): Promise<void> {
    const dir = await this.path();
    this.changed();
    this.worktreeWriter = undefined;
    if (existsSync(dir)) await (await this.repo()).removeWorktree(dir);
  }
}

/** The request file, and the branch as the user's repository has it. */
class FileIntake implements IntakePort {
  constructor(
    private readonly c: LocalEffectsConfig,
    private readonly tree: LocalWorkTree,
  ) {}

  async receive() {
    try {
      return {
        text: await readFile(this.c.requestFile, "utf8"),
        source: basename(this.c.requestFile),
      };
    } catch (e) {
      throw new Error(`cannot read ${this.c.requestFile}: ${(e as NodeJS.ErrnoException).code}`);
    }
  }

  async branchTip(branch: string) {
    return (await this.tree.repo()).branchTip(branch);
  }

  async commitsBetween(from: string, to: string) {
    return (await this.tree.repo()).commitsBetween(from, to);
  }

  async priorDecisions() {
    if (!this.c.priorRunDir) return undefined;
    const file = join(this.c.priorRunDir, "decisions.json");
    try {
      return { text: await readFile(file, "utf8"), source: file };
    } catch (e) {
      throw new RunEnd(
        "bad-input",
        `the prior run ${this.c.priorRunDir} has no readable decisions.json (${(e as NodeJS.ErrnoException).code})`,
      );
    }
  }
}

/** The tool operations a journal shows called and completed (a result, ok), in order. */
export function completedOperations(events: readonly JournalEvent[]): string[] {
  const ok = new Set(events.flatMap((e) => (e.type === "effect.result" && e.ok ? [e.key] : [])));
  return events.flatMap((e) => (e.type === "effect.intent" && ok.has(e.key) ? [e.tool] : []));
}

/** Agents through the engine, each in a workspace of the run's worktree limited to its writes. */
export class EngineAgents implements AgentPort {
  constructor(
    private readonly c: LocalEffectsConfig,
    private readonly tree: LocalWorkTree,
  ) {}

  run(call: AgentCall): Promise<{ result: unknown; written: string[]; operations: string[] }> {
    return this.tree.effect(() => this.#run(call));
  }

  async #run(
    call: AgentCall,
  ): Promise<{ result: unknown; written: string[]; operations: string[] }> {
    const ws = await WorkspaceTool.open({
      root: this.tree.root(),
      writable: call.writable,
      passEnv: [...new Set([...(this.c.passEnv ?? []), ...call.passEnv])],
      env: this.c.env ?? process.env,
      ...(this.c.commandTimeoutMs ? { testTimeoutMs: this.c.commandTimeoutMs } : {}),
      ...(call.testCommand ? { testCommand: call.testCommand } : {}),
      ...(call.testNetwork ? { testNetwork: true } : {}),
      sandbox: this.c.sandbox,
      ...(this.c.signal ? { signal: this.c.signal } : {}),
    });
    // The agent writes in the worktree, and its tests may: what git said before is dropped.
    const tools: ToolPort = {
      execute: (c) => this.tree.effect(() => ws.execute(c.operation, c.input)),
    };
    const store = await RunStore.create(join(this.c.runDir, "agents", call.step));
    try {
      // What the agent was given, next to its journal: an audit can see exactly what it saw.
      await store.writeInput(call.input);
      const outcome = await runAgentStep({
        runId: `review:${call.step}`,
        project: this.c.agents,
        program: EMPTY_PROGRAM,
        input: call.input,
        history: await store.readJournal(),
        approvals: new Set(),
        agent: call.agent,
        step: call.step,
        ...(this.c.signal ? { signal: this.c.signal } : {}),
        ports: {
          model: this.c.model,
          tools,
          journal: store,
          checkpoint: async () => {},
          progress: (l) => this.c.progress(`${call.step}: ${l}`),
        },
      });
      // Stopped from outside (the model's API, a signal): the run pauses at its phase, and a
      // resume gives this step back every answer its journal holds.
      if (outcome.status === "interrupted")
        throw outcome.unavailable !== undefined
          ? new ModelUnavailable(`the model's API did not answer: ${outcome.unavailable}`)
          : new RunPaused("the process was told to stop");
      if (outcome.status !== "completed")
        throw new Error("error" in outcome ? outcome.error : outcome.status);
      return {
        result: outcome.result,
        written: [...ws.written],
        operations: completedOperations(await store.readJournal()),
      };
    } finally {
      store.close();
    }
  }
}

/** The repository's commands, in the run's worktree (repo-command.ts). */
export class WorktreeCommands implements CommandPort {
  constructor(
    private readonly c: LocalEffectsConfig,
    private readonly tree: LocalWorkTree,
  ) {}

  run(
    command: string,
    options: { env?: Record<string, string>; passEnv: readonly string[]; network?: boolean },
  ) {
    // A command can change anything in the worktree: what git said before it is dropped.
    return this.tree.effect(() =>
      runRepoCommand(command, {
        cwd: this.tree.root(),
        sandbox: this.c.sandbox,
        ...(options.network ? { network: true } : {}),
        parentEnv: this.c.env ?? process.env,
        passEnv: [...new Set([...(this.c.passEnv ?? []), ...options.passEnv])],
        env: options.env ?? {},
        ...(this.c.commandTimeoutMs ? { timeoutMs: this.c.commandTimeoutMs } : {}),
        ...(this.c.signal ? { signal: this.c.signal } : {}),
      }),
    );
  }
}

/**
 * The commit, made in the worktree on the request's head; then either the local branch moves
 * to it fast-forward only, or (push) the branch's remote does and the local branch stays.
 */
class LocalCommit implements CommitPublisher {
  constructor(
    private readonly c: LocalEffectsConfig,
    private readonly tree: LocalWorkTree,
  ) {}

  async publish(
    artifact: Parameters<CommitPublisher["publish"]>[0],
    text: string,
    approvals: Parameters<CommitPublisher["publish"]>[2],
    target: { branch: string; head: string },
  ) {
    assertGate("publish", text, approvals);
    const git = this.tree.git();
    const commit = await this.tree.effect(() =>
      // Exactly the approved bytes (an artifact that binds none commits nothing).
      git.commit(artifact.commit_message, artifact.files, target.head, {
        bound: artifact.content ?? [],
      }),
    );
    const repo = await this.tree.repo();
    if (this.c.push) {
      const remote = await repo.remoteOf(target.branch);
      const result = await git.push(remote, target.branch, target.head);
      this.c.progress(
        `pushed ${commit} to ${remote}/${target.branch} (fast-forward from ${result.before}); the local branch ${target.branch} was left as it was: git pull --ff-only to bring it up to date`,
      );
      return { commit };
    }
    await repo.fastForwardBranch(target.branch, target.head, commit);
    const checkedOut = await repo.branch().catch(() => undefined);
    if (checkedOut === target.branch)
      this.c.progress(
        `${target.branch} moved to ${commit}; it is checked out in ${repo.root}, whose files were left as they were: to bring them up to date, git restore --source=HEAD --staged --worktree -- ${artifact.files.join(" ")}`,
      );
    return { commit };
  }
}

/** Replies and tickets go to the run's outbox (local mode has no threads to post to). */
class Outbox implements ReplyPublisher, TicketPublisher {
  constructor(
    private readonly c: LocalEffectsConfig,
    private readonly kind: "replies" | "tickets",
  ) {}

  async publish(
    artifact: Parameters<ReplyPublisher["publish"]>[0],
    text: string,
    approvals: Parameters<ReplyPublisher["publish"]>[2],
  ) {
    assertGate("publish", text, approvals);
    const items = artifact[this.kind];
    const outbox = join(this.c.runDir, "outbox");
    await mkdir(outbox, { recursive: true });
    await writeFile(join(outbox, `${this.kind}.json`), `${JSON.stringify(items, null, 2)}\n`);
    return items.length;
  }
}

export interface LocalEffects extends ReviewEffects {
  tree: LocalWorkTree;
}

export function localEffects(c: LocalEffectsConfig): LocalEffects {
  const tree = new LocalWorkTree(c);
  return {
    intake: new FileIntake(c, tree),
    agents: new EngineAgents(c, tree),
    commands: new WorktreeCommands(c, tree),
    tree,
    commit: new LocalCommit(c, tree),
    replies: new Outbox(c, "replies"),
    tickets: new Outbox(c, "tickets"),
    progress: c.progress,
  };
}
