/**
 * The doctrine of a review-response run's steps, over effect ports (effects.ts): what the
 * agents are given (comment text only as data blocks, directions found in it recorded whatever
 * the agent says), the repository's facts from its AGENTS.md (never guessed, credentials never
 * passed), which writes each agent may make, how a validation pass becomes a verdict and its
 * failure signature, what counts as touched (changed tracked files and files an agent wrote,
 * never what the repository's own commands left behind), the plan's Markdown, and the commit
 * message, replies and tickets. Local mode and the GitHub App supply the effects; both get
 * exactly this. Pure over its ports.
 */
import { createHash } from "node:crypto";
import { createTwoFilesPatch } from "diff";
import { ModelUnavailable } from "../engine/ports.ts";
import {
  anchorGoneAtHead,
  type Decision,
  type DoctrineProblem,
  type DoctrineRepair,
  decisionsSchema,
  executedWithoutRun,
  planSchema,
  type ReviewPlan,
  repairInput,
  type StandardsFinding,
  standardsFindingsSchema,
} from "./doctrine.ts";
import type { AgentCall, ReviewEffects } from "./effects.ts";
import { failureSignature, observedFailureClass } from "./failure-facts.ts";
import { type ApprovalEntry, artifactHash } from "./gates.ts";
import { RunEnd, RunPaused } from "./phase.ts";
import type {
  BuildContext,
  PublishArtifact,
  Published,
  ReviewSteps,
  RunFiles,
  StandardsReview,
  TestResult,
} from "./ports.ts";
import type { Verdict } from "./referee.ts";
import {
  type CommandFact,
  GATE_FACTS,
  isAppendedAtEnd,
  matchesAnyRepoPattern,
  missingFacts,
  parseAgentsMd,
  passableEnvNames,
  REQUIRED_FACTS,
  type RepoFacts,
} from "./repo-facts.ts";
import {
  type Provenance,
  parseRequest,
  provenance,
  type ReviewRequest,
  requestSchema,
} from "./request.ts";
import {
  parseTestReportFormat,
  type TestReportFormat,
  testEvidence,
  testRan,
} from "./test-evidence.ts";
import { asDataBlock } from "./untrusted-text.ts";

/** The run-directory file where the agents' writes are kept across sessions (not an artifact). */
export const WRITTEN_FILE = "agents-written.json";

/**
 * The repository's single-test command for one test. The test's name comes from the plan, which
 * an agent wrote, so it never becomes shell text: the command reads it from TERFYN_TEST_NAME.
 */
export function singleTestInvocation(
  template: string,
  test: string,
): { command: string; env: Record<string, string> } {
  return {
    command: template.replace(NAME_PLACEHOLDER, "$TERFYN_TEST_NAME"),
    env: { TERFYN_TEST_NAME: test },
  };
}

/** Where the single-test command takes the test's name. */
const NAME_PLACEHOLDER = /<name>|\{\{name\}\}|\{name\}/g;

/** The last lines of a command's output: the evidence a verdict carries. */
export function outputTail(output: string, lines = 20): string {
  return output.split("\n").slice(-lines).join("\n");
}

/** A failing command's output as the next build pass is shown it: its last 200 lines, at most 16,000 characters. */
export function failureOutput(output: string): string {
  const tail = outputTail(output, 200);
  return tail.length > 16_000 ? `[…]${tail.slice(-16_000)}` : tail;
}

/** A unified diff of one file against the head (binary or not UTF-8: named, not shown). */
function textPatch(
  path: string,
  head: Uint8Array | undefined,
  now: Uint8Array | undefined,
): string {
  const text = (b: Uint8Array | undefined) => {
    if (b === undefined) return "";
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(b);
    } catch {
      return undefined;
    }
  };
  const before = text(head);
  const after = text(now);
  if (before === undefined || after === undefined || before.includes("\0") || after.includes("\0"))
    return `Binary file ${path} differs\n`;
  return createTwoFilesPatch(
    head === undefined ? "/dev/null" : `a/${path}`,
    now === undefined ? "/dev/null" : `b/${path}`,
    before,
    after,
    undefined,
    undefined,
    { context: 3 },
  );
}

/** The most of one file's diff a reviewer is shown inline; it reads the file for the rest. */
export const MAX_REVIEWED_DIFF = 40_000;

function boundedDiff(patch: string): string {
  if (patch.length <= MAX_REVIEWED_DIFF) return patch;
  return `${patch.slice(0, MAX_REVIEWED_DIFF)}\n… (the diff goes on for ${patch.length - MAX_REVIEWED_DIFF} more characters: read the file)\n`;
}

