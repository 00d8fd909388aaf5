/**
 * The one string order for everything Terfyn hashes or prints in a fixed order: by UTF-16 code
 * unit (what `Array.prototype.sort()` does with no comparator), never by locale.
 */
export function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
