/**
 * Per-agent model overrides (issue 24, item 3): `Name=provider/model` entries from
 * `terfyn review --agent-model`, TERFYN_APP_AGENT_MODELS and the Action's `agent-models`; the
 * router sends each agent's turns to its override, else to the run's model.
 */
import { describe, expect, it } from "vitest";
import { ReviewFixInputError, readReviewFixInputs } from "../src/action/review-fix.ts";
import { ModelRouter } from "../src/adapters/models/model-router.ts";
import { REVIEW_AGENT_NAMES } from "../src/adapters/review/review-runner.ts";
import { parseAgentModels } from "../src/core/model/agent-models.ts";
import { agents } from "./helpers/app-runner.ts";
import { runTerfyn } from "./helpers/cli.ts";
import { startMessagesApi } from "./helpers/messages-api.ts";
import { buildReviewExample, reviewStartArgs } from "./helpers/review-run.ts";

const NAMES = ["Decider", "Planner", "TestWriter", "Builder"];

describe("agent model overrides", () => {
  it("parse NAME=provider/model entries, by commas or lines; refuse a malformed one, an unknown agent, one given twice", () => {
    expect(
      parseAgentModels(" Builder=anthropic/claude-haiku-5-5,\nDecider=mock/gpt-4\n", NAMES, "x"),
    ).toEqual({
      models: { Builder: "anthropic/claude-haiku-5-5", Decider: "mock/gpt-4" },
    });
    expect(parseAgentModels("", NAMES, "x")).toEqual({ models: {} });
    expect(parseAgentModels("Builder", NAMES, "--agent-model")).toEqual({
      problem:
        "--agent-model: `Builder` is not NAME=provider/model (for example Builder=anthropic/claude-sonnet-5-5)",
    });
    expect(parseAgentModels("Builder=claude", NAMES, "x")).toHaveProperty("problem");
    expect(parseAgentModels("Reviewer=mock/gpt-4", NAMES, "x")).toEqual({
      problem: "x: there is no agent Reviewer (the agents: Builder, Decider, Planner, TestWriter)",
    });
    expect(parseAgentModels("Builder=mock/gpt-4,Builder=mock/script", NAMES, "x")).toEqual({
      problem: "x: agent Builder is given twice",
    });
    // Names of an object's own machinery are agents like any other (here: unknown ones).
    expect(parseAgentModels("constructor=mock/gpt-4", NAMES, "x")).toHaveProperty("problem");
    expect(parseAgentModels("constructor=mock/gpt-4", [...NAMES, "constructor"], "x")).toEqual({
      models: { constructor: "mock/gpt-4" },
    });
  });

  it("the App's list of review agents is the shipped agents'", async () => {
    expect([...REVIEW_AGENT_NAMES].sort()).toEqual([...(await agents()).agents.keys()].sort());
  });

  it("the router sends an overridden agent to its model and every other to the run's", async () => {
    const router = new ModelRouter({
      model: "anthropic/claude-sonnet-5-5",
      agentModels: { Builder: "mock/gpt-4" },
      env: {},
    });
    const request = (agent: string) => ({
      agent,
      model: "anthropic/claude-opus-5-5",
      system: "",
      messages: [{ role: "user" as const, content: "{}" }],
      tools: [],
      ordinal: 0,
    });
    await expect(router.turn(request("Builder"))).resolves.toHaveProperty("response");
    await expect(router.turn(request("Decider"))).rejects.toThrow(
      "agent Decider uses anthropic/claude-sonnet-5-5: set ANTHROPIC_API_KEY",
    );
    // An agent named like an object's property is not overridden by it.
    await expect(router.turn(request("toString"))).rejects.toThrow(/set ANTHROPIC_API_KEY/);
  });

  it("terfyn review --agent-model: that agent's requests go to its model, the others' to --model", async () => {
    const api = await startMessagesApi(() => ({
      status: 400,
      type: "invalid_request_error",
      message: "stop here",
    }));
    try {
      const b = buildReviewExample("terfyn-agent-models-");
      const r = await runTerfyn(
        reviewStartArgs(b, null, [
          "--model",
          "mock/gpt-4",
          "--agent-model",
          "Decider=anthropic/claude-test",
        ]),
        b.repo,
        { ANTHROPIC_API_KEY: "sk-ant-test", ANTHROPIC_BASE_URL: api.origin },
      );
      // The Decider, on the API (which refuses it): the run ends there.
      expect(r.code).toBe(1);
      expect(api.bodies.length).toBeGreaterThan(0);
      expect(api.bodies.every((body) => body.model === "claude-test")).toBe(true);
      expect(JSON.stringify(api.bodies[0]?.system)).toContain("You decide what to do");
    } finally {
      await api.close();
    }
  }, 60_000);

  it("the Action's agent-models input is checked like the others", () => {
    const input = (over: Record<string, string>) => (name: string) =>
      ({
        "pull-request": "7",
        "head-sha": "a".repeat(40),
        "state-key": "k".repeat(40),
        ...over,
      })[name] ?? "";
    expect(
      readReviewFixInputs(input({ "agent-models": "Builder=mock/gpt-4" })).agentModels,
    ).toEqual({ Builder: "mock/gpt-4" });
    expect(readReviewFixInputs(input({})).agentModels).toBeUndefined();
    expect(() => readReviewFixInputs(input({ "agent-models": "Nobody=mock/gpt-4" }))).toThrow(
      ReviewFixInputError,
    );
    expect(() => readReviewFixInputs(input({ "agent-models": "Nobody=mock/gpt-4" }))).toThrow(
      "input `agent-models`: there is no agent Nobody",
    );
  });
});