/**
 * A fix's reply with what the prover showed, said by Terfyn rather than by the agent that wrote
 * the reply before any test existed: "not proven" goes first, so nobody reads a claim the proof
 * did not back.
 */
function withProof(
  d: Decision,
  reply: string,
  proof: { plan: ReviewPlan; results: readonly TestResult<"passed">[] } | undefined,
): string {
  if (d.action !== "fix" || !proof || !proof.plan.items.includes(d.item)) return reply;
  const names = (rs: readonly TestResult<"passed">[]) =>
    rs.map((r) => JSON.stringify(r.test)).join(", ");
  const unproven = proof.results.filter((r) => r.passed || r.ran === false);
  const proven = proof.results.filter((r) => !r.passed && r.ran !== false);
  const one = (n: number, singular: string, plural: string) => (n === 1 ? singular : plural);
  if (unproven.length > 0)
    return `Not proven: ${names(unproven)} still ${one(unproven.length, "passes", "pass")} (or did not run) with this change reverted, so ${one(unproven.length, "it does", "they do")} not show the fix.\n\n${reply}`;
  return proven.length > 0
    ? `${reply}\n\nProof: ${names(proven)} ${one(proven.length, "fails", "fail")} with the production change reverted and ${one(proven.length, "passes", "pass")} with it.`
    : reply;
}

