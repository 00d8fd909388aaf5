/**
 * The steps of a review-response run in local mode (docs/review-doctrine.md, doctrine 9): the request comes
 * from a file, judgment from the agents in agents/review-response through the engine (fresh
 * context each, comment text only as data blocks), commands from the repository's AGENTS.md,
 * and publishing is a normal commit on the branch (parent = the head the request named) plus
 * outbox/replies.json and outbox/tickets.json. The App's adapter differs only in intake and
 * publish.
 *
 * The user's checkout is never touched: the run works in its own linked worktree (detached at
 * the request's head, next to the run directory or under the OS temp dir, never inside the
 * repository's work tree), reused on resume only while it is still at that head, and removed
 * when the run ends. Each agent's workspace may write only what its step may change (TestWriter
 * the plan's test files, Builder its production files, the others nothing); what the agents
 * wrote is recorded, and only those files and changed tracked files count as touched, so what
 * the repository's own commands leave behind (caches, coverage, build output) is not an edit.
 * Publishing commits in the worktree and moves the branch fast-forward only.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, realpath, rename, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { runAgentStep } from "../../core/engine/interpreter.ts";
import type { IrProgram } from "../../core/engine/ir.ts";
import type { ModelPort, ToolPort } from "../../core/engine/ports.ts";
import type { ResolvedProject } from "../../core/model/project.ts";
import {
  type Decision,
  decisionsSchema,
  planSchema,
  type ReviewPlan,
} from "../../core/review/doctrine.ts";
import { assertGate } from "../../core/review/gates.ts";
import type { PublishArtifact, ReviewSteps } from "../../core/review/orchestrator.ts";
import { RunEnd } from "../../core/review/phase.ts";
import type { Verdict } from "../../core/review/referee.ts";
import {
  isAppendedAtEnd,
  matchesAnyRepoPattern,
  missingFacts,
  parseAgentsMd,
  passableEnvNames,
  type RepoFacts,
} from "../../core/review/repo-facts.ts";
import {
  parseRequest,
  provenance,
  type ReviewRequest,
  requestSchema,
} from "../../core/review/request.ts";
import { asDataBlock } from "../../core/review/untrusted-text.ts";
import { RunStore } from "../fs/run-store.ts";
import { BranchWriter } from "../git/branch-writer.ts";
import { WorkspaceTool } from "../workspace/workspace-tool.ts";
import { runRepoCommand } from "./repo-command.ts";

export interface LocalStepsConfig {
  repoDir: string;
  /** An earlier run's directory on the same pull request, whose decisions must be reaffirmed or reversed. */
  priorRunDir?: string;
  requestFile: string;
  runDir: string;
  agents: ResolvedProject;
  model: ModelPort;
  progress: (line: string) => void;
  /**
   * Where the run's own worktree goes. Default: `<run dir>.worktree` next to the run directory,
   * or a directory under the OS temp dir when the run directory is inside the repository.
   */
  worktreeDir?: string;
  /** Variables (by name) the repository's commands also see, besides PATH, HOME, LANG, TMPDIR. */
  passEnv?: readonly string[];
  /** The environment passEnv and the base variables are read from. Default: process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Timeout of each repository command. Default 10 minutes. */
  commandTimeoutMs?: number;
}

/**
 * The repository's single-test command for one test. The test's name comes from the plan, which
 * an agent wrote, so it never becomes shell text: the command reads it from TERFYN_TEST_NAME.
 */
export function singleTestInvocation(
  template: string,
  test: string,
): { command: string; env: Record<string, string> } {
  return {
    command: template.replace(/<name>|\{\{name\}\}|\{name\}/g, "$TERFYN_TEST_NAME"),
    env: { TERFYN_TEST_NAME: test },
  };
}

const EMPTY_PROGRAM: IrProgram = { entry: "", workflows: {}, agents: [], hash: "" };

export class LocalReviewSteps implements ReviewSteps {
  private facts: RepoFacts = { commands: {}, protected: [], extendOnly: [] };
  private request: ReviewRequest | undefined;
  private repoWriter: BranchWriter | undefined;
  private worktreeWriter: BranchWriter | undefined;

