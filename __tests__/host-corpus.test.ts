/**
 * The corpus of Claude Code settings changes (__tests__/fixtures/hosts/claude-corpus.yaml), each
 * labelled by the host's documented semantics: every widening is found, and nothing labelled
 * narrowed, neutral or unchanged is called a widening; every other label agrees too.
 */
import { describe, expect, it } from "vitest";
import { corpusCases, describeChanges } from "../bench/host-corpus.ts";

describe("the Claude Code settings corpus", () => {
  for (const c of corpusCases())
    it(c.name, () => {
      expect(describeChanges(c).sort()).toEqual([...c.expect].sort());
    });
});
