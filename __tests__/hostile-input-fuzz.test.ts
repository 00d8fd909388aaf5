/**
 * Fuzzing the files a user (or an attacker, or a crash) hands `terfyn run`, `approve` and
 * `runs`: model scripts, workflow input files, journals and approvals logs. Whatever they hold,
 * the CLI ends with an exit code of its contract and a message, never "internal error", a stack
 * trace, or a raw control character on the terminal. Each case runs the real CLI in-process on
 * real files in temp dirs. Reproducible: a fixed seed (override with FC_SEED, scale the number
 * of runs with FC_SCALE).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelScriptError, ScriptedModel } from "../src/adapters/models/model-script.ts";
import { type CliRun, runTerfyn } from "./helpers/cli.ts";
import { copyExample, edit } from "./helpers/example-project.ts";

const SEED =
  process.env.FC_SEED === undefined ? 0x13bad1 : Number.parseInt(process.env.FC_SEED, 10);
const SCALE = Number(process.env.FC_SCALE ?? "1") > 0 ? Number(process.env.FC_SCALE ?? "1") : 1;
const runs = (n: number) => ({ numRuns: Math.max(1, Math.round(n * SCALE)), seed: SEED });

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** The contract for any input: 0, 1 or 2, and a message rather than a crash. */
function expectHandled(r: CliRun, what: string): void {
  expect([0, 1, 2], `${what}: exit ${r.code}\n${r.stderr}`).toContain(r.code);
  expect(r.stderr, what).not.toContain("internal error");
  expect(r.stderr, what).not.toMatch(/\n\s+at /);
  expect(r.stderr, what).not.toMatch(RAW_CONTROL);
}

// ── generators ─────────────────────────────────────────────────────────────────────────────

const TOOLS = [
  "tool.workspace.read_file",
  "tool.workspace.write_file",
  "tool.workspace.run_tests",
  "tool.workspace.delete_everything",
];
const AGENTS = ["Implementer", "Reviewer", "Nobody"];

/** Scalars as YAML writes them, including the awkward ones. */
const yamlScalar = fc.oneof(
  fc.constantFrom("null", "~", "true", "0", "-1", "1e999", ".nan", '""', "''", "x", "|"),
  fc.string({ maxLength: 12 }).map((s) => JSON.stringify(s)),
  fc.string({ maxLength: 8, unit: "binary" }).map((s) => JSON.stringify(s)),
);

/** Flow-style YAML values with anchors, aliases (known and unknown) and collection keys. */
const yamlValue: fc.Arbitrary<string> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    yamlScalar,
    fc.constantFrom("*a", "*b", "*nope"),
    fc
      .tuple(fc.constantFrom("&a ", "&b ", ""), fc.array(tie("value"), { maxLength: 3 }))
      .map(([anchor, items]) => `${anchor}[${items.join(", ")}]`),
    fc
      .tuple(
        fc.constantFrom("&a ", "&b ", ""),
        fc.array(
          fc.tuple(
            fc.oneof(
              fc.constantFrom("path", "content", "task", "approved", "input", "output", "tool"),
              tie("value").map((k) => `? ${k}`),
            ),
            tie("value"),
          ),
          { maxLength: 3 },
        ),
      )
      .map(([anchor, pairs]) => `${anchor}{ ${pairs.map(([k, v]) => `${k}: ${v}`).join(", ")} }`),
  ),
})).value;

const toolCall = fc
  .tuple(
    fc.oneof(
      fc.constantFrom(...TOOLS).map((t) => JSON.stringify(t)),
      yamlValue,
    ),
    yamlValue,
  )
  .map(([tool, input]) => `{ tool: ${tool}, input: ${input} }`);

const turn = fc.oneof(
  fc
    .array(toolCall, { minLength: 1, maxLength: 3 })
    .map((calls) => `- toolCalls: [${calls.join(", ")}]`),
  yamlValue.map((v) => `- output: ${v}`),
  fc
    .tuple(fc.boolean(), fc.string({ maxLength: 10 }))
    .map(
      ([approved, task]) => `- output: { task: ${JSON.stringify(task)}, approved: ${approved} }`,
    ),
  yamlValue.map((v) => `- ${v}`),
);

/** Model scripts: mostly shaped like one, with hostile values; sometimes plain noise. */
const modelScript = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .array(fc.tuple(fc.constantFrom(...AGENTS), fc.array(turn, { maxLength: 4 })), {
        maxLength: 3,
      })
      .map(
        (agents) =>
          `agents:\n${agents.map(([a, ts]) => `  ${a}:\n${ts.map((t) => `    ${t}`).join("\n") || "    []"}`).join("\n")}\n`,
      ),
  },
  { weight: 1, arbitrary: yamlValue.map((v) => `agents: ${v}\n`) },
  { weight: 1, arbitrary: fc.string({ maxLength: 200, unit: "binary" }) },
);

