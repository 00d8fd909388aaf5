/** Prove (docs/review-doctrine.md, doctrine 8): revert only the production files, re-run the new tests expecting failure, restore. */
import { proofVerdict } from "../doctrine.ts";
import type { PhaseDefinition } from "../phase.ts";

export const provePhase: PhaseDefinition<"prove"> = {
  name: "prove",
  reads: ["plan.json", "verdict.json"],
  optionalReads: [],
  writes: ["proof.json"],
  async run(ctx) {
    const plan = await ctx.read("plan.json");
    const results = await ctx.ports.steps.prove(plan);
    await ctx.write("proof.json", { ...proofVerdict(results), results });
    return undefined;
  },
};
