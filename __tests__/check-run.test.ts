/**
 * Check runs carry at most 50 annotations per request: the gateway sends the rest in updates
 * of 50, and every request matches GitHub's OpenAPI description.
 */
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { clipText } from "../src/action/report-flow.ts";
import { createGateway } from "../src/adapters/github/gateway.ts";
import type { Annotation } from "../src/core/render/plan-annotations.ts";
import { CHECK_OUTPUT_BUDGET } from "../src/core/render/pr-report.ts";
import { recordRequests } from "./helpers/action-harness.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

describe("check runs", () => {
  it("sends 120 annotations as 50 + 50 + 20, errors first as given", async () => {
    const annotations: Annotation[] = Array.from({ length: 120 }, (_, i) => ({
      path: "agents/main.agent",
      start_line: i + 1,
      end_line: i + 1,
      annotation_level: i < 3 ? "failure" : "warning",
      title: `a${i}`,
      message: "m",
    }));
    const sizes: number[] = [];
    const scope = nock("https://api.github.com")
      .post("/repos/o/r/check-runs")
      .reply(201, (_u, b) => {
        sizes.push((b as { output: { annotations: unknown[] } }).output.annotations.length);
        return { id: 9 };
      })
      .patch("/repos/o/r/check-runs/9")
      .times(2)
      .reply(200, (_u, b) => {
        sizes.push((b as { output: { annotations: unknown[] } }).output.annotations.length);
        return { id: 9 };
      });
    const rec = recordRequests();
    try {
      const gateway = createGateway(
        "t",
        { owner: "o", repo: "r" },
        { fetch: globalThis.fetch, retries: 0 },
      );
      await gateway.createCheckRun({
        name: "terfyn",
        headSha: "a".repeat(40),
        conclusion: "failure",
        output: { title: "t", summary: "s" },
        annotations,
      });
    } finally {
      rec.stop();
    }
    expect(scope.isDone()).toBe(true);
    expect(sizes).toEqual([50, 50, 20]);
    expect(rec.problems).toEqual([]);
    expect(rec.requests.map((r) => r.method)).toEqual(["POST", "PATCH", "PATCH"]);
  });

  it("keeps the check's text within the API's 65,535 characters", () => {
    const long = "x\n".repeat(40_000);
    const text = clipText(long, CHECK_OUTPUT_BUDGET);
    expect(text.length).toBeLessThanOrEqual(CHECK_OUTPUT_BUDGET);
    expect(text).toContain("(truncated; the full plan is in the job summary");
    expect(clipText("short\n", CHECK_OUTPUT_BUDGET)).toBe("````text\nshort\n````\n");
  });
});
