/**
 * Decide: a fresh-context agent classifies every unresolved item and picks an action (docs/review-doctrine.md,
 * doctrines 11–17); decisions that break the doctrine stop the run, and a run whose every
 * action is `none` has nothing to do.
 */
import { checkDecisions } from "../doctrine.ts";
import { end, type PhaseDefinition } from "../phase.ts";

export const decidePhase: PhaseDefinition<"decide"> = {
  name: "decide",
  reads: ["request.json"],
  optionalReads: [],
  writes: ["decisions.json"],
  async run(ctx) {
    const request = await ctx.read("request.json");
    const decisions = await ctx.ports.steps.decide(request);
    const unresolved = request.threads.filter((t) => !t.resolved).map((t) => t.id);
    const prior = (await ctx.ports.steps.priorDecisions?.()) ?? [];
    const priorItems = prior.map((p) => p.item).filter((id) => unresolved.includes(id));
    const problems = checkDecisions(decisions, { itemIds: unresolved, priorItems });
    if (problems.length > 0)
      return end(
        "stuck",
        `the decisions break the doctrine: ${problems.map((p) => `${p.item ?? ""} ${p.problem}`.trim()).join("; ")}`,
      );
    await ctx.write("decisions.json", { decisions });
    if (decisions.every((d) => d.action === "none"))
      return end("nothing-to-do", "no item needs a change, a reply or a ticket");
    return undefined;
  },
};
