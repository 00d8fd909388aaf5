/**
 * Plan: the files to touch and the failing tests to write first. With no `fix` decision there is
 * nothing to plan, build or prove: an empty plan goes straight to composing the replies. A plan
 * naming a path outside the repository (absolute, `..`, `.git`) is refused here, bad-input,
 * before any gate shows it or any phase acts on it.
 */
import {
  describeDoctrineProblems,
  planCoverageProblems,
  planPathProblems,
  type ReviewPlan,
} from "../doctrine.ts";
import { end, type PhaseDefinition } from "../phase.ts";

export const planPhase: PhaseDefinition<"plan"> = {
  name: "plan",
  reads: ["request.json", "decisions.json"],
  optionalReads: ["verdict.json"],
  writes: ["plan.json", "plan.md"],
  async run(ctx) {
    const request = await ctx.read("request.json");
    const { decisions } = await ctx.read("decisions.json");
    if (!decisions.some((d) => d.action === "fix")) {
      await ctx.write("plan.json", {
        files: [],
        test_files: [],
        tests: [],
        conventions: [],
        items: [],
      });
      await ctx.write(
        "plan.md",
        "No code change: every decided action leaves the tree untouched.\n",
      );
      return { next: "compose" };
    }
    // A re-plan (after an escalation) is a new round: planned afresh from the failure, and the
    // plan names its round, so even an identical plan has new bytes and needs a new approval.
    const round = ctx.state().build.escalations + 1;
    const failure = round > 1 ? await ctx.readOptional("verdict.json") : undefined;
    const { steps } = ctx.ports;
    const roundOf = { n: round, ...(failure ? { failure } : {}) };
    let planned = await steps.plan(request, decisions, roundOf);
    const problemsOf = async (p: ReviewPlan) => [
      ...planCoverageProblems(decisions, p),
      ...((await steps.planProblems?.(p)) ?? []),
    ];
    let problems = await problemsOf(planned.plan);
    if (problems.length > 0 && planPathProblems(planned.plan).length === 0) {
      // One repair turn, naming each rule broken; broken again, the run ends stuck.
      planned = await steps.plan(request, decisions, roundOf, {
        previous: planned.plan,
        problems,
      });
      problems = await problemsOf(planned.plan);
    }
    const plan = round > 1 ? { ...planned.plan, round } : planned.plan;
    const markdown =
      round > 1
        ? `${planned.markdown}\nPlanning round ${round}, after: ${failure?.reason ?? "an escalation"}\n`
        : planned.markdown;
    const outside = planPathProblems(plan);
    if (outside.length > 0)
      return end(
        "bad-input",
        `the plan names paths that are not files of the repository: ${outside.join("; ")}`,
      );
    if (problems.length > 0)
      return end(
        "stuck",
        describeDoctrineProblems(problems, "after a repair turn, the plan still breaks"),
      );
    await ctx.write("plan.json", plan);
    await ctx.write("plan.md", markdown);
    return undefined;
  },
};
