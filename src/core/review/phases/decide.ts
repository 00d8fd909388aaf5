/**
 * Decide: a fresh-context agent classifies every unresolved item and picks an action (docs/review-doctrine.md,
 * doctrines 11–17; docs/review-decisions.md); decisions that break the doctrine stop the run
 * naming each item and what is wrong with it, and a run whose every action is `none` has
 * nothing to do.
 */
import { anchorGoneAtHead, checkDecisions, describeDoctrineProblems } from "../doctrine.ts";
import { end, type PhaseDefinition } from "../phase.ts";

export const decidePhase: PhaseDefinition<"decide"> = {
  name: "decide",
  reads: ["request.json"],
  optionalReads: [],
  writes: ["decisions.json"],
  async run(ctx) {
    const request = await ctx.read("request.json");
    const decisions = await ctx.ports.steps.decide(request);
    const open = request.threads.filter((t) => !t.resolved);
    const unresolved = open.map((t) => t.id);
    const prior = ((await ctx.ports.steps.priorDecisions?.()) ?? []).filter((p) =>
      unresolved.includes(p.item),
    );
    const problems = checkDecisions(decisions, {
      itemIds: unresolved,
      prior,
      head: request.head,
      anchorGone: open.filter(anchorGoneAtHead).map((t) => t.id),
    });
    if (problems.length > 0) return end("stuck", describeDoctrineProblems(problems));
    await ctx.write("decisions.json", { decisions });
    if (decisions.every((d) => d.action === "none"))
      return end("nothing-to-do", "no item needs a change, a reply or a ticket");
    return undefined;
  },
};
