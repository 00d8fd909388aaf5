/**
 * `terfyn run` of the implement-review example on a provider's model, against a local server
 * that speaks the provider's API: the project copy, the run's arguments and environment, the
 * journal it wrote, and a script that answers each agent's requests in turn.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { copyExample, edit } from "./example-project.ts";

const BIN = join(import.meta.dirname, "..", "..", "bin", "terfyn.mjs");

export const TASK = "Add a function Add(a, b int) int to src/add.go.";

/** The example's state, as both agents output it. */
export const state = (approved: boolean, feedback: string) => ({ task: TASK, approved, feedback });

/** This environment without Terfyn's own settings (a child CLI starts from the test's env). */
export function cleanEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith("TERFYN_") && k !== "NODE_OPTIONS") out[k] = v;
  return out;
}

/** The example with every agent on `model`, and the arguments and environment of its run. */
export function exampleOn(model: string, env: Record<string, string>) {
  const project = copyExample();
  edit(project, "main.agent", 'model "mock/gpt-4"', `model "${model}"`);
  const workspace = mkdtempSync(join(tmpdir(), "terfyn-ws-"));
  const runDir = join(mkdtempSync(join(tmpdir(), "terfyn-run-")), "run");
  const args = [
    "run",
    "workflow/ImplementAndReview",
    "--project",
    project,
    "--input-file",
    join(project, "fixtures", "task.json"),
    "--run-dir",
    runDir,
  ];
  return {
    project,
    workspace,
    runDir,
    args,
    env: {
      ...env,
      TERFYN_WORKSPACE_ROOT: workspace,
      TERFYN_WORKSPACE_TEST_COMMAND: "true",
    } as Record<string, string>,
  };
}

export const journalOf = (runDir: string) =>
  readFileSync(join(runDir, "journal.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** Answers each agent's requests in turn from its own list (`agentOf` reads the request). */
export function perAgent<B, A>(agentOf: (body: B) => string, script: Record<string, A[]>) {
  const seen: Record<string, number> = {};
  return (body: B): A => {
    const agent = agentOf(body);
    const n = seen[agent] ?? 0;
    seen[agent] = n + 1;
    const answer = script[agent]?.[n];
    if (!answer) throw new Error(`no answer scripted for ${agent}'s request ${n}`);
    return answer;
  };
}

/**
 * The CLI started from source in a child process, SIGTERM sent once `asked()` says the model
 * was asked; resolves with the exit code, how long the exit took, and standard error.
 */
export async function terminateWhileAsked(
  args: string[],
  cwd: string,
  env: Record<string, string>,
  asked: () => boolean,
): Promise<{ code: number | null; ms: number; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...cleanEnv(), ...env, NO_COLOR: "1", TERFYN_FROM_SOURCE: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
  const deadline = Date.now() + 60_000;
  while (!asked() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const sent = Date.now();
  child.kill("SIGTERM");
  const code = await exited;
  return { code, ms: Date.now() - sent, stderr };
}
