/**
 * The plan hash: stable across runs, file order and checkout location; different whenever a
 * grant, a mode, an operation's effects or a loop limit changes.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, sha256 } from "../src/core/plan/canonical-hash.ts";
import { planProject } from "../src/core/plan/plan-project.ts";
import { projectResources } from "../src/core/plan/resources.ts";
import { validateProject } from "../src/core/validate.ts";
import { EXAMPLE } from "./helpers/example-project.ts";

const require = createRequire(import.meta.url);

type Files = { path: string; text: string }[];

function exampleFiles(): Files {
  const out: Files = [];
  const walk = (rel: string) => {
    for (const name of readdirSync(join(EXAMPLE, rel))) {
      const p = rel ? `${rel}/${name}` : name;
      if (statSync(join(EXAMPLE, p)).isDirectory()) walk(p);
      else if (/\.(agent|ya?ml)$/.test(p))
        out.push({ path: p, text: readFileSync(join(EXAMPLE, p), "utf8") });
    }
  };
  walk("");
  return out;
}

const base = exampleFiles();
const baseResources = projectResources(validateProject(base)).resources;

function hashOf(files: Files): string {
  const result = planProject(
    validateProject(files),
    {
      resources: baseResources,
      source: { source: "state", ref: "x" },
    },
    { path: "." },
  );
  if (!result.ok) throw new Error(result.blocking.map((d) => `${d.code} ${d.message}`).join("\n"));
  return result.plan.hash;
}

function editFile(files: Files, path: string, from: string, to: string): Files {
  return files.map((f) => {
    if (f.path !== path) return f;
    if (!f.text.includes(from)) throw new Error(`${from} not in ${path}`);
    return { path: f.path, text: f.text.replace(from, to) };
  });
}

/** Edits that each change authority or bounds; every one must change the hash. */
const EDITS: { name: string; apply: (f: Files) => Files }[] = [
  {
    name: "add a grant",
    apply: (f) =>
      editFile(
        f,
        "main.agent",
        "    tool.workspace.run_tests\n  }\n}\n\nworkflow",
        "    tool.workspace.run_tests\n    tool.workspace.write_file requires approval\n  }\n}\n\nworkflow",
      ),
  },
  {
    name: "remove a grant",
    apply: (f) =>
      editFile(
        f,
        "main.agent",
        "    tool.workspace.read_file\n    tool.workspace.run_tests\n",
        "    tool.workspace.read_file\n",
      ),
  },
  {
    name: "gate a grant",
    apply: (f) =>
      editFile(
        f,
        "main.agent",
        "    tool.workspace.write_file\n",
        "    tool.workspace.write_file requires approval\n",
      ),
  },
  {
    name: "loosen an operation's input schema",
    apply: (f) =>
      editFile(f, "tools.yaml", "required: [path], properties", "required: [], properties"),
  },
  {
    name: "drop a capability-test assertion",
    apply: (f) =>
      editFile(
        f,
        "tests/capabilities.yaml",
        "    - forbidEffect: { agent: Reviewer, effect: workspace.write }\n",
        "",
      ),
  },
  { name: "raise the loop limit", apply: (f) => editFile(f, "main.agent", "limit 3", "limit 4") },
  { name: "change maxTurns", apply: (f) => editFile(f, "main.agent", "maxTurns 8", "maxTurns 9") },
  {
    name: "change a risk level",
    apply: (f) => editFile(f, "policies.yaml", "level: high", "level: critical"),
  },
];

describe("plan hash", () => {
  it("is the same on every run and for any file order", () => {
    const expected = hashOf(base);
    fc.assert(
      fc.property(
        fc.shuffledSubarray(base, { minLength: base.length, maxLength: base.length }),
        (files) => {
          expect(hashOf(files)).toBe(expected);
        },
      ),
      { numRuns: 50, seed: 42 },
    );
  });

  it("ignores comments, blank lines and moved lines (source locations are not hashed)", () => {
    const expected = hashOf(base);
    const moved = editFile(base, "main.agent", "defaults {", "// a comment\n\n\ndefaults {");
    expect(hashOf(moved)).toBe(expected);
  });

  it("changes when any grant, mode, effect or loop limit changes, and each edit gives its own hash", () => {
    const seen = new Map<string, string>([[hashOf(base), "unchanged"]]);
    fc.assert(
      fc.property(fc.subarray(EDITS, { minLength: 1 }), (edits) => {
        const files = edits.reduce((f, e) => e.apply(f), base);
        const h = hashOf(files);
        const name = edits.map((e) => e.name).join(" + ");
        const before = seen.get(h);
        expect(before === undefined || before === name, `${name} collides with ${before}`).toBe(
          true,
        );
        seen.set(h, name);
      }),
      { numRuns: 200, seed: 7 },
    );
    for (const e of EDITS) expect(hashOf(e.apply(base)), e.name).not.toBe(hashOf(base));
    expect(hashOf(editFile(base, "main.agent", "limit 3", "limit 2"))).not.toBe(hashOf(base));
  });
});

describe("canonical JSON", () => {
  // The hash streams its own canonical writer; it must be byte for byte the canonicalize
  // package's (RFC 8785), which every committed plan hash was made with.
  const reference = (v: unknown): string => {
    const mod = require("canonicalize") as ((x: unknown) => string | undefined) & {
      default?: (x: unknown) => string | undefined;
    };
    return (mod.default ?? mod)(v) ?? "null";
  };
  const outcome = (f: () => string): string => {
    try {
      return f();
    } catch (e) {
      return `threw ${(e as Error).message}`;
    }
  };
  it("writes exactly what canonicalize writes, and sha256 hashes that text", () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.jsonValue(), fc.array(fc.anything())), (v) => {
        const want = outcome(() => reference(v));
        expect(outcome(() => canonicalJson(v))).toBe(want);
        if (!want.startsWith("threw "))
          expect(sha256(v)).toBe(`sha256:${createHash("sha256").update(want).digest("hex")}`);
      }),
      { numRuns: 2000, seed: 14 },
    );
    const big = Array.from({ length: 20_000 }, (_, i) => ({ i, s: `\u{1F600}${i}`, n: null }));
    expect(sha256(big)).toBe(`sha256:${createHash("sha256").update(reference(big)).digest("hex")}`);
    const sparse: unknown[] = [1];
    sparse[2] = 2;
    for (const v of [undefined, () => 1, Symbol("s"), { toJSON: () => undefined }, sparse])
      expect(canonicalJson(v)).toBe(reference(v));
  });
});
