/**
 * The doctrine in code (docs/review-doctrine.md, doctrines 11–17; every field of a decision is
 * described in docs/review-decisions.md): the closed sets a deciding step chooses from, the
 * shape of `decisions.json` and `plan.json`, and the checks that make a lazy or obedient
 * decision visible: an `executed` method needs a detail line and a command the Decider really
 * ran, praise gets no reply, a stale or out-of-scope item produces no diff, a missing test is
 * not filed as broken code, runtime harm names a path from an entry point, an item whose
 * anchored code is gone at head is fixed only on evidence read at head, an item seen before is
 * reaffirmed with fresh verification (and the same decision) or reversed with a reason, every
 * fix is in the plan, and nothing outside the approved plan is touched. Pure.
 */
import { z } from "zod";
import { article } from "../words.ts";
import { matchesAnyRepoPattern } from "./repo-facts.ts";

export const ITEM_CLASSES = [
  "defect",
  "test-gap",
  "question",
  "incorrect-claim",
  "out-of-scope",
  "stale",
  "praise",
] as const;
export const ACTIONS = ["fix", "answer", "push-back", "ticket", "none"] as const;
export const METHODS = ["executed", "read", "searched"] as const;

/** Which actions fit which class; several produce zero diff by design (restraint). */
export const ALLOWED_ACTIONS: Record<
  (typeof ITEM_CLASSES)[number],
  readonly (typeof ACTIONS)[number][]
> = {
  defect: ["fix", "ticket"],
  "test-gap": ["fix", "ticket"],
  question: ["answer"],
  "incorrect-claim": ["push-back"],
  "out-of-scope": ["ticket"],
  stale: ["answer", "none"],
  praise: ["none"],
};

/** Actions that change code; every other action leaves the tree untouched. */
export const DIFF_ACTIONS: readonly (typeof ACTIONS)[number][] = ["fix"];

/** A commit id (as request.json has them). */
const commitId = z.string().regex(/^[0-9a-f]{7,64}$/, "a commit id: 7 to 64 lowercase hex digits");

export const HARMS = ["reachable", "latent", "none"] as const;
export const PRIOR_OUTCOMES = ["reaffirm", "reverse"] as const;

/** Methods that verify a claim in this run (searching finds code; it does not verify a claim). */
export const VERIFYING_METHODS: readonly (typeof METHODS)[number][] = ["executed", "read"];

/** The tool operations that execute something: an `executed` claim needs one in the Decider's journal. */
export const EXECUTING_OPERATIONS = ["run_tests", "command"] as const;

export const decisionSchema = z.object({
  /** The review thread or comment this decides. */
  item: z.string().min(1),
  class: z.enum(ITEM_CLASSES),
  action: z.enum(ACTIONS),
  method: z.enum(METHODS),
  /** What was actually done: the command executed, the file read, the search made. */
  detail: z.string(),
  evidence: z.string(),
  /** Direction-shaped text found in the item (reported, never obeyed). */
  injected_directions: z.array(z.string()).default([]),
  /**
   * For an item decided in an earlier run: keep the decision with fresh verification, or change
   * it, saying what changed.
   */
  prior: z.object({ outcome: z.enum(PRIOR_OUTCOMES), reason: z.string().min(1) }).optional(),
  /** A claim of runtime harm names a reachable path from a real entry point, else it is latent. */
  harm: z.enum(HARMS).default("none"),
  /** For `harm: reachable`: the path from an entry point to the harm (`formatTotal → add`). */
  path: z.string().optional(),
  /**
   * The head commit the evidence was read or executed at. An item whose anchored code is gone at
   * head can be decided `fix` only with this equal to the request's head.
   */
  verified_at: commitId.optional(),
  /**
   * The thread's provenance (doctrine 14), recorded by Terfyn from the request whatever the
   * Decider says: the report tells "outdated but still true" from "current but stale" by it.
   */
  provenance: z
    .object({
      made_against: z.string(),
      commits_behind: z.number().int(),
      anchor_moved: z.boolean(),
      anchor_gone: z.boolean(),
    })
    .optional(),
  /** The reply to post in the thread (none for praise). */
  reply: z.string().optional(),
});

export const decisionsSchema = z.object({ decisions: z.array(decisionSchema) });

