/**
 * How deep a plain (JSON-like) value nests, checked without recursion. Values from users (YAML
 * with aliases, JSON input files, journal lines) can nest deep enough, or contain themselves, to
 * overflow the stack of every recursive function that later touches them (schema checks,
 * JSON.stringify, hashing). Pure.
 */

/**
 * Why a value cannot be used as plain data: it contains itself (an alias of an enclosing
 * value), or it nests deeper than `max`. Iterative, so the check cannot overflow the stack it
 * protects; shared (aliased) but acyclic values are fine.
 */
export function nestingProblem(value: unknown, max: number): "cycle" | "too-deep" | undefined {
  const path = new Set<object>();
  const stack: { v: unknown; depth: number; leave?: boolean }[] = [{ v: value, depth: 0 }];
  let visited = 0;
  while (stack.length > 0) {
    const { v, depth, leave } = stack.pop() as { v: unknown; depth: number; leave?: boolean };
    if (v === null || typeof v !== "object") continue;
    if (leave) {
      path.delete(v);
      continue;
    }
    if (path.has(v)) return "cycle";
    if (depth >= max) return "too-deep";
    // Shared values are walked once per use; bounding the work keeps a wide alias fan-out finite.
    if (++visited > 1_000_000) return "too-deep";
    path.add(v);
    stack.push({ v, depth, leave: true });
    for (const child of Object.values(v)) stack.push({ v: child, depth: depth + 1 });
  }
  return undefined;
}
