/**
 * One decision schema, said three times: the zod schema the run checks (doctrine.ts), the JSON
 * Schema the Decider's output and input are declared with (agents/review-response/schemas.yaml),
 * and the page that documents every field (docs/review-decisions.md). They must agree, field by
 * field; and the pure pieces the CLI tests rely on (the journal's completed operations, the
 * Decider's input with provenance) behave as documented.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { readProjectDirectory } from "../src/adapters/fs/read-project.ts";
import { completedOperations } from "../src/adapters/review/local-effects.ts";
import type { JsonSchemaNode } from "../src/core/config/schemas.ts";
import type { JournalEvent } from "../src/core/engine/journal.ts";
import { schemaIssues } from "../src/core/engine/values.ts";
import { resolveProject } from "../src/core/model/resolve-project.ts";
import {
  ACTIONS,
  checkDecisions,
  type Decision,
  decisionSchema,
  executedWithoutRun,
  HARMS,
  ITEM_CLASSES,
  METHODS,
  planCoverageProblems,
  standardsFindingsSchema,
} from "../src/core/review/doctrine.ts";
import type { Provenance, ReviewRequest } from "../src/core/review/request.ts";
import { deciderInput, withInjectedDirections } from "../src/core/review/steps.ts";

const ROOT = join(import.meta.dirname, "..");

async function agentSchemas() {
  const { files } = await readProjectDirectory(join(ROOT, "agents", "review-response"));
  const { project } = resolveProject(files);
  const get = (name: string) => {
    const s = project.schemas.get(name)?.schema;
    if (!s) throw new Error(`no schema ${name}`);
    return s;
  };
  return {
    decisions: get("Decisions"),
    request: get("ReviewRequest"),
    standards: get("StandardsFindings"),
  };
}

type Node = {
  type?: string;
  properties?: Record<string, Node>;
  required?: string[];
  items?: Node;
  enum?: unknown[];
  anyOf?: Node[];
};

/** The shape that matters of a JSON Schema node: property names, required names, enums, nested. */
function shape(n: Node | undefined): unknown {
  if (!n) return undefined;
  if (n.anyOf) return shape(n.anyOf.find((a) => a.type !== "null"));
  if (n.enum) return { enum: [...n.enum].sort() };
  if (n.type === "array") return { array: shape(n.items) };
  if (n.properties)
    return {
      required: [...(n.required ?? [])].sort(),
      properties: Object.fromEntries(
        Object.keys(n.properties)
          .sort()
          .map((k) => [k, shape(n.properties?.[k])]),
      ),
    };
  return n.type === "integer" || n.type === "number" ? "number" : (n.type ?? "any");
}

describe("the decision schema: zod, schemas.yaml and the docs agree", () => {
  const zodDecision = z.toJSONSchema(decisionSchema, { io: "input" }) as Node;

  it("schemas.yaml declares the Decider's decisions with the real properties, required fields and enums", async () => {
    const { decisions } = await agentSchemas();
    const item = (decisions as Node).properties?.decisions?.items;
    expect(item?.type).toBe("object");
    expect(shape(item)).toEqual(shape(zodDecision));
  });

  it("schemas.yaml declares the StandardsReviewer's findings as the zod schema the standards phase checks", async () => {
    const { standards } = await agentSchemas();
    expect(shape(standards as Node)).toEqual(
      shape(z.toJSONSchema(standardsFindingsSchema, { io: "input" }) as Node),
    );
  });

  it("the earlier decisions the Decider is given have the same schema", async () => {
    const { request } = await agentSchemas();
    expect(shape((request as Node).properties?.prior_decisions?.items)).toEqual(shape(zodDecision));
  });

  it("docs/review-decisions.md documents every field and every value of every closed set", () => {
    const doc = readFileSync(join(ROOT, "docs", "review-decisions.md"), "utf8");
    const fields = [
      ...Object.keys(decisionSchema.shape),
      "outcome",
      "reason",
      "made_against",
      "commits_behind",
      "anchor_moved",
      "anchor_gone",
    ];
    for (const f of fields) expect(doc, f).toContain(`\`${f}\``);
    for (const v of [...ITEM_CLASSES, ...ACTIONS, ...METHODS, ...HARMS, "reaffirm", "reverse"])
      expect(doc, v).toContain(`\`${v}\``);
    for (const linkFrom of ["docs/review-doctrine.md", "README.md"])
      expect(readFileSync(join(ROOT, linkFrom), "utf8"), linkFrom).toContain("review-decisions.md");
  });
});

const request: ReviewRequest & { provenance: Provenance[] } = {
  format_version: "1",
  repository: "o/r",
  pull_request: 1,
  branch: "b",
  head: "c3c3c3c",
  base: "a1a1a1a",
  threads: [
    {
      id: "t1",
      path: "a.js",
      original_line: 3,
      line: 3,
      original_commit: "c3c3c3c",
      outdated: false,
      resolved: false,
      comments: [{ id: "1", author: "r", body: "broken", created_at: "", commit: "c3c3c3c" }],
    },
    {
      id: "t2",
      path: "a.js",
      original_line: 3,
      line: null,
      original_commit: "b2b2b2b",
      outdated: true,
      resolved: false,
      comments: [{ id: "2", author: "r", body: "old", created_at: "", commit: "b2b2b2b" }],
    },
  ],
  provenance: [
    { thread: "t1", made_against: "c3c3c3c", commits_behind: 0, anchor_moved: false },
    { thread: "t2", made_against: "b2b2b2b", commits_behind: 2, anchor_moved: true },
  ],
};

