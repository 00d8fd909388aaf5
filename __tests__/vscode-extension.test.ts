/**
 * editors/vscode: the TextMate grammar tokenises every .agent file of the examples as VS Code
 * does (vscode-textmate with the Oniguruma engine), the manifest is in the layout `vsce`
 * expects, and the extension's schemas are the generated ones.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as oniguruma from "vscode-oniguruma";
import { INITIAL, parseRawGrammar, Registry } from "vscode-textmate";

const ROOT = join(import.meta.dirname, "..");
const EXT = join(ROOT, "editors", "vscode");
const require = createRequire(import.meta.url);

async function grammar() {
  const wasm = readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm"));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns: string[]) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s: string) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope) => {
      if (scope !== "source.terfyn-agent") return null;
      const path = join(EXT, "syntaxes", "terfyn-agent.tmLanguage.json");
      return parseRawGrammar(readFileSync(path, "utf8"), path);
    },
  });
  const g = await registry.loadGrammar("source.terfyn-agent");
  if (!g) throw new Error("the grammar did not load");
  return g;
}

/** Each token of a text as `scope-suffix:text`, by the grammar's most specific scope. */
async function tokens(text: string): Promise<string[]> {
  const g = await grammar();
  let state = INITIAL;
  const out: string[] = [];
  for (const line of text.split("\n")) {
    const r = g.tokenizeLine(line, state);
    for (const t of r.tokens) {
      const piece = line.slice(t.startIndex, t.endIndex);
      if (piece.trim() === "") continue;
      out.push(`${(t.scopes.at(-1) ?? "").replace(/\.terfyn-agent$/, "")}:${piece}`);
    }
    state = r.ruleStack;
  }
  return out;
}

describe("the VS Code extension", () => {
  it("tokenises declarations, grants, strings, comments and statements", async () => {
    const t = await tokens(
      'agent Writer {\n  model "mock/gpt-4" // the model\n  instructions """\n    Write. // not a comment\n    """\n  grants {\n    tool.workspace.write_file requires approval\n  }\n}\nworkflow W(input: S) -> S\neffects { workspace.write }\n{\n  while !x.done limit 3 { x = Writer(x) }\n  return x\n}\n',
    );
    expect(t).toEqual(
      expect.arrayContaining([
        "storage.type:agent",
        "entity.name.type:Writer",
        "keyword.other.item:model",
        "string.quoted.double:mock/gpt-4",
        "comment.line.double-slash:// the model",
        "string.quoted.triple:    Write. // not a comment",
        "keyword.other.grant:tool",
        "entity.name.type.tool:workspace",
        "entity.name.function.operation:write_file",
        "keyword.other.approval:requires",
        "storage.type:workflow",
        "keyword.control:while",
        "keyword.control:limit",
        "constant.numeric:3",
        "entity.name.function.call:Writer",
        "keyword.control:return",
        "variable.other:write",
      ]),
    );
  });

  it("tokenises every .agent file of the examples: every declaration's keyword is found, no string leaks past its file", async () => {
    for (const example of ["implement-review-loop", "triage-deploy"]) {
      const text = readFileSync(join(ROOT, "examples", example, "main.agent"), "utf8");
      const t = await tokens(text);
      const declared = [...text.matchAll(/^(agent|workflow|tool)\s+(\w+)/gm)].map((m) => m[2]);
      expect(declared.length, example).toBeGreaterThan(0);
      for (const name of declared)
        expect(t, `${example}: ${name}`).toContain(`entity.name.type:${name}`);
      // The last token is the file's closing brace, outside any string or comment.
      expect(t.at(-1), example).toBe("source:}");
    }
  });

  it("the manifest is in vsce's layout and its schemas are the generated ones", () => {
    const manifest = JSON.parse(readFileSync(join(EXT, "package.json"), "utf8"));
    expect(manifest).toMatchObject({ name: "terfyn", publisher: "terfyn", main: "./extension.js" });
    expect(manifest.engines.vscode).toMatch(/^\^1\./);
    for (const g of manifest.contributes.grammars)
      expect(() => readFileSync(join(EXT, g.path))).not.toThrow();
    for (const v of manifest.contributes.yamlValidation) {
      const shipped = readFileSync(join(EXT, v.url), "utf8");
      expect(shipped).toBe(
        readFileSync(join(ROOT, "schemas", v.url.replace("./schemas/", "")), "utf8"),
      );
    }
    expect(readFileSync(join(EXT, "extension.js"), "utf8")).toContain('args: ["lsp", "--stdio"]');
  });
});
