/**
 * The phase table of a review-response run: one entry per phase, keyed by name (the compiler
 * demands an entry for every name in PHASES). The order is PHASES'; each entry's file owns what
 * the phase does. To add a phase: its name in PHASES, its file in phases/, its entry here. Pure.
 */
import type { PhaseDefinition } from "./phase.ts";
import { buildPhase } from "./phases/build.ts";
import { composePhase } from "./phases/compose.ts";
import { decidePhase } from "./phases/decide.ts";
import { gatePlanPhase, gatePublishPhase } from "./phases/gate.ts";
import { intakePhase } from "./phases/intake.ts";
import { planPhase } from "./phases/plan.ts";
import { provePhase } from "./phases/prove.ts";
import { publishPhase } from "./phases/publish.ts";
import { redTestsPhase } from "./phases/red-tests.ts";
import { reportPhase } from "./phases/report.ts";
import { standardsPhase } from "./phases/standards.ts";
import type { Phase } from "./phases.ts";

export const PHASE_TABLE: { readonly [P in Phase]: PhaseDefinition<P> } = {
  intake: intakePhase,
  decide: decidePhase,
  plan: planPhase,
  "gate-plan": gatePlanPhase,
  "red-tests": redTestsPhase,
  build: buildPhase,
  prove: provePhase,
  standards: standardsPhase,
  compose: composePhase,
  "gate-publish": gatePublishPhase,
  publish: publishPhase,
  report: reportPhase,
};
