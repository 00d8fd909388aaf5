/**
 * The corpus of host configuration changes (__tests__/fixtures/hosts/claude-corpus.yaml and
 * other-hosts-corpus.yaml), each labelled by the hosts' documented semantics: every widening is found, and nothing labelled
 * narrowed, neutral or unchanged is called a widening; every other label agrees too.
 */
import { describe, expect, it } from "vitest";
import { corpusCases, describeChanges } from "../bench/host-corpus.ts";

describe("the host configuration corpus", () => {
  for (const c of corpusCases())
    it(c.name, () => {
      expect(describeChanges(c).sort()).toEqual([...c.expect].sort());
    });
});
