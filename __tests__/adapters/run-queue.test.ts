/**
 * The review runner's queue (src/adapters/review/run-queue.ts): one run's work in order, one
 * piece at a time; at most `limit` runs at once; a failure goes to its handler and the run's
 * later work still runs.
 */
import { describe, expect, it } from "vitest";
import { RunQueue } from "../../src/adapters/review/run-queue.ts";

const tick = () => new Promise((r) => setTimeout(r, 5));

describe("RunQueue", () => {
  it("runs one run's work in order, never two pieces of it at once", async () => {
    const q = new RunQueue(4);
    const seen: string[] = [];
    let inside = 0;
    for (const name of ["start", "approve", "stop"])
      q.enqueue(
        "r1",
        async () => {
          inside++;
          expect(inside).toBe(1);
          await tick();
          seen.push(name);
          inside--;
        },
        async () => {},
      );
    expect(q.has("r1")).toBe(true);
    await q.idle();
    expect(seen).toEqual(["start", "approve", "stop"]);
    expect(q.has("r1")).toBe(false);
  });

  it("works on at most `limit` runs at once", async () => {
    const q = new RunQueue(2);
    let inside = 0;
    let most = 0;
    for (let i = 0; i < 6; i++)
      q.enqueue(
        `r${i}`,
        async () => {
          inside++;
          most = Math.max(most, inside);
          await tick();
          inside--;
        },
        async () => {},
      );
    await q.idle();
    expect(most).toBe(2);
  });

  it("hands a failure to its own handler, and the run's later work still runs", async () => {
    const q = new RunQueue(1);
    const failures: string[] = [];
    const done: string[] = [];
    q.enqueue(
      "r1",
      async () => {
        throw new Error("clone failed");
      },
      async (e) => {
        failures.push((e as Error).message);
      },
    );
    q.enqueue(
      "r1",
      async () => {
        done.push("stop");
      },
      async () => {},
    );
    await q.idle();
    expect(failures).toEqual(["clone failed"]);
    expect(done).toEqual(["stop"]);
  });
});