  constructor(private readonly c: LocalStepsConfig) {}

  /** The user's repository: read, and its branch moved fast-forward at publish. Never its files. */
  private async repo(): Promise<BranchWriter> {
    this.repoWriter ??= await BranchWriter.open(this.c.repoDir);
    return this.repoWriter;
  }

  /** The run's own worktree: where agents write, commands run and the commit is made. */
  private async git(): Promise<BranchWriter> {
    if (this.worktreeWriter) return this.worktreeWriter;
    const head = (await this.currentRequest()).head;
    const dir = await this.worktreePath();
    if (existsSync(dir)) {
      const w = await BranchWriter.open(dir);
      const at = await w.head();
      if (w.root !== (await realpath(dir)) || !at.startsWith(head))
        throw new RunEnd(
          "stuck",
          `the run's worktree ${dir} is at ${at}, not the request's head ${head}: it was changed outside the run, so what the run wrote there cannot be trusted`,
        );
      this.worktreeWriter = w;
    } else {
      await mkdir(dirname(dir), { recursive: true });
      this.worktreeWriter = await (await this.repo()).addWorktree(dir, head);
    }
    return this.worktreeWriter;
  }

  /** The directory the agents and the repository's commands work in (the run's worktree). */
  async workspaceRoot(): Promise<string> {
    return (await this.git()).root;
  }

  /** Variables the repository's commands see besides the base ones: run configuration, then AGENTS.md's safe names. */
  private passEnv(): string[] {
    return [
      ...new Set([
        ...(this.c.passEnv ?? []),
        ...passableEnvNames(this.facts.environment ?? []).passed,
      ]),
    ];
  }

