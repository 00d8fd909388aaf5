/**
 * Recovery of `terfyn review` on a real model's API (issue 24, item 5): the review example's
 * agents on `anthropic/claude-test`, their answers taken from the example's model script and
 * sent by a local server that speaks the Messages API as the SDK expects
 * (helpers/messages-api.ts). An outage during the Builder (529 after the SDK's retries) and a
 * SIGTERM while its request hangs must each stop the run in the build phase without ending it:
 * the plan approval stands, no agent is asked again what it answered, and the resume reaches
 * the publish gate and then done.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runTerfyn } from "./helpers/cli.ts";
import { type MessagesApi, startMessagesApi } from "./helpers/messages-api.ts";
import {
  approveAwaited,
  type BuiltReview,
  buildReviewExample,
  reviewStartArgs,
  reviewState,
} from "./helpers/review-run.ts";
import {
  OPENINGS as REVIEW_OPENINGS,
  type ReviewAgent,
  reviewAgentOf,
  transcriptAnswer,
} from "./helpers/review-transcript.ts";

const BIN = join(import.meta.dirname, "..", "bin", "terfyn.mjs");

const OPENINGS = REVIEW_OPENINGS;
type Agent = ReviewAgent;
const agentOf = reviewAgentOf;
const scripted = transcriptAnswer;

const apis: MessagesApi[] = [];
afterEach(async () => {
  for (const a of apis.splice(0)) await a.close();
});

const env = (api: MessagesApi) => ({
  ANTHROPIC_API_KEY: "sk-ant-test",
  ANTHROPIC_BASE_URL: api.origin,
});

const asked = (api: MessagesApi, agent: Agent) =>
  api.bodies.filter((b) => agentOf(b) === agent).length;

/** The run started on the local API, its plan approved: the next resume enters red-tests and build. */
async function atPlanApproved(api: MessagesApi): Promise<BuiltReview> {
  const b = buildReviewExample("terfyn-review-recovery-");
  const start = await runTerfyn(
    reviewStartArgs(b, null, ["--model", "anthropic/claude-test"]),
    b.repo,
    env(api),
  );
  expect(start.code, start.stderr).toBe(2);
  expect(reviewState(b.runDir).awaiting.gate).toBe("plan");
  const ok = await approveAwaited(b);
  expect(ok.code, ok.stderr).toBe(0);
  return b;
}

/** After the resume: publish gate, no earlier agent asked again, then done. */
async function resumesToDone(
  api: MessagesApi,
  b: BuiltReview,
  before: Record<Agent, number>,
): Promise<void> {
  const resumed = await runTerfyn(["review", "--resume", b.runDir], b.repo, env(api));
  expect(resumed.code, resumed.stderr).toBe(2);
  expect(reviewState(b.runDir).awaiting.gate).toBe("publish");
  for (const a of ["Decider", "Planner", "TestWriter"] as const)
    expect(asked(api, a), `${a} asked again`).toBe(before[a]);
  // The plan gate was not asked again: one plan approval in the log.
  const log = readFileSync(join(b.runDir, "approvals.jsonl"), "utf8").trim().split("\n");
  expect(log.filter((l) => JSON.parse(l).gate === "plan")).toHaveLength(1);
  const ok = await approveAwaited(b);
  expect(ok.code, ok.stderr).toBe(0);
  const done = await runTerfyn(["review", "--resume", b.runDir], b.repo, env(api));
  expect(done.stdout, done.stderr).toMatch(/^done: /);
  expect(api.problems).toEqual([]);
}

const counts = (api: MessagesApi) =>
  Object.fromEntries((Object.keys(OPENINGS) as Agent[]).map((a) => [a, asked(api, a)])) as Record<
    Agent,
    number
  >;

describe("terfyn review on a model's API that fails", () => {
  it("an outage during the Builder stops the run in build, resumable with its approval; the resume goes on to done", async () => {
    let down = false;
    const api = await startMessagesApi((body) =>
      down && agentOf(body) === "Builder"
        ? { status: 529, type: "overloaded_error", message: "Overloaded", retryAfterMs: 1 }
        : scripted(body),
    );
    apis.push(api);
    const b = await atPlanApproved(api);
    down = true;
    const cut = await runTerfyn(["review", "--resume", b.runDir], b.repo, env(api));
    expect(cut.code, cut.stderr).toBe(1);
    expect(cut.stderr).toMatch(/stopped in phase build: .*the model's API did not answer.*529/);
    expect(cut.stderr).toContain(
      `resume with: terfyn review --resume ${relative(b.repo, b.runDir)}`,
    );
    const s = reviewState(b.runDir);
    expect(s).toMatchObject({ status: "interrupted", phase: "build" });
    expect(s.terminal).toBeUndefined();
    const report = readFileSync(join(b.runDir, "report.md"), "utf8");
    expect(report).toContain("# Review run: interrupted");
    expect(report).toContain(`terfyn review --resume ${b.runDir}`);
    // The SDK's retries, then the phase stopped: five requests, all the Builder's first turn.
    expect(asked(api, "Builder")).toBe(5);
    // The worktree (with the TestWriter's tests) is kept for the resume.
    expect(existsSync(`${b.runDir}.worktree`)).toBe(true);

    down = false;
    await resumesToDone(api, b, counts(api));
  }, 240_000);

  it("SIGTERM while the Builder's request hangs: exit 143 at once, the run interrupted in build; the resume goes on to done", async () => {
    let hang = false;
    const api = await startMessagesApi(scripted);
    apis.push(api);
    api.respond = (body) => (hang && agentOf(body) === "Builder" ? "hang" : scripted(body));
    const b = await atPlanApproved(api);
    hang = true;
    const child = spawn(process.execPath, [BIN, "review", "--resume", b.runDir], {
      cwd: b.repo,
      env: {
        PATH: process.env.PATH ?? "",
        ...(process.env.TERFYN_SANDBOX_READ_ONLY
          ? { TERFYN_SANDBOX_READ_ONLY: process.env.TERFYN_SANDBOX_READ_ONLY }
          : {}),
        ...env(api),
        NO_COLOR: "1",
        TERFYN_FROM_SOURCE: "1",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr?.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
    const deadline = Date.now() + 120_000;
    while (asked(api, "Builder") === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const sent = Date.now();
    child.kill("SIGTERM");
    expect(await exited, stderr).toBe(143);
    expect(Date.now() - sent).toBeLessThan(10_000);
    expect(stderr).toContain("resume with: terfyn review --resume");
    expect(reviewState(b.runDir)).toMatchObject({
      status: "interrupted",
      phase: "build",
      reason: expect.stringContaining("SIGTERM"),
    });
    hang = false;
    await resumesToDone(api, b, counts(api));
  }, 240_000);
});
