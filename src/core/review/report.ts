/**
 * The report written on every exit of a review run (docs/review-doctrine.md, doctrines 10 and 17): it names
 * the terminal state first, then leads with whatever contradicts the request (an item the
 * request called a defect that was not one, an instruction found in comment text, a vacuous
 * test, an outdated comment that is still true, a current one that is stale, a reaffirmed or
 * reversed earlier decision), and only then the counts. "done-but-unproven" is never rounded up to "done". A run
 * paused at a gate has a report too: what awaits whom, and the exact command that approves it.
 * Pure.
 */
import { plainText, tableCell } from "../render/escape.ts";
import { mdCode, mdFence, mdText } from "../render/markdown-escape.ts";
import { readArtifact } from "./artifacts.ts";
import type { Decision, ReviewPlan, StandardsFinding } from "./doctrine.ts";
import type { ApprovalEntry, GateName } from "./gates.ts";
import type { Phase, TerminalState } from "./phases.ts";
import type { PublishArtifact, RunFiles, TestResult } from "./ports.ts";

/**
 * What the reports show of a run's artifacts beyond its decisions: the plan, the proof per test,
 * the commit's files and the exact reply and ticket texts, and who approved or refused each
 * gate. Every text in them may come from a review comment or an agent, so each is rendered
 * escaped (mdText, mdCode) or inside a fence longer than any it holds (mdFence).
 */
export interface RunArtifacts {
  plan?: ReviewPlan;
  planMarkdown?: string;
  proof?: { verdict: "proven" | "vacuous"; results: readonly TestResult<"passed">[] };
  /** The standards lane's review of the change. */
  standards?: { files: readonly string[]; findings: readonly StandardsFinding[]; skipped?: string };
  publish?: PublishArtifact;
  approvals?: readonly ApprovalEntry[];
}

/**
 * Reads what the reports show from the run directory; an artifact that is missing or malformed
 * (or an approvals log that is damaged) is left out, never turned into a different ending.
 */
export async function readRunArtifacts(
  files: RunFiles,
  approvals: () => Promise<readonly ApprovalEntry[]>,
): Promise<RunArtifacts> {
  const read = <
    N extends "plan.json" | "plan.md" | "proof.json" | "standards.json" | "publish.json",
  >(
    name: N,
  ) => readArtifact(files, name).catch(() => undefined);
  const [plan, planMarkdown, proof, standards, publish, log] = await Promise.all([
    read("plan.json"),
    read("plan.md"),
    read("proof.json"),
    read("standards.json"),
    read("publish.json"),
    approvals().catch(() => undefined),
  ]);
  return {
    ...(plan ? { plan } : {}),
    ...(planMarkdown !== undefined ? { planMarkdown } : {}),
    ...(proof ? { proof } : {}),
    ...(standards ? { standards } : {}),
    ...(publish ? { publish } : {}),
    ...(log ? { approvals: log } : {}),
  };
}

export interface ReportInput {
  terminal: TerminalState;
  /** Whether a committed change was proven (a proof, and a published commit); false: neither. */
  proven?: boolean;
  /** The run's model spend, said in one line. */
  spend?: string;
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
  /** The proof per test, the commit's files, the reply and ticket texts, the approvals. */
  artifacts?: RunArtifacts;
}

/** `done` with no commit published: replies and tickets only, so nothing was proven. */
const DONE_WITHOUT_CODE =
  "Done: the replies and tickets are published; no code changed, so no test proves anything.";

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
    // A run that proved no committed change (no fix, or a build that changed nothing) claims no proof.
    r.terminal === "done" && r.proven === false ? DONE_WITHOUT_CODE : HEADLINE[r.terminal],
    "",
    // Terfyn's own sentence (it may quote an item or a person's stop reason): one line, its
    // invisible characters shown.
    `Reason: ${plainText(r.reason)}${r.phase ? ` (phase ${r.phase})` : ""}`,
    ...(r.spend ? ["", `Model spend: ${plainText(r.spend)}.`] : []),
  ];
  const contradictions = (r.contradictions ?? []).map((c) => mdText(c));
  for (const raw of r.decisions ?? []) {
    // The item, what was done, the evidence and the earlier reason come from the request and
    // the agents: Markdown text, escaped. Class, action and method are the schema's words.
    const d = {
      ...raw,
      item: mdText(raw.item),
      detail: mdText(raw.detail),
      evidence: mdText(raw.evidence),
      ...(raw.prior ? { prior: { ...raw.prior, reason: mdText(raw.prior.reason) } } : {}),
    };
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
      contradictions.push(`${d.item}: the comment contained directions, ignored: "${mdText(inj)}"`);
  }
  for (const t of r.vacuousTests ?? [])
    contradictions.push(
      `test ${mdText(t)} still passes with the change reverted: it does not test the change`,
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
        `| ${tableCell(d.item)} | ${d.class} | ${d.action} | ${d.method} | ${provenanceStanding(d) ?? "–"} | ${d.detail ? tableCell(d.detail) : "–"} |`,
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
  const a = r.artifacts ?? {};
  if (a.proof) lines.push("", ...proofSection(a.proof));
  if (a.standards) lines.push("", ...standardsSection(a.standards));
  if (a.publish) {
    lines.push("", "## Files changed", "", ...fileList(a.publish.files));
    lines.push("", ...textsSection(a.publish, r.published !== undefined));
  }
  if (decisions.length > 0) lines.push("", ...evidenceSection(decisions));
  if (a.approvals) lines.push("", ...approvalsSection(a.approvals));
  return `${lines.join("\n")}\n`;
}

