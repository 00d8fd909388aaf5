/**
 * One naming rule for `.agent` and YAML (TF2015): a Tool, operation or Schema name that no
 * `.agent` identifier can write is an error with a hint, through `terfyn validate` on real
 * projects; every example project still validates.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runTerfyn } from "./helpers/cli.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "terfyn-names-"));
  dirs.push(dir);
  writeFileSync(
    join(dir, "terfyn.yaml"),
    "apiVersion: terfyn.dev/v1\nkind: Project\nmetadata: { name: my-project.v2 }\nspec: {}\n",
  );
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const AGENT = `agent A {
  input Doc
  output Doc
  instructions "x"
  grants { tool.files.read }
}
workflow W(d: Doc) -> Doc effects { workspace.read } { return A(d) }
`;
const SCHEMA = (name: string) =>
  `apiVersion: terfyn.dev/v1\nkind: Schema\nmetadata: { name: ${name} }\nspec: { type: object, properties: { x: { type: string } } }\n`;
const TOOL = (name: string, op: string) =>
  `apiVersion: terfyn.dev/v1\nkind: Tool\nmetadata: { name: ${name} }\nspec:\n  adapter: external\n  operations:\n    read: { effects: [workspace.read], idempotent: true }\n    ${op}: { effects: [workspace.read], idempotent: true }\n`;

async function codes(dir: string) {
  const r = await runTerfyn(["validate", "--project", dir, "--format", "json"], dir);
  const doc = JSON.parse(r.stdout) as {
    diagnostics: { code: string; message: string; hint?: string; line: number }[];
  };
  return { code: r.code, diagnostics: doc.diagnostics };
}

describe("TF2015: one naming rule for .agent and YAML", () => {
  it("a sound project with a dotted Project and Policy name validates", async () => {
    const dir = project({
      "a.agent": AGENT,
      "r.yaml": `${SCHEMA("Doc")}---\n${TOOL("files", "list")}---\napiVersion: terfyn.dev/v1\nkind: Policy\nmetadata: { name: no-writes.v1 }\nspec: { rules: [ { forbid: { agent: "*", effect: workspace.write } } ] }\n`,
    });
    const r = await codes(dir);
    expect(r.diagnostics).toEqual([]);
    expect(r.code).toBe(0);
  });

  it("an operation with a dot is TF2015 with the name to use", async () => {
    const dir = project({
      "a.agent": AGENT,
      "r.yaml": `${SCHEMA("Doc")}---\n${TOOL("files", "list.v1")}`,
    });
    const r = await codes(dir);
    expect(r.code).toBe(1);
    expect(r.diagnostics.map((d) => d.code)).toEqual(["TF2015"]);
    expect(r.diagnostics[0]?.message).toContain("operation `list.v1` of Tool/files");
    expect(r.diagnostics[0]?.hint).toContain("`list_v1`");
  });

  it("a Schema with a hyphen is TF2015, and a text diagnostic shows the hint", async () => {
    const dir = project({
      "a.agent": AGENT,
      "r.yaml": `${SCHEMA("Doc")}---\n${SCHEMA("Old-Doc")}---\n${TOOL("files", "list")}`,
    });
    const r = await codes(dir);
    expect(r.diagnostics.map((d) => d.code)).toEqual(["TF2015"]);
    expect(r.diagnostics[0]?.hint).toContain("`Old_Doc`");
    const text = await runTerfyn(["validate", "--project", dir], dir);
    expect(text.stdout).toContain("error TF2015: Schema/Old-Doc");
    expect(text.stdout).toContain("= hint: rename it to `Old_Doc`");
  });

  it("a Tool with a hyphen is TF2015", async () => {
    const dir = project({
      "a.agent": AGENT,
      "r.yaml": `${SCHEMA("Doc")}---\n${TOOL("files", "list")}---\n${TOOL("file-store", "list")}`,
    });
    const r = await codes(dir);
    expect(r.diagnostics.map((d) => d.code)).toEqual(["TF2015"]);
    expect(r.diagnostics[0]?.message).toContain("Tool/file-store");
  });

  it("every example project (and the bundled agents) still validates", async () => {
    const projects: string[] = [];
    for (const top of ["examples", "agents"]) {
      const root = resolve(__dirname, "..", top);
      for (const d of readdirSync(root, { withFileTypes: true }))
        if (d.isDirectory() && existsSync(join(root, d.name, "terfyn.yaml")))
          projects.push(join(root, d.name));
    }
    expect(projects.length).toBeGreaterThan(2);
    for (const dir of projects) {
      const e = { name: dir };
      const r = await runTerfyn(["validate", "--project", dir, "--format", "json"], dir);
      const doc = JSON.parse(r.stdout) as { ok: boolean; diagnostics: { code: string }[] };
      expect(
        doc.diagnostics.filter((d) => d.code === "TF2015"),
        e.name,
      ).toEqual([]);
      expect(doc.ok, e.name).toBe(true);
    }
  });
});
