import { add } from "./add.js";

/** Formats numbers as a sorted, comma-separated list; the caller's array is left as it is. */
export function format(values) {
  return [...values].sort((x, y) => x - y).join(", ");
}

/** Formats the sum of numbers as "total: N". */
export function formatTotal(values) {
  return `total: ${values.reduce((sum, v) => add(sum, v), 0)}`;
}
