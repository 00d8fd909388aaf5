/**
 * A review run's copy of its validated agents (agents-project.json in the run directory): what
 * it holds is what validation gives, its key covers every file and the build, and a copy that
 * is not exactly right (another key, another format, a damaged or hostile file) is never used:
 * the agents are validated from their files instead, and the run goes on as it would have.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  AGENTS_CACHE_FILE,
  agentsCacheKey,
  readAgentsCache,
  writeAgentsCache,
} from "../src/adapters/fs/agents-cache.ts";
import { readProjectDirectory } from "../src/adapters/fs/read-project.ts";
import { ReviewRunStore } from "../src/adapters/fs/review-run-store.ts";
import {
  decodeRuntimeProject,
  encodeRuntimeProject,
  type RuntimeProject,
} from "../src/core/engine/runtime-project.ts";
import { validateProject } from "../src/core/validate.ts";
import { runTerfyn } from "./helpers/cli.ts";
import {
  approveAwaited,
  buildReviewExample,
  reviewStartArgs,
  reviewState,
} from "./helpers/review-run.ts";

const AGENTS = join(import.meta.dirname, "..", "agents", "review-response");

async function shippedAgents() {
  const read = await readProjectDirectory(AGENTS);
  const validation = validateProject(read.files);
  expect(validation.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  return { files: read.files, project: validation.project };
}

/** The runtime part of a project as plain data, for comparing. */
function plain(p: RuntimeProject) {
  return JSON.parse(JSON.stringify(encodeRuntimeProject(p)));
}

