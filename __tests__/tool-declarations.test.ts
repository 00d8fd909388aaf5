/**
 * Bad command and http declarations are diagnostics with a code at the YAML line: an empty or
 * missing argv (TF2011), a placeholder in the host or another bad URL template (TF2012),
 * settings missing or on the wrong adapter (TF2013), unsafe headers (TF2014), unknown fields
 * (TF2002).
 */
import { describe, expect, it } from "vitest";
import { validateProject } from "../src/core/validate.ts";
import { PROJECT_YAML } from "./helpers/tool-project.ts";

function problems(tools: string): { code: string; line: number; message: string }[] {
  const v = validateProject([
    { path: "terfyn.yaml", text: PROJECT_YAML },
    { path: "tools.yaml", text: tools },
  ]);
  return v.diagnostics
    .filter((d) => d.span.file === "tools.yaml")
    .map((d) => ({ code: d.code, line: d.span.line, message: d.message }));
}

const head = (adapter: string) =>
  `apiVersion: terfyn.dev/v1\nkind: Tool\nmetadata: { name: t }\nspec:\n  adapter: ${adapter}\n`;

describe("command and http declarations", () => {
  it("a placeholder in the host or port is TF2012 at the url's line", () => {
    for (const url of [
      "http://127.0.0.1:{port}/x",
      "http://{host}/x",
      "https://{sub}.example.com/x",
    ]) {
      const p = problems(
        `${head("http")}  operations:\n    get:\n      effects: [network.egress]\n      http: { method: GET, url: "${url}" }\n`,
      );
      expect(p, url).toEqual([expect.objectContaining({ code: "TF2012", line: 9 })]);
      expect(p[0]?.message).toContain("placeholder in the host or port");
    }
  });

  it("other bad URL templates are TF2012 too", () => {
    for (const url of [
      "ftp://example.com/x",
      "http://user:pw@example.com/x",
      "http://example.com/x#frag",
      "/relative/{id}",
      "http://example.com/{not-a-field}",
      "http://example.com/{id",
    ]) {
      const p = problems(
        `${head("http")}  operations:\n    get:\n      effects: [network.egress]\n      http: { method: GET, url: "${url}" }\n`,
      );
      expect(
        p.map((d) => d.code),
        url,
      ).toEqual(["TF2012"]);
    }
  });

  it("an empty argv, an empty argv[0] and an operation without argv are TF2011", () => {
    expect(
      problems(
        `${head("command")}  command:\n    argv: []\n  operations:\n    run: { effects: [process.exec] }\n`,
      ),
    ).toEqual([expect.objectContaining({ code: "TF2011", line: 7 })]);
    expect(
      problems(
        `${head("command")}  operations:\n    run:\n      effects: [process.exec]\n      command: { argv: ["", x] }\n`,
      ).map((d) => [d.code, d.line]),
    ).toEqual([["TF2011", 9]]);
    expect(
      problems(`${head("command")}  operations:\n    run: { effects: [process.exec] }\n`).map(
        (d) => [d.code, d.line],
      ),
    ).toEqual([["TF2011", 7]]);
  });

  it("unknown fields are TF2002 at the key, with a suggestion", () => {
    const p = problems(
      `${head("command")}  command:\n    argvs: [node]\n  operations:\n    run: { effects: [process.exec] }\n`,
    );
    expect(p[0]).toMatchObject({ code: "TF2002", line: 7 });
    expect(p[0]?.message).toContain("unknown field `argvs`");
    const q = problems(
      `${head("http")}  operations:\n    get:\n      effects: [network.egress]\n      http: { method: GET, url: "http://a.example/x", host: evil.example }\n`,
    );
    expect(q[0]).toMatchObject({ code: "TF2002", line: 9 });
  });

  it("settings on the wrong adapter, or an http operation without a request, are TF2013", () => {
    expect(
      problems(
        `${head("command")}  command: { argv: [node] }\n  http: { timeoutMs: 5 }\n  operations:\n    run: { effects: [process.exec] }\n`,
      ).map((d) => [d.code, d.line]),
    ).toEqual([["TF2013", 7]]);
    expect(
      problems(`${head("http")}  operations:\n    get: { effects: [network.egress] }\n`).map(
        (d) => [d.code, d.line],
      ),
    ).toEqual([["TF2013", 7]]);
    expect(
      problems(
        `${head("workspace")}  operations:\n    run_tests:\n      effects: [process.exec]\n      command: { argv: [sh] }\n`,
      ).map((d) => d.code),
    ).toEqual(["TF2013"]);
  });

  it("a literal credential header, a reserved header and a header with a line break are TF2014", () => {
    const p = problems(
      `${head("http")}  http:\n    headers:\n      Authorization: "Bearer abc"\n      X-Api-Key: abc\n      Host: evil.example\n      X-Note: "a\\nb"\n      X-Ok: fine\n      X-Token: { fromEnv: TOKEN }\n  operations:\n    get:\n      effects: [network.egress]\n      http: { method: GET, url: "http://a.example/x" }\n`,
    );
    expect(p.map((d) => [d.code, d.line])).toEqual([
      ["TF2014", 8],
      ["TF2014", 9],
      ["TF2014", 10],
      ["TF2014", 11],
    ]);
    expect(p[0]?.message).toContain("carries a credential");
  });

  it("a valid declaration has no diagnostics", () => {
    expect(
      problems(
        `${head("http")}  http:\n    headers: { Authorization: { fromEnv: T } }\n  operations:\n    get:\n      effects: [network.egress]\n      http: { method: GET, url: "http://127.0.0.1:8080/a/{id}?q={q}" }\n`,
      ),
    ).toEqual([]);
  });
});
