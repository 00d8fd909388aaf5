/**
 * Fail closed at the front doors: where no sandbox can be made (here: no bwrap on PATH), `terfyn
 * run` of a workflow that executes code and `terfyn review` refuse before anything runs, saying
 * what to install; `--unconfined` runs, and says so first.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EXAMPLE as REVIEW_EXAMPLE } from "./helpers/app-runner.ts";
import { startAppServer } from "./helpers/app-server.ts";
import { runTerfyn } from "./helpers/cli.ts";
import { EXAMPLE, exampleRunArgs } from "./helpers/example-project.ts";
import { buildReviewExample, reviewStartArgs } from "./helpers/review-run.ts";

/** A PATH on which there is no bwrap (nor anything else). */
const NO_BWRAP = { PATH: "/nonexistent-terfyn-bin" };

function example() {
  const base = mkdtempSync(join(tmpdir(), "terfyn-front-doors-"));
  const dir = join(base, "p");
  cpSync(EXAMPLE, dir, { recursive: true });
  rmSync(join(dir, ".terfyn"), { recursive: true, force: true });
  const ws = join(base, "ws");
  mkdirSync(ws);
  const args = exampleRunArgs(dir, join(base, "run"));
  return { base, dir, ws, args };
}

/** A model script that exists: the App checks TERFYN_MODEL_SCRIPT at start. */
const MODEL_SCRIPT = join(REVIEW_EXAMPLE, "model-script.yaml");

describe("no sandbox, no execution", () => {
  it("terfyn run refuses a workflow whose agents run tests, naming bubblewrap; nothing runs", async () => {
    const { ws, args, base } = example();
    const r = await runTerfyn(args, base, {
      ...NO_BWRAP,
      TERFYN_WORKSPACE_ROOT: ws,
      TERFYN_WORKSPACE_TEST_COMMAND: "touch ran",
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/run_tests executes code, and no sandbox can be made here/);
    expect(r.stderr).toMatch(/apt-get install bubblewrap/);
    expect(r.stderr).not.toMatch(/internal error|at .*\.ts:\d+/);
    expect(existsSync(join(ws, "ran"))).toBe(false);
    expect(existsSync(join(base, "run"))).toBe(false);
  });

  it("terfyn run --unconfined runs, and its first line says UNCONFINED", async () => {
    const { ws, args, base } = example();
    const r = await runTerfyn([...args, "--unconfined"], base, {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      TERFYN_WORKSPACE_ROOT: ws,
      TERFYN_WORKSPACE_TEST_COMMAND: "true",
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.split("\n")[0]).toMatch(/^terfyn: UNCONFINED/);
    // The run's record says it too, first.
    const shown = await runTerfyn(["runs", "show", join(base, "run")], base);
    expect(shown.stdout.split("\n")[0]).toMatch(/^UNCONFINED: /);
    const confined = example();
    const ok = await runTerfyn(confined.args, confined.base, {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      TERFYN_WORKSPACE_ROOT: confined.ws,
      TERFYN_WORKSPACE_TEST_COMMAND: "true",
    });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).not.toContain("UNCONFINED");
    const plain = await runTerfyn(["runs", "show", join(confined.base, "run")], confined.base);
    expect(plain.stdout).not.toContain("UNCONFINED");
  });

  it("terfyn review refuses to start, naming bubblewrap; no run directory is made", async () => {
    const b = buildReviewExample("terfyn-front-doors-review-");
    const r = await runTerfyn(reviewStartArgs(b), b.repo, NO_BWRAP);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/bubblewrap \(bwrap\) is not installed/);
    expect(r.stderr).toMatch(/apt-get install bubblewrap/);
    expect(r.stderr).not.toMatch(/internal error/);
    expect(existsSync(b.runDir)).toBe(false);
  });

  it("the App does not start as a runner without a sandbox, naming bubblewrap", () => {
    const r = startAppServer({ ...NO_BWRAP, TERFYN_MODEL_SCRIPT: MODEL_SCRIPT });
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/terfyn app: bubblewrap \(bwrap\) is not installed/);
    expect(r.stderr).toMatch(/never runs a repository's commands unconfined/);
    expect(r.stderr).not.toMatch(/internal error|at .*\.ts:\d+/);
  }, 120_000);

  it("the App does not start with its runs directory where every sandbox would show it", () => {
    const r = startAppServer({
      TERFYN_MODEL_SCRIPT: MODEL_SCRIPT,
      TERFYN_APP_RUNS_DIR: "/opt/terfyn-app-runs",
    });
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(
      /terfyn app: the runs directory \/opt\/terfyn-app-runs is under \/opt, which every sandbox shows read-only/,
    );
    expect(existsSync("/opt/terfyn-app-runs")).toBe(false);
  }, 120_000);
});