  private async worktreePath(): Promise<string> {
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

  /** The run has ended: its worktree goes (the branch and the user's checkout stay as they are). */
  async release(): Promise<void> {
    const dir = await this.worktreePath();
    this.worktreeWriter = undefined;
    if (existsSync(dir)) await (await this.repo()).removeWorktree(dir);
  }

  private writtenPath(): string {
    return join(this.c.runDir, "agents", "written.json");
  }

  /** Every file an agent wrote in this run (the workspace tool's record, kept across sessions). */
  private async writtenFiles(): Promise<Set<string>> {
    try {
      return new Set(JSON.parse(await readFile(this.writtenPath(), "utf8")) as string[]);
    } catch {
      return new Set();
    }
  }

  private async recordWritten(paths: readonly string[]): Promise<void> {
    if (paths.length === 0) return;
    const all = [...new Set([...(await this.writtenFiles()), ...paths])].sort();
    await mkdir(dirname(this.writtenPath()), { recursive: true });
    const tmp = `${this.writtenPath()}.tmp`;
    await writeFile(tmp, `${JSON.stringify(all, null, 2)}\n`);
    await rename(tmp, this.writtenPath());
  }

  private async loadFacts(): Promise<RepoFacts> {
    let text = "";
    const root = await this.workspaceRoot();
    try {
      text = await readFile(join(root, "AGENTS.md"), "utf8");
    } catch {
      throw new Error(
        "the repository has no AGENTS.md, so its commands (install, test, single test, lint, format, typecheck) are unknown; add them there",
      );
    }
    const facts = parseAgentsMd(text);
    const { refused } = passableEnvNames(facts.environment ?? []);
    if (refused.length > 0)
      this.c.progress(
        `AGENTS.md asks for ${refused.join(", ")} in the environment; refused: a repository never gets the run's credentials`,
      );
    const missing = missingFacts(facts);
    if (missing.length > 0)
      throw new Error(
        `AGENTS.md does not declare: ${missing.join(", ")}; the run never guesses a command`,
      );
    this.facts = facts;
    return facts;
  }

  private async currentRequest(): Promise<ReviewRequest> {
    if (!this.request) {
      const saved = join(this.c.runDir, "request.json");
      if (existsSync(saved))
        this.request = requestSchema.parse(JSON.parse(await readFile(saved, "utf8")));
      else {
        const parsed = parseRequest(await readFile(this.c.requestFile, "utf8"), "request.json");
        if (parsed.problems) throw new Error(parsed.problems.join("; "));
        this.request = parsed.request;
      }
    }
    return this.request;
  }

  async intake(): Promise<ReviewRequest> {
    let text: string;
    try {
      text = await readFile(this.c.requestFile, "utf8");
    } catch (e) {
      throw new Error(`cannot read ${this.c.requestFile}: ${(e as NodeJS.ErrnoException).code}`);
    }
    const parsed = parseRequest(text, basename(this.c.requestFile));
    if (parsed.problems) throw new Error(parsed.problems.join("; "));
    const { request } = parsed;
    const repo = await this.repo();
    const head = await repo.branchTip(request.branch);
    if (head === undefined)
      throw new Error(`the repository has no branch ${request.branch}, which the request names`);
    if (head !== request.head && !head.startsWith(request.head)) {
      throw new Error(
        `the request names head ${request.head} but the branch is at ${head}: the branch moved; stop and say so`,
      );
    }
    this.request = request;
    await this.loadFacts();
    const distances = new Map<string, number | null>();
    for (const t of request.threads) {
      for (const c of t.comments)
        if (!distances.has(c.commit))
          distances.set(c.commit, (await repo.commitsBetween(c.commit, head)) ?? null);
    }
    return {
      ...request,
      provenance: provenance(request, (sha) => distances.get(sha) ?? null),
    } as ReviewRequest;
  }

  /** The repository's facts, read again in every session (a resumed run skips intake). */
  private async ensureFacts(): Promise<RepoFacts> {
    return this.facts.commands.test ? this.facts : this.loadFacts();
  }

  private async command(fact: "test" | "single test"): Promise<string> {
    const command = (await this.ensureFacts()).commands[fact];
    if (!command) throw new Error(`AGENTS.md does not declare the ${fact} command`);
    return command;
  }

  /** One agent step, in a workspace that may write only `writable`. */
  private async agent(
    name: string,
    step: string,
    input: unknown,
    writable: readonly string[] = [],
  ): Promise<unknown> {
    const facts = await this.ensureFacts();
    const ws = await WorkspaceTool.open({
      root: await this.workspaceRoot(),
      writable,
      passEnv: this.passEnv(),
      env: this.c.env ?? process.env,
      ...(this.c.commandTimeoutMs ? { testTimeoutMs: this.c.commandTimeoutMs } : {}),
      ...(facts.commands.test ? { testCommand: facts.commands.test } : {}),
    });
    const tools: ToolPort = { execute: (call) => ws.execute(call.operation, call.input) };
    const store = await RunStore.create(join(this.c.runDir, "agents", step));
    try {
      const history = await store.readJournal();
      const outcome = await runAgentStep({
        runId: `review:${step}`,
        project: this.c.agents,
        program: EMPTY_PROGRAM,
        input,
        history,
        approvals: new Set(),
        agent: name,
        step,
        ports: {
          model: this.c.model,
          tools,
          journal: store,
          checkpoint: async () => {},
          progress: (l) => this.c.progress(`${step}: ${l}`),
        },
      });
      if (outcome.status !== "completed")
        throw new Error(
          `agent ${name} (${step}) did not finish: ${"error" in outcome ? outcome.error : outcome.status}`,
        );
      return outcome.result;
    } finally {
      store.close();
      await this.recordWritten(ws.written);
    }
  }

  async priorDecisions(): Promise<Decision[]> {
    if (!this.c.priorRunDir) return [];
    try {
      return decisionsSchema.parse(
        JSON.parse(await readFile(join(this.c.priorRunDir, "decisions.json"), "utf8")),
      ).decisions;
    } catch (e) {
      throw new Error(
        `the prior run ${this.c.priorRunDir} has no readable decisions.json: ${(e as Error).message}`,
      );
    }
  }

  async decide(request: ReviewRequest): Promise<Decision[]> {
    const threads = request.threads
      .filter((t) => !t.resolved)
      .map((t) => ({
        id: t.id,
        path: t.path,
        line: t.line,
        original_line: t.original_line,
        original_commit: t.original_commit,
        outdated: t.outdated,
        comments: t.comments.map((c) => ({
          author: c.author,
          commit: c.commit,
          text: asDataBlock("review-comment", `${t.id}/${c.id}`, c.body).block,
        })),
      }));
    const prior = await this.priorDecisions();
    const out = await this.agent("Decider", "decide", {
      head: request.head,
      threads,
      prior_decisions: prior,
    });
    // Directions found in the comments are recorded whether or not the agent reported them.
    const found = new Map(
      request.threads.map((t) => [
        t.id,
        t.comments.flatMap(
          (c) => asDataBlock("review-comment", c.id, c.body).sanitized.injectedDirections,
        ),
      ]),
    );
    return decisionsSchema.parse(out).decisions.map((d) => ({
      ...d,
      injected_directions: [...new Set([...d.injected_directions, ...(found.get(d.item) ?? [])])],
    }));
  }

  async protectedFiles(): Promise<string[]> {
    return (await this.ensureFacts()).protected;
  }

  async extendOnlyViolations(): Promise<string[]> {
    const extendOnly = (await this.ensureFacts()).extendOnly;
    const git = await this.git();
    const out: string[] = [];
    for (const file of await this.changedFiles()) {
      if (!matchesAnyRepoPattern(file, extendOnly)) continue;
      // Appended at the end only: an insertion in the middle, an edit or a removal is refused.
      const { head, worktree } = await git.fileVersions(file);
      if (!isAppendedAtEnd(head, worktree)) out.push(file);
    }
    return out;
  }

  async plan(
    _request: ReviewRequest,
    decisions: readonly Decision[],
  ): Promise<{ plan: ReviewPlan; markdown: string }> {
    const plan = planSchema.parse(await this.agent("Planner", "plan", { decisions }));
    const markdown = [
      "# Plan",
      "",
      `Items: ${plan.items.join(", ")}`,
      `Production files: ${plan.files.join(", ") || "none"}`,
      `Test files: ${plan.test_files.join(", ") || "none"}`,
      `Failing tests to write first: ${plan.tests.join(", ") || "none"}`,
      ...(plan.conventions.length > 0
        ? ["", "Conventions:", ...plan.conventions.map((c) => `- ${c}`)]
        : []),
      "",
    ].join("\n");
    return { plan, markdown };
  }

  private async runSingleTest(test: string): Promise<boolean> {
    const { command, env } = singleTestInvocation(await this.command("single test"), test);
    return (await this.sh(command, env)).code === 0;
  }

  async writeRedTests(plan: ReviewPlan): Promise<{ test: string; failed: boolean }[]> {
    await this.agent("TestWriter", "red-tests", plan, plan.test_files);
    const out: { test: string; failed: boolean }[] = [];
    for (const test of plan.tests) out.push({ test, failed: !(await this.runSingleTest(test)) });
    return out;
  }

  async build(plan: ReviewPlan, iteration: number): Promise<Verdict> {
    await this.agent("Builder", `build-${iteration}`, plan, plan.files);
    const suite = await this.sh(await this.command("test"));
    let newTestsRun = 0;
    for (const test of plan.tests) if (await this.runSingleTest(test)) newTestsRun++;
    const tail = suite.output.split("\n").slice(-20).join("\n");
    return suite.code === 0
      ? {
          status: "pass",
          tests_run: plan.tests.length,
          new_tests_run: newTestsRun,
          reason: "the test command passed",
          evidence: tail,
        }
      : {
          status: "fail",
          failure_class: "tactical",
          tests_run: plan.tests.length,
          new_tests_run: newTestsRun,
          reason: `the test command exited ${suite.code}`,
          evidence: tail,
          failure_signature: createHash("sha256")
            .update(`${suite.code}\n${tail.replace(/\d+(\.\d+)?ms/g, "")}`)
            .digest("hex")
            .slice(0, 16),
        };
  }

  /** Where the request's branch is now, in the user's repository. */
  async currentHead(): Promise<string> {
    const { branch } = await this.currentRequest();
    return (await (await this.repo()).branchTip(branch)) ?? `(no branch ${branch})`;
  }

  /**
   * What the run touched: tracked files that changed, and new files an agent wrote. Untracked
   * files nobody wrote (a test run's caches, coverage, build output) are not edits.
   */
  async changedFiles(): Promise<string[]> {
    const git = await this.git();
    const written = await this.writtenFiles();
    const created = (await git.untrackedFiles()).filter((f) => written.has(f));
    return [...new Set([...(await git.trackedChanges()), ...created])].sort();
  }

  async prove(plan: ReviewPlan): Promise<{ test: string; passed: boolean }[]> {
    const git = await this.git();
    const snapshot = await git.snapshot(plan.files);
    const results: { test: string; passed: boolean }[] = [];
    try {
      await git.revertToHead(plan.files);
      for (const test of plan.tests) results.push({ test, passed: await this.runSingleTest(test) });
    } finally {
      await git.restore(snapshot);
    }
    return results;
  }

  async compose(
    decisions: readonly Decision[],
    plan: ReviewPlan | undefined,
  ): Promise<PublishArtifact> {
    const fixes = decisions.filter((d) => d.action === "fix");
    const files = plan
      ? (await this.changedFiles()).filter(
          (f) => plan.files.includes(f) || plan.test_files.includes(f),
        )
      : [];
    return {
      commit_message:
        fixes.length > 0
          ? `Address review: ${fixes.map((d) => d.item).join(", ")}\n\n${fixes.map((d) => `- ${d.item}: ${d.evidence || d.detail}`).join("\n")}\n`
          : "",
      files: files.sort(),
      replies: decisions
        .filter((d) => d.class !== "praise" && d.reply?.trim())
        .map((d) => ({ item: d.item, body: d.reply as string })),
      tickets: decisions
        .filter((d) => d.action === "ticket")
        .map((d) => ({
          item: d.item,
          title: `Follow-up from review ${d.item}`,
          body: d.evidence || d.detail,
        })),
    };
  }

  async publish(
    artifact: PublishArtifact,
    text: string,
    approvals: Parameters<ReviewSteps["publish"]>[2],
  ) {
    assertGate("publish", text, approvals);
    const request = await this.currentRequest();
    let commit: string | undefined;
    if (artifact.files.length > 0) {
      commit = await (await this.git()).commit(
        artifact.commit_message,
        artifact.files,
        request.head,
      );
      const repo = await this.repo();
      await repo.fastForwardBranch(request.branch, request.head, commit);
      const checkedOut = await repo.branch().catch(() => undefined);
      if (checkedOut === request.branch)
        this.c.progress(
          `${request.branch} moved to ${commit}; it is checked out in ${repo.root}, whose files were left as they were: to bring them up to date, git restore --source=HEAD --staged --worktree -- ${artifact.files.join(" ")}`,
        );
    }
    const outbox = join(this.c.runDir, "outbox");
    await mkdir(outbox, { recursive: true });
    await writeFile(join(outbox, "replies.json"), `${JSON.stringify(artifact.replies, null, 2)}\n`);
    await writeFile(join(outbox, "tickets.json"), `${JSON.stringify(artifact.tickets, null, 2)}\n`);
    return {
      ...(commit ? { commit } : {}),
      replies: artifact.replies.length,
      tickets: artifact.tickets.length,
    };
  }

  /**
   * A command the repository declares (AGENTS.md), through the shell, in the run's worktree,
   * with a timeout, in its own process group, with a stripped environment (repo-command.ts).
   */
  private async sh(
    command: string,
    env: Record<string, string> = {},
  ): Promise<{ code: number; output: string }> {
    return runRepoCommand(command, {
      cwd: await this.workspaceRoot(),
      parentEnv: this.c.env ?? process.env,
      passEnv: this.passEnv(),
      env,
      ...(this.c.commandTimeoutMs ? { timeoutMs: this.c.commandTimeoutMs } : {}),
    });
  }
}