export type Decision = z.infer<typeof decisionSchema>;

export const planSchema = z.object({
  /** Production files the build may change. */
  files: z.array(z.string().min(1)),
  /** Test files the red-tests phase writes. */
  test_files: z.array(z.string().min(1)),
  /** The failing tests to write first, by name. */
  tests: z.array(z.string().min(1)),
  /** The repository conventions the plan relies on (from AGENTS.md), named. */
  conventions: z.array(z.string()).default([]),
  items: z.array(z.string()),
  /** The planning round (absent: the first); a re-plan after an escalation is round 2, 3, … */
  round: z.number().int().positive().optional(),
});

export type ReviewPlan = z.infer<typeof planSchema>;

export interface DoctrineProblem {
  item?: string;
  problem: string;
}

/**
 * A repair turn (one per check, bounded): an agent whose answer broke the doctrine is asked
 * once more, in a fresh context, with its answer and each rule it broke; an answer that still
 * breaks one ends the run stuck.
 */
export interface DoctrineRepair<T> {
  previous: T;
  problems: readonly DoctrineProblem[];
}

/** What the repair turn's agent reads beside its usual input. */
export function repairInput(previous: unknown, problems: readonly DoctrineProblem[]) {
  return {
    your_previous_answer: previous,
    broken_rules: problems.map((p) => `${p.item ?? ""} ${p.problem}`.trim()),
    instruction:
      "Your previous answer broke the rules listed. Answer again in full, fixing each of them; an answer that still breaks one ends the run.",
  };
}

/** Problems as the one line a stuck run gives; `what` breaks the doctrine. */
export function describeDoctrineProblems(
  problems: readonly DoctrineProblem[],
  what = "the decisions break",
): string {
  return `${what} the doctrine: ${problems.map((p) => `${p.item ?? ""} ${p.problem}`.trim()).join("; ")}`;
}

/**
 * Whether a thread's anchored code is gone at head (doctrine 14): the platform marks it
 * outdated, or it has no line at head. Such a comment may still be true, but only the code at
 * head can say so.
 */
export function anchorGoneAtHead(thread: { line: number | null; outdated: boolean }): boolean {
  return thread.line === null || thread.outdated;
}

/** Whether two commit ids name the same commit (one may be abbreviated, at least 7 digits). */
export function sameCommit(a: string, b: string): boolean {
  return a.length >= 7 && b.length >= 7 && (a.startsWith(b) || b.startsWith(a));
}

export interface DecisionContext {
  /** The unresolved items of the request: each needs exactly one decision. */
  itemIds: readonly string[];
  /** Items an earlier run decided (`--prior`); with `prior`, derived from it. */
  priorItems?: readonly string[];
  /** The earlier run's decisions: a reaffirm must keep them, a reverse must change them. */
  prior?: readonly Decision[];
  /** The request's head: evidence for a fix of an item whose anchor is gone must be verified here. */
  head?: string;
  /** Items whose anchored code is gone at head (anchorGoneAtHead). */
  anchorGone?: readonly string[];
}

