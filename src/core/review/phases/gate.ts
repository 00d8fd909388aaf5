/**
 * The two gates (docs/review-doctrine.md, doctrine 5): the run pauses until the approval log holds the hash
 * of the artifact's exact bytes for this gate; a recorded refusal of those bytes ends the run
 * not-approved. One shared check (gates.checkGate) for both, and again inside each publisher.
 * A run may wait at a gate for days: before anything else, the branch must still be at the
 * request's head, or the run stops (a human pushed; what was planned or composed is about code
 * that is no longer there).
 */
import type { ArtifactName } from "../artifacts.ts";
import { checkGate, type GateName, sameCommit } from "../gates.ts";
import { end, type PhaseDefinition } from "../phase.ts";

function gatePhase<N extends "gate-plan" | "gate-publish">(
  name: N,
  gate: GateName,
  artifact: ArtifactName,
): PhaseDefinition<N> {
  return {
    name,
    reads: [artifact, "request.json"],
    optionalReads: [],
    writes: [],
    async run(ctx) {
      const { head } = await ctx.read("request.json");
      const now = await ctx.ports.steps.currentHead?.();
      if (now !== undefined && !sameCommit(now, head))
        return end(
          "stuck",
          `the branch moved while the run waited at the ${gate} gate: the request's head is ${head}, the branch is now at ${now}; nothing was published`,
        );
      // The publish artifact binds the commit's bytes: a file edited since it was composed (while
      // the run waited) is not what the person approves or approved.
      if (gate === "publish" && ctx.ports.steps.changedSinceComposed) {
        const edited = await ctx.ports.steps.changedSinceComposed(await ctx.read("publish.json"));
        if (edited.length > 0)
          return end(
            "stuck",
            `${edited.join(", ")} changed in the run's worktree after the publish artifact was composed: neither the proof nor an approval covers them; nothing was published`,
          );
      }
      const bytes = await ctx.bytes(artifact);
      const log = await ctx.ports.approvals();
      const check = checkGate(gate, bytes, log);
      if (check.ok) return undefined;
      if (check.refused)
        return end("not-approved", `the ${gate} gate's ${artifact} (${check.hash}) was refused`);
      return { await: { gate, hash: check.hash, artifact } };
    },
  };
}

export const gatePlanPhase = gatePhase("gate-plan", "plan", "plan.json");
export const gatePublishPhase = gatePhase("gate-publish", "publish", "publish.json");
