/**
 * Small English for messages: counts with the right plural, and "a" or "an".
 */

/** `1 error`, `2 errors`; irregular plurals are given (`plural(n, "policy", "policies")`). */
export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}

/** The indefinite article for a word: `an` before a vowel, else `a`. */
export function article(word: string): string {
  return /^[aeiou]/i.test(word) ? "an" : "a";
}