/** JSON values, including deep nesting, as the text of an input file (or not JSON at all). */
const jsonText = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
  {
    weight: 2,
    arbitrary: fc
      .record(
        {
          task: fc.jsonValue({ maxDepth: 2 }),
          approved: fc.jsonValue({ maxDepth: 1 }),
          feedback: fc.jsonValue({ maxDepth: 2 }),
        },
        { requiredKeys: [] },
      )
      .map((v) => JSON.stringify(v)),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 1, max: 5000 }), fc.constantFrom("[", '{"a":'))
      .map(
        ([n, open]) =>
          `{"task":"t","approved":false,"x":${open.repeat(n)}0${(open === "[" ? "]" : "}").repeat(n)}}`,
      ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 60, unit: "binary" }) },
);

const EVENT_TYPES = [
  "run.start",
  "run.resume",
  "step.start",
  "step.end",
  "model.turn",
  "effect.intent",
  "effect.result",
  "tool.denied",
  "approval.requested",
  "approval.granted",
  "run.end",
  "mystery",
];

/** Journal lines: events with fields of the right and wrong types, JSON of any shape, noise. */
const journalLine = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .record(
        {
          type: fc.constantFrom(...EVENT_TYPES),
          step: fc.oneof(fc.constantFrom("", "0", "0/0", "w:0"), fc.jsonValue({ maxDepth: 1 })),
          key: fc.oneof(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 1 })),
          hash: fc.oneof(fc.constant("sha256:00"), fc.jsonValue({ maxDepth: 1 })),
          turn: fc.oneof(fc.nat(3), fc.jsonValue({ maxDepth: 1 })),
          ok: fc.jsonValue({ maxDepth: 1 }),
          status: fc.constantFrom("completed", "failed", "in-doubt", "odd"),
          output: fc.jsonValue({ maxDepth: 3 }),
          result: fc.jsonValue({ maxDepth: 3 }),
          response: fc.oneof(
            fc.jsonValue({ maxDepth: 2 }),
            fc.record({
              kind: fc.constantFrom("tool_calls", "output"),
              calls: fc.array(
                fc.record({
                  id: fc.string({ maxLength: 4 }),
                  tool: fc.constantFrom(...TOOLS),
                  input: fc.jsonValue({ maxDepth: 2 }),
                }),
                { maxLength: 2 },
              ),
              output: fc.jsonValue({ maxDepth: 2 }),
            }),
          ),
        },
        { requiredKeys: ["type"] },
      )
      .map((e) => JSON.stringify(e)),
  },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)) },
  {
    weight: 1,
    arbitrary: fc.string({ maxLength: 40, unit: "binary" }).map((s) => s.replace(/\n/g, " ")),
  },
);

/** Approval log lines: records with a hash (right, wrong, not a string), JSON of any shape, noise. */
const approvalLine = (awaited: string) =>
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc
        .record(
          {
            hash: fc.oneof(
              fc.constant(awaited),
              fc.string({ maxLength: 8 }),
              fc.jsonValue({ maxDepth: 1 }),
            ),
            by: fc.jsonValue({ maxDepth: 1 }),
            approved_at: fc.jsonValue({ maxDepth: 1 }),
          },
          { requiredKeys: [] },
        )
        .map((r) => JSON.stringify(r)),
    },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)) },
    {
      weight: 1,
      arbitrary: fc.string({ maxLength: 40, unit: "binary" }).map((s) => s.replace(/\n/g, " ")),
    },
  );

/** Whether an approvals line parses as JSON but is not an approval record (a torn line does not parse). */
function isDamage(line: string): boolean {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return false;
  }
  return v === null || typeof v !== "object" || typeof (v as { hash?: unknown }).hash !== "string";
}

// ── fixtures ───────────────────────────────────────────────────────────────────────────────

const GOOD_SCRIPT = join(
  import.meta.dirname,
  "..",
  "examples",
  "implement-review-loop",
  "fixtures",
  "model-script.yaml",
);

interface Fixture {
  project: string;
  work: string;
  env: Record<string, string>;
  /** A run paused at a gated write_file: copied for each journal or approvals case. */
  paused: string;
  awaited: string;
}

let fx: Fixture;

