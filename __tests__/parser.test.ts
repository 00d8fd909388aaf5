import { describe, expect, it } from "vitest";
import { dedent } from "../src/core/language/lexer.ts";
import { parseAgentFile } from "../src/core/language/parser.ts";
import { SourceText } from "../src/core/source.ts";

function parse(text: string) {
  const source = new SourceText("main.agent", text);
  const result = parseAgentFile(source);
  return { ...result, source };
}

const where = (d: { code: string; span: { line: number; column: number } }) =>
  `${d.code}@${d.span.line}:${d.span.column}`;

describe("parser", () => {
  it("parses the seed's workflow with ranges on every node", () => {
    const { file, diagnostics, source } =
      parse(`workflow ImplementAndReview(input: CodingState) -> CodingState
effects { workspace.read, workspace.write, process.exec }
{
  state = input
  while !state.approved limit 3 {
    implementation = Implementer(state)
    state = Reviewer(implementation)
  }
  return state
}
`);
    expect(diagnostics).toEqual([]);
    const wf = file.decls[0];
    if (wf?.kind !== "workflow") throw new Error("expected a workflow");
    expect(wf.params.map((p) => `${p.name.name}:${p.type.name}`)).toEqual(["input:CodingState"]);
    expect(wf.effects.map((e) => e.name)).toEqual([
      "workspace.read",
      "workspace.write",
      "process.exec",
    ]);
    const loop = wf.body.statements[1];
    if (loop?.kind !== "while") throw new Error("expected a while");
    expect(loop.limit?.value).toBe(3);
    expect(loop.condition.kind).toBe("not");
    expect(source.text.slice(loop.condition.range.start, loop.condition.range.end)).toBe(
      "!state.approved",
    );
    expect(source.span(loop.range)).toMatchObject({ line: 5, column: 3, endLine: 8, endColumn: 4 });
    const call = loop.body.statements[0];
    if (call?.kind !== "assign" || call.value.kind !== "call") throw new Error("expected a call");
    expect(source.text.slice(call.value.range.start, call.value.range.end)).toBe(
      "Implementer(state)",
    );
  });

  it("parses agents with grants, gated grants and all items", () => {
    const { file, diagnostics } = parse(`agent A {
  model "anthropic/claude"
  input S
  output S
  maxTurns 4
  instructions "be \\"careful\\"\\n"
  grants {
    tool.ws.read_file
    tool.ws.write_file requires approval
  }
}`);
    expect(diagnostics).toEqual([]);
    const a = file.decls[0];
    if (a?.kind !== "agent") throw new Error("expected an agent");
    expect(a.instructions?.value).toBe('be "careful"\n');
    expect(a.maxTurns?.value).toBe(4);
    expect(a.grants.map((g) => [`${g.tool.name}.${g.operation.name}`, g.requiresApproval])).toEqual(
      [
        ["ws.read_file", false],
        ["ws.write_file", true],
      ],
    );
  });

  it("respects operator precedence: || < && < == < !", () => {
    const { file, diagnostics } = parse(`workflow W(a: S) -> S effects {} {
  x = !a.p || a.q && a.r == a.s
  return a
}`);
    expect(diagnostics).toEqual([]);
    const wf = file.decls[0];
    if (wf?.kind !== "workflow") throw new Error();
    const stmt = wf.body.statements[0];
    if (stmt?.kind !== "assign" || stmt.value.kind !== "binary") throw new Error();
    expect(stmt.value.op).toBe("||");
    expect(stmt.value.left.kind).toBe("not");
    const right = stmt.value.right;
    if (right.kind !== "binary") throw new Error();
    expect(right.op).toBe("&&");
    expect(right.right.kind === "binary" && right.right.op).toBe("==");
  });

  it("reports a while without limit as TF1012 and keeps parsing", () => {
    const { diagnostics, file } = parse(`workflow W(a: S) -> S effects {} {
  while !a.done {
    a = Step(a)
  }
  return a
}`);
    expect(diagnostics.map(where)).toEqual(["TF1012@2:3"]);
    const wf = file.decls[0];
    expect(wf?.kind === "workflow" && wf.body.statements.length).toBe(2);
  });

  it("recovers at statement boundaries: every independent error is reported", () => {
    const { diagnostics, file } = parse(`workflow W(a: S) -> S effects {} {
  x = = 1
  y = Foo(a
  z = a
  while a.ok limit {
  }
  return a
}
agent After {
  input S
}`);
    expect(diagnostics.map(where)).toEqual(["TF1010@2:7", "TF1010@4:3", "TF1010@5:20"]);
    expect(file.decls.map((d) => d.kind)).toEqual(["workflow", "agent"]);
  });

  it("recovers at declaration boundaries after a broken declaration", () => {
    const { diagnostics, file } = parse(`agent A {
  modle "x"
  input S
}
agnet B {}
workflow W(a S) -> S effects {} { return a }
agent C { output S }
`);
    expect(diagnostics.map(where)).toEqual(["TF1011@2:3", "TF1013@5:1", "TF1010@6:14"]);
    expect(diagnostics[0]?.hint).toBe("did you mean `model`?");
    expect(file.decls.map((d) => (d.kind === "agent" ? d.name.name : d.kind))).toEqual(["A", "C"]);
  });

  it("does not let a missing closing brace swallow the next declaration", () => {
    const { diagnostics, file } = parse(`agent A {
  input S

agent B {
  input S
}
`);
    expect(diagnostics.map((d) => d.code)).toEqual(["TF1010"]);
    expect(diagnostics[0]?.span.line).toBe(1);
    expect(file.decls.map((d) => (d.kind === "agent" ? d.name.name : d.kind))).toEqual(["A", "B"]);
  });

  it("reports duplicate items and unterminated strings", () => {
    const { diagnostics } = parse(`agent A {
  model "a/b"
  model "c/d"
  instructions "never closed
}`);
    expect(diagnostics.map(where).sort()).toEqual(["TF1002@4:16", "TF3008@3:3"]);
  });

  it("reports unexpected characters with a position and continues", () => {
    const { diagnostics, file } = parse(`agent A { input S } # comment?\nagent B { input S }`);
    expect(diagnostics.map(where)).toEqual(["TF1001@1:21", "TF1001@1:30", "TF1013@1:23"]);
    expect(file.decls.map((d) => (d.kind === "agent" ? d.name.name : d.kind))).toEqual(["A", "B"]);
  });
});

describe("triple-quoted strings", () => {
  it("lose their common indentation and the framing line breaks", () => {
    const { file } = parse(`agent A {
  instructions """
    First line.
      Indented more.

    Last line.
    """
}`);
    const a = file.decls[0];
    if (a?.kind !== "agent") throw new Error();
    expect(a.instructions?.value).toBe("First line.\n  Indented more.\n\nLast line.");
  });

  it("dedent keeps text without common indentation unchanged", () => {
    expect(dedent("a\n  b")).toBe("a\n  b");
    expect(dedent("\n\t\tx\n\t\ty\n\t")).toBe("x\ny");
  });
});
