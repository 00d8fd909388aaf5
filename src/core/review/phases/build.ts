/**
 * The build loop (docs/review-doctrine.md, doctrine 7): implement → validate passes, each verdict ruled on by
 * the deterministic referee, never by the agent inside the loop. An escalation goes back to
 * planning (a new plan, a fresh approval). When the loop goes green, nothing outside the
 * approved plan or protected by the repository may have changed, and extend-only files may only
 * have been added to.
 */
import { filesOutsidePlan } from "../doctrine.ts";
import { end, type PhaseDefinition } from "../phase.ts";
import { referee, type Verdict } from "../referee.ts";

/**
 * The same attempt (unchanged files) failing differently from the last pass is mechanical: a
 * flaky test or service, to be retried as it is, not "fixed" by changing code.
 */
function sameAttemptFailingDifferently(verdict: Verdict, previous: Verdict | undefined): Verdict {
  if (
    verdict.status === "fail" &&
    verdict.failure_class === "tactical" &&
    previous?.status === "fail" &&
    previous.attempt !== undefined &&
    previous.attempt === verdict.attempt &&
    previous.failure_signature !== verdict.failure_signature
  )
    return {
      ...verdict,
      failure_class: "mechanical",
      failure_evidence: `the same attempt (unchanged files, ${verdict.attempt}) failed differently than the last pass (${previous.failure_signature} then ${verdict.failure_signature}): flaky, not wrong`,
    };
  return verdict;
}

export const buildPhase: PhaseDefinition<"build"> = {
  name: "build",
  reads: ["plan.json", "red-tests.json", "decisions.json"],
  optionalReads: ["verdict-<n>.json"],
  writes: ["verdict.json", "verdict-<n>.json"],
  async run(ctx) {
    const plan = await ctx.read("plan.json");
    const { decisions } = await ctx.read("decisions.json");
    const redTests = (await ctx.read("red-tests.json")).tests;
    // The loop's history survives a restart: it is the verdict files of this run.
    const history: Verdict[] = [];
    for (let i = 1; i <= ctx.state().build.iteration; i++) {
      const v = await ctx.readOptional("verdict-<n>.json", i);
      if (v) history.push(v);
    }
    for (;;) {
      const { build } = ctx.state();
      const iteration = build.iteration + 1;
      const last = history.at(-1);
      const verdict = sameAttemptFailingDifferently(
        await ctx.ports.steps.build(plan, iteration, {
          decisions,
          redTests,
          ...(last?.status === "fail" ? { previous: last } : {}),
        }),
        last,
      );
      await ctx.write("verdict-<n>.json", verdict, iteration);
      await ctx.write("verdict.json", verdict);
      const ruling = referee(
        verdict,
        { history, identicalRetries: build.identical_retries, escalations: build.escalations },
        ctx.limits,
      );
      history.push(verdict);
      ctx.ports.progress(`build ${iteration}: ${ruling.decision} (${ruling.rule})`);
      await ctx.save({
        build: {
          iteration,
          identical_retries:
            ruling.decision === "RETRY_MECHANICAL" ? build.identical_retries + 1 : 0,
          escalations: build.escalations + (ruling.decision === "ESCALATE" ? 1 : 0),
        },
      });
      if (ruling.decision === "STOP_OK") break;
      if (ruling.decision === "STOP_STUCK") return end("stuck", ruling.rule);
      // Back to planning, from the head: what this plan's round changed is put back, so the next
      // round's red tests must fail against the old code again. The new plan names its round, so
      // it has a new hash and needs a fresh approval.
      if (ruling.decision === "ESCALATE") {
        const reset = (await ctx.ports.steps.resetWork?.()) ?? [];
        if (reset.length > 0)
          ctx.ports.progress(`re-planning from the head: put back ${reset.join(", ")}`);
        return { next: "plan" };
      }
    }
    const outside = filesOutsidePlan(
      await ctx.ports.steps.changedFiles(),
      plan,
      (await ctx.ports.steps.protectedFiles?.()) ?? [],
    );
    if (outside.length > 0)
      return end(
        "stuck",
        `the build touched files outside the approved plan or protected by the repository: ${outside.join(", ")}`,
      );
    const shortened = (await ctx.ports.steps.extendOnlyViolations?.()) ?? [];
    if (shortened.length > 0)
      return end(
        "stuck",
        `the build changed extend-only files other than by adding to them: ${shortened.join(", ")}`,
      );
    return undefined;
  },
};
