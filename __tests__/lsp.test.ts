/**
 * `terfyn lsp --stdio` driven over JSON-RPC as an editor drives it: initialize, didOpen,
 * didChange (diagnostics with validate's codes and spans), formatting, document symbols,
 * shutdown and exit.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import {
  createMessageConnection,
  type MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-jsonrpc/node";
import { committedRepo } from "./helpers/committed-repo.ts";

const BIN = join(import.meta.dirname, "..", "bin", "terfyn.mjs");

interface Published {
  uri: string;
  diagnostics: {
    code: string;
    range: { start: { line: number; character: number } };
    severity: number;
    message: string;
  }[];
}

let server: ChildProcess | undefined;
let rpc: MessageConnection | undefined;

afterEach(() => {
  rpc?.dispose();
  server?.kill();
});

async function startServer() {
  server = spawn(process.execPath, [BIN, "lsp", "--stdio"], {
    env: { ...process.env, TERFYN_FROM_SOURCE: "1" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  if (!server.stdout || !server.stdin) throw new Error("no pipes");
  rpc = createMessageConnection(
    new StreamMessageReader(server.stdout),
    new StreamMessageWriter(server.stdin),
  );
  const published: Published[] = [];
  const waiters: (() => void)[] = [];
  rpc.onNotification("textDocument/publishDiagnostics", (p: Published) => {
    published.push(p);
    for (const w of waiters.splice(0)) w();
  });
  rpc.listen();
  const init = await rpc.sendRequest("initialize", {
    processId: process.pid,
    rootUri: null,
    capabilities: {},
  });
  await rpc.sendNotification("initialized", {});
  /** The latest diagnostics for `uri` once `ok` holds for them. */
  const diagnosticsFor = async (uri: string, ok: (p: Published) => boolean) => {
    for (;;) {
      const last = published.filter((p) => p.uri === uri).at(-1);
      if (last && ok(last)) return last;
      await new Promise<void>((done) => waiters.push(done));
    }
  };
  return { rpc, init, diagnosticsFor };
}

const PROJECT = "apiVersion: terfyn.dev/v1\nkind: Project\nmetadata: { name: lsp }\nspec: {}\n";

