/**
 * The referee, table-driven: every decision and every rule that leads to it, including the
 * seed's expired-credential story.
 */
import { describe, expect, it } from "vitest";
import {
  DEFAULT_LIMITS,
  type RefereeState,
  referee,
  type Verdict,
} from "../src/core/review/referee.ts";

const pass = (newTests: number): Verdict => ({
  status: "pass",
  tests_run: 10,
  new_tests_run: newTests,
  reason: "green",
  evidence: "10 passed",
});
const fail = (
  cls: Verdict["failure_class"],
  signature = "t1:AssertionError",
  reason = "assertion failed",
): Verdict => ({
  status: "fail",
  failure_class: cls,
  tests_run: 10,
  new_tests_run: 2,
  reason,
  evidence: "expected 3, got -1",
  failure_signature: signature,
});
const state = (history: Verdict[] = [], identicalRetries = 0, escalations = 0): RefereeState => ({
  history,
  identicalRetries,
  escalations,
});

describe("referee", () => {
  const cases: [string, Verdict, RefereeState, string][] = [
    ["green with new tests run", pass(2), state(), "STOP_OK"],
    ["false green: no new test ran", pass(0), state(), "ESCALATE"],
    ["false green after the re-plan budget", pass(0), state([], 0, 2), "STOP_STUCK"],
    ["tactical failure", fail("tactical"), state(), "CONTINUE"],
    ["a failure with no class is tactical", fail(undefined), state(), "CONTINUE"],
    ["mechanical failure", fail("mechanical"), state(), "RETRY_MECHANICAL"],
    [
      "mechanical failure at the identical-retry cap",
      fail("mechanical"),
      state([fail("mechanical"), fail("mechanical")], 2),
      "STOP_STUCK",
    ],
    ["strategic failure", fail("strategic"), state(), "ESCALATE"],
    [
      "strategic failure after the re-plan budget",
      fail("strategic"),
      state([], 0, 2),
      "STOP_STUCK",
    ],
    [
      "the same failure signature twice",
      fail("tactical", "sig-A"),
      state([fail("tactical", "sig-A")]),
      "ESCALATE",
    ],
    [
      "a different failure the second time",
      fail("tactical", "sig-B"),
      state([fail("tactical", "sig-A")]),
      "CONTINUE",
    ],
    ["environmental failure", fail("environmental"), state(), "STOP_STUCK"],
    [
      "the iteration ceiling",
      fail("tactical", "x5"),
      state([
        fail("tactical", "x1"),
        fail("tactical", "x2"),
        fail("tactical", "x3"),
        fail("tactical", "x4"),
      ]),
      "STOP_STUCK",
    ],
  ];
  for (const [name, verdict, st, decision] of cases) {
    it(`${name} -> ${decision}`, () => {
      expect(referee(verdict, st).decision).toBe(decision);
    });
  }

  it("the seed's story: an expired credential surfacing as a dead test command stops the loop, even when classified tactical", () => {
    const verdict: Verdict = {
      status: "fail",
      failure_class: "tactical",
      tests_run: 0,
      new_tests_run: 0,
      reason: "test command exited 1",
      evidence: "Error: fetching fixtures: 401 Unauthorized: the token has expired",
      failure_signature: "suite:exit1",
    };
    const ruling = referee(verdict, state());
    expect(ruling.decision).toBe("STOP_STUCK");
    expect(ruling.failure_class).toBe("environmental");
    expect(ruling.rule).toContain("instead of changing code");
    // And twice in a row it is still a stop, never two iterations of "fixing" correct code.
    expect(referee(verdict, state([verdict])).decision).toBe("STOP_STUCK");
  });

  it("bounds the loop: a stream of distinct tactical failures ends in at most maxIterations passes", () => {
    const history: Verdict[] = [];
    let decision = "";
    for (let i = 0; i < 20 && decision !== "STOP_STUCK"; i++) {
      const v = fail("tactical", `sig-${i}`);
      decision = referee(v, state(history)).decision;
      history.push(v);
    }
    expect(decision).toBe("STOP_STUCK");
    expect(history.length).toBe(DEFAULT_LIMITS.maxIterations);
  });
});
