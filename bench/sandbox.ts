/**
 * What the sandbox costs (src/adapters/sandbox): the same command, `sh -c true`, run through
 * the bubblewrap sandbox and unconfined, alternately in the same run, each as the product runs
 * it (a process group, the output piped, the whole exit awaited). The figure is the median
 * added per command; the target is at most 30 ms.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { BubblewrapSandbox } from "../src/adapters/sandbox/bubblewrap.ts";
import type { Sandbox } from "../src/adapters/sandbox/sandbox.ts";
import { UnconfinedSandbox } from "../src/adapters/sandbox/unconfined.ts";
import { median } from "./median.ts";
import { medianAndSpread, type Target } from "./target.ts";

export class SandboxBenchBroken extends Error {}

/** Added time per command at most (ms). */
const TARGET_MS = 30;

export async function runSandboxBench(options: { reps: number }): Promise<{
  rows: [string, string][];
  targets: Target[];
}> {
  const dir = await mkdtemp(join(tmpdir(), "terfyn-sandbox-bench-"));
  try {
    const confined = await BubblewrapSandbox.open({ searchPath: process.env.PATH ?? "" });
    const unconfined = new UnconfinedSandbox();
    const once = async (sandbox: Sandbox): Promise<number> => {
      const t = performance.now();
      const exit = await sandbox.run({
        argv: ["/bin/sh", "-c", "true"],
        writable: dir,
        env: { PATH: "/usr/bin:/bin" },
        timeoutMs: 30_000,
        onStdout: () => {},
        onStderr: () => {},
      });
      if (exit.code !== 0) throw new SandboxBenchBroken(`sh -c true exited ${exit.code}`);
      return performance.now() - t;
    };
    // Warm both paths, then alternate so a busy moment falls on both alike.
    await once(confined);
    await once(unconfined);
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < options.reps; i++) {
      a.push(await once(confined));
      b.push(await once(unconfined));
    }
    const added = a.map((x, i) => x - (b[i] as number));
    const addedMedian = median(added);
    const m = (xs: number[]) =>
      medianAndSpread(median(xs), Math.min(...xs), Math.max(...xs), xs.length);
    return {
      rows: [
        ["sh -c true, in the sandbox (bubblewrap)", m(a)],
        ["sh -c true, unconfined", m(b)],
        ["added by the sandbox, per command", m(added)],
      ],
      targets: [
        [
          `sandbox adds <= ${TARGET_MS} ms per command`,
          addedMedian <= TARGET_MS,
          `${addedMedian.toFixed(1)} ms added`,
        ],
      ],
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
