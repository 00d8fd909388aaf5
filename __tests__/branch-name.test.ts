/**
 * Which pull request branches a review-fix run clones and pushes: git's own ref rules, no `+`
 * (the push refspec never holds one), and nothing else refused (non-ASCII names are fine).
 */
import { describe, expect, it } from "vitest";
import { branchNameProblem } from "../src/adapters/git/branch-writer.ts";

describe("branchNameProblem", () => {
  it("accepts names git and GitHub accept", () => {
    for (const ok of ["feature/fix-sum", "fix/año-sum", "issue#12", "user@fix", "v1.2", "a_b"])
      expect(branchNameProblem(ok), ok).toBeUndefined();
  });
  it("refuses names git refuses, and +", () => {
    for (const bad of [
      "",
      "a b",
      "a\tb",
      "a\u0000b",
      "x..y",
      "-x",
      "a+b",
      "a/.hidden",
      "x.lock",
      "a@{b",
      "@",
      "a/",
      "a.",
      "a//b",
      "a~1",
      "a^",
      "a:b",
      "a?",
      "a*",
      "a[b",
      "a\\b",
      "x".repeat(251),
    ])
      expect(branchNameProblem(bad), JSON.stringify(bad)).toBeDefined();
  });
});
