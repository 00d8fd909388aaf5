/**
 * The authority order, checked against an independent brute-force evaluator (issue 21): for
 * random pairs of small projects (two agents; an external, a command and an http tool whose
 * effects, argv, environment allowlist and URL vary; each grant autonomous or gated), the plan
 * may call a change not WIDENED only when every call the head allows (agent, operation, effect,
 * reach, mode) the base allowed too, in the same or a stronger mode; and a change of the
 * allowed calls in either direction is never silently dropped. A workflow `W` calls one of the
 * agents (its calls are W's calls too), and the agents' provider block varies (a call through
 * other provider settings is another call: the prompts go elsewhere).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { planProject } from "../src/core/plan/plan-project.ts";
import { projectResources } from "../src/core/plan/resources.ts";
import { validateProject } from "../src/core/validate.ts";

type Mode = "autonomous" | "gated";
interface Op {
  effects: string[];
  /** Where the call goes (argv, URL): a call elsewhere is another call. */
  reach: string;
  /** The environment names it receives: fewer is contained in more. */
  env: string[];
}
interface Model {
  ext: string[]; // effects of t.op (external)
  argv: string; // the command tool's argv
  env: string[]; // its environment allowlist
  cmdEffects: string[]; // effects besides process.exec
  url: string; // the http operation's URL
  grants: Record<"A" | "B", Partial<Record<"t.op" | "c.run" | "h.get", Mode>>>;
  /** The agent workflow W calls. */
  callee: "A" | "B";
  /** The provider block's key variable; undefined for no block. */
  provider: string | undefined;
}

const EFFECTS = ["e.one", "e.two"];
const ARGVS = ["[node, a.mjs]", "[node, b.mjs]", '[sh, -c, "curl x | sh"]'];
const URLS = [
  "https://a.example/issues/{n}",
  "https://a.example/dispatches",
  "https://b.example/issues/{n}",
];

const mode = fc.option(fc.constantFrom<Mode>("autonomous", "gated"), { nil: undefined });
const grants = fc.record({ "t.op": mode, "c.run": mode, "h.get": mode }).map((g) => {
  const out: Partial<Record<"t.op" | "c.run" | "h.get", Mode>> = {};
  for (const [k, v] of Object.entries(g)) if (v) out[k as keyof typeof out] = v;
  return out;
});
/** Both agents' grants; often the same, so a workflow switching between them changes no effect. */
const bothGrants = fc
  .tuple(grants, grants, fc.boolean())
  .map(([a, b, same]) => ({ A: a, B: same ? a : b }));
const model: fc.Arbitrary<Model> = fc.record({
  ext: fc.subarray(EFFECTS),
  argv: fc.constantFrom(...ARGVS),
  env: fc.subarray(["X", "Y"]),
  cmdEffects: fc.subarray(EFFECTS),
  url: fc.constantFrom(...URLS),
  grants: bothGrants,
  callee: fc.constantFrom<"A" | "B">("A", "B"),
  provider: fc.constantFrom(undefined, "K1", "K2"),
});

/** Each part of the head changes half of the time (fc.option's freq: nil is 1 in 2). */
const CHANGE_HALF = { nil: undefined, freq: 2 } as const;

/** A model shifted a little: most pairs share most of their parts, as real changes do. */
const pair = model.chain((base) =>
  fc
    .record({
      ext: fc.option(fc.subarray(EFFECTS), CHANGE_HALF),
      argv: fc.option(fc.constantFrom(...ARGVS), CHANGE_HALF),
      env: fc.option(fc.subarray(["X", "Y"]), CHANGE_HALF),
      cmdEffects: fc.option(fc.subarray(EFFECTS), CHANGE_HALF),
      url: fc.option(fc.constantFrom(...URLS), CHANGE_HALF),
      grants: fc.option(bothGrants, CHANGE_HALF),
      callee: fc.option(fc.constantFrom<"A" | "B">("A", "B"), CHANGE_HALF),
      provider: fc.option(fc.constantFrom("none", "K1", "K2"), CHANGE_HALF),
    })
    .map((d) => {
      const head: Model = { ...base };
      for (const [k, v] of Object.entries(d))
        if (v !== undefined) (head as never as Record<string, unknown>)[k] = v;
      if (head.provider === "none") head.provider = undefined;
      return [base, head] as const;
    }),
);

function ops(m: Model): Record<string, Op> {
  return {
    "t.op": { effects: m.ext, reach: "external", env: [] },
    "c.run": { effects: ["process.exec", ...m.cmdEffects], reach: m.argv, env: m.env },
    "h.get": { effects: ["network.egress"], reach: `GET ${m.url}`, env: [] },
  };
}

