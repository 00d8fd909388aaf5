/**
 * CLI conventions (issue 23, item 6): `-` reads standard input wherever a file is read
 * (`run --input-file -` and `--model-script -`, `plan --state -`, `review --request -` and
 * `--model-script -`), a script or request read so is kept in the run directory for `--resume`,
 * a flag naming a directory refuses `-`, and two flags cannot both read standard input; and
 * `--no-color` anywhere on the line is `NO_COLOR=1` for every command. Through the real CLI.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runTerfyn } from "./helpers/cli.ts";
import { copyExample, edit, exampleRunArgs, grant } from "./helpers/example-project.ts";
import {
  approveAwaited,
  buildReviewExample,
  REVIEW_SCRIPT,
  reviewStartArgs,
  reviewState,
} from "./helpers/review-run.ts";

const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));

/** The example with an `approve` statement before its loop: a run pauses before any model turn. */
function gatedExample(): { dir: string; env: Record<string, string> } {
  const dir = copyExample();
  edit(dir, "main.agent", "  state = input\n", '  state = input\n  approve state "start"\n');
  const env = {
    TERFYN_WORKSPACE_ROOT: tmp("terfyn-ws-"),
    TERFYN_WORKSPACE_TEST_COMMAND: "grep -q 'a + b' add.go",
  };
  return { dir, env };
}

/** Approves what the run in `runDir` awaits, and resumes it with nothing on standard input. */
async function approveThenResume(dir: string, runDir: string, env: Record<string, string>) {
  const state = JSON.parse(readFileSync(join(runDir, "state.json"), "utf8"));
  expect(state.status).toBe("awaiting-approval");
  const ok = await runTerfyn(["approve", "--run", runDir, "--hash", state.awaiting.hash], dir);
  expect(ok.code, ok.stderr).toBe(0);
  return runTerfyn(["run", "--resume", runDir], dir, env);
}

/** An option's text in a command's --help: its line and the indented lines under it. */
function optionHelp(help: string, flag: string): string {
  const at = help.indexOf(`\n  ${flag} `);
  expect(at, `${flag} in the help`).toBeGreaterThanOrEqual(0);
  const next = help.slice(at + 1).search(/\n {2}-/);
  return help.slice(at + 1, next < 0 ? undefined : at + 1 + next);
}

const ESC = "\u001b[";

