/**
 * The review-response run's phases and the artifacts that connect them (docs/review-doctrine.md, doctrines
 * 2–4). The run directory is the only channel: each phase reads named files and writes new
 * names (a transforming phase never overwrites its input), and a guard before each phase
 * asserts its inputs exist and are non-empty, so a phase that "answered in the conversation"
 * stops the run where the cause is. The phases themselves are the table in phase-table.ts. Pure.
 */
import { PHASE_TABLE } from "./phase-table.ts";

export const PHASES = [
  "intake",
  "decide",
  "plan",
  "gate-plan",
  "red-tests",
  "build",
  "prove",
  "standards",
  "compose",
  "gate-publish",
  "publish",
  "report",
] as const;

export type Phase = (typeof PHASES)[number];

export type TerminalState =
  | "done"
  | "done-but-unproven"
  | "nothing-to-do"
  | "bad-input"
  | "stuck"
  | "not-approved";

export const TERMINAL_STATES: readonly TerminalState[] = [
  "done",
  "done-but-unproven",
  "nothing-to-do",
  "bad-input",
  "stuck",
  "not-approved",
];

export interface SeamViolation {
  phase: Phase;
  file: string;
  problem: "missing" | "empty";
}

/** The guard before a phase: every input it reads must exist and be non-empty. */
export function guardSeam(
  phase: Phase,
  sizeOf: (file: string) => number | undefined,
): SeamViolation[] {
  const out: SeamViolation[] = [];
  for (const file of PHASE_TABLE[phase].reads) {
    const size = sizeOf(file);
    if (size === undefined) out.push({ phase, file, problem: "missing" });
    else if (size === 0) out.push({ phase, file, problem: "empty" });
  }
  return out;
}

export function describeSeamViolation(v: SeamViolation): string {
  return `phase ${v.phase} cannot start: its input ${v.file} is ${v.problem === "missing" ? "missing" : "empty"}`;
}

/** The phase after `phase`, or undefined after the last. */
export function nextPhase(phase: Phase): Phase | undefined {
  return PHASES[PHASES.indexOf(phase) + 1];
}
