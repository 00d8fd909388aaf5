/**
 * Compose the commit and the thread replies, the bytes the publish gate approves. Nothing
 * outside the approved plan or protected by the repository, no reply to praise, and no diff at
 * all when every decision is zero-diff. A plan with code changes must have been through the
 * prover (its proof.json); an answer-only run has nothing to prove. The replies to fixed items
 * say what the proof showed (composed after the prover, so no reply claims more), and every
 * changed file was in the standards review.
 */
import { filesOutsidePlan, zeroDiffItems } from "../doctrine.ts";
import { end, type PhaseDefinition } from "../phase.ts";

export const composePhase: PhaseDefinition<"compose"> = {
  name: "compose",
  reads: ["decisions.json", "plan.json"],
  optionalReads: ["proof.json", "standards.json"],
  writes: ["publish.json"],
  async run(ctx) {
    const { decisions } = await ctx.read("decisions.json");
    const plan = await ctx.read("plan.json");
    const changesCode = plan.files.length > 0 || plan.test_files.length > 0;
    const proof = changesCode ? await ctx.read("proof.json") : undefined;
    const artifact = await ctx.ports.steps.compose(
      decisions,
      changesCode ? plan : undefined,
      proof?.results,
    );
    // Every file the commit changes was reviewed against the repository's conventions (its
    // AGENTS.md) by the standards lane, as it is now: a file it was not shown is not reviewed.
    if (changesCode) {
      const review = await ctx.read("standards.json");
      const checked = new Set(
        review.skipped === undefined ? review.findings.map((f) => f.file) : review.files,
      );
      const unchecked = artifact.files.filter((f) => !checked.has(f));
      if (unchecked.length > 0)
        return end(
          "stuck",
          `the commit changes files the standards review did not cover (each changed file is checked against the repository's conventions): ${unchecked.join(", ")}`,
        );
    }
    const outside = filesOutsidePlan(
      artifact.files,
      plan,
      (await ctx.ports.steps.protectedFiles?.()) ?? [],
    );
    if (outside.length > 0)
      return end(
        "stuck",
        `the commit would touch files outside the approved plan or protected by the repository: ${outside.join(", ")}`,
      );
    const praised = new Set(decisions.filter((d) => d.class === "praise").map((d) => d.item));
    if (artifact.replies.some((r) => praised.has(r.item)))
      return end("stuck", "the composed replies answer praise");
    if (!changesCode && artifact.files.length > 0)
      return end(
        "stuck",
        `zero-diff decisions (${zeroDiffItems(decisions).join(", ")}) but the commit changes files`,
      );
    await ctx.write("publish.json", artifact);
    return undefined;
  },
};
