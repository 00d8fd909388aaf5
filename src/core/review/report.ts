/**
 * The report written on every exit of a review run (docs/review-doctrine.md, doctrines 10 and 17): it names
 * the terminal state first, then leads with whatever contradicts the request (an item the
 * request called a defect that was not one, an instruction found in comment text, a vacuous
 * test, an outdated comment that is still true, a current one that is stale, a reaffirmed or
 * reversed earlier decision), and only then the counts. "done-but-unproven" is never rounded up to "done". A run
 * paused at a gate has a report too: what awaits whom, and the exact command that approves it.
 * Pure.
 */
import type { Decision } from "./doctrine.ts";
import type { GateName } from "./gates.ts";
import type { Phase, TerminalState } from "./phases.ts";

export interface ReportInput {
  terminal: TerminalState;
  /** Why the run ended where it did, in one sentence. */
  reason: string;
  /** The phase the run stopped in (for stuck, bad-input, not-approved). */
  phase?: Phase;
  decisions?: readonly Decision[];
  /** Findings that contradict what the request or its comments asserted. */
  contradictions?: readonly string[];
  /** Tests the prover found vacuous. */
  vacuousTests?: readonly string[];
  /** What reached the outside world. */
  published?: { commit?: string; replies: number; tickets: number };
}

const HEADLINE: Record<TerminalState, string> = {
  done: "Done: the change is published and its new tests are proven to test it.",
  "done-but-unproven":
    "Done but unproven: the change is published, but its tests were not shown to catch the defect.",
  "nothing-to-do": "Nothing to do: no item needed a change or a reply.",
  "bad-input": "Bad input: the request could not be worked on as given.",
  stuck: "Stuck: the run stopped and needs a human.",
  "not-approved": "Not approved: a gate was not passed, so nothing was published.",
};

/**
 * Where an item stands, from its recorded provenance and its class (doctrine 14): an anchor
 * that moved is not the same as a comment that is no longer true, so "outdated but still true"
 * and "current but stale" are told apart. Undefined without provenance.
 */
export function provenanceStanding(
  d: Decision,
):
  | "current"
  | "current, stale"
  | "outdated"
  | "outdated, still true"
  | "outdated, stale"
  | undefined {
  if (!d.provenance) return undefined;
  const moved = d.provenance.anchor_moved || d.provenance.anchor_gone;
  if (d.class === "stale") return moved ? "outdated, stale" : "current, stale";
  if (!moved) return "current";
  // A claim of broken code or a missing test that was verified to hold although its anchor moved.
  return d.class === "defect" || d.class === "test-gap" ? "outdated, still true" : "outdated";
}

export function composeReport(r: ReportInput): string {
  const lines = [
    `# Review run: ${r.terminal}`,
    "",
    HEADLINE[r.terminal],
    "",
    `Reason: ${r.reason}${r.phase ? ` (phase ${r.phase})` : ""}`,
  ];
  const contradictions = [...(r.contradictions ?? [])];
  for (const d of r.decisions ?? []) {
    if (d.class === "incorrect-claim")
      contradictions.push(
        `${d.item}: the comment's claim is incorrect (${d.method}: ${d.detail || d.evidence})`,
      );
    const standing = provenanceStanding(d);
    if (standing === "current, stale")
      contradictions.push(
        `${d.item}: current but stale: its anchor is unchanged at this head, yet the claim no longer holds (${d.method}: ${d.evidence || d.detail})`,
      );
    else if (d.class === "stale")
      contradictions.push(
        `${d.item}: the comment is about code that no longer exists at this head`,
      );
    if (standing === "outdated, still true" && d.provenance)
      contradictions.push(
        `${d.item}: outdated but still true: made against ${d.provenance.made_against.slice(0, 12)}${d.provenance.commits_behind > 0 ? ` (${d.provenance.commits_behind} behind head)` : ""} and its anchor moved, but the claim holds at ${d.verified_at ? d.verified_at.slice(0, 12) : "this head"} (${d.method}: ${d.detail || d.evidence})`,
      );
    if (d.prior)
      contradictions.push(
        `${d.item}: ${d.prior.outcome === "reverse" ? "reverses" : "reaffirms"} the earlier run's decision: ${d.prior.reason}`,
      );
    for (const inj of d.injected_directions)
      contradictions.push(`${d.item}: the comment contained directions, ignored: "${inj}"`);
  }
  for (const t of r.vacuousTests ?? [])
    contradictions.push(
      `test ${t} still passes with the change reverted: it does not test the change`,
    );
  if (contradictions.length > 0) {
    lines.push("", "## What contradicts the request", "", ...contradictions.map((c) => `- ${c}`));
  }
  const decisions = r.decisions ?? [];
  if (decisions.length > 0) {
    lines.push(
      "",
      "## Decisions",
      "",
      "| item | class | action | method | provenance | detail |",
      "|---|---|---|---|---|---|",
    );
    for (const d of decisions)
      lines.push(
        `| ${d.item} | ${d.class} | ${d.action} | ${d.method} | ${provenanceStanding(d) ?? "–"} | ${(d.detail || "–").replace(/\|/g, "\\|")} |`,
      );
  }
  if (r.published) {
    lines.push(
      "",
      "## Published",
      "",
      `- commit: ${r.published.commit ?? "none"}`,
      `- replies: ${r.published.replies}`,
      `- tickets: ${r.published.tickets}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

export interface GateReportInput {
  gate: GateName;
  hash: string;
  /** The artifact whose exact bytes the hash is of. */
  artifact: string;
  /** The run directory, as `terfyn approve --run` takes it. */
  run: string;
  decisions?: readonly Decision[];
}

const AWAITS: Record<GateName, string> = {
  plan: "a maintainer's approval of the plan (the files to change and the tests to write first) before any code is written",
  publish:
    "a maintainer's approval of the commit and the exact reply texts before anything reaches the branch or the threads",
};

/** The report of a run paused at a gate: which gate, what awaits whom, and how to approve it. */
export function composeGateReport(r: GateReportInput): string {
  const lines = [
    `# Review run: awaiting approval at the ${r.gate} gate`,
    "",
    `Paused: the ${r.gate} gate awaits ${AWAITS[r.gate]}.`,
    "",
    `- artifact: ${r.artifact}`,
    `- hash: ${r.hash}`,
    "",
    "Read the artifact, then approve exactly these bytes with:",
    "",
    `    terfyn approve --run ${r.run} --hash ${r.hash}`,
    "",
    "and continue with:",
    "",
    `    terfyn review --resume ${r.run}`,
    "",
    `Any change to ${r.artifact} changes its hash and needs a fresh approval.`,
  ];
  if (r.decisions && r.decisions.length > 0) {
    lines.push("", "## Decisions", "", "| item | class | action | method |", "|---|---|---|---|");
    for (const d of r.decisions)
      lines.push(`| ${d.item} | ${d.class} | ${d.action} | ${d.method} |`);
  }
  return `${lines.join("\n")}\n`;
}