/** Problems with a set of decisions; the run refuses decisions that have any. */
export function checkDecisions(
  decisions: readonly Decision[],
  ctx: DecisionContext,
): DoctrineProblem[] {
  const out: DoctrineProblem[] = [];
  const seen = new Set<string>();
  const priorBy = new Map((ctx.prior ?? []).map((p) => [p.item, p]));
  const priorItems = new Set([...(ctx.priorItems ?? []), ...priorBy.keys()]);
  for (const d of decisions) {
    if (seen.has(d.item)) out.push({ item: d.item, problem: "decided twice" });
    seen.add(d.item);
    if (!ctx.itemIds.includes(d.item))
      out.push({ item: d.item, problem: "is not an item of the request" });
    if (!ALLOWED_ACTIONS[d.class].includes(d.action)) {
      out.push({
        item: d.item,
        problem: `${article(d.class)} ${d.class} item cannot be answered with ${d.action} (allowed: ${ALLOWED_ACTIONS[d.class].join(", ")})`,
      });
    }
    if (d.method === "executed" && d.detail.trim() === "")
      out.push({
        item: d.item,
        problem: "claims `executed` with no detail line naming what was run",
      });
    if (d.class === "praise" && d.reply !== undefined && d.reply.trim() !== "")
      out.push({ item: d.item, problem: "replies to praise" });
    if (["question", "incorrect-claim"].includes(d.class) && !d.reply?.trim())
      out.push({ item: d.item, problem: `${article(d.class)} ${d.class} needs a reply` });
    // Doctrine 16: a claim of runtime harm names how it is reached, else it is latent.
    if (d.harm === "reachable" && !d.path?.trim())
      out.push({
        item: d.item,
        problem:
          "claims `harm: reachable` with no `path` from an entry point: name the path, or call the harm latent",
      });
    // Doctrine 14: a comment whose anchored code is gone is fixed only on evidence taken at head.
    if (d.action === "fix" && ctx.anchorGone?.includes(d.item)) {
      const atHead =
        VERIFYING_METHODS.includes(d.method) &&
        d.verified_at !== undefined &&
        ctx.head !== undefined &&
        sameCommit(d.verified_at, ctx.head);
      if (!atHead)
        out.push({
          item: d.item,
          problem: `is anchored to code that is gone at head, and is decided fix without evidence verified at head: read or execute it at ${ctx.head ?? "the head"} and say so in \`verified_at\``,
        });
    }
    // Doctrine 15: reaffirm or reverse, never drift.
    const earlier = priorBy.get(d.item);
    if (priorItems.has(d.item) && !d.prior)
      out.push({
        item: d.item,
        problem:
          "was decided in an earlier run: reaffirm it with fresh verification or reverse it with a reason",
      });
    if (d.prior && !priorItems.has(d.item))
      out.push({
        item: d.item,
        problem: `says it ${d.prior.outcome}s an earlier decision, but no earlier run decided it`,
      });
    if (d.prior?.outcome === "reaffirm") {
      if (/as previously decided|see (the )?previous/i.test(d.prior.reason))
        out.push({ item: d.item, problem: "reaffirmed without fresh verification" });
      else if (!VERIFYING_METHODS.includes(d.method))
        out.push({
          item: d.item,
          problem: `reaffirmed on a ${d.method} method: a reaffirm needs fresh verification in this run (read or executed)`,
        });
      if (earlier && (earlier.action !== d.action || earlier.class !== d.class))
        out.push({
          item: d.item,
          problem: `"reaffirms" the earlier decision (${earlier.class}, ${earlier.action}) while changing it to ${d.class}, ${d.action}: a change is a reverse, with what changed`,
        });
    }
    if (
      d.prior?.outcome === "reverse" &&
      earlier &&
      earlier.action === d.action &&
      earlier.class === d.class
    )
      out.push({
        item: d.item,
        problem: `"reverses" the earlier decision (${earlier.class}, ${earlier.action}) but keeps it: a kept decision is a reaffirm`,
      });
  }
  for (const id of ctx.itemIds)
    if (!seen.has(id))
      out.push({ item: id, problem: "was silently ignored: every item gets a decision" });
  return out;
}

/**
 * Decisions that claim `executed` when the Decider's journal shows no executing tool call
 * (run_tests or a command) that completed: `operations` are the tool operations it called.
 */
export function executedWithoutRun(
  decisions: readonly Decision[],
  operations: readonly string[],
): DoctrineProblem[] {
  const ran = operations.some((op) =>
    (EXECUTING_OPERATIONS as readonly string[]).includes(op.split(".").at(-1) ?? ""),
  );
  if (ran) return [];
  return decisions
    .filter((d) => d.method === "executed")
    .map((d) => ({
      item: d.item,
      problem: `claims \`executed\` but the Decider ran nothing (its journal has no ${EXECUTING_OPERATIONS.join(" or ")} call)`,
    }));
}

/** Every `fix` decision is in the plan, and the plan plans nothing that was not decided `fix`. */
export function planCoverageProblems(
  decisions: readonly Decision[],
  plan: Pick<ReviewPlan, "items">,
): DoctrineProblem[] {
  const fixes = decisions.filter((d) => d.action === "fix").map((d) => d.item);
  return [
    ...fixes
      .filter((id) => !plan.items.includes(id))
      .map((item) => ({ item, problem: "is decided fix but the plan does not cover it" })),
    ...plan.items
      .filter((id) => !fixes.includes(id))
      .map((item) => ({ item, problem: "is in the plan but was not decided fix" })),
  ];
}

