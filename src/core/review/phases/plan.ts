/**
 * Plan: the files to touch and the failing tests to write first. With no `fix` decision there is
 * nothing to plan, build or prove: an empty plan goes straight to composing the replies.
 */
import type { PhaseDefinition } from "../phase.ts";

export const planPhase: PhaseDefinition<"plan"> = {
  name: "plan",
  reads: ["request.json", "decisions.json"],
  optionalReads: [],
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
    const { plan, markdown } = await ctx.ports.steps.plan(request, decisions);
    await ctx.write("plan.json", plan);
    await ctx.write("plan.md", markdown);
    return undefined;
  },
};
