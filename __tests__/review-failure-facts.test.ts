/**
 * The referee's facts (src/core/review/failure-facts.ts): normalised failure signatures and the
 * failure class as observed from the command.
 */
import { describe, expect, it } from "vitest";
import {
  failureSignature,
  normaliseFailureText,
  observedFailureClass,
} from "../src/core/review/failure-facts.ts";

describe("failure signatures", () => {
  it("five runs of one failure, differing only in durations, timestamps, temp paths, addresses and pids, have one signature", () => {
    const runs = [0, 1, 2, 3, 4].map(
      (i) =>
        `not ok 1 - add returns the sum\n  duration_ms: ${10 + i * 3.7}\n  at 2026-12-0${i + 1}T10:0${i}:00.123Z in /tmp/terfyn-worktree-${i}abc/test/add.test.js\n  object at 0x7ffe${i}1234 pid ${4000 + i}\nfailed after ${i}.5s (${i * 11}ms)\n`,
    );
    const sigs = new Set(runs.map((r) => failureSignature("test", 1, r)));
    expect(sigs.size).toBe(1);
  });

  it("the run's own directories are taken out", () => {
    const a = failureSignature("test", 1, "at /home/u/run-a.worktree/x.js:3", [
      "/home/u/run-a.worktree",
    ]);
    const b = failureSignature("test", 1, "at /home/u/run-b.worktree/x.js:3", [
      "/home/u/run-b.worktree",
    ]);
    expect(a).toBe(b);
  });

  it("different failures, gates or exits differ", () => {
    const base = failureSignature("test", 1, "expected 5, got -1");
    expect(failureSignature("test", 1, "expected 0, got 2")).not.toBe(base);
    expect(failureSignature("lint", 1, "expected 5, got -1")).not.toBe(base);
    expect(failureSignature("test", 2, "expected 5, got -1")).not.toBe(base);
    expect(normaliseFailureText("line 12: expected 5")).toBe("line 12: expected 5");
  });
});

describe("failure classes, as observed", () => {
  const run = (output: string, code = 1, timedOut = false) => ({ output, code, timedOut });
  const cls = (r: ReturnType<typeof run>) => observedFailureClass(r).failure_class;
  it("the environment: command not found, refused connections, missing or refused credentials, timeouts", () => {
    expect(cls(run("sh: 1: pytest: not found", 127))).toBe("environmental");
    expect(cls(run("/bin/sh: foo: command not found", 127))).toBe("environmental");
    expect(cls(run("Error: connect ECONNREFUSED 127.0.0.1:5432"))).toBe("environmental");
    expect(cls(run("psql: could not resolve host: db"))).toBe("environmental");
    expect(cls(run("Error: DATABASE_PASSWORD is not set"))).toBe("environmental");
    expect(cls(run("missing credentials for registry.example.com"))).toBe("environmental");
    expect(cls(run("HTTP 401 Unauthorized"))).toBe("environmental");
    expect(cls(run("", 143, true))).toBe("environmental");
    expect(observedFailureClass(run("x: command not found", 127)).evidence).toContain(
      "command not found (exit 127)",
    );
  });
  it("anything else is tactical", () => {
    expect(cls(run("AssertionError: expected 5, got -1"))).toBe("tactical");
  });
});