const d = (item: string, extra: Partial<Decision> = {}): Decision => ({
  item,
  class: "defect",
  action: "fix",
  method: "read",
  detail: "read a.js at head",
  evidence: "",
  injected_directions: [],
  harm: "none",
  ...extra,
});

describe("the Decider's input and what Terfyn records", () => {
  it("each thread carries its provenance, and the input fits the Decider's input schema", async () => {
    const input = deciderInput(request, [d("t1")]);
    expect(input.threads.map((t) => t.provenance)).toEqual([
      { made_against: "c3c3c3c", commits_behind: 0, anchor_moved: false, anchor_gone: false },
      { made_against: "b2b2b2b", commits_behind: 2, anchor_moved: true, anchor_gone: true },
    ]);
    const { request: schema } = await agentSchemas();
    expect(schemaIssues(schema as JsonSchemaNode, input)).toEqual([]);
  });

  it("the provenance on a decision is the request's, whatever the Decider claimed", () => {
    const claimed = d("t2", {
      provenance: {
        made_against: "c3c3c3c",
        commits_behind: 0,
        anchor_moved: false,
        anchor_gone: false,
      },
    });
    expect(withInjectedDirections(request, [claimed])[0]?.provenance).toEqual({
      made_against: "b2b2b2b",
      commits_behind: 2,
      anchor_moved: true,
      anchor_gone: true,
    });
  });

  it("the journal's completed operations: an intent with an ok result, never one that failed or has none", () => {
    const intent = (key: string, tool: string): JournalEvent => ({
      type: "effect.intent",
      key,
      step: "decide",
      agent: "Decider",
      tool,
      input: {},
      idempotent: false,
    });
    const events: JournalEvent[] = [
      intent("a", "tool.workspace.read_file"),
      { type: "effect.result", key: "a", ok: true, result: {} },
      intent("b", "tool.workspace.run_tests"),
      { type: "effect.result", key: "b", ok: false, result: {} },
      intent("c", "tool.workspace.run_tests"),
    ];
    expect(completedOperations(events)).toEqual(["tool.workspace.read_file"]);
    expect(
      executedWithoutRun([d("t1", { method: "executed" })], completedOperations(events)),
    ).toHaveLength(1);
    expect(
      executedWithoutRun([d("t1", { method: "executed" })], ["tool.workspace.run_tests"]),
    ).toEqual([]);
  });
});

describe("checkDecisions: provenance and priors", () => {
  const ctx = { itemIds: ["t1", "t2"], head: "c3c3c3c0000", anchorGone: ["t2"] };

  it("a fix of code gone at head needs a verifying method and verified_at naming the head (abbreviated or not)", () => {
    const problems = (x: Decision) =>
      checkDecisions([d("t1"), x], ctx).map((p) => `${p.item} ${p.problem}`);
    expect(problems(d("t2"))).toHaveLength(1);
    expect(problems(d("t2", { verified_at: "c3c3c3c" }))).toEqual([]);
    expect(problems(d("t2", { verified_at: "b2b2b2b" }))).toHaveLength(1);
    expect(problems(d("t2", { verified_at: "c3c3c3c", method: "searched" }))).toHaveLength(1);
    // A ticket changes no code: no head evidence is needed to defer it.
    expect(problems(d("t2", { action: "ticket" }))).toEqual([]);
  });

  it("reverse changes the decision (class or action) and reaffirm keeps both", () => {
    const prior = [d("t1"), d("t2", { class: "stale", action: "answer", reply: "gone" })];
    const run = (x: Decision) =>
      checkDecisions([d("t1", { prior: { outcome: "reaffirm", reason: "re-read at head" } }), x], {
        itemIds: ["t1", "t2"],
        prior,
      }).map((p) => p.problem);
    const reverse = { outcome: "reverse" as const, reason: "the line came back at head" };
    expect(run(d("t2", { action: "ticket", prior: reverse }))).toEqual([]);
    expect(run(d("t2", { class: "stale", action: "answer", prior: reverse }))[0]).toContain(
      "but keeps it",
    );
    expect(
      run(d("t2", { action: "ticket", prior: { outcome: "reaffirm", reason: "re-read" } }))[0],
    ).toContain("while changing it");
  });

  it("every fix is in the plan, and the plan covers nothing else", () => {
    const decisions = [d("t1"), d("t2", { action: "ticket" })];
    expect(planCoverageProblems(decisions, { items: ["t1"] })).toEqual([]);
    expect(planCoverageProblems(decisions, { items: [] })).toEqual([
      { item: "t1", problem: "is decided fix but the plan does not cover it" },
    ]);
    expect(planCoverageProblems(decisions, { items: ["t1", "t2"] })).toEqual([
      { item: "t2", problem: "is in the plan but was not decided fix" },
    ]);
  });
});
