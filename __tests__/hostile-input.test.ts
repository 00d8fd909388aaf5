/**
 * Hostile and broken input through the CLI (issue 13, items 6-8): untrusted text never drives
 * the terminal, bad input is a located message with exit 1 and never "internal error", and
 * `terfyn test` on a project that does not validate fails visibly. Real files in temp dirs;
 * what only shows in a real process (Node warnings, a closed pipe) runs the binary.
 */
import { spawn } from "node:child_process";
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runTerfyn } from "./helpers/cli.ts";
import { copyExample, edit, grant, write } from "./helpers/example-project.ts";

const repo = join(import.meta.dirname, "..");
const ESC = "\u001b";
const BEL = "\u0007";
/** Any character that a terminal would act on rather than show (tab and newline aside). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** The real binary from source (dist/ may lag behind), as a user runs it. */
function runBinary(
  args: string[],
  cwd: string,
  options: { closeStdout?: boolean } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const bin = join(repo, "bin", "terfyn.mjs");
  const env = { ...process.env, TERFYN_FROM_SOURCE: "1", NO_COLOR: "1" };
  const child = spawn(process.execPath, [bin, ...args], { cwd, env });
  let stdout = "";
  let stderr = "";
  // Like `| head -0`: the reader is gone before the first write, so every write hits EPIPE.
  if (options.closeStdout) child.stdout.destroy();
  else
    child.stdout.on("data", (c) => {
      stdout += c;
    });
  child.stderr.on("data", (c) => {
    stderr += c;
  });
  return new Promise((done) => child.on("close", (code) => done({ code, stdout, stderr })));
}

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
    // The name itself is a finding (TF2010), shown escaped: the file is never read or echoed raw.
    expect(r.stdout).toContain("odd\\u001b[2J.agent:1:1: error TF2010");
  });

  it("escapes control characters in one-line errors that quote user text", async () => {
    const r = await runTerfyn(["validate", "--project", `no${ESC}]0;x${BEL}dir`], repo);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(RAW_CONTROL);
    expect(r.stderr).toContain("no\\x1b]0;x\\x07dir");
  });

  it("escapes control characters in the project path of summary lines", async () => {
    const parent = mkdtempSync(join(tmpdir(), "terfyn-odd-"));
    const name = `proj${ESC}]0;PWNED${BEL}`;
    cpSync(copyExample(), join(parent, name), { recursive: true });
    const ok = await runTerfyn(["validate", "--project", name], parent);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("proj\\x1b]0;PWNED\\x07: project implement-review-loop is valid");
    edit(join(parent, name), "main.agent", 'model "mock/gpt-4"', 'model "nope/x"');
    for (const command of ["validate", "plan", "test", "apply"]) {
      const extra = command === "apply" ? ["--auto-approve"] : [];
      const r = await runTerfyn([command, "--project", name, ...extra], parent);
      expect(r.code, command).toBe(1);
      expect(r.stdout + r.stderr, command).toContain("proj\\x1b]0;PWNED\\x07");
      expect(r.stdout + r.stderr, command).not.toMatch(RAW_CONTROL);
    }
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

/** A project copy, a sandbox root and a fresh run directory path for `terfyn run`. */
function runSetup() {
  const dir = copyExample();
  const ws = mkdtempSync(join(tmpdir(), "terfyn-ws-"));
  return {
    dir,
    runDir: join(mkdtempSync(join(tmpdir(), "terfyn-run-")), "run"),
    env: { TERFYN_WORKSPACE_ROOT: ws, TERFYN_WORKSPACE_TEST_COMMAND: "true" },
  };
}

function runWith(s: ReturnType<typeof runSetup>, extra: string[]) {
  return runTerfyn(
    [
      "run",
      "workflow/ImplementAndReview",
      "--input-file",
      "fixtures/task.json",
      "--run-dir",
      s.runDir,
      ...extra,
    ],
    s.dir,
    s.env,
  );
}

/** exit 1, one located line naming the file, no "internal error", no stack trace. */
function expectUserMessage(r: { code: number; stderr: string }, located: RegExp): void {
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(located);
  expect(r.stderr).not.toContain("internal error");
  expect(r.stderr).not.toMatch(/\n\s+at /);
}

describe("bad YAML is a located message", () => {
  const scripts: [string, string, RegExp][] = [
    [
      "an alias bomb",
      `a: &a [x, x, x, x, x, x, x, x, x]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: [*d, *d, *d, *d, *d, *d, *d, *d, *d]
agents: {}
`,
      /script\.yaml:1:1: anchors and aliases expand this document too far/,
    ],
    [
      "an unknown alias",
      "agents:\n  Implementer: *nope\n",
      /script\.yaml:2:16: unknown alias `\*nope`/,
    ],
    [
      "an alias of an enclosing value",
      "agents:\n  Implementer: &x\n    - output: *x\n",
      /script\.yaml:1:1: anchors and aliases make this document contain itself/,
    ],
    [
      "a mapping key that is a list",
      "agents:\n  ? [Implementer, Reviewer]\n  : []\n",
      /script\.yaml:2:5: a mapping key is itself a mapping or a list/,
    ],
    [
      "nesting deeper than any turn needs",
      `agents:\n  Implementer:\n    - output: ${"[".repeat(300)}${"]".repeat(300)}\n`,
      /script\.yaml:1:1: the document is nested too deeply/,
    ],
  ];
  for (const [what, yaml, located] of scripts) {
    it(`refuses a model script with ${what} before the run starts`, async () => {
      const s = runSetup();
      write(s.dir, "fixtures/script.yaml", yaml);
      const r = await runWith(s, ["--model-script", "fixtures/script.yaml"]);
      expectUserMessage(r, located);
      expect(existsSync(s.runDir)).toBe(false);
    });
  }

  it("reports a resource key that is a collection at the key, with no Node warning on stderr", async () => {
    const dir = copyExample();
    write(
      dir,
      "odd-key.yaml",
      "apiVersion: terfyn.dev/v1\nkind: Schema\nmetadata: { name: Odd }\nspec:\n  type: object\n  properties:\n    ? [a, b]\n    : { type: string }\n",
    );
    const r = await runBinary(["validate", "--project", "."], dir);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      "odd-key.yaml:7:7: error TF2001: YAML: a mapping key is itself a mapping or a list",
    );
    expect(r.stderr).toBe("");
  });
});

describe("bad run input is a located message, and leaves the run as it was", () => {
  it("refuses an input file nested deeper than any workflow state, naming the file", async () => {
    const s = runSetup();
    // `extra` is not in CodingState's schema, so nothing but the depth check looks at it.
    write(
      s.dir,
      "deep.json",
      `{"task": "t", "approved": false, "extra": ${"[".repeat(100_000)}${"]".repeat(100_000)}}`,
    );
    const r = await runTerfyn(
      ["run", "workflow/ImplementAndReview", "--input-file", "deep.json", "--run-dir", s.runDir],
      s.dir,
      s.env,
    );
    expectUserMessage(r, /input file deep\.json nests deeper than 200 levels/);
    expect(existsSync(s.runDir)).toBe(false);
  });

  it("refuses a --run-dir that is a file, or inside one", async () => {
    const s = runSetup();
    write(s.dir, "taken", "");
    for (const runDir of ["taken", "taken/run"]) {
      const r = await runTerfyn(
        [
          "run",
          "workflow/ImplementAndReview",
          "--input-file",
          "fixtures/task.json",
          "--run-dir",
          runDir,
        ],
        s.dir,
        s.env,
      );
      expectUserMessage(r, /taken(\/run)? is a file, or inside one: .*choose another --run-dir/);
    }
  });

  /** A run paused at a gated write_file, ready for approve and resume. */
  async function pausedRun() {
    const s = runSetup();
    edit(
      s.dir,
      "main.agent",
      /^ {4}tool\.workspace\.write_file$/m,
      "    tool.workspace.write_file requires approval",
    );
    const r = await runWith(s, ["--model-script", "fixtures/model-script.yaml"]);
    expect(r.code).toBe(2);
    const state = () => JSON.parse(readFileSync(join(s.runDir, "state.json"), "utf8"));
    return { ...s, state, hash: state().awaiting.hash as string };
  }

  for (const [what, line] of [
    ["null", "null"],
    ["a number", "42"],
    ["a list", "[1,2]"],
    ["an object without a type", '{"step":"x"}'],
    ["a model turn without a response", '{"type":"model.turn","step":"s","turn":0}'],
  ] as const) {
    it(`refuses to resume from a journal with ${what} on a line, naming the line; the run is untouched`, async () => {
      const p = await pausedRun();
      const journal = join(p.runDir, "journal.jsonl");
      const lines = readFileSync(journal, "utf8").split("\n").length;
      appendFileSync(journal, `${line}\n{"type":"run.resume","ir_hash":"x"}\n`);
      const before = readFileSync(join(p.runDir, "state.json"), "utf8");
      const r = await runTerfyn(["run", "--resume", p.runDir], p.dir, p.env);
      expectUserMessage(r, new RegExp(`journal\\.jsonl:${lines} .*the journal is damaged`));
      expect(readFileSync(join(p.runDir, "state.json"), "utf8")).toBe(before);
      const show = await runTerfyn(["runs", "show", p.runDir], p.dir, p.env);
      expectUserMessage(show, new RegExp(`journal\\.jsonl:${lines} `));
    });
  }

  for (const [what, line] of [
    ["null", "null"],
    ["a string", '"sha256:abc"'],
    ["an object without a hash", '{"by":"me"}'],
  ] as const) {
    it(`refuses to resume with ${what} in approvals.jsonl, naming the line; the run is untouched`, async () => {
      const p = await pausedRun();
      writeFileSync(join(p.runDir, "approvals.jsonl"), `${line}\n`);
      const before = readFileSync(join(p.runDir, "state.json"), "utf8");
      const r = await runTerfyn(["run", "--resume", p.runDir], p.dir, p.env);
      expectUserMessage(r, /approvals\.jsonl:1 is not an approval record.*terfyn approve/);
      expect(readFileSync(join(p.runDir, "state.json"), "utf8")).toBe(before);
      expect(p.state().status).toBe("awaiting-approval");
    });
  }

  it("refuses to resume when input.json is not JSON", async () => {
    const p = await pausedRun();
    writeFileSync(join(p.runDir, "input.json"), "{ not json");
    const r = await runTerfyn(["run", "--resume", p.runDir], p.dir, p.env);
    expectUserMessage(r, /input\.json is not valid JSON/);
  });
});

describe("terfyn test on a project that does not validate", () => {
  it("counts no pass (SKIP), fails every error, ends with '0 passed, N failed' and records it all in JUnit", async () => {
    const dir = copyExample();
    edit(dir, "main.agent", 'model "mock/gpt-4"', 'model "nope/x"');
    const r = await runTerfyn(["test", "--project", ".", "--junit", "out/junit.xml"], dir);
    expect(r.code).toBe(1);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines.at(-1)).toBe("0 passed, 1 failed");
    expect(lines.filter((l) => l.startsWith("SKIP capabilities: "))).toHaveLength(4);
    expect(lines.filter((l) => /^FAIL validate: main\.agent:8:9: TF3007: /.test(l))).toHaveLength(
      1,
    );
    expect(r.stdout).not.toContain("PASS");
    const xml = readFileSync(join(dir, "out", "junit.xml"), "utf8");
    expect(xml).toMatch(/<testsuites tests="5" failures="1" errors="0" skipped="4"/);
    expect(xml).toContain('<testsuite name="terfyn validate"');
    expect(xml).toMatch(
      /<testcase classname="terfyn validate" name="main\.agent:8:9: TF3007" file="main\.agent:8:9">\s*<failure message="[^"]*nope[^"]*" type="TF3007"/,
    );
  });

  it("still fails the assertion a forbidden grant breaks, alongside the policy error", async () => {
    const dir = copyExample();
    grant(dir, "Reviewer", "tool.workspace.write_file");
    const r = await runTerfyn(["test", "--project", "."], dir);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /^FAIL capabilities: forbidEffect \{ agent: Reviewer, effect: workspace\.write \}: /m,
    );
    expect(r.stdout).toMatch(/^FAIL validate: main\.agent:\d+:5: TF5006: /m);
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("0 passed, 2 failed");
  });
});

describe("--junit that cannot be written is a message", () => {
  for (const [what, path] of [
    ["a directory", "out"],
    ["below a file", "taken/junit.xml"],
  ] as const) {
    it(`names a --junit path that is ${what}`, async () => {
      const dir = copyExample();
      mkdirSync(join(dir, "out"));
      write(dir, "taken", "");
      const r = await runTerfyn(["test", "--project", ".", "--junit", path], dir);
      expectUserMessage(
        r,
        /cannot write the JUnit report to .*(out|taken\/junit\.xml): .*--junit takes the path of a file/,
      );
    });
  }
});

describe("a closed pipe", () => {
  it("ends `terfyn plan | head` quietly: no EPIPE, no stack trace, the command's own exit code", async () => {
    const dir = copyExample();
    const r = await runBinary(["plan", "--project", "."], dir, { closeStdout: true });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });
});
