/**
 * Standards (principle 18): after the build is proven, a fresh-context reviewer reads the real
 * change against the repository's conventions (its AGENTS.md), one finding at least for every
 * file the commit would change. A review that misses a file, or reviews one the change does not
 * touch, gets one repair turn naming what it broke, then ends the run stuck; a change that
 * breaks a convention is not published: the run ends stuck naming each finding.
 */
import {
  brokenStandards,
  describeDoctrineProblems,
  type StandardsFinding,
  standardsProblems,
} from "../doctrine.ts";
import { end, type PhaseDefinition } from "../phase.ts";

export const standardsPhase: PhaseDefinition<"standards"> = {
  name: "standards",
  reads: ["plan.json"],
  optionalReads: [],
  writes: ["standards.json"],
  async run(ctx) {
    const plan = await ctx.read("plan.json");
    const { steps } = ctx.ports;
    let review = await steps.standards(plan);
    const problemsOf = (findings: readonly StandardsFinding[], files: readonly string[]) =>
      review.skipped === undefined ? standardsProblems(findings, files) : [];
    let problems = problemsOf(review.findings, review.files);
    if (problems.length > 0) {
      // One repair turn, naming each rule broken; broken again, the run ends stuck.
      review = await steps.standards(plan, { previous: review.findings, problems });
      problems = problemsOf(review.findings, review.files);
    }
    await ctx.write("standards.json", review);
    if (problems.length > 0)
      return end(
        "stuck",
        describeDoctrineProblems(
          problems,
          "after a repair turn, the standards review still breaks",
        ),
      );
    const broken = brokenStandards(review.findings);
    if (broken.length > 0)
      return end(
        "stuck",
        `the change breaks the repository's conventions, so it is not published: ${broken.join("; ")}`,
      );
    return undefined;
  },
};
