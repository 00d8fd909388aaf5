/**
 * Output goldens over the benchmark's synthetic projects: the exact bytes `terfyn validate`,
 * `terfyn test`, `terfyn plan --against HEAD~1` (text and JSON) print on generated projects,
 * recorded as SHA-256 digests in __tests__/golden/synthetic.json together with the plan hash.
 * The benchmark's speed work (memoised parses, lazy positions, cheaper hashing) must not change
 * one byte of any of them; a failure here means an optimisation changed output. If a change of
 * output is intended, refresh with `UPDATE_GOLDEN=1 npx vitest run __tests__/synthetic-golden.test.ts`
 * and say why in the commit.
 *
 * Three projects: 300 agents 30 per file (the bench's layout, smaller), 60 agents one file per
 * agent, and the first with errors planted in an .agent file and a YAML file (so diagnostics,
 * with their lines and columns, are covered too).
 */
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { benchGit } from "../bench/git-repo.ts";
import {
  type GeneratedFile,
  generateGrantChange,
  writeGeneratedFiles,
} from "../bench/synthetic-project.ts";
import { runTerfyn } from "./helpers/cli.ts";

const GOLDEN = join(import.meta.dirname, "golden", "synthetic.json");
const update = process.env.UPDATE_GOLDEN === "1";
const work = mkdtempSync(join(tmpdir(), "terfyn-synthetic-golden-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

type Case = Record<string, string>;
const golden: Record<string, Case> = update
  ? {}
  : (JSON.parse(readFileSync(GOLDEN, "utf8")) as Record<string, Case>);
const recorded: Record<string, Case> = {};

/** A git repository: the base project committed, then the changed one (plan --against HEAD~1). */
function project(name: string, agents: number, perFile: number, broken = false): string {
  const { base, changed } = generateGrantChange(
    {
      seed: 20240601,
      agents,
      tools: Math.max(20, Math.round(agents / 20)),
      operationsPerTool: 10,
      grantsPerAgent: 5,
      workflows: Math.max(10, Math.round(agents / 10)),
      agentFiles: Math.max(1, Math.round(agents / perFile)),
      toolFiles: 10,
    },
    Math.max(1, Math.round(agents / 20)),
  );
  const dir = join(work, name);
  const fail = (m: string) => new Error(m);
  writeGeneratedFiles(dir, base.files);
  benchGit(fail, dir, "init", "-q", "-b", "main");
  benchGit(fail, dir, "add", "-A");
  benchGit(fail, dir, "commit", "-qm", "base");
  for (const f of base.files) rmSync(join(dir, f.path), { force: true });
  let files = changed.files;
  if (broken) {
    // An unknown tool in the last .agent file, an unknown field in the first tool file.
    const agentFile = files.filter((f) => f.path.endsWith(".agent")).at(-1) as GeneratedFile;
    const toolFile = files.find((f) => f.path.startsWith("tools/")) as GeneratedFile;
    files = files.map((f) =>
      f === agentFile
        ? {
            path: f.path,
            text: `${f.text}\nagent planted_error {\n  tools { no_such_tool.read }\n}\n`,
          }
        : f === toolFile
          ? { path: f.path, text: f.text.replace("spec:", "spec:\n  unknownField: 1") }
          : f,
    );
  }
  writeGeneratedFiles(dir, files);
  benchGit(fail, dir, "add", "-A");
  benchGit(fail, dir, "commit", "-qm", "change 5% of grants");
  return dir;
}

const digest = (s: string) => createHash("sha256").update(s).digest("hex");

async function outputs(dir: string): Promise<Case> {
  const out: Case = {};
  const run = async (key: string, args: string[]) => {
    const r = await runTerfyn(args, dir);
    // The project's temporary path appears in some messages; it is not part of the output.
    const text = `${r.stdout}\n--- stderr ---\n${r.stderr}\n--- exit ${r.code}`.replaceAll(
      dir,
      "<P>",
    );
    out[key] = digest(text);
    return r;
  };
  await run("validate", ["validate", "--project", dir]);
  await run("test", ["test", "--project", dir]);
  await run("plan text", ["plan", "--project", dir, "--against", "HEAD~1"]);
  const json = await run("plan json", ["plan", "--project", dir, "--against", "HEAD~1", "--json"]);
  if (json.code === 0) {
    const plan = JSON.parse(json.stdout) as { hash: string };
    out["plan hash"] = plan.hash;
  }
  return out;
}

const CASES: [string, () => string][] = [
  ["300 agents, 30 per file", () => project("p300", 300, 30)],
  ["60 agents, one file per agent", () => project("p60", 60, 1)],
  ["300 agents, 30 per file, with errors", () => project("p300-broken", 300, 30, true)],
];

describe("synthetic project outputs are unchanged", () => {
  for (const [name, make] of CASES) {
    it(name, { timeout: 60_000 }, async () => {
      const got = await outputs(make());
      recorded[name] = got;
      if (update) {
        writeFileSync(GOLDEN, `${JSON.stringify(recorded, null, 2)}\n`);
        return;
      }
      expect(got).toEqual(golden[name]);
    });
  }
});