describe("CLI conventions", () => {
  it("--input-file - reads the workflow's input from standard input, as the file would give it", async () => {
    const dir = copyExample();
    const fromFile = await runTerfyn(
      exampleRunArgs(dir, mkdtempSync(join(tmpdir(), "terfyn-run-"))),
      dir,
    );
    const args = exampleRunArgs(dir, mkdtempSync(join(tmpdir(), "terfyn-run-")));
    args[args.indexOf("--input-file") + 1] = "-";
    const task = readFileSync(join(dir, "fixtures", "task.json"), "utf8");
    const fromStdin = await runTerfyn(args, dir, {}, task);
    expect(fromStdin.code, fromStdin.stderr).toBe(fromFile.code);
    expect(fromStdin.stdout.split("\n").at(-2)).toBe(fromFile.stdout.split("\n").at(-2));
    // Not JSON on standard input: the same message a file gets, naming standard input's flag.
    const bad = await runTerfyn(args, dir, {}, "{ not json");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("input file - is not valid JSON");
    // No standard input to read at all.
    const none = await runTerfyn(args, dir);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("--input-file -: there is no standard input to read");
  });

  it("--model-script - reads the script from standard input and keeps a copy, so --resume needs no standard input", async () => {
    const { dir, env } = gatedExample();
    const script = readFileSync(join(dir, "fixtures", "model-script.yaml"), "utf8");
    // From the file, to the gate and on: what the run gives.
    const fromFileDir = tmp("terfyn-run-");
    const fromFile = await runTerfyn(exampleRunArgs(dir, fromFileDir), dir, env);
    expect(fromFile.code, fromFile.stderr).toBe(2);
    const fileEnd = await approveThenResume(dir, fromFileDir, env);
    expect(fileEnd.code, fileEnd.stderr).toBe(0);

    const runDir = tmp("terfyn-run-");
    const args = exampleRunArgs(dir, runDir);
    args[args.indexOf("--model-script") + 1] = "-";
    const first = await runTerfyn(args, dir, env, script);
    expect(first.code, first.stderr).toBe(2);
    const state = JSON.parse(readFileSync(join(runDir, "state.json"), "utf8"));
    // The run records its own copy of the script, byte for byte, and drives every agent by it.
    expect(state.model_script).toBe(join(runDir, "model-script.yaml"));
    expect(readFileSync(state.model_script, "utf8")).toBe(script);
    expect(state.force_script).toBe(true);
    // Resumed with nothing on standard input (runTerfyn gives it none): the copy plays the agents.
    const end = await approveThenResume(dir, runDir, env);
    expect(end.code, end.stderr).toBe(0);
    expect(JSON.parse(end.stdout)).toEqual(JSON.parse(fileEnd.stdout));
    expect(JSON.parse(end.stdout).approved).toBe(true);

    // A script that is not a model script is refused before the run starts, naming standard input.
    const badDir = join(tmp("terfyn-run-"), "run");
    const badArgs = exampleRunArgs(dir, badDir);
    badArgs[badArgs.indexOf("--model-script") + 1] = "-";
    const bad = await runTerfyn(badArgs, dir, env, "agents: [not, turns]\n");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("standard input:");
    expect(existsSync(badDir)).toBe(false);
    // And with no standard input at all, it says so.
    const none = await runTerfyn(badArgs, dir, env);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("--model-script -: there is no standard input to read");
  });

  it("--model-script - on --resume drives that session only", async () => {
    const { dir, env } = gatedExample();
    const script = readFileSync(join(dir, "fixtures", "model-script.yaml"), "utf8");
    const runDir = tmp("terfyn-run-");
    const args = exampleRunArgs(dir, runDir).filter((_, i, all) => {
      const flag = all.indexOf("--model-script");
      return i !== flag && i !== flag + 1;
    });
    // Started with no script: the agents' declared model (the mock) would play them.
    const first = await runTerfyn(args, dir, env);
    expect(first.code, first.stderr).toBe(2);
    const state = JSON.parse(readFileSync(join(runDir, "state.json"), "utf8"));
    const ok = await runTerfyn(["approve", "--run", runDir, "--hash", state.awaiting.hash], dir);
    expect(ok.code, ok.stderr).toBe(0);
    const resumed = await runTerfyn(
      ["run", "--resume", runDir, "--model-script", "-"],
      dir,
      env,
      script,
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({
      approved: true,
      feedback: "Add returns a + b; approved",
    });
    expect(
      JSON.parse(readFileSync(join(runDir, "state.json"), "utf8")).model_script,
    ).toBeUndefined();
    expect(existsSync(join(runDir, "model-script.yaml"))).toBe(false);
  });

  it("plan --state - reads the state file from standard input; apply refuses it (it writes the file)", async () => {
    const dir = copyExample();
    const applied = await runTerfyn(["apply", "--project", dir, "--auto-approve"], dir);
    expect(applied.code, applied.stderr).toBe(0);
    const statePath = join(dir, ".terfyn", "state.json");
    const stateText = readFileSync(statePath, "utf8");
    grant(dir, "Reviewer", "tool.workspace.write_file");
    const fromFile = await runTerfyn(["plan", "--project", dir, "--state", statePath], dir);
    const fromStdin = await runTerfyn(
      ["plan", "--project", dir, "--state", "-"],
      dir,
      {},
      stateText,
    );
    expect(fromStdin.code, fromStdin.stderr).toBe(fromFile.code);
    expect(fromStdin.stdout).toBe(fromFile.stdout);
    expect(fromStdin.stdout).toContain("WIDENED");
    // The same plan as JSON, but for where the prior side came from.
    const json = async (state: string, stdin?: string) =>
      JSON.parse(
        (await runTerfyn(["plan", "--project", dir, "--state", state, "--json"], dir, {}, stdin))
          .stdout,
      );
    const a = await json(statePath);
    const b = await json("-", stateText);
    expect(b.prior).toEqual({ source: "state", ref: "-" });
    expect({ ...b, prior: a.prior }).toEqual(a);
    // Not a state file: the state file's message, naming standard input.
    const bad = await runTerfyn(["plan", "--project", dir, "--state", "-"], dir, {}, "{ nope");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("state file standard input is");
    const none = await runTerfyn(["plan", "--project", dir, "--state", "-"], dir);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("--state -: there is no standard input to read");

    const apply = await runTerfyn(
      ["apply", "--project", dir, "--state", "-", "--auto-approve"],
      dir,
      {},
      stateText,
    );
    expect(apply.code).toBe(1);
    expect(apply.stderr).toContain(
      "apply: --state -: apply reads the state file and then writes it",
    );
    expect(readFileSync(statePath, "utf8")).toBe(stateText);
    expect(existsSync(join(dir, "-"))).toBe(false);
  });

  it("review --request - and --model-script -: each kept in the run directory, and --resume needs no standard input", async () => {
    for (const which of ["--request", "--model-script"] as const) {
      const b = buildReviewExample();
      const args = reviewStartArgs(b);
      const stdin = readFileSync(which === "--request" ? b.request : REVIEW_SCRIPT, "utf8");
      args[args.indexOf(which) + 1] = "-";
      const first = await runTerfyn(args, b.repo, {}, stdin);
      expect(first.code, `${which}: ${first.stderr}`).toBe(2);
      expect(reviewState(b.runDir).awaiting.gate).toBe("plan");
      const copy = join(
        b.runDir,
        which === "--request" ? "request.stdin.json" : "model-script.yaml",
      );
      expect(readFileSync(copy, "utf8")).toBe(stdin);
      const config = JSON.parse(readFileSync(join(b.runDir, "run.json"), "utf8"));
      expect(which === "--request" ? config.request : config.modelScript).toBe(copy);
      // On to the next gate, with nothing on standard input: the agents play from the copy.
      expect((await approveAwaited(b)).code).toBe(0);
      const second = await runTerfyn(["review", "--resume", b.runDir], b.repo);
      expect(second.code, `${which}: ${second.stderr}`).toBe(2);
      expect(reviewState(b.runDir).awaiting.gate).toBe("publish");
    }
  });

  it("two flags cannot both read standard input", async () => {
    const { dir, env } = gatedExample();
    const runDir = join(tmp("terfyn-run-"), "run");
    const args = exampleRunArgs(dir, runDir);
    args[args.indexOf("--input-file") + 1] = "-";
    args[args.indexOf("--model-script") + 1] = "-";
    const run = await runTerfyn(args, dir, env, "{}");
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      "run: --input-file - and --model-script - both read standard input, which can be read only once",
    );
    expect(existsSync(runDir)).toBe(false);

    const b = buildReviewExample();
    const review = reviewStartArgs(b, "-");
    review[review.indexOf("--request") + 1] = "-";
    const r = await runTerfyn(review, b.repo, {}, "{}");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("review: --request - and --model-script - both read standard input");
    expect(existsSync(b.runDir)).toBe(false);
  });

  it("a flag that names a directory refuses -, saying what to pass", async () => {
    const cwd = tmp("terfyn-dash-");
    const cases: [string[], string][] = [
      [
        ["validate", "--project", "-"],
        "validate: --project -: --project names a directory (the directory holding terfyn.yaml)",
      ],
      [["plan", "--project", "-"], "plan: --project -: --project names a directory"],
      [
        ["apply", "--project", "-", "--auto-approve"],
        "apply: --project -: --project names a directory",
      ],
      [["test", "--project", "-"], "test: --project -: --project names a directory"],
      [
        ["run", "workflow/X", "--project", "-", "--input-file", "x.json"],
        "run: --project -: --project names a directory",
      ],
      [
        ["run", "workflow/X", "--input-file", "x.json", "--run-dir", "-"],
        "run: --run-dir -: --run-dir names a directory (where the run is kept)",
      ],
      [
        ["run", "--resume", "-"],
        "run: --resume -: --resume names a directory (the run directory to continue)",
      ],
      [["runs", "list", "--project", "-"], "runs list: --project -: --project names a directory"],
      [
        ["runs", "show", "-"],
        "runs show: `-` as RUN_DIR: RUN_DIR names a directory (the run directory to show)",
      ],
      [
        ["approve", "--run", "-", "--hash", `sha256:${"0".repeat(64)}`],
        "approve: --run -: --run names a directory",
      ],
      [
        ["review", "--repo", "-", "--request", "r.json", "--run-dir", "run"],
        "review: --repo -: --repo names a directory (the repository under review)",
      ],
      [
        ["review", "--repo", "repo", "--request", "r.json", "--run-dir", "-"],
        "review: --run-dir -: --run-dir names a directory",
      ],
      [["review", "--resume", "-"], "review: --resume -: --resume names a directory"],
      [
        ["review", "--repo", "repo", "--request", "r.json", "--run-dir", "run", "--prior", "-"],
        "review: --prior -: --prior names a directory (an earlier run's directory)",
      ],
      [["review", "--sweep", "-"], "review: --sweep -: --sweep names a directory"],
      [["review", "--stop", "-"], "review: --stop -: --stop names a directory"],
      [["init", "-"], "init: `-` as DIR: DIR names a directory (where the project is created)"],
    ];
    for (const [args, message] of cases) {
      const r = await runTerfyn(args, cwd, {}, "never read\n");
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stderr, args.join(" ")).toContain(message);
      expect(r.stderr, args.join(" ")).toContain(
        "pass the directory's path (`./-` for a directory named -)",
      );
    }
    // Nothing was created: no project, run or lock in a directory called -.
    expect(readdirSync(cwd)).toEqual([]);
  });

  it("--help says - reads standard input for each flag that accepts it, and docs/cli.md lists them", async () => {
    const help = async (command: string) => (await runTerfyn([command, "--help"], ".")).stdout;
    const accepting: [string, string][] = [
      ["run", "--input-file"],
      ["run", "--model-script"],
      ["plan", "--state"],
      ["review", "--request"],
      ["review", "--model-script"],
    ];
    const doc = readFileSync(join(import.meta.dirname, "..", "docs", "cli.md"), "utf8");
    for (const [command, flag] of accepting) {
      expect(optionHelp(await help(command), flag), `${command} ${flag}`).toMatch(
        /(^|\s)- reads it from standard\s+input/,
      );
      expect(doc, `${command} ${flag}`).toContain(`\`${command} ${flag} -\``);
    }
    // A flag that writes a file, or names a directory, does not claim it.
    expect(optionHelp(await help("apply"), "--state")).not.toContain("standard input");
    expect(optionHelp(await help("run"), "--run-dir")).not.toContain("standard input");
  });

  it("--no-color turns colour off on a terminal, wherever it is on the line", async () => {
    const dir = copyExample();
    const colored = await runTerfyn(["plan", "--project", dir], dir, {}, undefined, true);
    expect(colored.stdout).toContain(ESC);
    for (const args of [
      ["plan", "--project", dir, "--no-color"],
      ["--no-color", "plan", "--project", dir],
    ]) {
      const plain = await runTerfyn(args, dir, {}, undefined, true);
      expect(plain.code, plain.stderr).toBe(colored.code);
      expect(plain.stdout).not.toContain(ESC);
    }
    const help = await runTerfyn(["--help"], dir);
    expect(help.stdout).toContain("--no-color");
  });
});