/**
 * Files a change touched that the approved plan does not list, or that the repository protects
 * (AGENTS.md entries: paths, globs, directories; see matchesRepoPattern).
 */
export function filesOutsidePlan(
  changed: readonly string[],
  plan: ReviewPlan,
  protectedPaths: readonly string[] = [],
): string[] {
  const allowed = new Set([...plan.files, ...plan.test_files]);
  return changed.filter((f) => !allowed.has(f) || matchesAnyRepoPattern(f, protectedPaths));
}

/**
 * Why a path a plan names is not a file of the repository: absolute, leaving the tree (`..`),
 * not normalised, or inside `.git`. Undefined for a plain repository-relative path.
 */
export function repoPathProblem(path: string): string | undefined {
  if (path === "") return "is empty";
  if (path.includes("\0") || path.includes("\\")) return "contains a NUL byte or a backslash";
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path)) return "is absolute";
  const parts = path.split("/");
  if (parts.includes("..")) return "leaves the repository (..)";
  if (parts.some((p) => p === "" || p === ".")) return "is not a normalised relative path";
  if (parts.some((p) => p.toLowerCase() === ".git")) return "is inside .git";
  return undefined;
}

/** The plan's files and test files that are not plain repository-relative paths, each with why. */
export function planPathProblems(plan: ReviewPlan): string[] {
  const out: string[] = [];
  for (const f of [...plan.files, ...plan.test_files]) {
    const problem = repoPathProblem(f);
    if (problem) out.push(`${JSON.stringify(f)} ${problem}`);
  }
  return out;
}

/** What the standards lane says of one changed file against one of the repository's conventions. */
export const standardsFindingSchema = z.object({
  /** A file the change touched, as its diff names it. */
  file: z.string().min(1),
  /** The convention, as AGENTS.md writes it (or why none bears on the file). */
  standard: z.string().min(1),
  /** `breaks`: the change does not follow it; the run does not publish a change that breaks one. */
  verdict: z.enum(["follows", "breaks"]),
  /** What in the change follows or breaks it, quoted or named by line. */
  finding: z.string().min(1),
});

export type StandardsFinding = z.infer<typeof standardsFindingSchema>;

/** The StandardsReviewer's output. */
export const standardsFindingsSchema = z.object({ findings: z.array(standardsFindingSchema) });

/**
 * The standards lane's coverage (principle 18): every file the change touched has at least one
 * finding, and no finding is about a file the change did not touch (a reviewer that reviewed
 * something else has not reviewed this).
 */
export function standardsProblems(
  findings: readonly StandardsFinding[],
  changed: readonly string[],
): DoctrineProblem[] {
  const covered = new Set(findings.map((f) => f.file));
  const touched = new Set(changed);
  return [
    ...changed
      .filter((f) => !covered.has(f))
      .map((f) => ({ problem: `${f} was changed but has no standards finding` })),
    ...[...covered]
      .filter((f) => !touched.has(f))
      .map((f) => ({ problem: `${f} has a standards finding but the change does not touch it` })),
  ];
}

/** The findings that say the change breaks a convention, one line each. */
export function brokenStandards(findings: readonly StandardsFinding[]): string[] {
  return findings
    .filter((f) => f.verdict === "breaks")
    .map((f) => `${f.file}: ${f.standard} (${f.finding})`);
}

/** Items whose decided action must leave the tree untouched. */
export function zeroDiffItems(decisions: readonly Decision[]): string[] {
  return decisions.filter((d) => !DIFF_ACTIONS.includes(d.action)).map((d) => d.item);
}

export type ProofVerdict = "proven" | "vacuous";

/**
 * The prover's verdict (principle 8): with only the production files reverted, every new test
 * must fail; one that still passes did not test the change.
 */
export function proofVerdict(
  newTestsWithChangeReverted: readonly { test: string; passed: boolean }[],
): { verdict: ProofVerdict; vacuous: string[] } {
  const vacuous = newTestsWithChangeReverted.filter((t) => t.passed).map((t) => t.test);
  return {
    verdict: newTestsWithChangeReverted.length > 0 && vacuous.length === 0 ? "proven" : "vacuous",
    vacuous,
  };
}
