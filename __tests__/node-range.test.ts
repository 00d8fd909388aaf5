/**
 * The Node versions Terfyn says it runs on are the ones it is tested on.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";

const expected = process.env.TERFYN_EXPECT_NODE;

describe("the Node the tests run on", () => {
  // scripts/test-node-versions.sh starts Vitest with a fetched Node and names its version.
  it.runIf(expected !== undefined)(
    "is the one test:node-versions started: in the worker and as `node` on PATH",
    () => {
      expect(process.version).toBe(expected);
      expect(execFileSync("node", ["--version"], { encoding: "utf8" }).trim()).toBe(expected);
    },
  );
});
