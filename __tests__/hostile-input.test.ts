/**
 * Hostile and broken input through the CLI (issue 13, items 6-8): untrusted text never drives
 * the terminal, bad input is a located message with exit 1 and never "internal error", and
 * `terfyn test` on a project that does not validate fails visibly. Real files in temp dirs;
 * what only shows in a real process (Node warnings, a closed pipe) runs the binary.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runTerfyn } from "./helpers/cli.ts";
import { copyExample, write } from "./helpers/example-project.ts";

const repo = join(import.meta.dirname, "..");
const ESC = "\u001b";
const BEL = "\u0007";
/** Any character that a terminal would act on rather than show (tab and newline aside). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

const codes = (stdout: string): string[] =>
  (JSON.parse(stdout) as { diagnostics: { code: string }[] }).diagnostics.map((d) => d.code);

describe("untrusted text never drives the terminal", () => {
  it("escapes ANSI and OSC sequences in echoed source lines, and keeps the caret under the span", async () => {
    const dir = copyExample();
    // OSC 0 retitles the window; CSI 2J clears the screen.
    write(dir, "evil.agent", `agent X${ESC}]0;PWNED${BEL} {\n  bogus${ESC}[2J 1\n}\n`);
    const r = await runTerfyn(["validate", "--project", "."], dir);
    expect(r.code).toBe(1);
    expect(r.stdout).not.toMatch(RAW_CONTROL);
    expect(r.stdout).toContain("agent X\\x1b]0;PWNED\\x07 {");
    // The `]` after the ESC is column 9 of the raw line; shown after the 4-wide `\x1b`.
    const block = r.stdout.split("\n\n").find((b) => b.startsWith("evil.agent:1:9:")) ?? "";
    const [, shown, caret] = block.split("\n");
    expect(shown).toBeDefined();
    const caretAt = (caret ?? "").indexOf("^") - (caret ?? "").indexOf("|");
    expect((shown ?? "").slice((shown ?? "").indexOf("|") + caretAt)[0]).toBe("]");
  });

  it("escapes control characters in quoted names and in file paths", async () => {
    const dir = copyExample();
    write(
      dir,
      "bad-kind.yaml",
      'apiVersion: terfyn.dev/v1\nkind: "Tool\\e]0;PWNED\\a"\nmetadata: { name: x }\n',
    );
    write(dir, `odd${ESC}[2J.agent`, "agent {\n");
    const r = await runTerfyn(["validate", "--project", "."], dir);
    expect(r.code).toBe(1);
    expect(r.stdout).not.toMatch(RAW_CONTROL);
    expect(r.stdout).toContain("unknown kind `Tool\\x1b]0;PWNED\\x07`");
    expect(r.stdout).toContain("odd\\x1b[2J.agent:1:");
  });

  it("escapes control characters in one-line errors that quote user text", async () => {
    const r = await runTerfyn(["validate", "--project", `no${ESC}]0;x${BEL}dir`], repo);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(RAW_CONTROL);
    expect(r.stderr).toContain("no\\x1b]0;x\\x07dir");
  });

  it("shows the first 20 problems of a file and 'and N more', while --format json lists all", async () => {
    const dir = copyExample();
    write(dir, "many.agent", `${"; ".repeat(50)}\n`);
    const r = await runTerfyn(["validate", "--project", "."], dir);
    expect(r.code).toBe(1);
    expect(r.stdout.match(/^many\.agent:\d+:\d+: error/gm)).toHaveLength(20);
    expect(r.stdout).toContain("many.agent: and 30 more in this file");
    expect(r.stdout).toMatch(/50 errors\n$/);
    const json = await runTerfyn(["validate", "--project", ".", "--format", "json"], dir);
    expect(codes(json.stdout).filter((c) => c === "TF1001")).toHaveLength(50);
  });

  it("escapes control characters in run progress that quotes what the model asked for", async () => {
    const dir = copyExample();
    const ws = mkdtempSync(join(tmpdir(), "terfyn-ws-"));
    write(
      dir,
      "fixtures/evil-script.yaml",
      `agents:
  Implementer:
    - toolCalls: [ { tool: "tool.workspace.write_file\\e]0;PWNED\\a", input: {} } ]
    - output: { task: t, approved: false }
  Reviewer:
    - output: { task: t, approved: true }
`,
    );
    const r = await runTerfyn(
      [
        "run",
        "workflow/ImplementAndReview",
        "--input-file",
        "fixtures/task.json",
        "--model-script",
        "fixtures/evil-script.yaml",
        "--run-dir",
        join(mkdtempSync(join(tmpdir(), "terfyn-run-")), "run"),
      ],
      dir,
      { TERFYN_WORKSPACE_ROOT: ws, TERFYN_WORKSPACE_TEST_COMMAND: "true" },
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      "denied: Implementer -> tool.workspace.write_file\\x1b]0;PWNED\\x07",
    );
    expect(r.stderr).not.toMatch(RAW_CONTROL);
  });

  it("reports a binary file (NUL bytes) once, at the first NUL, not once per byte", async () => {
    const dir = copyExample();
    // Valid UTF-8, so only the NUL tells it is binary: 300 junk tokens around it.
    write(dir, "blob.agent", `${"#@;".repeat(100)}\u0000${"\u0001\u0002;".repeat(100)}`);
    const r = await runTerfyn(["validate", "--project", ".", "--format", "json"], dir);
    expect(r.code).toBe(1);
    const ds = (
      JSON.parse(r.stdout) as { diagnostics: { code: string; file: string; column: number }[] }
    ).diagnostics.filter((d) => d.file === "blob.agent");
    expect(ds.map((d) => [d.code, d.column])).toEqual([["TF2009", 301]]);
  });

  it("reports a file that is not UTF-8 once (Latin-1 text, random bytes)", async () => {
    const dir = copyExample();
    writeFileSync(
      join(dir, "latin1.yaml"),
      Buffer.from("kind: caf\xe9 \xff\xfe\xfd ;;;\n", "latin1"),
    );
    writeFileSync(
      join(dir, "noise.agent"),
      Buffer.from(Array.from({ length: 4000 }, (_, i) => 0x80 + ((i * 37) % 0x7f))),
    );
    const r = await runTerfyn(["validate", "--project", ".", "--format", "json"], dir);
    expect(r.code).toBe(1);
    const ds = (
      JSON.parse(r.stdout) as { diagnostics: { code: string; file: string; line: number }[] }
    ).diagnostics;
    expect(ds.map((d) => [d.file, d.code, d.line])).toEqual([
      ["latin1.yaml", "TF2009", 1],
      ["noise.agent", "TF2009", 1],
    ]);
    const text = await runTerfyn(["validate", "--project", "."], dir);
    expect(text.stdout).toContain(
      "noise.agent:1:1: error TF2009: this file is not valid UTF-8 text",
    );
    expect(text.stdout).toMatch(/2 errors\n$/);
  });
});
