/**
 * The App runner finds a run again when someone asks for its status: a run left `running` by a
 * process that is gone is resumed on `/terfyn status` (not only at startup), and a run whose
 * files are gone from the runs directory ends `stuck` saying so. Over examples/review-fix, GitHub
 * a fake on nock with net connect disabled, every REST request checked against the OpenAPI
 * fixture.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { ReviewRunStore } from "../src/adapters/fs/review-run-store.ts";
import { hostFacts } from "../src/adapters/fs/run-lock.ts";
import type { InProcessRunner } from "../src/adapters/review/review-runner.ts";
import { renderRunStatus } from "../src/core/render/run-status.ts";
import { recordRequests } from "./helpers/action-harness.ts";
import {
  APP,
  build,
  commented,
  exampleRunner,
  fakeGraphql,
  LATER,
  type Loose,
  labeled,
  leftRunningAtPlan,
  probotWith,
  restartedRunner,
  status,
  until,
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

  it("a run at a gate whose approval was recorded before its process died is resumed at startup and goes on", async () => {
    const ex = build();
    const gh = writer(ex);
    fakeGraphql(ex);
    const runsDir = mkdtempSync(join(tmpdir(), "terfyn-app-runs-"));
    const first = await exampleRunner(ex, { runsDir });
    const label = labeled(ex);
    label.installation ??= { id: 1 };
    await probotWith(first)("pull_request", label);
    await first.idle();
    const run = status(gh.comments).ledger.run;
    const store = await ReviewRunStore.open(first.paths(run).run);
    const waiting = await store.readState();
    expect(waiting).toMatchObject({ status: "awaiting-approval", awaiting: { gate: "plan" } });
    // The process recorded the approval of exactly what the gate awaits, then died before the
    // core read it.
    await store.appendApproval({
      gate: "plan",
      hash: waiting?.awaiting?.hash as string,
      approved_at: LATER,
      by: "@maria (write)",
    });

    const calls: string[] = [];
    const lines: string[] = [];
    const restarted = await restartedRunner(ex, runsDir, calls, lines);
    const rec = recordRequests();
    try {
      probotWith(restarted); // loading the App recovers what was interrupted
      await until(() => calls.length > 0, 60_000, "the resumed run's first model call");
      await restarted.idle();
    } finally {
      rec.stop();
    }
    expect(rec.problems).toEqual([]);
    expect(await store.readState()).toMatchObject({
      status: "awaiting-approval",
      awaiting: { gate: "publish" },
    });
    expect(status(gh.comments).ledger.gate).toBe("publish");
  }, 180_000);
});
