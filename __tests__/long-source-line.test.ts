/**
 * A minified `.agent` file is one very long line. A diagnostic on it echoes a window around the
 * caret, with ellipses and the column, not the whole line (which would bury the message and
 * flood the terminal). Through `terfyn validate` on a real project.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runTerfyn } from "./helpers/cli.ts";

const dir = mkdtempSync(join(tmpdir(), "terfyn-longline-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

writeFileSync(
  join(dir, "terfyn.yaml"),
  "apiVersion: terfyn.dev/v1\nkind: Project\nmetadata: { name: p }\nspec: {}\n",
);
writeFileSync(
  join(dir, "s.yaml"),
  "apiVersion: terfyn.dev/v1\nkind: Schema\nmetadata: { name: Doc }\nspec: { type: object, properties: { x: { type: string } } }\n",
);
const prefix = `agent A { input Doc output Doc instructions "x" } workflow W(d: Doc) -> Doc effects { } { ${"a = d ".repeat(4000)}`;
const line = `${prefix}return Missing(d) ${"b = d ".repeat(4000)}}`;
writeFileSync(join(dir, "min.agent"), line);
const column = prefix.length + "return ".length + 1;

describe("a diagnostic on a very long source line", () => {
  it("is cut around the caret, with ellipses and the column", async () => {
    const r = await runTerfyn(["validate", "--project", dir], dir);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`min.agent:1:${column}: error TF3001`);
    const lines = r.stdout.split("\n");
    const echo = lines.find((l) => l.startsWith(" 1 | "));
    const caret = lines[lines.indexOf(echo as string) + 1] as string;
    expect(echo).toBeDefined();
    expect((echo as string).length).toBeLessThan(200);
    expect(echo).toMatch(/^ 1 \| …[ad= ]+return Missing\(d\) b = d [bd= ]*…$/);
    // The caret sits under `Missing`.
    const at = caret.indexOf("^");
    expect((echo as string).slice(at, at + 7)).toBe("Missing");
    expect(caret).toContain(`column ${column} of a ${line.length}-character line`);
    expect(r.stdout.length).toBeLessThan(2000);
  });

  it("a short line is still echoed whole, with no column note", async () => {
    const d2 = mkdtempSync(join(tmpdir(), "terfyn-shortline-"));
    try {
      writeFileSync(
        join(d2, "terfyn.yaml"),
        "apiVersion: terfyn.dev/v1\nkind: Project\nmetadata: { name: p }\nspec: {}\n",
      );
      writeFileSync(join(d2, "a.agent"), "defaults { model 'x' }\n");
      const r = await runTerfyn(["validate", "--project", d2], d2);
      expect(r.stdout).toContain(" 1 | defaults { model 'x' }\n");
      expect(r.stdout).not.toContain("-character line");
    } finally {
      rmSync(d2, { recursive: true, force: true });
    }
  });
});
