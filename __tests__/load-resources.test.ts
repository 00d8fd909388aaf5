import { describe, expect, it } from "vitest";
import { loadResources } from "../src/core/config/load-resources.ts";

const where = (d: { code: string; span: { line: number; column: number } }) =>
  `${d.code}@${d.span.line}:${d.span.column}`;

describe("YAML resources", () => {
  it("loads several documents from one file and keeps positions", () => {
    const text = `apiVersion: terfyn.dev/v1
kind: Schema
metadata: { name: S }
spec: { type: object, properties: { a: { type: string } } }
---
apiVersion: terfyn.dev/v1
kind: Policy
metadata:
  name: p
spec:
  rules:
    - forbid: { agent: "*", effect: network.egress }
    - maxLoopLimit: 5
`;
    const { resources, diagnostics } = loadResources("r.yaml", text);
    expect(diagnostics).toEqual([]);
    expect(resources.map((r) => `${r.kind}/${r.name}`)).toEqual(["Schema/S", "Policy/p"]);
    const policy = resources[1];
    expect(policy?.span).toMatchObject({ line: 9, column: 9 });
    expect(policy?.spanOf(["spec", "rules", 1])).toMatchObject({ line: 13, column: 7 });
  });

  it("reports a wrong type at the value's line and column with the field path", () => {
    const text = `apiVersion: terfyn.dev/v1
kind: Tool
metadata: { name: ws }
spec:
  adapter: workspace
  operations:
    read_file:
      effects: [workspace.read, 42]
`;
    const { diagnostics } = loadResources("tools.yaml", text);
    expect(diagnostics.map(where)).toEqual(["TF2002@8:33"]);
    expect(diagnostics[0]?.message).toContain("spec.operations.read_file.effects.1");
    expect(diagnostics[0]?.span.file).toBe("tools.yaml");
  });

  it("points an unknown field at its key, with a suggestion", () => {
    const text = `apiVersion: terfyn.dev/v1
kind: Tool
metadata: { name: ws }
spec:
  adaptor: workspace
  operations: {}
`;
    const { diagnostics } = loadResources("t.yaml", text);
    expect(diagnostics.map(where)).toEqual(["TF2002@4:1", "TF2002@5:3"].sort());
    const unknown = diagnostics.find((d) => d.message.includes("adaptor"));
    expect(unknown?.hint).toBe("did you mean `adapter`?");
    const missing = diagnostics.find((d) => d.message.includes("spec.adapter"));
    expect(missing?.span.line).toBe(4);
  });

  it("explains an unknown policy rule instead of a union error", () => {
    const text = `apiVersion: terfyn.dev/v1
kind: Policy
metadata: { name: p }
spec:
  rules:
    - forbidd: { agent: A, effect: x.y }
    - risk: { effect: x.y, level: severe }
`;
    const { diagnostics } = loadResources("p.yaml", text);
    expect(diagnostics.map(where)).toEqual(["TF2002@6:7", "TF2002@7:35"]);
    expect(diagnostics[0]?.message).toContain("unknown policy rule `forbidd`");
    expect(diagnostics[0]?.hint).toBe("did you mean `forbid`?");
    expect(diagnostics[1]?.message).toContain("spec.rules.1.risk.level");
  });

  it("reports YAML syntax errors, unknown kinds and apiVersions, and ignores foreign YAML", () => {
    const text = `apiVersion: terfyn.dev/v1
kind: Tol
metadata: { name: a }
spec: {}
---
apiVersion: terfyn.dev/v2
kind: Tool
---
apiVersion: apps/v1
kind: Deployment
---
key: [unclosed
`;
    const { diagnostics, resources } = loadResources("x.yaml", text);
    expect(resources).toEqual([]);
    expect(diagnostics.map((d) => d.code)).toEqual(["TF2003", "TF2004", "TF2001"]);
    expect(diagnostics[0]?.hint).toBe("did you mean `Tool`?");
    expect(diagnostics[0]?.span.line).toBe(2);
    expect(diagnostics[1]?.span.line).toBe(6);
    expect(diagnostics[2]?.span.line).toBeGreaterThanOrEqual(12);
  });

  it("rejects JSON Schema keywords outside the supported subset", () => {
    const text = `apiVersion: terfyn.dev/v1
kind: Schema
metadata: { name: S }
spec:
  type: object
  oneOf: []
`;
    const { diagnostics } = loadResources("s.yaml", text);
    expect(diagnostics.map(where)).toEqual(["TF2002@6:3"]);
    expect(diagnostics[0]?.message).toContain("unknown field `oneOf`");
  });
});
