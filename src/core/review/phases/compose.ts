/**
 * Compose the commit and the thread replies, the bytes the publish gate approves. Nothing
 * outside the approved plan or protected by the repository, no reply to praise, and no diff at
 * all when every decision is zero-diff. A plan with code changes must have been through the
 * prover (its proof.json); an answer-only run has nothing to prove.
 */
import { filesOutsidePlan, zeroDiffItems } from "../doctrine.ts";
import { end, type PhaseDefinition } from "../phase.ts";

export const composePhase: PhaseDefinition<"compose"> = {
  name: "compose",
  reads: ["decisions.json", "plan.json"],
  optionalReads: ["proof.json"],
  writes: ["publish.json"],
  async run(ctx) {
    const { decisions } = await ctx.read("decisions.json");
    const plan = await ctx.read("plan.json");
    const changesCode = plan.files.length > 0 || plan.test_files.length > 0;
    if (changesCode) await ctx.read("proof.json");
    const artifact = await ctx.ports.steps.compose(decisions, changesCode ? plan : undefined);
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
