/**
 * Prove (docs/review-doctrine.md, doctrine 8): revert only the production files, re-run the new
 * tests expecting failure, restore. A test that still passes, or that did not run, is vacuous.
 */
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
    // A "failure" with the change reverted proves something only if the test ran: a command that
    // ran no test (a renamed test, a pattern matching nothing) and failed for that shows nothing.
    const shown = results.map((r) => ({ test: r.test, passed: r.passed || r.ran === false }));
    await ctx.write("proof.json", { ...proofVerdict(shown), results });
    return undefined;
  },
};
