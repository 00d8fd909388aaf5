/** Red tests (docs/review-doctrine.md, doctrine 8): the planned tests are written first and must fail before any implementation. */
import { end, type PhaseDefinition } from "../phase.ts";

export const redTestsPhase: PhaseDefinition<"red-tests"> = {
  name: "red-tests",
  reads: ["plan.json", "decisions.json"],
  optionalReads: [],
  writes: ["red-tests.json"],
  async run(ctx) {
    const plan = await ctx.read("plan.json");
    const { decisions } = await ctx.read("decisions.json");
    const results = await ctx.ports.steps.writeRedTests(plan, ctx.state().build.escalations + 1, {
      decisions,
    });
    await ctx.write("red-tests.json", { tests: results });
    // First: did they run at all? A command that ran no test (a renamed test, a pattern matching
    // nothing) exits 0 or fails without any test having failed.
    const notRun = results.filter((r) => r.ran === false);
    if (notRun.length > 0)
      return end(
        "stuck",
        `the new tests must run and fail, but the output shows these did not run: ${notRun.map((r) => `${r.test} (${r.evidence ?? "no evidence"})`).join("; ")}`,
      );
    const passing = results.filter((r) => !r.failed).map((r) => r.test);
    if (passing.length > 0)
      return end(
        "stuck",
        `the new tests must fail before any implementation; these pass: ${passing.join(", ")}`,
      );
    return undefined;
  },
};
