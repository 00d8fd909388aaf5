/**
 * The direct YAML-to-values path (src/core/config/yaml-fast.ts) against the full one: for every
 * YAML file in the repository, the synthetic projects' files and a set of edge cases, it either
 * declines (and the full parse runs) or gives exactly the documents `parseAllDocuments` + `toJS`
 * give, with no error among them, and locates every field at the same range.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type Document, LineCounter, parseAllDocuments, parseDocument } from "yaml";
import { generateSyntheticProject } from "../bench/synthetic-project.ts";
import { locate, type PathSegment } from "../src/core/config/load-resources.ts";
import { fastYamlDocuments, locateFast } from "../src/core/config/yaml-fast.ts";
import { YAML_PARSE_OPTIONS } from "../src/core/config/yaml-value.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Every path into a value, and one past each collection's end and below each scalar. */
function paths(v: unknown, p: PathSegment[], out: PathSegment[][]): PathSegment[][] {
  out.push(p);
  if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) paths(x, [...p, i], out);
    out.push([...p, v.length], [...p, "length"]);
  } else if (v !== null && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) paths(x, [...p, k], out);
    out.push([...p, "no_such_key"], [...p, 0]);
  } else out.push([...p, 0], [...p, "x"]);
  return out;
}

/** Whether the fast path took the text; throws (via expect) on any difference. */
function agrees(text: string): boolean {
  const fast = fastYamlDocuments(text);
  if (fast === undefined) return false;
  const docs = parseAllDocuments(text, {
    lineCounter: new LineCounter(),
    ...YAML_PARSE_OPTIONS,
  }) as unknown as Document.Parsed[];
  expect(docs.length).toBe(fast.length);
  docs.forEach((doc, i) => {
    const f = fast[i] as NonNullable<typeof fast>[number];
    expect(doc.errors).toEqual([]);
    const value = doc.toJS({ maxAliasCount: 100 });
    expect(f.value).toStrictEqual(value);
    // Key order too (toStrictEqual ignores it).
    expect(JSON.stringify(f.value)).toBe(JSON.stringify(value));
    for (const p of paths(value, [], [])) {
      for (const atKey of [false, true]) {
        expect([p, atKey, locateFast(f.root, p, atKey)]).toEqual([p, atKey, locate(doc, p, atKey)]);
      }
    }
  });
  return true;
}

describe("the direct YAML path", () => {
  it("agrees with parseAllDocuments on every YAML file in the repository", () => {
    const files = execFileSync("git", ["ls-files", "*.yaml", "*.yml"], {
      cwd: ROOT,
      encoding: "utf8",
    })
      .split("\n")
      .filter((f) => f !== "");
    let taken = 0;
    for (const f of files) {
      const text = readFileSync(join(ROOT, f), "utf8").replace(/^\uFEFF/, "");
      if (agrees(text)) taken++;
    }
    // Flow mappings with content (`metadata: { name: x }`, common here) take the full path.
    expect(taken).toBeGreaterThan(0);
  });

  it("agrees on the synthetic projects' YAML and takes every file", () => {
    for (const agents of [60, 300]) {
      const { files } = generateSyntheticProject({
        seed: 20240601,
        agents,
        tools: 20,
        operationsPerTool: 10,
        grantsPerAgent: 5,
        workflows: 30,
        agentFiles: 3,
        toolFiles: 4,
      });
      for (const f of files.filter((x) => x.path.endsWith(".yaml")))
        expect([f.path, agrees(f.text)]).toEqual([f.path, true]);
    }
  });

  it("agrees on edge cases, or declines them", () => {
    const cases = [
      "a: 1\nb: 0x1F\nc: 0o17\nd: 1.50\ne: .inf\nf: -.Inf\ng: .nan\nh: 1e3\ni: +12\n",
      "a: true\nb: False\nc: null\nd: ~\ne: NULL\nf: yes\ng: 'q'\nh: \"x\\ty\\u00e9\"\n",
      "a: 'it''s'\nb: \"multi\n  line\"\nc: plain\n  folded\n\n  paragraph\n",
      "a: |\n  lit\n   eral\nb: >-\n  fold\n  ed\nc: |+\n  keep\n\nd: x\n",
      "# lead\n---\na: 1 # trailing\n# between\nb:\n  - x\n  -   y\n  # inside\n  - z\n---\nc: {}\nd: []\n",
      "a:\n- 1\n- - 2\n  - 3\n- k: v\n  j: w\n",
      "\"quoted key\": 1\n'single': 2\nplain key: 3\n",
      "a: 1\na: 2\n",
      "a: &x 1\nb: *x\n",
      "a: !!str 1\n",
      "%YAML 1.2\n---\na: 1\n",
      "a: [1, 2]\nb: {c: d}\n",
      "a:\n\tb: 1\n",
      "a: 1\r\nb: 2\r\n",
      "1: a\n",
      "true: a\n",
      "null: a\n",
      "<<: {a: 1}\n",
      "__proto__: 1\n",
      "? a\n: b\n",
      "a:\nb: 1\n",
      "a: b: c\n",
      "a: 1\n b: 2\n",
      "- a\n- b\n",
      "plain\n",
      "",
      "# only a comment\n",
      "---\n",
      "a: 1\n...\n",
      "a: 'unterminated\n",
      'a: "bad \\q escape"\n',
      "a:#nospace\n",
      "a: 1 #c\nb: [] #c\nc: {}#c\n",
      "--- a: 1\n",
      `a: ${"x".repeat(1100)}\n`,
      `${"k".repeat(1100)}: 1\n`,
      "a:\n  b:\n    c:\n      d: [ ]\n",
      "key with spaces : value\n",
      "a: - b\n",
      'a: "line\\\n  continued"\n',
    ];
    for (const text of cases) agrees(text);
    // The shapes it must take, so the comparison above is not vacuous.
    expect(agrees(cases[0] as string)).toBe(true);
    expect(agrees(cases[4] as string)).toBe(true);
    // And the ones the full path must handle (errors, aliases, tags, flow content).
    for (const i of [7, 8, 9, 10, 11, 12, 13, 20, 29, 30])
      expect([i, fastYamlDocuments(cases[i] as string)]).toEqual([i, undefined]);
  });

  it("reads the tags of the schema resource files are parsed with", () => {
    // No tag is tried only for keys (a `default: 'key'` tag would type keys differently).
    const tags = parseDocument("", YAML_PARSE_OPTIONS).schema.tags as { default?: unknown }[];
    expect(tags.some((t) => t.default === "key")).toBe(false);
  });
});
