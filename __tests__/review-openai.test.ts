/**
 * `terfyn review` with every agent on the `openai` provider, against a local server that speaks
 * Chat Completions as the `openai` SDK expects (chat-completions-api.ts checks every request by
 * the API's rules): the example's recorded transcript through the whole doctrine (decide, plan,
 * red tests, build, prove, the standards lane, both gates) to a published commit, with a prose
 * answer corrected, parallel calls all answered, a 429 retried; and an outage during the Builder
 * pausing the run in build, resumable to done with its plan approval.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type ChatApi, type ChatRequest, startChatApi } from "./helpers/chat-completions-api.ts";
import { runTerfyn } from "./helpers/cli.ts";
import {
  approveAndResume,
  approveAwaited,
  buildReviewExample,
  git,
  reviewStartArgs,
  reviewState,
} from "./helpers/review-run.ts";
import { chatAgentOf, transcriptChatAnswer } from "./helpers/review-transcript.ts";

const apis: ChatApi[] = [];
afterEach(async () => {
  for (const a of apis.splice(0)) await a.close();
});

const env = (api: ChatApi) => ({ OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: api.baseURL });
const start = (b: ReturnType<typeof buildReviewExample>, api: ChatApi) =>
  runTerfyn(reviewStartArgs(b, null, ["--model", "openai/gpt-test"]), b.repo, env(api));
const callsIn = (body: ChatRequest) =>
  (body.messages as { role: string; tool_calls?: unknown[] }[]).flatMap((m) =>
    m.role === "assistant" ? (m.tool_calls ?? []) : [],
  ).length;

describe("terfyn review on the openai provider", () => {
  it("the whole doctrine to a published commit: a prose answer corrected, parallel calls each answered, a 429 retried, every request one the API accepts", async () => {
    const prose = new Set<string>();
    let limited = false;
    const api = await startChatApi((body) => {
      const agent = chatAgentOf(body);
      // The StandardsReviewer first answers in prose; the Planner's first request meets a 429.
      if (agent === "StandardsReviewer" && !prose.has(agent)) {
        prose.add(agent);
        return {
          content: "Both files follow the repository's conventions.",
          finish_reason: "stop",
        };
      }
      if (agent === "Planner" && !limited) {
        limited = true;
        return { status: 429, type: "rate_limit_error", message: "slow down", retryAfterMs: 1 };
      }
      return transcriptChatAnswer(body);
    });
    apis.push(api);
    const b = buildReviewExample("terfyn-review-openai-");
    const first = await start(b, api);
    expect(first.code, first.stderr).toBe(2);
    const end = await approveAndResume(b, undefined, env(api));
    expect(end.stdout, end.stderr).toMatch(/^done: /);
    expect(api.problems).toEqual([]);
    expect(git(b.repo, "diff", "--name-only", b.head, "HEAD").split("\n").sort()).toEqual([
      "src/add.js",
      "test/add.test.js",
    ]);
    // The Decider's four reads in one turn: each has its tool message in the next request.
    const decider = api.bodies.filter((x) => chatAgentOf(x) === "Decider");
    const afterReads = decider[1]?.messages as { role: string; tool_call_id?: string }[];
    expect(afterReads.filter((m) => m.role === "tool").map((m) => m.tool_call_id)).toEqual([
      "call_Decider_0_0",
      "call_Decider_0_1",
      "call_Decider_0_2",
      "call_Decider_0_3",
    ]);
    // The prose answer was replayed as text and followed by a correction, not as a fake call.
    const reviewer = api.bodies.filter((x) => chatAgentOf(x) === "StandardsReviewer");
    expect(reviewer).toHaveLength(3);
    expect(callsIn(reviewer[1] as ChatRequest)).toBe(0);
    expect(((reviewer[1] as ChatRequest).messages as { role: string }[]).at(-1)?.role).toBe("user");
    // The 429 was retried by the SDK: the Planner's first request was sent twice.
    expect(api.bodies.filter((x) => chatAgentOf(x) === "Planner")).toHaveLength(3);
    for (const body of api.bodies)
      expect(body.tools.map((t: { function: { name: string } }) => t.function.name)).toContain(
        "submit_output",
      );
  }, 120_000);

  it("an outage during the Builder pauses the run in build with its plan approval; the resume goes on to done, asking no earlier agent again", async () => {
    let down = false;
    const api = await startChatApi((body) =>
      down && chatAgentOf(body) === "Builder"
        ? { status: 503, type: "server_error", message: "unavailable", retryAfterMs: 1 }
        : transcriptChatAnswer(body),
    );
    apis.push(api);
    const b = buildReviewExample("terfyn-review-openai-");
    expect((await start(b, api)).code).toBe(2);
    expect((await approveAwaited(b)).code).toBe(0);
    down = true;
    const cut = await runTerfyn(["review", "--resume", b.runDir], b.repo, env(api));
    expect(cut.code, cut.stderr).toBe(1);
    expect(cut.stderr).toMatch(/stopped in phase build: .*503/);
    expect(reviewState(b.runDir)).toMatchObject({ status: "interrupted", phase: "build" });
    const earlier = ["Decider", "Planner", "TestWriter"].map(
      (a) => api.bodies.filter((x) => chatAgentOf(x) === a).length,
    );
    down = false;
    const resumed = await runTerfyn(["review", "--resume", b.runDir], b.repo, env(api));
    expect(resumed.code, resumed.stderr).toBe(2);
    expect(reviewState(b.runDir).awaiting.gate).toBe("publish");
    expect(
      ["Decider", "Planner", "TestWriter"].map(
        (a) => api.bodies.filter((x) => chatAgentOf(x) === a).length,
      ),
    ).toEqual(earlier);
    const done = await approveAndResume(b, undefined, env(api));
    expect(done.stdout, done.stderr).toMatch(/^done: /);
    expect(api.problems).toEqual([]);
  }, 120_000);
});
