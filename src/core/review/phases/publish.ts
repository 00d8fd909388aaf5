/**
 * Publish, exactly once: a recorded result means it happened; a start marker without a result
 * means it may have partly happened, which only a human can check. The publisher itself checks
 * the publish gate again (gates.assertGate). A publisher that refuses (the branch moved since
 * the gate) ends the run stuck with its reason, never as an internal error.
 */
import { artifactHash } from "../gates.ts";
import { end, type PhaseDefinition } from "../phase.ts";

export const publishPhase: PhaseDefinition<"publish"> = {
  name: "publish",
  reads: ["publish.json"],
  optionalReads: ["publishing.json", "published.json"],
  writes: ["publishing.json", "published.json"],
  async run(ctx) {
    if (await ctx.exists("published.json")) return undefined;
    if (await ctx.exists("publishing.json"))
      return end(
        "stuck",
        "publishing started in an earlier attempt and its outcome was not recorded; check the branch and the threads by hand before publishing again",
      );
    const text = await ctx.bytes("publish.json");
    const artifact = await ctx.read("publish.json");
    await ctx.write("publishing.json", {
      started_at: ctx.ports.now(),
      publish: artifactHash(text),
    });
    let published: Awaited<ReturnType<typeof ctx.ports.steps.publish>>;
    try {
      published = await ctx.ports.steps.publish(artifact, text, await ctx.ports.approvals());
    } catch (e) {
      // The publisher refused or failed part-way (the branch moved, the push was rejected):
      // publishing.json stays, so no later attempt publishes over a partial result.
      return end("stuck", `publishing failed: ${(e as Error).message}`);
    }
    await ctx.write("published.json", published);
    return undefined;
  },
};
