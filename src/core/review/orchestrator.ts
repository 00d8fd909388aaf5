/**
 * The thin orchestrator of a review-response run (seed 003, principles 1–5, 10): deterministic
 * control flow over the phases, with every judgment and every effect behind a port. The run
 * directory is the only channel: each phase's output is a named artifact, the state file holds
 * the phase cursor (so re-entry resumes where it stopped and never repeats a completed phase or
 * asks for an approval twice), a guard checks each phase's inputs before it runs, the gates
 * check the approval log against the artifacts' exact bytes, and a report is written on every
 * exit. Pure over ports; the adapters (local files and git, or a live pull request) supply them.
 */
import {
  checkDecisions,
  type Decision,
  filesOutsidePlan,
  proofVerdict,
  type ReviewPlan,
  zeroDiffItems,
} from "./doctrine.ts";
import {
  type ApprovalEntry,
  artifactHash as artifactHashOf,
  checkGate,
  type GateName,
} from "./gates.ts";
import {
  describeSeamViolation,
  guardSeam,
  PHASES,
  type Phase,
  type TerminalState,
} from "./phases.ts";
import { DEFAULT_LIMITS, type RefereeLimits, referee, type Verdict } from "./referee.ts";
import { composeReport } from "./report.ts";
import type { ReviewRequest } from "./request.ts";

export interface ReviewRunState {
  run_id: string;
  /** The next phase to run (the cursor); absent once the run has ended. */
  phase?: Phase;
  status: "running" | "awaiting-approval" | "ended";
  terminal?: TerminalState;
  /** What a paused gate waits for. */
  awaiting?: { gate: GateName; hash: string; artifact: string };
  build: { iteration: number; identical_retries: number; escalations: number };
  reason?: string;
  updated_at: string;
}

export interface PublishArtifact {
  commit_message: string;
  /** Files the commit changes (must all be in the approved plan). */
  files: string[];
  replies: { item: string; body: string }[];
  tickets: { item: string; title: string; body: string }[];
}

export interface Published {
  commit?: string;
  replies: number;
  tickets: number;
}

/** The run directory, as the orchestrator sees it. Adapters refuse writes to reserved names. */
export interface RunFiles {
  read(name: string): Promise<string | undefined>;
  write(name: string, text: string): Promise<void>;
  size(name: string): Promise<number | undefined>;
}

/** The steps: judgment (fresh-context agents) and effects (repository, publisher). */
export interface ReviewSteps {
  intake(): Promise<ReviewRequest>;
  /** Decisions from an earlier run on the same pull request: each matching item must be reaffirmed or reversed. */
  priorDecisions?(): Promise<Decision[]>;
  /** Files the repository protects (its AGENTS.md): never changed, whatever the plan says. */
  protectedFiles?(): Promise<string[]>;
  /** Extend-only files (AGENTS.md) the change modified or shortened instead of only adding to. */
  extendOnlyViolations?(): Promise<string[]>;
  decide(request: ReviewRequest): Promise<Decision[]>;
  plan(
    request: ReviewRequest,
    decisions: readonly Decision[],
  ): Promise<{ plan: ReviewPlan; markdown: string }>;
  /** Writes the planned tests and runs them: each must fail before any implementation. */
  writeRedTests(plan: ReviewPlan): Promise<{ test: string; failed: boolean }[]>;
  /** One implement → validate pass. */
  build(plan: ReviewPlan, iteration: number): Promise<Verdict>;
  /** Files changed so far, relative to the repository. */
  changedFiles(): Promise<string[]>;
  /** Reverts the production files only, runs the new tests, restores: each result with the change reverted. */
  prove(plan: ReviewPlan): Promise<{ test: string; passed: boolean }[]>;
  compose(decisions: readonly Decision[], plan: ReviewPlan | undefined): Promise<PublishArtifact>;
  /** Publishes; the adapter must itself call the publish gate check (see gates.assertGate). */
  publish(
    artifact: PublishArtifact,
    artifactText: string,
    approvals: readonly ApprovalEntry[],
  ): Promise<Published>;
}

export interface ReviewPorts {
  runId: string;
  files: RunFiles;
  readState(): Promise<ReviewRunState | undefined>;
  writeState(state: ReviewRunState): Promise<void>;
  approvals(): Promise<ApprovalEntry[]>;
  steps: ReviewSteps;
  now(): string;
  progress(line: string): void;
  limits?: RefereeLimits;
}

