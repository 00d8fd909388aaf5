/**
 * The label claims (`<runsDir>/.claims/<hash>/`, one per labelled pull request head, held while
 * a label event is handled so two at once start one run) go with their release: after label
 * events the .claims directory is empty. A claim directory holding anything but the released
 * lock is left alone. GitHub is a fake on nock with net connect disabled, every REST request
 * checked against the OpenAPI fixture.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { LOCK_NAME } from "../src/adapters/fs/run-lock.ts";
import { recordRequests } from "./helpers/action-harness.ts";
import { build, exampleRunner, labeled, probotWith, status, writer } from "./helpers/app-runner.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

const claimsOf = (runsDir: string) => {
  const dir = join(runsDir, ".claims");
  return existsSync(dir) ? readdirSync(dir) : [];
};

describe("the App runner's label claims", () => {
  it("after label events (two App processes at once, then one more) the .claims directory is empty", async () => {
    const ex = build();
    const gh = writer(ex);
    const runsDir = mkdtempSync(join(tmpdir(), "terfyn-app-runs-"));
    // The clone fails at once: this test is about the label event, not the run.
    const opts = { runsDir, cloneUrl: () => join(ex.origin, "..", "none.git") };
    const a = await exampleRunner(ex, opts);
    const b = await exampleRunner(ex, opts);
    const rec = recordRequests();
    try {
      await Promise.all([
        probotWith(a)("pull_request", labeled(ex)),
        probotWith(b)("pull_request", labeled(ex)),
      ]);
      await Promise.all([a.idle(), b.idle()]);
      expect(existsSync(join(runsDir, ".claims"))).toBe(true);
      expect(claimsOf(runsDir)).toEqual([]);
      // One run (status() asserts one status comment).
      expect(status(gh.comments).ledger.head).toBe(ex.head);
      // Another label event for the same head (the run ended: it starts one more): claimed,
      // handled, released.
      await probotWith(a)("pull_request", labeled(ex));
      await a.idle();
      expect(claimsOf(runsDir)).toEqual([]);
    } finally {
      rec.stop();
      gh.done();
    }
    expect(rec.problems).toEqual([]);
  }, 60_000);

  it("a claim holds its head until released; its directory goes with it, unless it holds something else", async () => {
    const ex = build();
    const runsDir = mkdtempSync(join(tmpdir(), "terfyn-app-runs-"));
    const runner = await exampleRunner(ex, { runsDir });
    const key = "octo-org/agents#7@abc";
    const held = runner.claim(key);
    expect(held).toBeDefined();
    const [dir] = claimsOf(runsDir);
    expect(readdirSync(join(runsDir, ".claims", dir!))).toEqual([LOCK_NAME]);
    expect(runner.claim(key)).toBeUndefined();
    held!.release();
    expect(claimsOf(runsDir)).toEqual([]);

    // Claimed again (the directory made afresh); something else put in it stays, and so does it.
    const again = runner.claim(key);
    expect(again).toBeDefined();
    writeFileSync(join(runsDir, ".claims", dir!, "note"), "not a lock");
    again!.release();
    expect(readdirSync(join(runsDir, ".claims", dir!))).toEqual(["note"]);
  }, 60_000);

  it("at startup the empty claim directories an earlier version left are removed, others kept", async () => {
    const ex = build();
    const runsDir = mkdtempSync(join(tmpdir(), "terfyn-app-runs-"));
    for (const d of ["a".repeat(64), "b".repeat(64)])
      mkdirSync(join(runsDir, ".claims", d), { recursive: true });
    writeFileSync(join(runsDir, ".claims", "b".repeat(64), "note"), "kept");
    const runner = await exampleRunner(ex, { runsDir });
    expect(await runner.interrupted()).toEqual([]);
    expect(claimsOf(runsDir)).toEqual(["b".repeat(64)]);
  }, 60_000);
});
