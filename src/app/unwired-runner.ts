/**
 * The runner this build of the App ships with: it ends every run `stuck` with a report saying
 * that review runs are not executed from the App yet (run `terfyn review` locally on the same
 * request, or wait for the in-process runner). Honest rather than silent: the label, the
 * status comment, the check run and every guard in front of the runner work as they will.
 */
import type { ReviewRunner } from "./app.ts";

export const unwiredRunner: ReviewRunner = {
  start(job, reporter) {
    void reporter
      .update(
        {
          run: job.run,
          pull_request: job.pullRequest,
          head: job.head,
          phase: "intake",
          terminal: "stuck",
        },
        {
          note: "This build of the Terfyn App does not execute review runs yet: nothing was changed. Run `terfyn review` on the branch locally (docs/review-request.md).",
        },
      )
      .catch(() => {});
  },
  approve(job, ledger, by, reporter) {
    void reporter
      .update(ledger, {
        note: `Approval by @${by.login} recorded; no runner is wired to act on it.`,
      })
      .catch(() => {});
    void job;
  },
  stop(_job, ledger, reason, reporter) {
    void reporter
      .update({ ...ledger, terminal: "stuck", gate: undefined }, { note: reason })
      .catch(() => {});
  },
};
