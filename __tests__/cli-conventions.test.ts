/**
 * CLI conventions (issue 23, item 6): `-` reads standard input where a file is read
 * (`--input-file -`), and `--no-color` anywhere on the line is `NO_COLOR=1` for every command.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runTerfyn } from "./helpers/cli.ts";
import { copyExample, exampleRunArgs } from "./helpers/example-project.ts";

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