interface Allowed {
  mode: Mode;
  env: string[];
}

/** The brute-force evaluator: every call a model allows, with its mode and environment. */
function calls(m: Model): Map<string, Allowed> {
  const out = new Map<string, Allowed>();
  const all = ops(m);
  const via = `provider ${m.provider ?? "default"}`;
  for (const agent of ["A", "B"] as const)
    for (const [ref, mode] of Object.entries(m.grants[agent])) {
      const op = all[ref]!;
      for (const effect of op.effects) {
        const call = `${agent} ${ref} ${effect} ${op.reach} ${via}`;
        out.set(call, { mode: mode as Mode, env: op.env });
        // What the agent W calls may do, W's runs may do.
        if (agent === m.callee) out.set(`W ${call}`, { mode: mode as Mode, env: op.env });
      }
    }
  return out;
}

function files(m: Model) {
  const list = (xs: string[]) => `[${xs.join(", ")}]`;
  const agent = (name: "A" | "B") =>
    `agent ${name} {\n  model "anthropic/claude-x"\n  input S\n  output S\n  instructions "x"\n  grants {\n${Object.entries(
      m.grants[name],
    )
      .map(([ref, mode]) => `    tool.${ref}${mode === "gated" ? " requires approval" : ""}\n`)
      .join("")}  }\n}\n`;
  return [
    {
      path: "terfyn.yaml",
      text: "apiVersion: terfyn.dev/v1\nkind: Project\nmetadata: { name: p }\nspec: {}\n",
    },
    {
      path: "main.agent",
      text: `${m.provider ? `provider anthropic { apiKeyEnv "${m.provider}" }\n` : ""}${agent("A")}${agent("B")}workflow W(input: S) -> S\neffects { e.one, e.two, process.exec, network.egress }\n{\n  return ${m.callee}(input)\n}\n`,
    },
    {
      path: "tools.yaml",
      text: `apiVersion: terfyn.dev/v1
kind: Schema
metadata: { name: S }
spec: { type: object, properties: { x: { type: string } } }
---
apiVersion: terfyn.dev/v1
kind: Tool
metadata: { name: t }
spec:
  adapter: external
  operations:
    op: { effects: ${list(m.ext)}, idempotent: true }
---
apiVersion: terfyn.dev/v1
kind: Tool
metadata: { name: c }
spec:
  adapter: command
  command: { argv: ${m.argv}, env: ${list(m.env)} }
  operations:
    run: { effects: ${list(["process.exec", ...m.cmdEffects])}, idempotent: true }
---
apiVersion: terfyn.dev/v1
kind: Tool
metadata: { name: h }
spec:
  adapter: http
  operations:
    get: { effects: [network.egress], idempotent: true, http: { method: GET, url: "${m.url}" } }
`,
    },
  ];
}

function plan(base: Model, head: Model) {
  const b = validateProject(files(base));
  const h = validateProject(files(head));
  for (const v of [b, h])
    if (!v.ok) throw new Error(v.diagnostics.map((d) => `${d.code} ${d.message}`).join("\n"));
  const r = planProject(
    h,
    { resources: projectResources(b).resources, source: { source: "state", ref: "s" } },
    { path: "." },
  );
  if (!r.ok) throw new Error("must plan");
  return r.plan;
}

describe("the authority order against a brute-force evaluator", () => {
  it("not WIDENED only where the base allowed every call of the head; no change dropped", () => {
    fc.assert(
      fc.property(pair, ([base, head]) => {
        const p = plan(base, head);
        const before = calls(base);
        const after = calls(head);
        // Contained: each call of the head was allowed, autonomous only if it was autonomous.
        const contained = [...after].every(([c, now]) => {
          const was = before.get(c);
          return (
            was !== undefined &&
            (now.mode === "gated" || was.mode === "autonomous") &&
            now.env.every((n) => was.env.includes(n))
          );
        });
        if (!p.summary.widened) expect(contained).toBe(true);
        if (p.authority.autonomous === "NARROWED" || p.authority.gated === "NARROWED")
          expect(p.summary.widened || contained).toBe(true);
        const same =
          before.size === after.size &&
          [...after].every(([c, now]) => {
            const was = before.get(c);
            return was?.mode === now.mode && was.env.join() === now.env.join();
          });
        if (!same) expect(p.summary.has_changes || p.guards_relaxed.length > 0).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
