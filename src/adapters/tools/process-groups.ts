/**
 * The process groups of tool calls running right now (run_tests, command tools), so that a
 * run that must exit at once (a second SIGINT) can kill them first instead of leaving them
 * behind: each call leads its own group, which the terminal's Ctrl-C never reaches.
 */
const live = new Set<number>();

/** Records a running call's group (its leader's pid); returns the function that forgets it. */
export function trackProcessGroup(pid: number | undefined): () => void {
  if (pid === undefined) return () => {};
  live.add(pid);
  return () => {
    live.delete(pid);
  };
}

/** Signals every running call's process group. */
export function killLiveProcessGroups(sig: NodeJS.Signals = "SIGKILL"): void {
  for (const pid of live) {
    try {
      process.kill(-pid, sig);
    } catch {
      // Already gone.
    }
  }
}