beforeAll(async () => {
  const project = copyExample("terfyn-fuzz-");
  edit(
    project,
    "main.agent",
    /^ {4}tool\.workspace\.write_file$/m,
    "    tool.workspace.write_file requires approval",
  );
  const work = mkdtempSync(join(tmpdir(), "terfyn-fuzz-work-"));
  const ws = mkdtempSync(join(tmpdir(), "terfyn-fuzz-ws-"));
  const env = { TERFYN_WORKSPACE_ROOT: ws, TERFYN_WORKSPACE_TEST_COMMAND: "true" };
  const paused = join(work, "paused");
  const r = await runTerfyn(
    [
      "run",
      "workflow/ImplementAndReview",
      "--input-file",
      "fixtures/task.json",
      "--model-script",
      GOOD_SCRIPT,
      "--run-dir",
      paused,
    ],
    project,
    env,
  );
  expect(r.code, r.stderr).toBe(2);
  const awaited = JSON.parse(readFileSync(join(paused, "state.json"), "utf8")).awaiting.hash;
  fx = { project, work, env, paused, awaited };
});

afterAll(() => {
  if (fx) rmSync(fx.work, { recursive: true, force: true });
});

let counter = 0;
const fresh = (name: string) => join(fx.work, `${name}-${counter++}`);

function copyPaused(): string {
  const dir = fresh("run");
  cpSync(fx.paused, dir, { recursive: true });
  return dir;
}

const runWorkflow = (extra: string[]) =>
  runTerfyn(
    ["run", "workflow/ImplementAndReview", "--run-dir", fresh("run"), ...extra],
    fx.project,
    fx.env,
  );

// ── properties ─────────────────────────────────────────────────────────────────────────────

describe("fuzz: nothing a user hands the CLI becomes an internal error", () => {
  it("model scripts: parsing returns a script or throws a located ModelScriptError, nothing else", () => {
    fc.assert(
      fc.property(modelScript, (text) => {
        try {
          ScriptedModel.parse("script.yaml", text);
        } catch (e) {
          expect(e, String(e)).toBeInstanceOf(ModelScriptError);
          expect((e as Error).message).toMatch(/^script\.yaml(:\d+:\d+)?: /);
        }
      }),
      runs(400),
    );
  });

  it("model scripts: terfyn run with any script ends with 0, 1 or 2 and a message", async () => {
    await fc.assert(
      fc.asyncProperty(modelScript, async (text) => {
        const path = `${fresh("script")}.yaml`;
        writeFileSync(path, text);
        expectHandled(
          await runWorkflow(["--input-file", "fixtures/task.json", "--model-script", path]),
          text,
        );
      }),
      runs(60),
    );
  });

  it("workflow inputs: terfyn run with any --input-file ends with 0, 1 or 2 and a message", async () => {
    await fc.assert(
      fc.asyncProperty(jsonText, async (text) => {
        const path = `${fresh("input")}.json`;
        writeFileSync(path, text);
        expectHandled(
          await runWorkflow(["--input-file", path, "--model-script", GOOD_SCRIPT]),
          text.slice(0, 200),
        );
      }),
      runs(60),
    );
  });

  it("journals: resume and runs show, with lines inserted or replaced anywhere", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat(20), fc.boolean(), journalLine), { minLength: 1, maxLength: 3 }),
        async (edits) => {
          const dir = copyPaused();
          const path = join(dir, "journal.jsonl");
          const lines = readFileSync(path, "utf8").trimEnd().split("\n");
          for (const [at, replace, line] of edits) {
            lines.splice(at % (lines.length + 1), replace ? 1 : 0, line);
          }
          writeFileSync(path, `${lines.join("\n")}\n`);
          const what = lines.join("\n").slice(0, 400);
          expectHandled(await runTerfyn(["run", "--resume", dir], fx.project, fx.env), what);
          expectHandled(await runTerfyn(["runs", "show", dir], fx.project, fx.env), what);
        },
      ),
      runs(60),
    );
  });

  it("approvals logs: resume and approve, with any lines in approvals.jsonl", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(approvalLine(fx.awaited), { minLength: 1, maxLength: 3 }),
        async (lines) => {
          const dir = copyPaused();
          writeFileSync(join(dir, "approvals.jsonl"), `${lines.join("\n")}\n`);
          const what = lines.join("\n");
          const before = readFileSync(join(dir, "state.json"), "utf8");
          const resumed = await runTerfyn(["run", "--resume", dir], fx.project, fx.env);
          expectHandled(resumed, what);
          // A line that is JSON but no approval record is damage: refused, naming the log, and
          // the paused run is left as it was (not marked failed).
          if (lines.some(isDamage)) {
            expect(resumed.code, what).toBe(1);
            expect(resumed.stderr, what).toMatch(/approvals\.jsonl:\d+ is not an approval record/);
            expect(readFileSync(join(dir, "state.json"), "utf8"), what).toBe(before);
            expectHandled(
              await runTerfyn(["approve", "--run", dir, "--hash", fx.awaited], fx.project, fx.env),
              what,
            );
          }
        },
      ),
      runs(60),
    );
  });
});
