/**
 * The doctrine in code (docs/review-doctrine.md, doctrines 11–17): the closed sets a deciding step chooses
 * from, the shape of `decisions.json` and `plan.json`, and the checks that make a lazy or
 * obedient decision visible: an `executed` method needs a detail line, praise gets no reply, a
 * stale or out-of-scope item produces no diff, an item seen before is reaffirmed with fresh
 * verification or reversed with a reason, and nothing outside the approved plan is touched.
 * Pure.
 */
import { z } from "zod";
import { article } from "../words.ts";
import { matchesAnyRepoPattern } from "./repo-facts.ts";

export const ITEM_CLASSES = [
  "defect",
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
  question: ["answer"],
  "incorrect-claim": ["push-back"],
  "out-of-scope": ["ticket"],
  stale: ["answer", "none"],
  praise: ["none"],
};

/** Actions that change code; every other action leaves the tree untouched. */
export const DIFF_ACTIONS: readonly (typeof ACTIONS)[number][] = ["fix"];

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
  /** For an item decided in an earlier run: keep the decision with fresh verification, or change it with a reason. */
  prior: z
    .object({ outcome: z.enum(["reaffirm", "reverse"]), reason: z.string().min(1) })
    .optional(),
  /** A claim of runtime harm names a reachable path from a real entry point, else it is latent. */
  harm: z.enum(["reachable", "latent", "none"]).default("none"),
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

/** Problems with a set of decisions; the run refuses decisions that have any. */
export function checkDecisions(
  decisions: readonly Decision[],
  ctx: { itemIds: readonly string[]; priorItems: readonly string[] },
): DoctrineProblem[] {
  const out: DoctrineProblem[] = [];
  const seen = new Set<string>();
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
    if (ctx.priorItems.includes(d.item) && !d.prior)
      out.push({
        item: d.item,
        problem:
          "was decided in an earlier run: reaffirm it with fresh verification or reverse it with a reason",
      });
    if (
      d.prior?.outcome === "reaffirm" &&
      /as previously decided|see (the )?previous/i.test(d.prior.reason)
    ) {
      out.push({ item: d.item, problem: "reaffirmed without fresh verification" });
    }
  }
  for (const id of ctx.itemIds)
    if (!seen.has(id))
      out.push({ item: id, problem: "was silently ignored: every item gets a decision" });
  return out;
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
