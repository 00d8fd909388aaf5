/**
 * A review-fix run's one status comment and the check run on its head that mirrors it: created
 * at the first update, edited in place after. The App uses it with its installation token; the
 * Action's review-fix mode with the workflow's token.
 */

import { type Ledger, parseLedger } from "../../core/app/triggers.ts";
import { type RunStatusDetails, renderRunStatus } from "../../core/render/run-status.ts";
import type { GitHubGateway, IssueComment } from "./gateway.ts";

/** Where a run's progress is reported: the status comment and a check run on the head. */
export interface RunReporter {
  /**
   * The status comment shows `ledger` and `details`; the check run mirrors it unless `progress`
   * (a phase the run entered: the comment follows the run, the check is kept for gates and ends).
   */
  update(ledger: Ledger, details?: RunStatusDetails, progress?: boolean): Promise<void>;
}

export interface StatusReporter extends RunReporter {
  /** The status comment, once there is one. */
  comment(): { id: number; url: string } | undefined;
}

const GOOD_ENDS = ["done", "nothing-to-do", "done-but-unproven"];

export function statusReporter(
  gateway: Pick<GitHubGateway, "createIssueComment" | "updateIssueComment" | "createCheckRun">,
  issue: number,
  existing?: { id: number; url?: string },
): StatusReporter {
  let at = existing ? { id: existing.id, url: existing.url ?? "" } : undefined;
  return {
    comment: () => at,
    async update(ledger, details, progress) {
      const body = renderRunStatus(ledger, details);
      at =
        at === undefined
          ? await gateway.createIssueComment(issue, body)
          : await gateway.updateIssueComment(at.id, body);
      if (progress) return;
      await gateway.createCheckRun({
        name: "terfyn: review-fix",
        headSha: ledger.head,
        conclusion: !ledger.terminal
          ? "neutral"
          : GOOD_ENDS.includes(ledger.terminal)
            ? "success"
            : "failure",
        externalId: ledger.run,
        output: {
          title:
            ledger.terminal ?? (ledger.gate ? `waiting at the ${ledger.gate} gate` : ledger.phase),
          summary: body,
        },
        annotations: [],
      });
    },
  };
}

/** Whether a run that ended `terminal` ended well (the check's success). */
export function endedWell(terminal: string): boolean {
  return GOOD_ENDS.includes(terminal);
}

/**
 * A run's status comment and its ledger: the newest comment by `author` (the App's bot, or the
 * workflow token's user) holding a ledger, for `run` when given. Only that author's comments
 * are trusted to carry one.
 */
export function findLedger(
  comments: readonly IssueComment[],
  author: string,
  run?: string,
): { comment: IssueComment; ledger: Ledger } | undefined {
  for (const c of [...comments].reverse()) {
    if (c.author !== author) continue;
    const ledger = parseLedger(c.body);
    if (ledger && (run === undefined || ledger.run === run)) return { comment: c, ledger };
  }
  return undefined;
}
