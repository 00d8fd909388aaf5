/**
 * The last phase: the terminal state of a run that published. "done-but-unproven" is never
 * rounded up to "done" (docs/review-doctrine.md, doctrine 10); a run that changed no code says so. The loop
 * writes report.md on this exit as on every other.
 */
import { end, type PhaseDefinition } from "../phase.ts";

export const reportPhase: PhaseDefinition<"report"> = {
  name: "report",
  reads: [],
  optionalReads: ["proof.json", "published.json"],
  writes: ["report.md"],
  async run(ctx) {
    const proof = await ctx.readOptional("proof.json");
    if (!proof) return end("done", "published replies and tickets; no code change needed proving");
    // A proof of a change that was never committed (the build changed nothing) proves nothing.
    const published = await ctx.readOptional("published.json");
    if (published && published.commit === undefined)
      return end("done", "published replies and tickets; no code changed, so nothing was proven");
    return proof.verdict === "vacuous"
      ? end("done-but-unproven", "published, but some new tests pass with the change reverted")
      : end("done", "published; every new test is proven to test the change");
  },
};
