/** One guard removed by a small source edit, and the test that must then fail. */
export interface Mutation {
  /** What the guard belongs to: a doctrine's number, an issue item. */
  group: string;
  guard: string;
  file: string;
  /** The guard's text, found exactly once in `file`. */
  find: string;
  replace: string;
  test: string;
  /** vitest's -t filter: the test (or tests) that must fail. */
  filter: string;
  /**
   * The test runs the bundled Action (dist/index.js): the bundle is rebuilt with the guard
   * removed, and again once the guard is back.
   */
  bundle?: boolean;
}
