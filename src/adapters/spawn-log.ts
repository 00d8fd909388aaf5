/**
 * For the benchmark (bench/review.ts) only: when TERFYN_BENCH_SPAWN_LOG names a file, every git
 * process the branch writer starts, every repository command a review run starts and every test
 * command an agent's `run_tests` starts appends one JSON line to it: what ran and how long it took. Unset (always, outside the benchmark), nothing
 * is measured or written. The line holds the git subcommand or the command's text, never its
 * output or its environment.
 */
import { appendFileSync } from "node:fs";

export interface SpawnRecord {
  kind: "git" | "repo-command" | "agent-test";
  /** The git subcommand, or the repository command as AGENTS.md gives it. */
  what: string;
  ms: number;
}

/** A function to call when the process ends, or undefined when no log is asked for. */
export function spawnTimer(kind: SpawnRecord["kind"], what: string): (() => void) | undefined {
  const file = process.env.TERFYN_BENCH_SPAWN_LOG;
  if (!file) return undefined;
  const start = performance.now();
  return () => {
    const record: SpawnRecord = { kind, what, ms: performance.now() - start };
    try {
      appendFileSync(file, `${JSON.stringify(record)}\n`);
    } catch {
      // A benchmark's log never changes what the run does.
    }
  };
}