/** Each new test with the change reverted: it must fail (having run) to prove anything. */
function proofSection(proof: NonNullable<RunArtifacts["proof"]>): string[] {
  const lines = [`## Proof: ${proof.verdict}`, ""];
  if (proof.results.length === 0) lines.push("No new test was proved.");
  for (const t of proof.results) {
    const outcome =
      t.ran === false
        ? "vacuous: it did not run with the change reverted"
        : t.passed
          ? "vacuous: it still passes with the change reverted"
          : "proven: it fails with the change reverted";
    lines.push(`- ${mdCode(t.test)}: ${outcome}`);
    if (t.evidence) lines.push("", indent(mdFence(t.evidence)), "");
  }
  return lines;
}

/**
 * The standards lane's findings per changed file: what breaks first, each finding as the
 * reviewer wrote it (agent text, escaped).
 */
function standardsSection(review: NonNullable<RunArtifacts["standards"]>): string[] {
  const breaks = review.findings.filter((f) => f.verdict === "breaks");
  const lines = [
    `## Standards: ${review.skipped !== undefined ? "not reviewed" : breaks.length > 0 ? `${breaks.length} broken` : "followed"}`,
    "",
  ];
  if (review.skipped !== undefined) lines.push(mdText(review.skipped));
  for (const f of [...breaks, ...review.findings.filter((x) => x.verdict !== "breaks")])
    lines.push(
      `- ${mdCode(f.file)} ${f.verdict === "breaks" ? "**breaks**" : "follows"} ${mdText(f.standard)}: ${mdText(f.finding)}`,
    );
  return lines;
}

function fileList(files: readonly string[], diff?: string): string[] {
  if (files.length === 0) return ["No file: the commit is empty (answers only)."];
  const stat = diff ? diffStat(diff) : new Map<string, { added: number; removed: number }>();
  return files.map((f) => {
    const s = stat.get(f);
    return `- ${mdCode(f)}${s ? ` (+${s.added} −${s.removed})` : ""}`;
  });
}

