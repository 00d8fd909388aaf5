/**
 * Decide: a fresh-context agent classifies every unresolved item and picks an action (docs/review-doctrine.md,
 * doctrines 11–17; docs/review-decisions.md); decisions that break the doctrine stop the run
 * naming each item and what is wrong with it, and a run whose every action is `none` has
 * nothing to do.
 */
import {
  anchorGoneAtHead,
  checkDecisions,
  type Decision,
  describeDoctrineProblems,
} from "../doctrine.ts";
import { end, type PhaseDefinition } from "../phase.ts";

export const decidePhase: PhaseDefinition<"decide"> = {
  name: "decide",
  reads: ["request.json"],
  optionalReads: [],
  writes: ["decisions.json"],
  async run(ctx) {
    const request = await ctx.read("request.json");
    const { steps } = ctx.ports;
    const open = request.threads.filter((t) => !t.resolved);
    const unresolved = open.map((t) => t.id);
    const prior = ((await steps.priorDecisions?.()) ?? []).filter((p) =>
      unresolved.includes(p.item),
    );
    const problemsOf = (decisions: Decision[]) => [
      ...checkDecisions(decisions, {
        itemIds: unresolved,
        prior,
        head: request.head,
        anchorGone: open.filter(anchorGoneAtHead).map((t) => t.id),
      }),
      ...(steps.executionProblems?.(decisions) ?? []),
    ];
    let decisions = await steps.decide(request);
    let problems = problemsOf(decisions);
    if (problems.length > 0) {
      // One repair turn, naming each rule broken; broken again, the run ends stuck.
      decisions = await steps.decide(request, { previous: decisions, problems });
      problems = problemsOf(decisions);
      if (problems.length > 0)
        return end(
          "stuck",
          describeDoctrineProblems(problems, "after a repair turn, the decisions still break"),
        );
    }
    await ctx.write("decisions.json", { decisions });
    if (decisions.every((d) => d.action === "none"))
      return end("nothing-to-do", "no item needs a change, a reply or a ticket");
    return undefined;
  },
};
