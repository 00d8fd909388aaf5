/**
 * A one-agent project held in memory around a given Tool document, validated and compiled,
 * for tests of the command and http adapters through the tool router.
 */
import { compileProgram, type IrProgram } from "../../src/core/engine/ir.ts";
import type { ResolvedProject } from "../../src/core/model/project.ts";
import { validateProject } from "../../src/core/validate.ts";

export const PROJECT_YAML = `apiVersion: terfyn.dev/v1
kind: Project
metadata: { name: t }
spec: {}
---
apiVersion: terfyn.dev/v1
kind: Schema
metadata: { name: S }
spec: { type: object, properties: { note: { type: string } } }
`;

/** `grants` are lines such as `tool.t.run`; the agent is `A`, the workflow `W`. */
export function toolProject(
  toolYaml: string,
  grants: string[],
  effects: string[],
): { project: ResolvedProject; program: IrProgram } {
  const agent = `agent A {
  model "mock/script"
  input S
  output S
  instructions "x"
  grants {
${grants.map((g) => `    ${g}`).join("\n")}
  }
}

workflow W(s: S) -> S
effects { ${effects.join(", ")} }
{
  r = A(s)
  return r
}
`;
  const v = validateProject([
    { path: "terfyn.yaml", text: PROJECT_YAML },
    { path: "tools.yaml", text: toolYaml },
    { path: "main.agent", text: agent },
  ]);
  const errors = v.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) throw new Error(errors.map((d) => `${d.code} ${d.message}`).join("\n"));
  return { project: v.project, program: compileProgram(v.project, "W") };
}
