/**
 * A run directory that cannot be used as it is: shown as a user error, never an internal one.
 * Its own module, so the review run's store and the run lock use it without loading the
 * engine run's store (and the journal's zod schemas with it).
 */
export class RunDirectoryError extends Error {}
