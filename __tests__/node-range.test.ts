/**
 * The Node versions Terfyn says it runs on (package.json's engines, the README, the docs, CI)
 * are the ones its dependencies accept and the ones it is tested on.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { intersects, minVersion, satisfies, subset, validRange } from "semver";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const ROOT = join(import.meta.dirname, "..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

const declared: string = JSON.parse(read("package.json")).engines.node;
const minimum = minVersion(declared);

interface LockEntry {
  version?: string;
  dev?: boolean;
  optional?: boolean;
  engines?: { node?: string } | string[];
}
const lock: { packages: Record<string, LockEntry> } = JSON.parse(read("package-lock.json"));

/** What only builds, checks or tests Terfyn: never bundled into dist/ nor loaded by the App. */
const TOOLS = ["vitest", "vite", "esbuild", "@biomejs/biome", "typescript", "fast-check", "nock"];

/** The installed packages (the root project left out) with the Node range each declares. */
const withRanges = Object.entries(lock.packages).flatMap(([path, entry]) => {
  const node = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
  if (path === "" || node === undefined) return [];
  return [{ name: path.replace(/^.*node_modules\//, ""), entry, node }];
});

/** The packages whose range does not hold every Node the declaration admits. */
function narrowerThanDeclared(entries: typeof withRanges): string[] {
  return entries
    .filter(({ node }) => !subset(declared, node))
    .map(({ name, entry, node }) => `${name}@${entry.version} needs node ${node}`);
}

/** "22.12" for 22.12.0, "22" for 22.0.0: how the prose writes a minimum. */
function written(v: NonNullable<typeof minimum>): string {
  return v.minor === 0 && v.patch === 0
    ? `${v.major}`
    : v.patch === 0
      ? `${v.major}.${v.minor}`
      : v.version;
}

describe("package.json's engines.node", () => {
  it("is a range with a lowest version", () => {
    expect(validRange(declared)).not.toBeNull();
    expect(minimum).not.toBeNull();
  });

  // The published package has no dependencies: everything is bundled into dist/ or loaded
  // by the App from a checkout after `npm ci`, so the packages the bundles are built from and
  // the App loads (Probot, Octokit, the SDKs) are development dependencies in the lock too.
  // They are the ones outside the tools' own trees.
  it("admits only Node versions every run-time dependency accepts", () => {
    const runtime = withRanges.filter(
      ({ entry, name }) =>
        !entry.optional && !TOOLS.some((t) => name === t || name.startsWith(`${t}/`)),
    );
    expect(runtime.map(({ name }) => name)).toEqual(
      expect.arrayContaining(["probot", "@octokit/core", "content-type"]),
    );
    expect(narrowerThanDeclared(runtime)).toEqual([]);
  });

  // `npm ci && npm test` is the README's set-up; the optional packages are the prebuilt
  // binaries for each platform (esbuild's, rolldown's, biome's, lightningcss's) and rolldown's
  // WebAssembly fallback for platforms with none, of which one or none is installed.
  it("admits only Node versions the development tools (Vitest, Vite, esbuild, tsx) accept", () => {
    const tools = withRanges.filter(({ entry }) => entry.dev && !entry.optional);
    expect(tools.map(({ name }) => name)).toContain("vitest");
    expect(narrowerThanDeclared(tools)).toEqual([]);
  });

  it("holds the Node versions test:node-versions runs the tests on, the lowest line among them", () => {
    const script = read("scripts/node-versions.sh");
    const versions = /^VERSIONS=\(([^)]*)\)$/m.exec(script)?.[1]?.trim().split(/\s+/) ?? [];
    expect(versions.length).toBeGreaterThan(0);
    for (const v of versions) expect(satisfies(v, declared), v).toBe(true);
    expect(versions.map((v) => Number(v.split(".")[0]))).toContain(minimum?.major);
  });

  it("holds the Node the Action runs on (action.yml's runs.using)", () => {
    const using: string = parse(read("action.yml")).runs.using;
    expect(using).toMatch(/^node\d+$/);
    expect(intersects(declared, `${using.slice(4)}.x`)).toBe(true);
  });

  it("is what CI's matrix tests: the lowest supported line and the Action's", () => {
    const ci = parse(read(".github/workflows/ci.yml"));
    const matrix: number[] = ci.jobs.test.strategy.matrix.node;
    const action = Number(String(parse(read("action.yml")).runs.using).slice(4));
    for (const major of matrix) expect(intersects(declared, `${major}.x`), `${major}`).toBe(true);
    expect(matrix).toContain(minimum?.major);
    expect(matrix).toContain(action);
  });
});

describe("what the README and the docs say about the Node version", () => {
  // "Node.js 22.12 or newer", "Node 22.12+" and the like: every such claim names the lowest
  // version package.json's engines admits.
  const CLAIM = /\bNode(?:\.js)? (\d+(?:\.\d+){0,2})(?:\+| or (?:newer|later))/g;
  const files = [
    "README.md",
    "CONTRIBUTING.md",
    ".ci/run",
    ...readdirSync(join(ROOT, "docs"))
      .filter((f) => f.endsWith(".md"))
      .map((f) => `docs/${f}`),
  ];
  const claims = files.flatMap((file) =>
    [...read(file).matchAll(CLAIM)].map((m) => ({ file, text: m[0], version: m[1] })),
  );

  it("is the minimum package.json's engines admits, wherever a minimum is stated", () => {
    expect(minimum).not.toBeNull();
    const lowest = written(minimum!);
    expect(claims.filter((c) => c.version !== lowest)).toEqual([]);
  });

  it("is stated in the README's set-up and in CI's entry point", () => {
    expect(claims.map((c) => c.file)).toContain("README.md");
    expect(claims.map((c) => c.file)).toContain(".ci/run");
  });
});

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
