/**
 * The two gates (seed 003, principle 5): the run pauses until the approval log holds the hash
 * of the artifact's exact bytes for this gate; a recorded refusal of those bytes ends the run
 * not-approved. One shared check (gates.checkGate) for both, and again inside each publisher.
 */
import type { ArtifactName } from "../artifacts.ts";
import { checkGate, type GateName } from "../gates.ts";
import { end, type PhaseDefinition } from "../phase.ts";

function gatePhase<N extends "gate-plan" | "gate-publish">(
  name: N,
  gate: GateName,
  artifact: ArtifactName,
): PhaseDefinition<N> {
  return {
    name,
    reads: [artifact],
    optionalReads: [],
    writes: [],
    async run(ctx) {
      const bytes = await ctx.bytes(artifact);
      const log = await ctx.ports.approvals();
      const check = checkGate(gate, bytes, log);
      if (check.ok) return undefined;
      if (log.some((a) => a.gate === gate && a.hash === check.hash && a.decision === "deny"))
        return end("not-approved", `the ${gate} gate's ${artifact} (${check.hash}) was refused`);
      return { await: { gate, hash: check.hash, artifact } };
    },
  };
}

export const gatePlanPhase = gatePhase("gate-plan", "plan", "plan.json");
export const gatePublishPhase = gatePhase("gate-publish", "publish", "publish.json");
