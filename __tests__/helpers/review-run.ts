/**
 * Review runs through the CLI in tests: the example repository (examples/review-fix, built by
 * its build-repo.mjs into a temp dir), the start command, the run's state, an AGENTS.md edited
 * at head (the request following the new head), and approving whatever a run awaits.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { runTerfyn } from "./cli.ts";
import { testSandbox } from "./sandbox.ts";

export const REVIEW_EXAMPLE = join(import.meta.dirname, "..", "..", "examples", "review-fix");
export const REVIEW_SCRIPT = join(REVIEW_EXAMPLE, "model-script.yaml");

export interface BuiltReview {
  repo: string;
  request: string;
  head: string;
  /** The run directory (not created yet), next to the repository. */
  runDir: string;
}

/** The example repository in a fresh temp dir, with its request file (and whatever else build-repo.mjs prints). */
export function buildReviewExample(
  prefix = "terfyn-review-",
): BuiltReview & Record<string, unknown> {
  const out = join(mkdtempSync(join(tmpdir(), prefix)), "repo");
  const info = JSON.parse(
    execFileSync(process.execPath, [join(REVIEW_EXAMPLE, "build-repo.mjs"), out], {
      encoding: "utf8",
    }),
  ) as Omit<BuiltReview, "runDir"> & Record<string, unknown>;
  return { ...info, runDir: join(out, "..", "run") };
}

export const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

/** The run's state.json. */
export const reviewState = (runDir: string) =>
  JSON.parse(readFileSync(join(runDir, "state.json"), "utf8"));

/** `terfyn review` starting a run of `b`, driven by `script` (null: no script). */
export const reviewStartArgs = (
  b: Pick<BuiltReview, "repo" | "request" | "runDir">,
  script: string | null = REVIEW_SCRIPT,
  extra: readonly string[] = [],
  runDir = b.runDir,
) => [
  "review",
  "--repo",
  b.repo,
  "--request",
  b.request,
  "--run-dir",
  runDir,
  ...(script ? ["--model-script", script] : []),
  ...extra,
];

/** Edits AGENTS.md at head and commits it; the request names the new head. */
export function commitAgentsMd(b: BuiltReview, edit: (text: string) => string): void {
  const agents = join(b.repo, "AGENTS.md");
  writeFileSync(agents, edit(readFileSync(agents, "utf8")));
  git(b.repo, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qam", "edit AGENTS.md");
  const request = JSON.parse(readFileSync(b.request, "utf8"));
  request.head = git(b.repo, "rev-parse", "HEAD");
  writeFileSync(b.request, JSON.stringify(request));
}

/** Approves exactly what the run awaits. */
export const approveAwaited = (b: Pick<BuiltReview, "repo" | "runDir">, ...extra: string[]) =>
  runTerfyn(
    ["approve", "--run", b.runDir, "--hash", reviewState(b.runDir).awaiting.hash, ...extra],
    b.repo,
  );

/** Approves whatever the run awaits and resumes it, until it ends or awaits the `stopAt` gate. */
export async function approveAndResume(
  b: Pick<BuiltReview, "repo" | "runDir">,
  stopAt?: "plan" | "publish",
  /** The environment each resume runs with (a model's key and base URL). */
  env: Record<string, string> = {},
): Promise<Awaited<ReturnType<typeof runTerfyn>>> {
  for (;;) {
    const s = reviewState(b.runDir);
    if (s.status !== "awaiting-approval") throw new Error(`not at a gate: ${JSON.stringify(s)}`);
    if (stopAt && s.awaiting.gate === stopAt) return { code: 2, stdout: "", stderr: "" };
    const ok = await approveAwaited(b);
    if (ok.code !== 0) throw new Error(`approve failed: ${ok.stderr}`);
    const r = await runTerfyn(["review", "--resume", b.runDir], b.repo, env);
    if (r.code !== 2) return r;
    if (stopAt && reviewState(b.runDir).awaiting.gate === stopAt) return r;
  }
}

/**
 * The core's steps over local mode's effects, outside a run process: the run directory's files
 * (or, before there is one, the request file as its request.json), the worktree prepared at the
 * request's head. No model: for steps that run no agent.
 */
export async function localSteps(b: Pick<BuiltReview, "repo" | "request" | "runDir">) {
  const { localEffects } = await import("../../src/adapters/review/local-effects.ts");
  const { DoctrineSteps } = await import("../../src/core/review/steps.ts");
  const fx = localEffects({
    repoDir: b.repo,
    requestFile: b.request,
    runDir: b.runDir,
    agents: undefined as never,
    model: undefined as never,
    sandbox: await testSandbox(),
    progress: () => {},
  });
  const read = (path: string) => {
    try {
      return readFileSync(path, "utf8");
    } catch {
      return undefined;
    }
  };
  const files = {
    read: async (n: string) =>
      read(join(b.runDir, n)) ?? (n === "request.json" ? read(b.request) : undefined),
    write: async () => {},
    size: async () => undefined,
  };
  await fx.tree.prepare(JSON.parse(readFileSync(b.request, "utf8")).head);
  return { steps: new DoctrineSteps(fx, { files }), fx, root: fx.tree.root() };
}

/** A turn of the example's model script, and the script itself. */
export type ScriptTurn = {
  toolCalls?: { tool: string; input: Record<string, unknown> }[];
  output?: unknown;
};
export type ModelScript = { agents: Record<string, ScriptTurn[]> };

/** The example's model script, edited, written next to the run directory; its path. */
export function editedScript(
  b: Pick<BuiltReview, "runDir">,
  edit: (s: ModelScript) => void,
): string {
  const s = parseYaml(readFileSync(REVIEW_SCRIPT, "utf8")) as ModelScript;
  edit(s);
  const file = join(b.runDir, "..", "model-script.yaml");
  writeFileSync(file, stringifyYaml(s));
  return file;
}
