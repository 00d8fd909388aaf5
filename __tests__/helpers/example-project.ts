/**
 * Copies of the example project in temp directories, with text edits, for plan and test cases.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { commitAll, copyInto, git, newRepo } from "./action-harness.ts";

export const EXAMPLE = join(import.meta.dirname, "..", "..", "examples", "implement-review-loop");

export function copyExample(prefix = "terfyn-example-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cpSync(EXAMPLE, dir, { recursive: true });
  rmSync(join(dir, ".terfyn"), { recursive: true, force: true });
  return dir;
}

/** Replaces `from` with `to` in a project file; fails loudly when `from` is absent. */
export function edit(dir: string, file: string, from: string | RegExp, to: string): void {
  const path = join(dir, file);
  const text = readFileSync(path, "utf8");
  const next = text.replace(from, to);
  if (next === text) throw new Error(`edit: ${String(from)} not found in ${file}`);
  writeFileSync(path, next);
}

export function write(dir: string, file: string, text: string): void {
  writeFileSync(join(dir, file), text);
}

/** Adds a grant line to an agent's grants block. */
export function grant(dir: string, agent: string, line: string): void {
  const path = join(dir, "main.agent");
  const text = readFileSync(path, "utf8");
  const at = text.indexOf(`agent ${agent} {`);
  const grants = text.indexOf("grants {", at);
  const close = text.indexOf("\n  }", grants);
  if (at < 0 || grants < 0 || close < 0) throw new Error(`grant: no grants block for ${agent}`);
  writeFileSync(path, `${text.slice(0, close)}\n    ${line}${text.slice(close)}`);
}

/** Removes a grant line from an agent's grants block. */
export function ungrant(dir: string, agent: string, line: string): void {
  const path = join(dir, "main.agent");
  const text = readFileSync(path, "utf8");
  const at = text.indexOf(`agent ${agent} {`);
  const grantAt = text.indexOf(`\n    ${line}\n`, at);
  if (at < 0 || grantAt < 0) throw new Error(`ungrant: ${line} not found in ${agent}`);
  writeFileSync(path, text.slice(0, grantAt) + text.slice(grantAt + line.length + 5));
}

export const NO_REVIEWER_POLICY = `apiVersion: terfyn.dev/v1
kind: Policy
metadata: { name: bounded-autonomy }
spec:
  rules:
    - requireApproval: { effect: network.egress }
    - risk: { effect: process.exec, level: high }
    - maxLoopLimit: 10
`;

/**
 * A repository whose `agents/` is the example: `before` shapes the base commit on main, `change`
 * the head commit on the branch `feature`; main is checked out again.
 */
export function prRepo(
  change: (project: string) => void,
  before?: (project: string) => void,
): { repo: string; base: string; head: string } {
  const repo = newRepo();
  copyInto(EXAMPLE, repo, "agents");
  writeFileSync(join(repo, "README.md"), "agents\n");
  if (before) before(join(repo, "agents"));
  const base = commitAll(repo, "base");
  git(repo, "checkout", "-q", "-b", "feature");
  change(join(repo, "agents"));
  const head = commitAll(repo, "head");
  git(repo, "checkout", "-q", "main");
  return { repo, base, head };
}

/**
 * `terfyn run` of the example's workflow on its own task and model script (both under
 * `dir/fixtures`), keeping the run in `runDir`.
 */
export function exampleRunArgs(dir: string, runDir: string): string[] {
  return [
    "run",
    "workflow/ImplementAndReview",
    "--project",
    dir,
    "--input-file",
    join(dir, "fixtures", "task.json"),
    "--model-script",
    join(dir, "fixtures", "model-script.yaml"),
    "--run-dir",
    runDir,
  ];
}