/** Lines added and removed per file of a unified diff (`+++ b/<path>` names the file). */
export function diffStat(diff: string): Map<string, { added: number; removed: number }> {
  const out = new Map<string, { added: number; removed: number }>();
  let current: { added: number; removed: number } | undefined;
  const lines = diff.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    // A file header is a `--- ` line followed by a `+++ ` line (a removed line "-- x" shows as
    // "--- x" inside a hunk, but is not followed by one).
    const next = lines[i + 1] ?? "";
    if (line.startsWith("--- ") && next.startsWith("+++ ")) {
      const minus = line.slice(4).replace(/^a\//, "");
      const plus = next.slice(4);
      const path = plus === "/dev/null" ? minus : plus.replace(/^b\//, "");
      current = { added: 0, removed: 0 };
      out.set(path.split("\t")[0] ?? path, current);
      i++;
      continue;
    }
    if (!current || line.startsWith("@@") || line.startsWith("\\")) continue;
    if (line.startsWith("+")) current.added++;
    else if (line.startsWith("-")) current.removed++;
  }
  return out;
}

/** Every reply and ticket, in full, exactly as the publish gate approves them. */
function textsSection(publish: PublishArtifact, published: boolean): string[] {
  const lines = [`## Replies and tickets${published ? "" : " (composed, not published)"}`, ""];
  if (publish.replies.length === 0 && publish.tickets.length === 0) lines.push("None.");
  for (const reply of publish.replies)
    lines.push(`### Reply to ${mdText(reply.item)}`, "", mdFence(reply.body), "");
  for (const ticket of publish.tickets)
    lines.push(
      `### Ticket for ${mdText(ticket.item)}: ${mdText(ticket.title)}`,
      "",
      mdFence(ticket.body),
      "",
    );
  while (lines.at(-1) === "") lines.pop();
  return lines;
}

/** How each decision was reached: its method, what was done, and the evidence it rests on. */
function evidenceSection(decisions: readonly Decision[]): string[] {
  const lines = ["## Evidence", ""];
  for (const d of decisions) {
    lines.push(
      `### ${mdText(d.item)}: ${d.class}, ${d.action} (${d.method})`,
      "",
      `What was done: ${d.detail ? mdText(d.detail) : "(not said)"}`,
      "",
    );
    lines.push(d.evidence ? mdFence(d.evidence) : "No evidence recorded.", "");
  }
  while (lines.at(-1) === "") lines.pop();
  return lines;
}

/** Who approved, or refused, each gate, and when: the approvals log as recorded. */
function approvalsSection(log: readonly ApprovalEntry[]): string[] {
  const lines = ["## Approvals", ""];
  if (log.length === 0) lines.push("No gate was approved.");
  for (const e of log)
    lines.push(
      `- ${e.gate} gate: ${e.decision === "deny" ? "refused" : "approved"} by ${mdText(e.by)} at ${mdText(e.approved_at)} (${mdCode(e.hash)})${e.reason !== undefined ? `: ${mdText(e.reason)}` : ""}`,
    );
  return lines;
}

const indent = (block: string) =>
  block
    .split("\n")
    .map((l) => `  ${l}`)
    .join("\n");

export interface PausedReportInput {
  /** The run directory, as `terfyn review --resume` takes it. */
  run: string;
  /** The phase the run stopped in, and runs again on resume. */
  phase: string;
  /** What stopped it: the model's API, or a signal. */
  reason: string;
  artifacts?: RunArtifacts;
  spend?: string;
}

/**
 * The report of a run stopped from outside (the model's API did not answer, the process was
 * told to stop): not an ending. What stopped it, that nothing is lost, and how to go on.
 */
export function composePausedReport(r: PausedReportInput): string {
  const lines = [
    "# Review run: interrupted",
    "",
    "Paused, not ended: something outside the run stopped it, and it resumes where it stopped.",
    "",
    `Reason: ${plainText(r.reason)} (phase ${r.phase})`,
    ...(r.spend ? ["", `Model spend: ${plainText(r.spend)}.`] : []),
    "",
    `Nothing is lost: the approvals given, the artifacts written and every answer the agents already had stay; the phase ${r.phase} runs again, and its agents are not asked again what they answered. Continue with:`,
    "",
    `    terfyn review --resume ${r.run}`,
  ];
  if (r.artifacts?.approvals) lines.push("", ...approvalsSection(r.artifacts.approvals));
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
  /** What the gate shows beside the hash: the plan, or the commit, its proof and its texts. */
  artifacts?: RunArtifacts;
  spend?: string;
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
    ...(r.spend ? [`- model spend: ${plainText(r.spend)}`] : []),
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
  const a = r.artifacts ?? {};
  if (r.gate === "plan") {
    if (a.plan)
      lines.push(
        "",
        "## Plan",
        "",
        "Production files to change:",
        "",
        ...fileList(a.plan.files),
        "",
        "Test files to write:",
        "",
        ...fileList(a.plan.test_files),
        "",
        "Failing tests to write first:",
        "",
        ...(a.plan.tests.length > 0 ? a.plan.tests.map((t) => `- ${mdCode(t)}`) : ["None."]),
      );
    if (a.planMarkdown !== undefined)
      lines.push("", "plan.md:", "", mdFence(a.planMarkdown, "markdown"));
  }
  const decisions = r.decisions ?? [];
  if (decisions.length > 0) {
    lines.push("", "## Decisions", "", "| item | class | action | method |", "|---|---|---|---|");
    for (const d of decisions)
      lines.push(
        `| ${mdCode(d.item, { inTable: true })} | ${d.class} | ${d.action} | ${d.method} |`,
      );
  }
  if (r.gate === "plan") {
    // What each item will get: the answers, push-backs and tickets the plan sits beside.
    for (const d of decisions) {
      if (d.action === "none" && !d.reply) continue;
      lines.push(
        "",
        `### ${mdText(d.item)}: ${d.class}, ${d.action}`,
        "",
        `Decided by ${d.method}: ${d.detail ? mdText(d.detail) : "(not said)"}`,
      );
      if (d.evidence) lines.push("", "Evidence:", "", mdFence(d.evidence));
      if (d.reply) lines.push("", "Reply:", "", mdFence(d.reply));
    }
  } else {
    if (a.publish) {
      lines.push(
        "",
        "## Commit",
        "",
        ...(a.publish.files.length > 0
          ? ["Message:", "", mdFence(a.publish.commit_message), ""]
          : []),
        "Files:",
        "",
        ...fileList(a.publish.files, a.publish.diff),
      );
      // The diff itself: what the approval of these bytes approves.
      if (a.publish.diff) lines.push("", "Diff:", "", mdFence(a.publish.diff, "diff"));
    }
    if (a.proof) lines.push("", ...proofSection(a.proof));
    if (a.standards) lines.push("", ...standardsSection(a.standards));
    if (a.publish) lines.push("", ...textsSection(a.publish, false));
  }
  return `${lines.join("\n")}\n`;
}
