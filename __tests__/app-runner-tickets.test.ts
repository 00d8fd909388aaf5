/**
 * The App's tickets at publish when GitHub refuses to open an issue: a 403 (no issues
 * permission) or a 422 (a validation failure) ends the run stuck with that cause on the status
 * comment, the check run and in the report; a 410 on the creation itself (issues disabled,
 * found only when opening one) is reported but not fatal. The commit and the replies, published
 * before the tickets, stay published. Over examples/review-fix, GitHub a fake on nock with net
 * connect disabled, every REST request checked against the OpenAPI fixture.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { recordRequests } from "./helpers/action-harness.ts";
import {
  build,
  fakeGraphql,
  git,
  type Loose,
  status,
  throughPublish,
  writer,
} from "./helpers/app-runner.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

describe("the App runner when GitHub refuses a ticket", () => {
  it.each([
    [
      403,
      /creating the ticket for RT\\_104 failed \\\(HTTP 403: Resource not accessible by integration\\\)/,
    ],
    [422, /creating the ticket for RT\\_104 failed \\\(HTTP 422\\\): Validation Failed/],
  ])(
    "a %i on creating the issue ends the run stuck with that cause on the status comment, the check run and in the report",
    async (code, cause) => {
      const ex = build();
      const gh = writer(ex);
      const fake = fakeGraphql(ex, { failTicket: code });
      const rec = recordRequests();
      try {
        const { runner, run } = await throughPublish(ex, gh);
        const s = status(gh.comments);
        expect(s.ledger.terminal).toBe("stuck");
        expect(s.body).toMatch(cause);
        const check = gh.checkRuns.at(-1)!.body as Loose;
        expect(check.conclusion).toBe("failure");
        expect(check.output.summary).toMatch(cause);
        const report = readFileSync(join(runner.paths(run).run, "report.md"), "utf8");
        expect(report).toContain(`creating the ticket for RT_104 failed (HTTP ${code}`);
        // What was published before the tickets stays: the commit, the four replies; no issue.
        expect(git(ex.origin, "rev-parse", "fix-add^")).toBe(ex.head);
        expect(fake.replies).toHaveLength(4);
        expect(fake.issues).toEqual([]);
      } finally {
        rec.stop();
        gh.done();
      }
      expect(rec.problems).toEqual([]);
    },
    240_000,
  );

  it("a 410 on creating the issue (the listing worked) is reported, not fatal: the run is done", async () => {
    const ex = build();
    const gh = writer(ex);
    const fake = fakeGraphql(ex, { failTicket: 410 });
    const rec = recordRequests();
    try {
      const { runner, run } = await throughPublish(ex, gh);
      const s = status(gh.comments);
      expect(s.ledger.terminal).toBe("done");
      expect(s.body).toContain("**Not published:**");
      expect(s.body).toMatch(
        /Issues are disabled on this repository \\\(HTTP 410\\\): 1 ticket was not opened \\\(RT\\_104\\\)/,
      );
      expect((gh.checkRuns.at(-1)!.body as Loose).conclusion).not.toBe("failure");
      expect(fake.replies).toHaveLength(4);
      expect(fake.issues).toEqual([]);
      const report = readFileSync(join(runner.paths(run).run, "report.md"), "utf8");
      expect(report).toMatch(
        /## On GitHub\n\n- Issues are disabled on this repository \(HTTP 410\)/,
      );
    } finally {
      rec.stop();
      gh.done();
    }
    expect(rec.problems).toEqual([]);
  }, 240_000);
});
