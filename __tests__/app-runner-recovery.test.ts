/**
 * The App runner finds a run again when someone asks for its status: a run left `running` by a
 * process that is gone is resumed on `/terfyn status` (not only at startup), and a run whose
 * files are gone from the runs directory ends `stuck` saying so. Over examples/review-fix, GitHub
 * a fake on nock with net connect disabled, every REST request checked against the OpenAPI
 * fixture.
 */
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { hostFacts } from "../src/adapters/fs/run-lock.ts";
import type { InProcessRunner } from "../src/adapters/review/review-runner.ts";
import { renderRunStatus } from "../src/core/render/run-status.ts";
import { recordRequests } from "./helpers/action-harness.ts";
import {
  APP,
  build,
  commented,
  exampleRunner,
  type Loose,
  leftRunningAtPlan,
  probotWith,
  restartedRunner,
  status,
  writer,
} from "./helpers/app-runner.ts";
import { humanComment } from "./helpers/fake-github.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

/** The runner as an App that finds no interrupted runs at startup: only a comment can recover one. */
const noStartupRecovery = (r: InProcessRunner): InProcessRunner => {
  const { interrupted: _startup, ...rest } = r;
  return rest as InProcessRunner;
};

describe("/terfyn status finds a run again", () => {
  it("a run left running by a process that is gone is resumed from its cursor when someone comments /terfyn status", async () => {
    const { ex, gh, runsDir, run, state } = await leftRunningAtPlan();
    expect(state()).toMatchObject({ status: "running", phase: "plan" });

    // The App restarted (the first process's pid is gone) and found nothing at startup; someone
    // asks for the run's status.
    const lines: string[] = [];
    const calls: string[] = [];
    const restarted = await restartedRunner(ex, runsDir, calls, lines);
    const receive = probotWith(noStartupRecovery(restarted));
    const rec = recordRequests();
    try {
      await restarted.idle();
      expect(calls).toEqual([]);
      await receive("issue_comment", commented("/terfyn status", "alice"));
      await restarted.idle();
    } finally {
      rec.stop();
      gh.done();
    }
    expect(rec.problems).toEqual([]);
    expect(lines.join("\n")).toMatch(/was interrupted; resuming it in phase plan/);
    expect(lines.join("\n")).toContain(
      `took over the lock on run ${run} from pid ${process.pid} on host ${hostFacts.host}`,
    );
    // The decide phase was not repeated: only the Planner ran, and the run reached its gate.
    expect(calls.length).toBeGreaterThan(0);
    expect(new Set(calls)).toEqual(new Set(["Planner"]));
    expect(state()).toMatchObject({ status: "awaiting-approval", awaiting: { gate: "plan" } });
    const s = status(gh.comments);
    expect(s.ledger).toMatchObject({ run, gate: "plan", hash: state().awaiting.hash });
  }, 180_000);

  it("a run whose files are gone from the runs directory ends stuck with a note saying so", async () => {
    const ex = build();
    const gh = writer(ex);
    // The status comment of a run this App's runs directory does not hold (a runs directory
    // not on a persistent disk, lost with a restart).
    const run = `pr7-${ex.head.slice(0, 12)}-lost`;
    const mine = humanComment(
      APP,
      renderRunStatus({ run, pull_request: 7, head: ex.head, phase: "plan" }),
    );
    mine.user = { login: APP, type: "Bot" };
    gh.comments.push(mine);
    const runner = await exampleRunner(ex);
    const receive = probotWith(runner);
    const rec = recordRequests();
    try {
      await receive("issue_comment", commented("/terfyn status", "alice"));
      await runner.idle();
    } finally {
      rec.stop();
      gh.done();
    }
    expect(rec.problems).toEqual([]);
    const s = status(gh.comments);
    expect(s.ledger).toMatchObject({ run, terminal: "stuck" });
    expect(s.ledger.gate).toBeUndefined();
    expect(s.body).toContain(
      "its files are not in this App's runs directory, so it cannot be resumed",
    );
    expect(s.body).toMatch(/Remove the label and add it again to start a new run\\\./);
    expect((gh.checkRuns.at(-1)!.body as Loose).conclusion).toBe("failure");
  }, 60_000);
});
