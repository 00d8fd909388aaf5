/**
 * A benchmark target as the report prints it: its name, whether it passed, and the measure it
 * was judged on (the ratio or figure, its median and its spread), so a FAIL says by how much
 * and a PASS says with what margin, without reading the rows above.
 */
export type Target = [name: string, ok: boolean, measure?: string];

/** `median 1.2 ms (spread 1.1–1.4, 7 runs)`, with the unit given. */
export function medianAndSpread(
  median: number,
  min: number,
  max: number,
  runs: number,
  unit = " ms",
  digits = 1,
): string {
  return `median ${median.toFixed(digits)}${unit} (spread ${min.toFixed(digits)}–${max.toFixed(digits)}, ${runs} runs)`;
}

/** The target lines of a report: `name  PASS  measure`. */
export function targetLines(targets: readonly Target[], width: number): string[] {
  return targets.map(
    ([name, ok, measure]) =>
      `  ${name.padEnd(width)}  ${ok ? "PASS" : "FAIL"}${measure === undefined ? "" : `  ${measure}`}`,
  );
}
