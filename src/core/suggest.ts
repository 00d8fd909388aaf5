/**
 * "Did you mean" suggestions for near-miss names.
 */

/**
 * Edit distance with adjacent transpositions (optimal string alignment), bounded: returns
 * `limit + 1` as soon as the distance must exceed `limit`. `modle` is one edit from `model`.
 */
export function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let prevPrev: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let v = Math.min(
        (prev[j] as number) + 1,
        (cur[j - 1] as number) + 1,
        (prev[j - 1] as number) + cost,
      );
      if (
        i > 1 &&
        j > 1 &&
        a.charCodeAt(i - 1) === b.charCodeAt(j - 2) &&
        a.charCodeAt(i - 2) === b.charCodeAt(j - 1)
      ) {
        v = Math.min(v, (prevPrev[j - 2] as number) + 1);
      }
      cur.push(v);
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > limit) return limit + 1;
    prevPrev = prev;
    prev = cur;
  }
  return prev[b.length] as number;
}

/** The closest candidate within a length-scaled distance, or undefined. Case differences are cheap. */
export function closestName(name: string, candidates: Iterable<string>): string | undefined {
  const limit = Math.max(1, Math.floor(name.length / 3));
  let best: string | undefined;
  let bestDistance = limit + 1;
  const lower = name.toLowerCase();
  for (const candidate of candidates) {
    if (candidate === name) continue;
    const d = candidate.toLowerCase() === lower ? 0 : editDistance(name, candidate, limit);
    if (d < bestDistance || (d === bestDistance && best !== undefined && candidate < best)) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= limit ? best : undefined;
}

/** " (did you mean `X`?)"-style hint text, or undefined when nothing is close. */
export function didYouMean(name: string, candidates: Iterable<string>): string | undefined {
  const match = closestName(name, candidates);
  return match === undefined ? undefined : `did you mean \`${match}\`?`;
}
