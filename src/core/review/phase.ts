/**
 * What a phase of a review-response run is (docs/review-doctrine.md, doctrines 2–4): data (its name, the
 * artifacts it needs, may read and writes) plus one function from a context to what happens
 * next. The context gives a phase the ports, the run's state, and the artifact registry, limited
 * to the artifacts the phase declares: a phase that reads or writes a file it did not declare is
 * a bug and throws, so the table and the flow cannot disagree. Pure.
 */
import {
  type ArtifactName,
  type ArtifactValue,
  artifactFile,
  InvalidArtifact,
  readArtifact,
  writeArtifact,
} from "./artifacts.ts";
import type { GateName } from "./gates.ts";
import type { Phase, TerminalState } from "./phases.ts";
import type { ReviewPorts, ReviewRunState } from "./ports.ts";
import type { RefereeLimits } from "./referee.ts";

/** What a phase hands back: go on (to the next phase in order, or to `next`), pause at a gate, or end. */
export type PhaseResult =
  | undefined
  | { next: Phase }
  | { await: { gate: GateName; hash: string; artifact: ArtifactName } }
  | { end: TerminalState; reason: string };

export interface PhaseDefinition<N extends Phase = Phase> {
  name: N;
  /** Inputs that must exist and be non-empty before the phase runs (the seam guard). */
  reads: readonly ArtifactName[];
  /** Inputs the phase uses when an earlier phase wrote them (a flow that skips a phase skips its output). */
  optionalReads: readonly ArtifactName[];
  writes: readonly ArtifactName[];
  run(ctx: PhaseContext): Promise<PhaseResult>;
}

/**
 * Stops the run where it is without ending it: what stopped it was outside the run (the model's
 * API did not answer after its retries, or the process was told to stop), not anything the run
 * did. The loop keeps the cursor at the phase, records the state `interrupted` with the reason
 * and a report saying how to resume; a resume runs that phase again, and the agents' journals
 * give back every answer they already had.
 */
export class RunPaused extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** Ends the run from inside a helper; the loop turns it into the terminal state and its report. */
export class RunEnd extends Error {
  constructor(
    readonly terminal: TerminalState,
    readonly reason: string,
  ) {
    super(`${terminal}: ${reason}`);
  }
}

export const end = (terminal: TerminalState, reason: string): PhaseResult => ({
  end: terminal,
  reason,
});

export interface PhaseContext {
  readonly ports: ReviewPorts;
  readonly limits: RefereeLimits;
  /** The run's state as of now. */
  state(): ReviewRunState;
  save(patch: Partial<ReviewRunState>): Promise<void>;
  /** A declared input, validated; a missing one ends the run stuck. */
  read<N extends ArtifactName>(name: N, n?: number): Promise<ArtifactValue<N>>;
  /** A declared input, validated, or undefined when absent. */
  readOptional<N extends ArtifactName>(name: N, n?: number): Promise<ArtifactValue<N> | undefined>;
  /** A declared input's exact bytes (what a gate hashes). */
  bytes(name: ArtifactName): Promise<string>;
  exists(name: ArtifactName): Promise<boolean>;
  write<N extends ArtifactName>(name: N, value: ArtifactValue<N>, n?: number): Promise<void>;
}

export function phaseContext(
  phase: PhaseDefinition,
  ports: ReviewPorts,
  limits: RefereeLimits,
  state: () => ReviewRunState,
  save: (patch: Partial<ReviewRunState>) => Promise<void>,
): PhaseContext {
  const readable = (name: ArtifactName) => {
    if (!phase.reads.includes(name) && !phase.optionalReads.includes(name))
      throw new Error(`phase ${phase.name} reads ${name}, which its table entry does not declare`);
  };
  const optional = async <N extends ArtifactName>(name: N, n?: number) => {
    readable(name);
    try {
      return await readArtifact(ports.files, name, n);
    } catch (e) {
      if (e instanceof InvalidArtifact) throw new RunEnd("stuck", e.message);
      throw e;
    }
  };
  return {
    ports,
    limits,
    state,
    save,
    readOptional: optional,
    async read(name, n) {
      const value = await optional(name, n);
      if (value === undefined)
        throw new RunEnd(
          "stuck",
          `phase ${phase.name} cannot go on: its input ${artifactFile(name, n)} is missing`,
        );
      return value;
    },
    async bytes(name) {
      readable(name);
      return (await ports.files.read(name)) ?? "";
    },
    async exists(name) {
      readable(name);
      return (await ports.files.size(name)) !== undefined;
    },
    async write(name, value, n) {
      if (!phase.writes.includes(name))
        throw new Error(
          `phase ${phase.name} writes ${name}, which its table entry does not declare`,
        );
      try {
        await writeArtifact(ports.files, name, value, n);
      } catch (e) {
        if (e instanceof InvalidArtifact)
          throw new RunEnd(
            "stuck",
            `phase ${phase.name} produced an invalid ${e.file}: ${e.problems.join("; ")}`,
          );
        throw e;
      }
    },
  };
}
