/** Intake: the request as data, with provenance (docs/review-doctrine.md, doctrine 14). A request that cannot be read ends the run bad-input. */
import { end, type PhaseDefinition, RunEnd } from "../phase.ts";

export const intakePhase: PhaseDefinition<"intake"> = {
  name: "intake",
  reads: [],
  optionalReads: [],
  writes: ["request.json"],
  async run(ctx) {
    let request: Awaited<ReturnType<typeof ctx.ports.steps.intake>>;
    try {
      request = await ctx.ports.steps.intake();
    } catch (e) {
      // A failure after the request was read (the repository's install command) ends as it says.
      if (e instanceof RunEnd) throw e;
      return end("bad-input", `the request could not be read: ${(e as Error).message}`);
    }
    await ctx.write("request.json", request);
    return undefined;
  },
};
