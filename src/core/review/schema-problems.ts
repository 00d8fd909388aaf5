/**
 * Short, located messages for a value that does not match its schema: one line per problem,
 * `field.path[0].name: what is expected`, at most a few of them. What a human sees for a bad
 * `request.json` or a malformed artifact, instead of zod's JSON dump of its issues. Pure.
 */
import type { z } from "zod";

/** `threads[0].comments[1].commit`, or `(top level)` for the value itself. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const p of path) {
    if (typeof p === "number") out += `[${p}]`;
    else out += out === "" ? String(p) : `.${String(p)}`;
  }
  return out === "" ? "(top level)" : out;
}

/** One line per issue, `path: message`, the first `max` of them and a count of the rest. */
export function schemaProblems(error: z.ZodError, max = 3): string[] {
  const lines = error.issues.map((i) => `${fieldPath(i.path)}: ${i.message}`);
  const shown = [...new Set(lines)].slice(0, max);
  const rest = new Set(lines).size - shown.length;
  return rest > 0 ? [...shown, `(and ${rest} more)`] : shown;
}