describe("terfyn lsp --stdio", () => {
  it("publishes validate's diagnostics as the buffer changes, formats, lists symbols, and exits when told", async () => {
    const dir = mkdtempSync(join(tmpdir(), "terfyn-lsp-"));
    writeFileSync(join(dir, "terfyn.yaml"), PROJECT);
    const file = join(dir, "main.agent");
    const good = 'agent Writer {\n  model "mock/gpt-4"\n}\n';
    writeFileSync(file, good);
    const uri = pathToFileURL(file).href;
    const { rpc, init, diagnosticsFor } = await startServer();
    expect((init as { capabilities: Record<string, unknown> }).capabilities).toMatchObject({
      documentFormattingProvider: true,
      documentSymbolProvider: true,
    });

    // Opened as on disk: sound.
    await rpc.sendNotification("textDocument/didOpen", {
      textDocument: { uri, languageId: "terfyn-agent", version: 1, text: good },
    });
    expect((await diagnosticsFor(uri, () => true)).diagnostics).toEqual([]);

    // A grant of a tool nobody declared, typed into the buffer (not saved): validate's code at its span.
    await rpc.sendNotification("textDocument/didChange", {
      textDocument: { uri, version: 2 },
      contentChanges: [
        {
          range: { start: { line: 2, character: 0 }, end: { line: 2, character: 0 } },
          text: "  grants {\n    tool.nowhere.do_it\n  }\n",
        },
      ],
    });
    const broken = await diagnosticsFor(uri, (p) => p.diagnostics.length > 0);
    expect(broken.diagnostics.map((d) => `${d.code} ${d.range.start.line}`)).toContain("TF3002 3");
    expect(readFileSync(file, "utf8")).toBe(good);

    // Fixed again: the diagnostics are cleared.
    await rpc.sendNotification("textDocument/didChange", {
      textDocument: { uri, version: 3 },
      contentChanges: [{ text: 'agent   Writer{\nmodel "mock/gpt-4"\n}\n' }],
    });
    await diagnosticsFor(uri, (p) => p.diagnostics.length === 0);

    const edits = (await rpc.sendRequest("textDocument/formatting", {
      textDocument: { uri },
      options: { tabSize: 2, insertSpaces: true },
    })) as { newText: string }[];
    expect(edits.map((e) => e.newText)).toEqual([good]);

    const symbols = (await rpc.sendRequest("textDocument/documentSymbol", {
      textDocument: { uri },
    })) as { name: string; detail: string }[];
    expect(symbols.map((s) => `${s.detail} ${s.name}`)).toEqual(["agent Writer"]);

    await rpc.sendRequest("shutdown");
    const exited = new Promise<number | null>((done) => server?.on("exit", (code) => done(code)));
    await rpc.sendNotification("exit");
    expect(await exited).toBe(0);
  }, 30_000);

  it("hover on an agent shows its bound and the policies that bear on it; definition and references (the example project, read from disk)", async () => {
    const file = join(import.meta.dirname, "..", "examples", "implement-review-loop", "main.agent");
    const text = readFileSync(file, "utf8");
    const uri = pathToFileURL(file).href;
    const { rpc, diagnosticsFor } = await startServer();
    await rpc.sendNotification("textDocument/didOpen", {
      textDocument: { uri, languageId: "terfyn-agent", version: 1, text },
    });
    expect((await diagnosticsFor(uri, () => true)).diagnostics).toEqual([]);
    const before = text.slice(0, text.indexOf("Reviewer {")).split("\n");
    const hover = (await rpc.sendRequest("textDocument/hover", {
      textDocument: { uri },
      position: { line: before.length - 1, character: (before.at(-1)?.length ?? 0) + 2 },
    })) as { contents: { kind: string; value: string } };
    expect(hover.contents.kind).toBe("markdown");
    expect(hover.contents.value).toContain("`Agent/Reviewer`");
    expect(hover.contents.value).toContain("`Policy/no-reviewer-writes`");

    // Go to definition from a grant's tool: its Tool resource in tools.yaml.
    const grant = text.slice(0, text.indexOf("tool.workspace.read_file") + 7).split("\n");
    const def = (await rpc.sendRequest("textDocument/definition", {
      textDocument: { uri },
      position: { line: grant.length - 1, character: grant.at(-1)?.length ?? 0 },
    })) as { uri: string; range: { start: { line: number } } };
    expect(def.uri).toBe(pathToFileURL(join(file, "..", "tools.yaml")).href);
    const refs = (await rpc.sendRequest("textDocument/references", {
      textDocument: { uri },
      position: { line: before.length - 1, character: (before.at(-1)?.length ?? 0) + 2 },
      context: { includeDeclaration: true },
    })) as { uri: string }[];
    expect(refs).toHaveLength(4); // the declaration, the call, the policy and the test
  }, 30_000);

  it("a code lens on each agent says how its authority changed against the base revision (HEAD)", async () => {
    const tools = readFileSync(
      join(import.meta.dirname, "..", "examples", "implement-review-loop", "tools.yaml"),
      "utf8",
    );
    const agents = (grant: string) =>
      `agent Writer {\n  model "mock/gpt-4"\n  grants {\n    tool.workspace.read_file\n${grant}  }\n}\nagent Reader {\n  model "mock/gpt-4"\n  grants {\n    tool.workspace.read_file\n  }\n}\n`;
    const dir = committedRepo(
      { "terfyn.yaml": PROJECT, "tools.yaml": tools, "main.agent": agents("") },
      {},
      "terfyn-lsp-lens-",
    );
    const uri = pathToFileURL(join(dir, "main.agent")).href;
    const { rpc, diagnosticsFor } = await startServer();
    await rpc.sendNotification("textDocument/didOpen", {
      textDocument: {
        uri,
        languageId: "terfyn-agent",
        version: 1,
        text: agents("    tool.workspace.write_file\n").replace("agent Reader", "agent Newcomer"),
      },
    });
    await diagnosticsFor(uri, () => true);
    const lenses = (await rpc.sendRequest("textDocument/codeLens", {
      textDocument: { uri },
    })) as { range: { start: { line: number } }; command: { title: string } }[];
    expect(lenses.map((l) => `${l.range.start.line} ${l.command.title}`)).toEqual([
      "0 authority vs HEAD: autonomous WIDENED, gated UNCHANGED",
      "7 new agent vs HEAD",
    ]);
  }, 30_000);

  it("an .agent file outside any project gets its own syntax errors", async () => {
    const dir = mkdtempSync(join(tmpdir(), "terfyn-lsp-alone-"));
    const file = join(dir, "loose.agent");
    const uri = pathToFileURL(file).href;
    const { rpc, diagnosticsFor } = await startServer();
    await rpc.sendNotification("textDocument/didOpen", {
      textDocument: { uri, languageId: "terfyn-agent", version: 1, text: "agent A {\n" },
    });
    const p = await diagnosticsFor(uri, (x) => x.diagnostics.length > 0);
    expect(p.diagnostics.map((d) => d.code)).toEqual(["TF1010"]);
  }, 30_000);
});
