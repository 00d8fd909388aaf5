import { describe, expect, it } from "vitest";
import { validateProject } from "../src/core/validate.ts";

const project = `apiVersion: terfyn.dev/v1
kind: Project
metadata: { name: t }
spec: {}
`;
const resources = `apiVersion: terfyn.dev/v1
kind: Tool
metadata: { name: ws }
spec:
  adapter: external
  operations:
    read: { effects: [ws.read], idempotent: true }
    write: { effects: [ws.write] }
    post: { effects: [net.egress] }
---
apiVersion: terfyn.dev/v1
kind: Schema
metadata: { name: State }
spec:
  type: object
  required: [task, done]
  properties:
    task: { type: string }
    done: { type: boolean }
    count: { type: integer }
    meta: { type: object, required: [ok], properties: { ok: { type: boolean } } }
---
apiVersion: terfyn.dev/v1
kind: Schema
metadata: { name: Wide }
spec:
  type: object
  required: [task, done, extra]
  properties:
    task: { type: string }
    done: { type: boolean }
    extra: { type: string }
`;

function check(agentText: string, extraYaml = "") {
  const result = validateProject([
    { path: "terfyn.yaml", text: project },
    { path: "resources.yaml", text: resources + extraYaml },
    { path: "main.agent", text: agentText },
  ]);
  return result.diagnostics.map((d) => `${d.severity} ${d.code}@${d.span.line}:${d.span.column}`);
}

const agents = `
agent Reader { input State output State grants { tool.ws.read } }
agent Writer { input State output State grants { tool.ws.read tool.ws.write } }
agent Poster { input Wide output State grants { tool.ws.post requires approval } }
`;

describe("checker accepts what the language allows", () => {
  it("sub-workflows, if/else returns, approve, comparisons, nested fields, structural typing", () => {
    const diags = check(`${agents}
workflow Inner(s: State) -> State effects { ws.read, ws.write } {
  t = Writer(s)
  approve t "write result"
  return Reader(t)
}
workflow Outer(s: State, w: Wide) -> State effects { ws.read, ws.write, net.egress } {
  x = Inner(s)
  y = Inner(w)
  if x.done && x.task == "t" || !x.meta.ok {
    return Poster(w)
  } else {
    while !y.done limit 2 { y = Reader(y) }
  }
  return y
}`);
    expect(diags).toEqual([]);
  });
});

describe("checker rejects", () => {
  it("a narrower value where a wider schema is required", () => {
    expect(
      check(`${agents}
workflow W(s: State) -> State effects { net.egress } {
  return Poster(s)
}`),
    ).toEqual(["error TF4001@7:17"]);
  });

  it("a non-boolean condition and a comparison of unrelated types", () => {
    expect(
      check(`${agents}
workflow W(s: State) -> State effects {} {
  if s.task { return s }
  if s.count == "3" { return s }
  return s
}`),
    ).toEqual(["error TF4005@7:6", "error TF4009@8:6"]);
  });

  it("a workflow that may end without return, and flags unreachable statements", () => {
    expect(
      check(`${agents}
workflow W(s: State) -> State effects {} {
  if s.done { return s }
}
workflow V(s: State) -> State effects {} {
  return s
  t = s
}`),
    ).toEqual(["error TF4007@6:10", "warning TF4010@11:3"]);
  });

  it("effects reached only through a sub-workflow, and reports the unreachable declared ones", () => {
    expect(
      check(`${agents}
workflow Inner(s: State) -> State effects { ws.read, ws.write } { return Writer(s) }
workflow Outer(s: State) -> State effects { ws.read, net.egress } { return Inner(s) }
`),
    ).toEqual(["error TF5003@7:35", "warning TF5004@7:54"]);
  });

  it("mutual recursion once, at the call that closes the cycle", () => {
    expect(
      check(`${agents}
workflow A(s: State) -> State effects {} { return B(s) }
workflow B(s: State) -> State effects {} { return A(s) }
`),
    ).toEqual(["error TF5005@7:51"]);
  });

  it("policy forbid for every agent (*) at each reaching grant", () => {
    const policy = `---
apiVersion: terfyn.dev/v1
kind: Policy
metadata: { name: ro }
spec:
  rules:
    - forbid: { agent: "*", effect: ws.write }
`;
    expect(check(agents, policy)).toEqual(["error TF5006@3:63"]);
  });

  it("gated grants satisfy requireApproval; autonomous ones do not", () => {
    const policy = `---
apiVersion: terfyn.dev/v1
kind: Policy
metadata: { name: gate }
spec:
  rules:
    - requireApproval: { effect: net.egress }
    - requireApproval: { effect: ws.write }
`;
    expect(check(agents, policy)).toEqual(["error TF5007@3:63"]);
  });

  it("duplicate names across files and kinds of declaration", () => {
    const result = validateProject([
      { path: "terfyn.yaml", text: project },
      { path: "resources.yaml", text: resources },
      { path: "a.agent", text: "agent Reader { input State output State }\n" },
      { path: "b.agent", text: "workflow Reader(s: State) -> State effects {} { return s }\n" },
    ]);
    expect(
      result.diagnostics.map((d) => `${d.code}@${d.span.file}:${d.span.line}:${d.span.column}`),
    ).toEqual(["TF3006@b.agent:1:10"]);
    expect(result.diagnostics[0]?.related?.[0]?.span.file).toBe("a.agent");
  });

  it("files excluded by the project (fixtures/, spec.exclude) are not loaded", () => {
    const result = validateProject([
      {
        path: "terfyn.yaml",
        text: `${project.replace("spec: {}", "spec: { exclude: [vendor] }")}`,
      },
      { path: "resources.yaml", text: resources },
      { path: "fixtures/broken.agent", text: "agent {" },
      { path: "vendor/broken.agent", text: "agent {" },
      { path: "main.agent", text: agents },
    ]);
    expect(result.diagnostics).toEqual([]);
    expect(result.ok).toBe(true);
  });
});