/** The Markdown a plan gate shows. */
export function planMarkdown(plan: ReviewPlan): string {
  return [
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
}

/** The commit message, replies and tickets of a run's decisions; `files` is what the commit changes. */
export function composeArtifact(
  decisions: readonly Decision[],
  files: readonly string[],
  proof?: { plan: ReviewPlan; results: readonly TestResult<"passed">[] },
): PublishArtifact {
  const fixes = decisions.filter((d) => d.action === "fix");
  return {
    commit_message:
      fixes.length > 0 && files.length > 0
        ? `Address review: ${fixes.map((d) => d.item).join(", ")}\n\n${fixes.map((d) => `- ${d.item}: ${d.evidence || d.detail}`).join("\n")}\n`
        : "",
    files: [...files].sort(),
    replies: decisions
      .filter((d) => d.class !== "praise" && d.reply?.trim())
      .map((d) => ({ item: d.item, body: withProof(d, d.reply as string, proof) })),
    tickets: decisions
      .filter((d) => d.action === "ticket")
      .map((d) => ({
        item: d.item,
        title: `Follow-up from review ${d.item}`,
        body: d.evidence || d.detail,
      })),
  };
}

/** A request as intake saved it: with each unresolved thread's provenance (doctrine 14). */
type RequestWithProvenance = ReviewRequest & { provenance?: readonly Provenance[] };

/**
 * Each unresolved thread's provenance: the commit it was made against, how far behind head
 * that is, whether its anchor moved, and whether its anchored code is gone at head. From what
 * intake recorded; a request without it (never through intake) counts distances as unknown (-1).
 */
export function threadProvenance(
  request: RequestWithProvenance,
): Map<string, NonNullable<Decision["provenance"]>> {
  const recorded = request.provenance ?? provenance(request, () => null);
  const threads = new Map(request.threads.map((t) => [t.id, t]));
  return new Map(
    recorded.flatMap((p) => {
      const t = threads.get(p.thread);
      if (!t) return [];
      return [
        [
          p.thread,
          {
            made_against: p.made_against,
            commits_behind: p.commits_behind,
            anchor_moved: p.anchor_moved,
            anchor_gone: anchorGoneAtHead(t),
          },
        ] as const,
      ];
    }),
  );
}

/**
 * What the Decider is given for a request: the unresolved threads, each with its provenance and
 * each comment as a data block, and the earlier run's decisions (`--prior`) it must reaffirm or
 * reverse.
 */
export function deciderInput(request: RequestWithProvenance, prior: readonly Decision[]) {
  const provenanceOf = threadProvenance(request);
  return {
    head: request.head,
    threads: request.threads
      .filter((t) => !t.resolved)
      .map((t) => ({
        id: t.id,
        path: t.path,
        line: t.line,
        original_line: t.original_line,
        original_commit: t.original_commit,
        outdated: t.outdated,
        ...(provenanceOf.has(t.id) ? { provenance: provenanceOf.get(t.id) } : {}),
        comments: t.comments.map((c) => ({
          author: c.author,
          commit: c.commit,
          text: asDataBlock("review-comment", `${t.id}/${c.id}`, c.body).block,
        })),
      })),
    prior_decisions: prior,
  };
}

/**
 * The decisions of a plan's items, as the TestWriter and the Builder are shown them: what each
 * item is and why it is wrong (the reason a planned test must fail). Replies and directions
 * found in comments are not theirs to see.
 */
export function decisionsFor(plan: ReviewPlan, decisions: readonly Decision[]) {
  return decisions
    .filter((d) => plan.items.includes(d.item))
    .map((d) => ({
      item: d.item,
      class: d.class,
      evidence: d.evidence,
      harm: d.harm,
      ...(d.path !== undefined ? { path: d.path } : {}),
    }));
}

/**
 * A build pass's input: the plan's fields (an input the ReviewPlan schema still accepts), the
 * decisions of its items, how each red test failed and, after a failed pass, why it failed.
 * Test output is the repository's (its tests print what a pull request made them print), so it
 * reaches the Builder only inside the untrusted-data fence.
 */
export function buildInput(plan: ReviewPlan, iteration: number, context?: BuildContext) {
  const fenced = (id: string, text: string) => asDataBlock("test-output", id, text).block;
  const previous = context?.previous;
  return {
    ...plan,
    iteration,
    decisions: decisionsFor(plan, context?.decisions ?? []),
    red_tests: (context?.redTests ?? []).map((t) => ({
      test: t.test,
      failed: t.failed,
      ...(t.evidence !== undefined ? { evidence: fenced(t.test, t.evidence) } : {}),
    })),
    ...(previous?.status === "fail"
      ? {
          previous_failure: {
            reason: previous.reason,
            ...(previous.failure_class ? { failure_class: previous.failure_class } : {}),
            ...(previous.failure_evidence !== undefined
              ? { failure_evidence: fenced("previous-pass-class", previous.failure_evidence) }
              : {}),
            output: fenced("previous-pass", previous.output ?? previous.evidence),
          },
        }
      : {}),
  };
}

/**
 * The decisions as an agent after the Decider reads them: each injected direction (text taken
 * from a comment) inside its own untrusted-data block, never as a bare string it could take for
 * an instruction. The decisions file keeps them as found.
 */
export function fenceDirections(decisions: readonly Decision[]): Decision[] {
  return decisions.map((d) => ({
    ...d,
    injected_directions: d.injected_directions.map(
      (text, i) => asDataBlock("injected-direction", `${d.item}.${i + 1}`, text).block,
    ),
  }));
}

/**
 * Directions found in each thread's comments, and the thread's provenance: recorded on its
 * decision whether or not (and whatever) the agent reported of them.
 */
export function withInjectedDirections(
  request: RequestWithProvenance,
  decisions: readonly Decision[],
): Decision[] {
  const provenanceOf = threadProvenance(request);
  const found = new Map(
    request.threads.map((t) => [
      t.id,
      t.comments.flatMap(
        (c) => asDataBlock("review-comment", c.id, c.body).sanitized.injectedDirections,
      ),
    ]),
  );
  return decisions.map((d) => {
    const { provenance: _claimed, ...rest } = d;
    const recorded = provenanceOf.get(d.item);
    return {
      ...rest,
      injected_directions: [...new Set([...d.injected_directions, ...(found.get(d.item) ?? [])])],
      ...(recorded ? { provenance: recorded } : {}),
    };
  });
}

/** A failure of an effect the run cannot go past: the run ends stuck with this reason. */
function stuck(what: string, e: unknown): never {
  if (e instanceof RunEnd || e instanceof RunPaused) throw e;
  // The model's API not answering is the environment's failure, not the run's: it pauses.
  if (e instanceof ModelUnavailable) throw new RunPaused(`${what}: ${e.message}`);
  throw new RunEnd("stuck", `${what}: ${(e as Error).message}`);
}

export interface DoctrineStepsOptions {
  /** The run directory: the saved request, and the agents' writes. */
  files: RunFiles;
}

export class DoctrineSteps implements ReviewSteps {
  private facts: RepoFacts | undefined;
  private request: ReviewRequest | undefined;
  /** The request was read from the run directory: this session resumes a run begun earlier. */
  private resumed = false;
  /** Each step's completed tool operations, from its agent's journal (AgentPort). */
  private readonly operations = new Map<string, string[]>();

  constructor(
    private readonly fx: ReviewEffects,
    private readonly o: DoctrineStepsOptions,
  ) {}

  /** The request intake saved (a resumed run skips intake). */
  private async currentRequest(): Promise<ReviewRequest> {
    if (this.request) return this.request;
    const saved = await this.o.files.read("request.json");
    if (saved === undefined) throw new RunEnd("stuck", "the run has no request.json");
    const parsed = requestSchema.safeParse(JSON.parse(saved));
    if (!parsed.success) throw new RunEnd("stuck", "the run's request.json is not a request");
    this.request = parsed.data;
    this.resumed = true;
    return this.request;
  }

  /** The run's work tree, at the request's head. */
  private async tree() {
    const { head } = await this.currentRequest();
    let created = false;
    try {
      created = await this.fx.tree.prepare(head);
    } catch (e) {
      stuck("the run's work tree could not be prepared", e);
    }
    // A resumed run in a work tree made just now (a GitHub Actions job on a fresh machine, or
    // a tree removed since the run paused): what the intake's install made is not there, so
    // the install runs again before any agent or command needs it.
    if (created && this.resumed) await this.install();
    return this.fx.tree;
  }

  /** The repository's own install command, when it declares one; a failure stops the run. */
  private async install(): Promise<void> {
    const install = (await this.repoFacts()).commands.install;
    if (!install) return;
    const r = await this.sh(install, {}, "install");
    if (r.code !== 0)
      throw new RunEnd(
        "stuck",
        `the repository's install command \`${install}\` ${r.timedOut ? "timed out" : `exited ${r.code}`}: ${outputTail(r.output, 5).trim() || "no output"}`,
      );
  }

  /**
   * The repository's facts, from its AGENTS.md as the request's head commit has it: a Builder
   * whose plan includes AGENTS.md cannot change the commands the rest of the run (or a resumed
   * session) runs.
   */
  private async repoFacts(): Promise<RepoFacts> {
    if (this.facts) return this.facts;
    const text = await (await this.tree()).readAtHead("AGENTS.md");
    if (text === undefined)
      throw new RunEnd(
        "bad-input",
        "the repository has no AGENTS.md, so its commands (install, test, single test, lint, format, typecheck) are unknown; add them there",
      );
    const facts = parseAgentsMd(text);
    const { refused } = passableEnvNames(facts.environment ?? []);
    if (refused.length > 0)
      this.fx.progress(
        `AGENTS.md asks for ${refused.join(", ")} in the environment; refused: a repository never gets the run's credentials`,
      );
    const missing = missingFacts(facts, REQUIRED_FACTS);
    if (missing.length > 0)
      throw new RunEnd(
        "bad-input",
        `AGENTS.md does not declare: ${missing.join(", ")}; the run never guesses a command`,
      );
    // A single-test command that does not take the name runs everything (or nothing) for each test.
    if (!new RegExp(NAME_PLACEHOLDER.source).test(facts.commands["single test"] ?? ""))
      throw new RunEnd(
        "bad-input",
        `AGENTS.md's single test command \`${facts.commands["single test"]}\` does not take the test's name: write <name> where it goes`,
      );
    const report = parseTestReportFormat(facts.testReport);
    if (typeof report === "string") throw new RunEnd("bad-input", `AGENTS.md: ${report}`);
    this.report = report;
    this.facts = facts;
    return facts;
  }

  private report: TestReportFormat = { kind: "summary" };

  private async passEnv(): Promise<string[]> {
    return passableEnvNames((await this.repoFacts()).environment ?? []).passed;
  }

  private async command(fact: "test" | "single test"): Promise<string> {
    const command = (await this.repoFacts()).commands[fact];
    if (!command) throw new RunEnd("bad-input", `AGENTS.md does not declare the ${fact} command`);
    return command;
  }

  private async sh(command: string, env: Record<string, string>, fact: CommandFact) {
    await this.tree();
    const network = (await this.repoFacts()).network?.includes(fact) ?? false;
    try {
      return await this.fx.commands.run(command, {
        env,
        passEnv: await this.passEnv(),
        ...(network ? { network } : {}),
      });
    } catch (e) {
      return stuck(`the repository command \`${command}\` could not be run`, e);
    }
  }

  /** One agent, in a workspace that may write only `writable`; what it wrote is recorded. */
  private async agent(
    agent: string,
    step: string,
    input: unknown,
    writable: readonly string[] = [],
  ): Promise<unknown> {
    const facts = await this.repoFacts();
    await this.tree();
    const call: AgentCall = {
      agent,
      step,
      input,
      writable,
      passEnv: await this.passEnv(),
      ...(facts.commands.test ? { testCommand: facts.commands.test } : {}),
      ...(facts.network?.includes("test") ? { testNetwork: true } : {}),
    };
    let out: Awaited<ReturnType<ReviewEffects["agents"]["run"]>>;
    try {
      out = await this.fx.agents.run(call);
    } catch (e) {
      return stuck(`agent ${agent} (${step}) did not finish`, e);
    }
    await this.recordWritten(out.written);
    this.operations.set(step, out.operations ?? []);
    return out.result;
  }

  private async writtenFiles(): Promise<Set<string>> {
    const text = await this.o.files.read(WRITTEN_FILE);
    if (text === undefined) return new Set();
    try {
      const list = JSON.parse(text);
      return new Set(Array.isArray(list) ? list.filter((f) => typeof f === "string") : []);
    } catch {
      throw new RunEnd("stuck", `the run's ${WRITTEN_FILE} is not a JSON list`);
    }
  }

  private async recordWritten(paths: readonly string[]): Promise<void> {
    if (paths.length === 0) return;
    const all = [...new Set([...(await this.writtenFiles()), ...paths])].sort();
    await this.o.files.write(WRITTEN_FILE, `${JSON.stringify(all, null, 2)}\n`);
  }

  /** A parse of agent output: a shape the doctrine does not accept ends the run stuck, naming it. */
  private parsed<T>(
    agent: string,
    schema: { safeParse(v: unknown): { success: boolean; data?: T; error?: unknown } },
    v: unknown,
  ): T {
    const r = schema.safeParse(v);
    if (!r.success || r.data === undefined)
      throw new RunEnd("stuck", `the ${agent}'s output does not have the shape the doctrine needs`);
    return r.data;
  }

  async intake(): Promise<ReviewRequest> {
    const { text, source } = await this.fx.intake.receive();
    const parsed = parseRequest(text, source);
    if (parsed.problems) throw new Error(parsed.problems.join("; "));
    const { request } = parsed;
    const head = await this.fx.intake.branchTip(request.branch);
    if (head === undefined)
      throw new Error(`the repository has no branch ${request.branch}, which the request names`);
    if (head !== request.head && !head.startsWith(request.head))
      throw new Error(
        `the request names head ${request.head} but the branch is at ${head}: the branch moved; stop and say so`,
      );
    this.request = request;
    const distances = new Map<string, number | null>();
    for (const t of request.threads)
      for (const c of t.comments)
        if (!distances.has(c.commit))
          distances.set(c.commit, (await this.fx.intake.commitsBetween(c.commit, head)) ?? null);
    // The repository's facts are read at intake, so a repository that declares none is bad input.
    try {
      await this.repoFacts();
    } catch (e) {
      if (e instanceof RunEnd) throw new Error(e.reason);
      throw e;
    }
    // The run's work tree is a fresh checkout: the repository's own install command (when it
    // declares one) runs once, before any agent or test needs what it installs.
    await this.install();
    return {
      ...request,
      provenance: provenance(request, (sha) => distances.get(sha) ?? null),
    } as ReviewRequest;
  }

  async priorDecisions(): Promise<Decision[]> {
    const prior = await this.fx.intake.priorDecisions?.();
    if (!prior) return [];
    let raw: unknown;
    try {
      raw = JSON.parse(prior.text);
    } catch (e) {
      throw new RunEnd("bad-input", `${prior.source} is not JSON: ${(e as Error).message}`);
    }
    const parsed = decisionsSchema.safeParse(raw);
    if (!parsed.success)
      throw new RunEnd("bad-input", `${prior.source} is not a decisions file of a review run`);
    return parsed.data.decisions;
  }

  /**
   * The Decider's decisions, with what Terfyn found itself recorded on them (directions in the
   * comments, each thread's provenance). An `executed` claim is checked against the tool
   * operations the Decider's journal shows: with no run_tests or command call, the run ends
   * stuck naming the items.
   */
  async decide(request: ReviewRequest, repair?: DoctrineRepair<Decision[]>): Promise<Decision[]> {
    const prior = await this.priorDecisions();
    const input = deciderInput(request, prior);
    // The repair turn is its own agent step (its own journal), in a fresh context: the first
    // answer, and each rule it broke, are its input.
    const out = repair
      ? await this.agent("Decider", "decide-repair", {
          ...input,
          repair: repairInput({ decisions: repair.previous }, repair.problems),
        })
      : await this.agent("Decider", "decide", input);
    const { decisions } = this.parsed("Decider", decisionsSchema, out);
    return withInjectedDirections(request, decisions);
  }

  /**
   * Decisions that claim `executed` when none of the Decider's steps in this run (its first
   * answer and its repair) ran anything: checked against its journals, not its word.
   */
  executionProblems(decisions: readonly Decision[]): DoctrineProblem[] {
    return executedWithoutRun(decisions, [
      ...(this.operations.get("decide") ?? []),
      ...(this.operations.get("decide-repair") ?? []),
    ]);
  }

  async protectedFiles(): Promise<string[]> {
    return (await this.repoFacts()).protected;
  }

  async extendOnlyViolations(): Promise<string[]> {
    const extendOnly = (await this.repoFacts()).extendOnly;
    const tree = await this.tree();
    const out: string[] = [];
    for (const file of await this.changedFiles()) {
      if (!matchesAnyRepoPattern(file, extendOnly)) continue;
      // Appended at the end only: an insertion in the middle, an edit or a removal is refused.
      const { head, worktree } = await tree.fileVersions(file);
      if (!isAppendedAtEnd(head, worktree)) out.push(file);
    }
    return out;
  }

  async plan(
    _request: ReviewRequest,
    decisions: readonly Decision[],
    round: { n: number; failure?: Verdict } = { n: 1 },
    repair?: DoctrineRepair<ReviewPlan>,
  ): Promise<{ plan: ReviewPlan; markdown: string }> {
    // Each round is its own agent step (its own journal): a re-plan is planned afresh, with the
    // failure that escalated it, never replayed from the first round's answer. A repair turn is
    // a step of its own too.
    const step = `${round.n === 1 ? "plan" : `plan-${round.n}`}${repair ? "-repair" : ""}`;
    const failure = round.failure && {
      reason: round.failure.reason,
      failure_class: round.failure.failure_class,
      failure_evidence: round.failure.failure_evidence,
      evidence: round.failure.evidence,
    };
    // What came from a comment reaches the Planner only inside the untrusted-data fence.
    const fenced = fenceDirections(decisions);
    const input = {
      decisions: fenced,
      ...(round.n === 1 ? {} : { round: round.n, failure }),
      ...(repair ? { repair: repairInput(repair.previous, repair.problems) } : {}),
    };
    const plan = this.parsed("Planner", planSchema, await this.agent("Planner", step, input));
    return { plan, markdown: planMarkdown(plan) };
  }

  /** What a plan breaks that the repository's facts show: a plan that changes code names the conventions it relies on (doctrine 18). */
  async planProblems(plan: ReviewPlan): Promise<DoctrineProblem[]> {
    const conventions = (await this.repoFacts()).conventions ?? [];
    const changesCode = plan.files.length > 0 || plan.test_files.length > 0;
    if (changesCode && conventions.length > 0 && plan.conventions.length === 0)
      return [
        {
          problem: `the plan names none of the conventions the repository's AGENTS.md declares (${conventions.length}); a plan says which of them it follows`,
        },
      ];
    return [];
  }

  /** One planned test through the single-test command: its exit, and whether its output shows it ran. */
  private async runSingleTest(
    test: string,
  ): Promise<{ passed: boolean; ran: boolean; evidence: string }> {
    const { command, env } = singleTestInvocation(await this.command("single test"), test);
    const tree = await this.tree();
    // A report left by an earlier run must not count for this one.
    if (this.report.kind === "junit") await tree.takeFile(this.report.path);
    const r = await this.sh(command, env, "single test");
    const xml = this.report.kind === "junit" ? await tree.takeFile(this.report.path) : undefined;
    const e = testEvidence(this.report, test, r.output, xml);
    const ran = testRan(e);
    const count = e.ran === undefined ? "no count of tests run" : `${e.ran} ran`;
    const named = e.named === false ? `, none named ${JSON.stringify(test)}` : "";
    return {
      passed: r.code === 0,
      ran,
      evidence: `exit ${r.code}${r.timedOut ? " (timed out)" : ""}; ${e.source}: ${count}${named} (${e.detail})`,
    };
  }

  async writeRedTests(
    plan: ReviewPlan,
    round = 1,
    context: { decisions: readonly Decision[] } = { decisions: [] },
  ): Promise<TestResult<"failed">[]> {
    // The plan's fields as they are (an input the ReviewPlan schema still accepts), and the
    // decisions of its items: the reason each test must fail.
    const input = { ...plan, decisions: decisionsFor(plan, context.decisions) };
    await this.agent(
      "TestWriter",
      round === 1 ? "red-tests" : `red-tests-${round}`,
      input,
      plan.test_files,
    );
    const out: TestResult<"failed">[] = [];
    for (const test of plan.tests) {
      const r = await this.runSingleTest(test);
      out.push({ test, failed: !r.passed, ran: r.ran, evidence: r.evidence });
    }
    return out;
  }

  async build(plan: ReviewPlan, iteration: number, context?: BuildContext): Promise<Verdict> {
    await this.agent(
      "Builder",
      `build-${iteration}`,
      buildInput(plan, iteration, context),
      plan.files,
    );
    const facts = await this.repoFacts();
    const suite = await this.sh(await this.command("test"), {}, "test");
    const gates: NonNullable<Verdict["gates"]> = [
      {
        gate: "test",
        command: facts.commands.test,
        status: suite.code === 0 ? "pass" : "fail",
        code: suite.code,
      },
    ];
    // Every other gate the repository declares runs too; one it does not declare is reported.
    let failedGate: { gate: string; code: number; output: string; timedOut: boolean } | undefined;
    for (const gate of GATE_FACTS) {
      const command = facts.commands[gate];
      if (!command) {
        gates.push({ gate, status: "not declared" });
        continue;
      }
      const r = await this.sh(command, {}, gate);
      gates.push({ gate, command, status: r.code === 0 ? "pass" : "fail", code: r.code });
      if (r.code !== 0 && !failedGate) failedGate = { gate, ...r };
    }
    const newTests: NonNullable<Verdict["new_tests"]> = [];
    for (const test of plan.tests) newTests.push({ test, ...(await this.runSingleTest(test)) });
    const newTestsRun = newTests.filter((t) => t.passed && t.ran).length;
    const common = {
      attempt: await this.attemptId(),
      tests_run: plan.tests.length,
      new_tests_run: newTestsRun,
      gates,
      new_tests: newTests,
    };
    if (suite.code === 0 && !failedGate)
      return {
        status: "pass",
        ...common,
        reason:
          newTestsRun === plan.tests.length
            ? "every declared gate passed"
            : `every declared gate passed, but ${plan.tests.length - newTestsRun} new test(s) show no evidence of running`,
        evidence: outputTail(suite.output),
      };
    const failing =
      suite.code !== 0
        ? { gate: "test", ...suite }
        : (failedGate as NonNullable<typeof failedGate>);
    const tail = outputTail(failing.output);
    const signature = failureSignature(failing.gate, failing.code, tail, [
      (await this.tree()).location(),
    ]);
    const observed = observedFailureClass(failing);
    return {
      status: "fail",
      ...common,
      failure_class: observed.failure_class,
      failure_evidence: observed.evidence,
      reason: failing.timedOut
        ? `the ${failing.gate} command timed out`
        : `the ${failing.gate} command exited ${failing.code}`,
      evidence: tail,
      output: failureOutput(failing.output),
      failure_signature: signature,
    };
  }

  /** A content id of what the run has changed: the same attempt twice has the same id. */
  private async attemptId(): Promise<string> {
    const hashes = await this.contentHashes(await this.changedFiles());
    return createHash("sha256").update(JSON.stringify(hashes)).digest("hex").slice(0, 16);
  }

  /** Each file's content hash in the work tree (null: it does not exist), sorted by path. */
  private async contentHashes(
    files: readonly string[],
  ): Promise<NonNullable<PublishArtifact["content"]>> {
    const tree = await this.tree();
    const out: NonNullable<PublishArtifact["content"]> = [];
    for (const path of [...files].sort()) {
      const { worktree } = await tree.fileVersions(path);
      out.push({ path, sha256: worktree ? artifactHash(worktree) : null });
    }
    return out;
  }

  async currentHead(): Promise<string> {
    const { branch } = await this.currentRequest();
    return (await this.fx.tree.currentHead(branch)) ?? `(no branch ${branch})`;
  }

  /**
   * What the run touched: tracked files that changed, and files an agent wrote that git does not
   * track (ignored or not). Untracked files nobody wrote (a test run's caches, coverage, build
   * output) are not edits.
   */
  async changedFiles(): Promise<string[]> {
    const tree = await this.tree();
    const written = [...(await this.writtenFiles())];
    const created = written.length > 0 ? await tree.untrackedAmong(written) : [];
    return [...new Set([...(await tree.trackedChanges()), ...created])].sort();
  }

  async prove(plan: ReviewPlan): Promise<TestResult<"passed">[]> {
    const tree = await this.tree();
    const results: TestResult<"passed">[] = [];
    const putBack = await tree.revert(plan.files);
    try {
      for (const test of plan.tests) results.push({ test, ...(await this.runSingleTest(test)) });
    } finally {
      await putBack();
    }
    return results;
  }

  /** The files the commit would change: what the run changed, of the files the plan lists. */
  private async committedFiles(plan: ReviewPlan): Promise<string[]> {
    return (await this.changedFiles()).filter(
      (f) => plan.files.includes(f) || plan.test_files.includes(f),
    );
  }

  /**
   * The standards lane: the StandardsReviewer (read-only, a fresh context) is shown the
   * conventions AGENTS.md declares at head and each file's change against head, each diff inside
   * an untrusted-data block (agent-written code may carry directions of its own).
   */
  async standards(
    plan: ReviewPlan,
    repair?: DoctrineRepair<StandardsFinding[]>,
  ): Promise<StandardsReview> {
    const facts = await this.repoFacts();
    const files = await this.committedFiles(plan);
    const conventions = facts.conventions ?? [];
    if (conventions.length === 0 && facts.protected.length === 0 && facts.extendOnly.length === 0)
      return {
        files,
        findings: [],
        skipped:
          "AGENTS.md declares no conventions, protected or extend-only files: there is nothing to review the change against",
      };
    const changes = [];
    for (const path of files) {
      changes.push({
        path,
        diff: asDataBlock("change", path, boundedDiff(await this.patchOf(path))).block,
      });
    }
    const input = {
      conventions,
      protected: facts.protected,
      extend_only: facts.extendOnly,
      plan_conventions: plan.conventions,
      changes,
      ...(repair ? { repair: repairInput({ findings: repair.previous }, repair.problems) } : {}),
    };
    const out = await this.agent(
      "StandardsReviewer",
      repair ? "standards-repair" : "standards",
      input,
    );
    return {
      files,
      findings: this.parsed("StandardsReviewer", standardsFindingsSchema, out).findings,
    };
  }

  async compose(
    decisions: readonly Decision[],
    plan: ReviewPlan | undefined,
    proof?: readonly TestResult<"passed">[],
  ): Promise<PublishArtifact> {
    const files = plan ? await this.committedFiles(plan) : [];
    return {
      ...composeArtifact(decisions, files, plan && proof ? { plan, results: proof } : undefined),
      ...(await this.contentOf(files)),
    };
  }

  /**
   * What the commit would contain, bound into the publish artifact (docs/review-doctrine.md,
   * doctrine 5): each file's content hash (null: deleted) and the diff against the head, so the
   * approval is of these bytes and an edit after it shows as a mismatch.
   */
  private async contentOf(
    files: readonly string[],
  ): Promise<Required<Pick<PublishArtifact, "content" | "diff">>> {
    const patches: string[] = [];
    for (const path of [...files].sort()) patches.push(await this.patchOf(path));
    return { content: await this.contentHashes(files), diff: patches.join("") };
  }

  /** One file's change against the head, as a unified diff. */
  private async patchOf(path: string): Promise<string> {
    const { head, worktree } = await (await this.tree()).fileVersions(path);
    return textPatch(path, head, worktree);
  }

  /** The files whose content is no longer what the publish artifact bound (edited after composing). */
  async changedSinceComposed(artifact: PublishArtifact): Promise<string[]> {
    if (!artifact.content) return [];
    const content = await this.contentHashes(artifact.content.map((c) => c.path));
    const now = new Map(content.map((c) => [c.path, c.sha256]));
    const bound = new Set(artifact.content.map((c) => c.path));
    return [
      ...artifact.content.filter((c) => now.get(c.path) !== c.sha256).map((c) => c.path),
      ...artifact.files.filter((f) => !bound.has(f)),
    ];
  }

  async resetWork(): Promise<string[]> {
    const changed = await this.changedFiles();
    if (changed.length > 0) await (await this.tree()).revert(changed);
    return changed;
  }

  async release(): Promise<void> {
    await this.fx.tree.release();
  }

  /** The three publishers in turn; each checks the publish gate itself before it acts. */
  async publish(
    artifact: PublishArtifact,
    text: string,
    approvals: readonly ApprovalEntry[],
  ): Promise<Published> {
    const { branch, head } = await this.currentRequest();
    await this.tree();
    // The approval is of these bytes: a file edited since (by anyone) voids it.
    const edited = await this.changedSinceComposed(artifact);
    if (edited.length > 0)
      throw new Error(
        `${edited.join(", ")} changed after the publish artifact was composed and approved; the approval does not cover them, so nothing was published`,
      );
    const { commit } =
      artifact.files.length > 0
        ? await this.fx.commit.publish(artifact, text, approvals, { branch, head })
        : {};
    const replies = await this.fx.replies.publish(artifact, text, approvals);
    const tickets = await this.fx.tickets.publish(artifact, text, approvals);
    return { ...(commit ? { commit } : {}), replies, tickets };
  }
}