export type ReviewOutcome =
  | { status: "ended"; terminal: TerminalState; reason: string }
  | { status: "awaiting-approval"; gate: GateName; hash: string; artifact: string };

class Stop {
  constructor(
    readonly terminal: TerminalState,
    readonly reason: string,
  ) {}
}

const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;

export async function runReview(ports: ReviewPorts): Promise<ReviewOutcome> {
  let state: ReviewRunState = (await ports.readState()) ?? {
    run_id: ports.runId,
    phase: "intake",
    status: "running",
    build: { iteration: 0, identical_retries: 0, escalations: 0 },
    updated_at: ports.now(),
  };
  if (state.status === "ended" && state.terminal)
    return { status: "ended", terminal: state.terminal, reason: state.reason ?? "" };
  const save = async (patch: Partial<ReviewRunState>) => {
    state = { ...state, ...patch, updated_at: ports.now() };
    await ports.writeState(state);
  };
  const readJson = async <T>(name: string): Promise<T> =>
    JSON.parse((await ports.files.read(name)) ?? "null") as T;
  const limits = ports.limits ?? DEFAULT_LIMITS;

  try {
    while (state.phase !== undefined) {
      const phase = state.phase;
      const violations = [];
      for (const v of guardSeam(phase, () => undefined)) {
        const size = await ports.files.size(v.file);
        if (size === undefined || size === 0)
          violations.push({
            ...v,
            problem: size === undefined ? ("missing" as const) : ("empty" as const),
          });
      }
      if (violations.length > 0)
        throw new Stop("stuck", violations.map(describeSeamViolation).join("; "));
      ports.progress(`phase ${phase}`);
      const next = PHASES[PHASES.indexOf(phase) + 1];

      switch (phase) {
        case "intake": {
          let request: ReviewRequest;
          try {
            request = await ports.steps.intake();
          } catch (e) {
            throw new Stop("bad-input", `the request could not be read: ${(e as Error).message}`);
          }
          await ports.files.write("request.json", json(request));
          break;
        }
        case "decide": {
          const request = await readJson<ReviewRequest>("request.json");
          const decisions = await ports.steps.decide(request);
          const unresolved = request.threads.filter((t) => !t.resolved).map((t) => t.id);
          const prior = (await ports.steps.priorDecisions?.()) ?? [];
          const priorItems = prior.map((p) => p.item).filter((id) => unresolved.includes(id));
          const problems = checkDecisions(decisions, { itemIds: unresolved, priorItems });
          if (problems.length > 0) {
            throw new Stop(
              "stuck",
              `the decisions break the doctrine: ${problems.map((p) => `${p.item ?? ""} ${p.problem}`.trim()).join("; ")}`,
            );
          }
          await ports.files.write("decisions.json", json({ decisions }));
          if (decisions.every((d) => d.action === "none"))
            throw new Stop("nothing-to-do", "no item needs a change, a reply or a ticket");
          break;
        }
        case "plan": {
          const request = await readJson<ReviewRequest>("request.json");
          const { decisions } = await readJson<{ decisions: Decision[] }>("decisions.json");
          const fixes = decisions.filter((d) => d.action === "fix");
          if (fixes.length === 0) {
            // Zero-diff decisions only: nothing to plan, build or prove; go straight to composing replies.
            await ports.files.write(
              "plan.json",
              json({ files: [], test_files: [], tests: [], conventions: [], items: [] }),
            );
            await ports.files.write(
              "plan.md",
              "No code change: every decided action leaves the tree untouched.\n",
            );
            await save({ phase: "compose" });
            continue;
          }
          const { plan, markdown } = await ports.steps.plan(request, decisions);
          await ports.files.write("plan.json", json(plan));
          await ports.files.write("plan.md", markdown);
          break;
        }
        case "gate-plan":
        case "gate-publish": {
          const gate: GateName = phase === "gate-plan" ? "plan" : "publish";
          const artifact = gate === "plan" ? "plan.json" : "publish.json";
          const bytes = (await ports.files.read(artifact)) ?? "";
          const log = await ports.approvals();
          const check = checkGate(gate, bytes, log);
          if (
            !check.ok &&
            log.some((a) => a.gate === gate && a.hash === check.hash && a.decision === "deny")
          ) {
            throw new Stop(
              "not-approved",
              `the ${gate} gate's ${artifact} (${check.hash}) was refused`,
            );
          }
          if (!check.ok) {
            await save({
              status: "awaiting-approval",
              awaiting: { gate, hash: check.hash, artifact },
            });
            ports.progress(`gate ${gate}: waiting for approval of ${artifact} (${check.hash})`);
            return { status: "awaiting-approval", gate, hash: check.hash, artifact };
          }
          await save({ status: "running", awaiting: undefined });
          break;
        }
        case "red-tests": {
          const plan = await readJson<ReviewPlan>("plan.json");
          const results = await ports.steps.writeRedTests(plan);
          await ports.files.write("red-tests.json", json({ tests: results }));
          const passing = results.filter((r) => !r.failed).map((r) => r.test);
          if (passing.length > 0)
            throw new Stop(
              "stuck",
              `the new tests must fail before any implementation; these pass: ${passing.join(", ")}`,
            );
          break;
        }
        case "build": {
          const plan = await readJson<ReviewPlan>("plan.json");
          // The loop's history survives a restart: it is the verdict files of this run.
          const history: Verdict[] = [];
          for (let i = 1; i <= state.build.iteration; i++) {
            const v = await ports.files.read(`verdict-${i}.json`);
            if (v) history.push(JSON.parse(v) as Verdict);
          }
          for (;;) {
            const iteration = state.build.iteration + 1;
            const verdict = await ports.steps.build(plan, iteration);
            await ports.files.write(`verdict-${iteration}.json`, json(verdict));
            await ports.files.write("verdict.json", json(verdict));
            const ruling = referee(
              verdict,
              {
                history,
                identicalRetries: state.build.identical_retries,
                escalations: state.build.escalations,
              },
              limits,
            );
            history.push(verdict);
            ports.progress(`build ${iteration}: ${ruling.decision} (${ruling.rule})`);
            await save({
              build: {
                iteration,
                identical_retries:
                  ruling.decision === "RETRY_MECHANICAL" ? state.build.identical_retries + 1 : 0,
                escalations: state.build.escalations + (ruling.decision === "ESCALATE" ? 1 : 0),
              },
            });
            if (ruling.decision === "STOP_OK") break;
            if (ruling.decision === "STOP_STUCK") throw new Stop("stuck", ruling.rule);
            if (ruling.decision === "ESCALATE") {
              // Back to planning; the new plan has a new hash and needs a fresh approval.
              await save({ phase: "plan" });
              break;
            }
          }
          if (state.phase === "plan") continue;
          const outside = filesOutsidePlan(
            await ports.steps.changedFiles(),
            plan,
            (await ports.steps.protectedFiles?.()) ?? [],
          );
          if (outside.length > 0)
            throw new Stop(
              "stuck",
              `the build touched files outside the approved plan or protected by the repository: ${outside.join(", ")}`,
            );
          const shortened = (await ports.steps.extendOnlyViolations?.()) ?? [];
          if (shortened.length > 0) {
            throw new Stop(
              "stuck",
              `the build changed extend-only files other than by adding to them: ${shortened.join(", ")}`,
            );
          }
          break;
        }
        case "prove": {
          const plan = await readJson<ReviewPlan>("plan.json");
          const results = await ports.steps.prove(plan);
          const proof = proofVerdict(results);
          await ports.files.write("proof.json", json({ ...proof, results }));
          break;
        }
        case "compose": {
          const { decisions } = await readJson<{ decisions: Decision[] }>("decisions.json");
          const plan = await readJson<ReviewPlan>("plan.json");
          const artifact = await ports.steps.compose(
            decisions,
            plan.files.length > 0 ? plan : undefined,
          );
          const outside = filesOutsidePlan(
            artifact.files,
            plan,
            (await ports.steps.protectedFiles?.()) ?? [],
          );
          if (outside.length > 0)
            throw new Stop(
              "stuck",
              `the commit would touch files outside the approved plan or protected by the repository: ${outside.join(", ")}`,
            );
          const praised = new Set(decisions.filter((d) => d.class === "praise").map((d) => d.item));
          if (artifact.replies.some((r) => praised.has(r.item)))
            throw new Stop("stuck", "the composed replies answer praise");
          if (plan.files.length === 0 && artifact.files.length > 0) {
            throw new Stop(
              "stuck",
              `zero-diff decisions (${zeroDiffItems(decisions).join(", ")}) but the commit changes files`,
            );
          }
          await ports.files.write("publish.json", json(artifact));
          break;
        }
        case "publish": {
          // Exactly once: a recorded result means it happened; a start marker without a result
          // means it may have partly happened, which only a human can check.
          if ((await ports.files.size("published.json")) === undefined) {
            if ((await ports.files.size("publishing.json")) !== undefined) {
              throw new Stop(
                "stuck",
                "publishing started in an earlier attempt and its outcome was not recorded; check the branch and the threads by hand before publishing again",
              );
            }
            const text = (await ports.files.read("publish.json")) ?? "";
            await ports.files.write(
              "publishing.json",
              json({ started_at: ports.now(), publish: artifactHashOf(text) }),
            );
            const published = await ports.steps.publish(
              JSON.parse(text) as PublishArtifact,
              text,
              await ports.approvals(),
            );
            await ports.files.write("published.json", json(published));
          }
          break;
        }
        case "report": {
          const proofText = await ports.files.read("proof.json");
          const proof = proofText
            ? (JSON.parse(proofText) as { verdict: "proven" | "vacuous"; vacuous: string[] })
            : undefined;
          const terminal: TerminalState =
            proof?.verdict === "vacuous" ? "done-but-unproven" : "done";
          throw new Stop(
            terminal,
            terminal === "done"
              ? "published; every new test is proven to test the change"
              : proof
                ? "published, but some new tests pass with the change reverted"
                : "published replies and tickets; no code change to prove",
          );
        }
      }
      await save({ phase: next });
    }
    throw new Stop("stuck", "the run ran out of phases without a report");
  } catch (e) {
    if (!(e instanceof Stop)) throw e;
    return end(ports, state, e.terminal, e.reason);
  }
}