const dirs: string[] = [];
function runDir(): string {
  const d = mkdtempSync(join(tmpdir(), "terfyn-agents-cache-"));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("the runtime part of a project", () => {
  it("decodes to what was encoded, field by field as the interpreter reads it", async () => {
    const { project } = await shippedAgents();
    const decoded = decodeRuntimeProject(JSON.parse(JSON.stringify(encodeRuntimeProject(project))));
    expect(decoded).toBeDefined();
    const d = decoded as RuntimeProject;
    expect([...d.agents.keys()]).toEqual([...project.agents.keys()]);
    for (const [name, a] of project.agents) {
      const c = d.agents.get(name);
      expect(c).toEqual({
        name: a.name,
        model: a.model,
        instructions: a.instructions,
        ...(a.input !== undefined ? { input: a.input } : {}),
        ...(a.output !== undefined ? { output: a.output } : {}),
        maxTurns: a.maxTurns,
        maxTokens: a.maxTokens,
        ...(a.temperature !== undefined ? { temperature: a.temperature } : {}),
        grants: a.grants.map((g) => ({
          ref: g.ref,
          tool: g.tool,
          operation: g.operation,
          mode: g.mode,
        })),
      });
    }
    for (const [name, s] of project.schemas) expect(d.schemas.get(name)?.schema).toEqual(s.schema);
    for (const [name, t] of project.tools)
      for (const [op, o] of t.operations)
        expect(d.tools.get(name)?.operations.get(op)).toEqual({
          idempotent: o.idempotent,
          ...(o.input !== undefined ? { input: o.input } : {}),
          ...(o.description !== undefined ? { description: o.description } : {}),
        });
  });

  it("refuses anything but the exact shape: unknown keys, wrong types, a name given twice", async () => {
    const { project } = await shippedAgents();
    const good = () => JSON.parse(JSON.stringify(encodeRuntimeProject(project)));
    expect(decodeRuntimeProject(good())).toBeDefined();
    // Each edit changes a fresh copy in place; `not an object` replaces it.
    const bad: [string, (e: ReturnType<typeof good>) => unknown][] = [
      ["an unknown top-level key", (e) => ({ ...e, extra: 1 })],
      [
        "an unknown agent key",
        (e) => Object.assign(e, { agents: [{ ...e.agents[0], admin: true }] }),
      ],
      [
        "a grant mode that is not one",
        (e) => {
          e.agents[0].grants[0].mode = "root";
          return e;
        },
      ],
      [
        "a turn limit that is not a positive integer",
        (e) => {
          e.agents[0].maxTurns = 0;
          return e;
        },
      ],
      [
        "a schema that is not a JSON Schema node",
        (e) => {
          e.schemas[0].schema = { type: 7 };
          return e;
        },
      ],
      ["an agent given twice", (e) => ({ ...e, agents: [...e.agents, e.agents[0]] })],
      ["a schema given twice", (e) => ({ ...e, schemas: [...e.schemas, e.schemas[0]] })],
      ["a tool given twice", (e) => ({ ...e, tools: [...e.tools, e.tools[0]] })],
      [
        "an operation given twice",
        (e) => {
          e.tools[0].operations.push(e.tools[0].operations[0]);
          return e;
        },
      ],
      ["not an object", () => []],
    ];
    for (const [what, edit] of bad)
      expect(decodeRuntimeProject(edit(good())), what).toBeUndefined();
  });
});

describe("the copy's key", () => {
  it("changes with any file's text or path, with a file more, and with the build", async () => {
    const { files } = await shippedAgents();
    const key = agentsCacheKey(files, "b1");
    expect(
      agentsCacheKey(
        files.map((f) => ({ ...f })),
        "b1",
      ),
    ).toBe(key);
    expect(agentsCacheKey(files, "b2")).not.toBe(key);
    for (let i = 0; i < files.length; i++) {
      const f = files[i] as (typeof files)[number];
      const text = files.map((g, j) => (j === i ? { ...g, text: `${f.text} ` } : g));
      const path = files.map((g, j) => (j === i ? { ...g, path: `x${f.path}` } : g));
      expect(agentsCacheKey(text, "b1"), f.path).not.toBe(key);
      expect(agentsCacheKey(path, "b1"), f.path).not.toBe(key);
    }
    expect(agentsCacheKey([...files, { path: "more.yaml", text: "" }], "b1")).not.toBe(key);
    // Where one file ends and the next begins is part of the key.
    const [a, b] = [
      { path: "a.agent", text: "xy" },
      { path: "b.agent", text: "z" },
    ];
    expect(agentsCacheKey([a, b], "b1")).not.toBe(
      agentsCacheKey(
        [
          { ...a, text: "x" },
          { ...b, text: "yz" },
        ],
        "b1",
      ),
    );
  });
});

describe("reading the copy", () => {
  it("gives the project under its own key, and nothing under another", async () => {
    const { project } = await shippedAgents();
    const dir = runDir();
    await writeAgentsCache(dir, "sha256:k1", project);
    const read = await readAgentsCache(dir, "sha256:k1");
    expect(read && plain(read)).toEqual(plain(project));
    expect(await readAgentsCache(dir, "sha256:k2")).toBeUndefined();
  });

  it("refuses another format, a key more, damaged JSON, a missing file", async () => {
    const { project } = await shippedAgents();
    const dir = runDir();
    const file = join(dir, AGENTS_CACHE_FILE);
    expect(await readAgentsCache(dir, "sha256:k")).toBeUndefined();
    await writeAgentsCache(dir, "sha256:k", project);
    const saved = JSON.parse(readFileSync(file, "utf8"));
    expect(saved.format).toBe(1);
    writeFileSync(file, JSON.stringify({ ...saved, format: 2 }));
    expect(await readAgentsCache(dir, "sha256:k")).toBeUndefined();
    writeFileSync(file, JSON.stringify({ ...saved, trusted: true }));
    expect(await readAgentsCache(dir, "sha256:k")).toBeUndefined();
    writeFileSync(file, JSON.stringify(saved).slice(0, -10));
    expect(await readAgentsCache(dir, "sha256:k")).toBeUndefined();
    writeFileSync(file, JSON.stringify(saved));
    expect(await readAgentsCache(dir, "sha256:k")).toBeDefined();
  });

  it("reads only a regular file of bounded size: never through a link, never a FIFO", async () => {
    const { project } = await shippedAgents();
    const elsewhere = runDir();
    await writeAgentsCache(elsewhere, "sha256:k", project);
    const dir = runDir();
    symlinkSync(join(elsewhere, AGENTS_CACHE_FILE), join(dir, AGENTS_CACHE_FILE));
    expect(await readAgentsCache(elsewhere, "sha256:k")).toBeDefined();
    expect(await readAgentsCache(dir, "sha256:k")).toBeUndefined();

    const fifo = runDir();
    execFileSync("mkfifo", [join(fifo, AGENTS_CACHE_FILE)]);
    expect(await readAgentsCache(fifo, "sha256:k")).toBeUndefined();

    // Valid JSON, padded past the size limit.
    const big = runDir();
    const text = readFileSync(join(elsewhere, AGENTS_CACHE_FILE), "utf8");
    writeFileSync(join(big, AGENTS_CACHE_FILE), `${text}${" ".repeat(5 * 1024 * 1024)}`);
    expect(await readAgentsCache(big, "sha256:k")).toBeUndefined();
  });

  it("is never written as an artifact: the name is reserved for the run's own adapter", async () => {
    const store = await ReviewRunStore.open(runDir());
    await expect(store.write(AGENTS_CACHE_FILE, "{}")).rejects.toThrow(/orchestrator's own/);
  });

  it("a write that cannot be made leaves no copy and throws nothing", async () => {
    const { project } = await shippedAgents();
    const dir = runDir();
    mkdirSync(join(dir, AGENTS_CACHE_FILE));
    await writeAgentsCache(dir, "sha256:k", project);
    expect(await readAgentsCache(dir, "sha256:k")).toBeUndefined();
  });
});

describe("terfyn review and the copy", () => {
  it("the start writes the copy; a resume whose copy has another key, or is damaged, validates the agents and goes on", async () => {
    const b = buildReviewExample("terfyn-agents-cache-e2e-");
    dirs.push(join(b.runDir, ".."));
    const start = await runTerfyn(reviewStartArgs(b), b.repo);
    expect(start.code, start.stderr).toBe(2);
    const file = join(b.runDir, AGENTS_CACHE_FILE);
    const saved = JSON.parse(readFileSync(file, "utf8"));
    expect(saved.key).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(saved.project.agents.map((a: { name: string }) => a.name)).toContain("Builder");

    // A copy with no agents at all: used, the run could not go on. Under another key it is
    // not used, and the copy is written again under the right one.
    writeFileSync(
      file,
      JSON.stringify({
        ...saved,
        key: `sha256:${"0".repeat(64)}`,
        project: { agents: [], schemas: [], tools: [] },
      }),
    );
    expect((await approveAwaited(b)).code).toBe(0);
    const resumed = await runTerfyn(["review", "--resume", b.runDir], b.repo);
    expect(resumed.code, resumed.stderr).toBe(2);
    expect(reviewState(b.runDir).awaiting).toMatchObject({ gate: "publish" });
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(saved);

    writeFileSync(file, "{ not json");
    expect((await approveAwaited(b)).code).toBe(0);
    const done = await runTerfyn(["review", "--resume", b.runDir], b.repo);
    expect(done.code, done.stderr).toBe(0);
    expect(reviewState(b.runDir).terminal).toBe("done");
  }, 60_000);
});
