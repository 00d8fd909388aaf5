/**
 * `terfyn fmt`: one layout for `.agent` files, comments kept, never a change of meaning, the
 * same result twice; --check for CI; a file that does not parse left as it is.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatAgentText, sameContent } from "../src/core/language/format.ts";
import { runTerfyn } from "./helpers/cli.ts";

const MESSY = `

// header comment
defaults { model "mock/gpt-4"   maxTurns 8 }
tool workspace {  }
agent   Implementer{
input CodingState
      output CodingState   // trailing
        instructions """
          Be careful.
            Indented line.
          """


  grants {

    tool.workspace.read_file
       tool.workspace.write_file requires approval
    // a comment before the close

  }
}
workflow W( input : CodingState )->CodingState
effects { workspace.read , workspace.write }
{
  state=input
  while ! state.approved limit 3 {
      x = Implementer( state )
      state = x
  }
  return state
}
`;

const FORMATTED = `// header comment
defaults { model "mock/gpt-4" maxTurns 8 }
tool workspace {}
agent Implementer {
  input CodingState
  output CodingState // trailing
  instructions """
    Be careful.
      Indented line.
    """

  grants {
    tool.workspace.read_file
    tool.workspace.write_file requires approval
    // a comment before the close
  }
}
workflow W(input: CodingState) -> CodingState
effects { workspace.read, workspace.write }
{
  state = input
  while !state.approved limit 3 {
    x = Implementer(state)
    state = x
  }
  return state
}
`;

const format = (text: string) => {
  const r = formatAgentText("main.agent", text);
  if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join("; "));
  return r.text;
};

/** Every .agent file in the repository (examples, test corpora), as git lists them. */
const repositoryAgentFiles = () =>
  execFileSync("git", ["ls-files", "-z", "*.agent"], { encoding: "utf8" })
    .split("\0")
    .filter((p) => p !== "");

describe("the .agent formatter", () => {
  it("lays a file out one way: indentation by braces, one space between words, comments and line breaks kept", () => {
    expect(format(MESSY)).toBe(FORMATTED);
    expect(format(FORMATTED)).toBe(FORMATTED);
    expect(sameContent(MESSY, FORMATTED)).toBe(true);
  });

  it('a `"""` string moves with its line only when its value stays the same', () => {
    // Text right after the opening quotes is not indented: moving the other lines would
    // change what they keep of their indentation.
    const text = 'agent A {\n      instructions """one\n        two\n        """\n}\n';
    const out = format(text);
    expect(out).toBe('agent A {\n  instructions """one\n        two\n        """\n}\n');
    expect(sameContent(text, out)).toBe(true);
    const moved = 'agent A {\n      instructions """\n        one\n        two\n        """\n}\n';
    expect(format(moved)).toBe('agent A {\n  instructions """\n    one\n    two\n    """\n}\n');
  });

  it("keeps CRLF line ends and drops blank lines at the start, after `{` and before `}`", () => {
    expect(format('\r\n\r\nagent A {\r\n\r\n  model "x"\r\n\r\n}\r\n')).toBe(
      'agent A {\r\n  model "x"\r\n}\r\n',
    );
  });

  it("sameContent tells a changed token or comment from a layout change", () => {
    expect(sameContent('agent A { model "x" }', 'agent A {\n  model "x"\n}\n')).toBe(true);
    expect(sameContent('agent A { model "x" }', 'agent A { model "y" }')).toBe(false);
    expect(sameContent("agent A {} // a", "agent A {} // b")).toBe(false);
  });

  it("a file that does not parse is not formatted: its errors say why", () => {
    const r = formatAgentText("main.agent", 'agent A {\n model "x"\n');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.diagnostics.map((d) => d.code)).toEqual(["TF1010"]);
  });

  it("is idempotent and keeps every token and comment on every .agent file in the repository", () => {
    const files = repositoryAgentFiles();
    expect(files.length).toBeGreaterThan(10);
    let formatted = 0;
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      const r = formatAgentText(file, text);
      if (!r.ok) continue; // the invalid corpus: left as it is
      formatted++;
      expect(sameContent(text, r.text), file).toBe(true);
      expect(format(r.text), file).toBe(r.text);
    }
    expect(formatted).toBeGreaterThan(10);
  });

  it("property: a file with its spaces and indentation scrambled formats to the same text", () => {
    const sources = repositoryAgentFiles()
      .map((f) => readFileSync(f, "utf8"))
      .filter((t) => formatAgentText("x.agent", t).ok && !t.includes('"""'));
    expect(sources.length).toBeGreaterThan(5);
    fc.assert(
      fc.property(
        fc.constantFrom(...sources),
        fc.array(fc.constantFrom("", " ", "  ", "\t", "    "), { minLength: 1, maxLength: 50 }),
        (source, pads) => {
          const expected = format(source);
          // Re-pad every run of spaces between tokens and every indentation (never inside a
          // string or a comment: those lines are left alone).
          let n = 0;
          const scrambled = expected
            .split("\n")
            .map((line) =>
              /"|\/\//.test(line)
                ? line
                : line
                    .replace(/^ */, () => pads[n++ % pads.length] ?? "")
                    .replace(/ +/g, () => ` ${pads[n++ % pads.length] ?? ""}`),
            )
            .join("\n");
          expect(format(scrambled)).toBe(expected);
        },
      ),
      { numRuns: 200, seed: 42 },
    );
  });
});

describe("terfyn fmt", () => {
  const dir = () => mkdtempSync(join(tmpdir(), "terfyn-fmt-"));

  it("--check lists what is not formatted and exits 1; without it, formats in place; a broken file is left as it is", async () => {
    const d = dir();
    writeFileSync(
      join(d, "terfyn.yaml"),
      "apiVersion: terfyn.dev/v1\nkind: Project\nmetadata: { name: f }\nspec: {}\n",
    );
    writeFileSync(join(d, "messy.agent"), MESSY);
    writeFileSync(
      join(d, "ok.agent"),
      FORMATTED.replace(/Implementer/g, "Other").replace("workflow W", "workflow V"),
    );
    writeFileSync(join(d, "broken.agent"), 'agent B {\n model "x"\n');
    let r = await runTerfyn(["fmt", "--check"], d);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("messy.agent\n");
    expect(r.stderr).toContain("broken.agent: not formatted (it does not parse)");
    expect(readFileSync(join(d, "messy.agent"), "utf8")).toBe(MESSY);
    r = await runTerfyn(["fmt"], d);
    expect(r.stdout).toBe("formatted messy.agent\n");
    expect(r.code).toBe(1); // broken.agent
    expect(readFileSync(join(d, "messy.agent"), "utf8")).toBe(FORMATTED);
    expect(readFileSync(join(d, "broken.agent"), "utf8")).toBe('agent B {\n model "x"\n');
    r = await runTerfyn(["fmt", "--check", "messy.agent", "ok.agent"], d);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("0 files not formatted, 2 files formatted");
  });

  it("`-` formats standard input to standard output; a file that is not .agent is a usage error", async () => {
    const d = dir();
    const r = await runTerfyn(["fmt", "-"], d, {}, MESSY);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(FORMATTED);
    const bad = await runTerfyn(["fmt", "notes.md"], d);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("notes.md is not an .agent file");
    const help = await runTerfyn(["fmt", "--help"], d);
    expect(help.stdout).toContain("Usage: terfyn fmt");
  });
});