async function end(
  ports: ReviewPorts,
  state: ReviewRunState,
  terminal: TerminalState,
  reason: string,
): Promise<ReviewOutcome> {
  const read = async <T>(name: string): Promise<T | undefined> => {
    const t = await ports.files.read(name);
    return t ? (JSON.parse(t) as T) : undefined;
  };
  const decisions = (await read<{ decisions: Decision[] }>("decisions.json"))?.decisions;
  const proof = await read<{ vacuous: string[] }>("proof.json");
  const published = await read<Published>("published.json");
  const report = composeReport({
    terminal,
    reason,
    ...(state.phase ? { phase: state.phase } : {}),
    ...(decisions ? { decisions } : {}),
    ...(proof ? { vacuousTests: proof.vacuous } : {}),
    ...(published ? { published } : {}),
  });
  await ports.files.write("report.md", report);
  const ended: ReviewRunState = {
    ...state,
    status: "ended",
    terminal,
    reason,
    updated_at: ports.now(),
  };
  delete ended.phase;
  await ports.writeState(ended);
  ports.progress(`ended: ${terminal} (${reason})`);
  return { status: "ended", terminal, reason };
}

/** A run is abandoned when it is neither ended nor paused and its state has not moved for `maxIdleMs`. */
export function isAbandoned(state: ReviewRunState, nowMs: number, maxIdleMs: number): boolean {
  return state.status === "running" && nowMs - Date.parse(state.updated_at) > maxIdleMs;
}

/**
 * The sweeper's record of an abandoned run (seed 003, principle 10: a run abandoned mid-flight
 * leaves nothing unless something else writes a record): the report and the ended state.
 */
export function abandonedRecord(
  state: ReviewRunState,
  now: string,
): { report: string; state: ReviewRunState } {
  const reason = `abandoned mid-flight in phase ${state.phase ?? "?"}: no progress since ${state.updated_at}; found by the sweeper`;
  const ended: ReviewRunState = {
    ...state,
    status: "ended",
    terminal: "stuck",
    reason,
    updated_at: now,
  };
  delete ended.phase;
  return {
    report: composeReport({
      terminal: "stuck",
      reason,
      ...(state.phase ? { phase: state.phase } : {}),
    }),
    state: ended,
  };
}
