/**
 * A policy can select agents by what they hold, not by name: `forbid { holding: tool.x.op,
 * effect }` applies to every agent holding that grant, so renaming the agent (or adding a new
 * one with the same grant) cannot escape it. A selector naming a grant no tool has is TF3011.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runTerfyn } from "./helpers/cli.ts";
import { copyExample, write } from "./helpers/example-project.ts";

const POLICY = (holding: string) => `apiVersion: terfyn.dev/v1
kind: Policy
metadata: { name: writers-run-nothing }
spec:
  rules:
    - forbid: { holding: ${holding}, effect: process.exec }
`;

function renameAll(dir: string, from: string, to: string) {
  for (const f of ["main.agent", "tests/capabilities.yaml"]) {
    const p = join(dir, f);
    writeFileSync(p, readFileSync(p, "utf8").replaceAll(from, to));
  }
}

describe("forbid { holding: … }", () => {
  it("applies to every agent holding the grant, whatever it is called", async () => {
    const dir = copyExample("terfyn-selector-");
    write(dir, "selector.yaml", POLICY("tool.workspace.write_file"));
    const first = await runTerfyn(["validate", "--project", "."], dir);
    expect(first.code).toBe(1);
    expect(first.stdout).toMatch(
      /TF5006: Policy\/writers-run-nothing forbids `process.exec` for every agent holding tool.workspace.write_file, but Agent\/Implementer reaches it through tool.workspace.run_tests/,
    );
    renameAll(dir, "Implementer", "Builder");
    const renamed = await runTerfyn(["validate", "--project", "."], dir);
    expect(renamed.code).toBe(1);
    expect(renamed.stdout).toMatch(/TF5006: .*but Agent\/Builder reaches it/);
    expect(renamed.stdout).not.toMatch(/TF3011/);
  });

  it("a selector naming a grant no tool has is an error (TF3011): it would guard nothing", async () => {
    const dir = copyExample("terfyn-selector-");
    write(dir, "selector.yaml", POLICY("tool.workspace.write_files"));
    const out = await runTerfyn(["validate", "--project", "."], dir);
    expect(out.code).toBe(1);
    expect(out.stdout).toMatch(
      /TF3011: Policy\/writers-run-nothing forbids `process.exec` for every agent holding `tool.workspace.write_files`, which no tool of this project has/,
    );
  });

  it("a selector that is not a grant is refused with the field's line (TF2002)", async () => {
    const dir = copyExample("terfyn-selector-");
    write(dir, "selector.yaml", POLICY("write_file"));
    const out = await runTerfyn(["validate", "--project", "."], dir);
    expect(out.code).toBe(1);
    expect(out.stdout).toMatch(/selector.yaml:\d+:\d+: error TF2002/);
  });
});
