/**
 * The language server behind `terfyn lsp --stdio` (vscode-languageserver): for each open
 * `.agent` or YAML file, the project it belongs to is validated with the editor's buffers in
 * place of the disk's files, and validate's diagnostics (same codes and spans) are published for
 * every file of it; hover (core/language/hover.ts), definition and references (navigate.ts),
 * completion (complete.ts), formatting (format.ts, as `terfyn fmt`), document symbols, and a
 * code lens per agent comparing its authority with a base revision (the plan's own comparison).
 *
 * A document's project is the nearest directory above it holding terfyn.yaml; a file in none
 * is checked alone (an `.agent` file's syntax). Nothing here runs anything a project names; the
 * base revision is read with git plumbing, as `terfyn plan --against` reads it.
 */
import { existsSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  CompletionItemKind,
  type Connection,
  DiagnosticSeverity,
  type DocumentSymbol,
  type Diagnostic as LspDiagnostic,
  SymbolKind,
  TextDocumentSyncKind,
  TextDocuments,
} from "vscode-languageserver/node";
import { TextDocument } from "vscode-languageserver-textdocument";
import type { Diagnostic, Span } from "../../core/diagnostics.ts";
import { type Completion, completionsAt } from "../../core/language/complete.ts";
import { formatAgentText } from "../../core/language/format.ts";
import { hoverAt } from "../../core/language/hover.ts";
import { definitionOf, referencesOf, symbolAt } from "../../core/language/navigate.ts";
import { parseAgentFile } from "../../core/language/parser.ts";
import { agentAddress } from "../../core/model/agent-names.ts";
import { planProject } from "../../core/plan/plan-project.ts";
import { projectResources, type ResourceRecord } from "../../core/plan/resources.ts";
import { SourceText } from "../../core/source.ts";
import { type ValidationResult, validateProject } from "../../core/validate.ts";
import { readProjectDirectory } from "../fs/read-project.ts";
import { readProjectAtRevision } from "../git/read-revision.ts";

const PROJECT_FILE = "terfyn.yaml";

/** How long after a change the project is checked (a burst of keystrokes is checked once). */
const CHECK_DELAY_MS = 40;

/** The directory of the nearest terfyn.yaml at or above `file`'s directory, if any. */
function projectRootOf(file: string): string | undefined {
  let dir = dirname(file);
  for (;;) {
    if (existsSync(join(dir, PROJECT_FILE))) return dir;
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

const rangeOf = (s: Span) => ({
  start: { line: Math.max(0, s.line - 1), character: Math.max(0, s.column - 1) },
  end: { line: Math.max(0, s.endLine - 1), character: Math.max(0, s.endColumn - 1) },
});

function toLsp(d: Diagnostic): LspDiagnostic {
  return {
    range: rangeOf(d.span),
    severity:
      d.severity === "error"
        ? DiagnosticSeverity.Error
        : d.severity === "warning"
          ? DiagnosticSeverity.Warning
          : DiagnosticSeverity.Information,
    code: d.code,
    source: "terfyn",
    message: d.hint ? `${d.message}\nhint: ${d.hint}` : d.message,
  };
}

const COMPLETION_KINDS: Record<Completion["kind"], CompletionItemKind> = {
  keyword: CompletionItemKind.Keyword,
  agent: CompletionItemKind.Class,
  workflow: CompletionItemKind.Function,
  tool: CompletionItemKind.Module,
  operation: CompletionItemKind.Method,
  schema: CompletionItemKind.Struct,
  effect: CompletionItemKind.EnumMember,
  kind: CompletionItemKind.Enum,
};

/** A file's path in the project at `root` (`/`-separated), or undefined when it is outside. */
function projectPath(root: string, abs: string): string | undefined {
  const rel = relative(root, abs);
  return rel.startsWith("..") || rel.startsWith(sep) ? undefined : rel.split(sep).join("/");
}

const isProjectDocument = (path: string) =>
  path.endsWith(".agent") || path.endsWith(".yaml") || path.endsWith(".yml");

export function startLanguageServer(connection: Connection): void {
  const documents = new TextDocuments(TextDocument);
  /** Per project root, the files it last published diagnostics for (to clear them). */
  const published = new Map<string, Set<string>>();
  /** The latest check asked for each root: an older one that finishes later publishes nothing. */
  const generation = new Map<string, number>();
  /** Each root's last validated project, for hover, definition, completion and the lens. */
  const validated = new Map<string, ValidationResult>();

  const openTexts = () => {
    const out = new Map<string, string>();
    for (const doc of documents.all())
      if (doc.uri.startsWith("file:")) out.set(fileURLToPath(doc.uri), doc.getText());
    return out;
  };

  const publish = (root: string, byFile: Map<string, LspDiagnostic[]>) => {
    const before = published.get(root) ?? new Set<string>();
    for (const file of before)
      if (!byFile.has(file))
        void connection.sendDiagnostics({ uri: pathToFileURL(file).href, diagnostics: [] });
    for (const [file, diagnostics] of byFile)
      void connection.sendDiagnostics({ uri: pathToFileURL(file).href, diagnostics });
    published.set(root, new Set(byFile.keys()));
  };

  async function check(uri: string): Promise<void> {
    if (!uri.startsWith("file:")) return;
    const path = fileURLToPath(uri);
    if (!isProjectDocument(path)) return;
    const root = projectRootOf(path);
    const texts = openTexts();
    if (root === undefined) {
      // No project: an .agent file's own syntax.
      if (!path.endsWith(".agent")) return;
      const text = texts.get(path) ?? "";
      const parsed = parseAgentFile(new SourceText(path, text));
      publish(path, new Map([[path, parsed.diagnostics.map(toLsp)]]));
      return;
    }
    const mine = (generation.get(root) ?? 0) + 1;
    generation.set(root, mine);
    let files: { path: string; text: string }[];
    let readDiagnostics: Diagnostic[] = [];
    try {
      const read = await readProjectDirectory(root);
      files = read.files;
      readDiagnostics = read.diagnostics;
    } catch (e) {
      connection.console.error(`terfyn lsp: cannot read ${root}: ${String(e)}`);
      return;
    }
    // The editor's buffers win over the disk, and an open file not yet saved is part of it.
    const byPath = new Map(files.map((f) => [f.path, f.text]));
    for (const [abs, text] of texts) {
      const rel = projectPath(root, abs);
      if (rel !== undefined && isProjectDocument(abs) && (byPath.has(rel) || abs === path))
        byPath.set(rel, text);
    }
    const result = validateProject([...byPath].map(([p, text]) => ({ path: p, text })));
    if (generation.get(root) !== mine) return;
    validated.set(root, result);
    const byFile = new Map<string, LspDiagnostic[]>();
    for (const rel of byPath.keys()) byFile.set(join(root, rel), []);
    for (const d of [...readDiagnostics, ...result.diagnostics]) {
      const abs = join(root, d.span.file);
      const list = byFile.get(abs) ?? [];
      list.push(toLsp(d));
      byFile.set(abs, list);
    }
    publish(root, byFile);
  }

  connection.onInitialize((params) => {
    const options = params.initializationOptions as { baseRef?: unknown } | undefined;
    if (typeof options?.baseRef === "string" && options.baseRef !== "") baseRef = options.baseRef;
    return {
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        documentFormattingProvider: true,
        documentSymbolProvider: true,
        hoverProvider: true,
        definitionProvider: true,
        referencesProvider: true,
        completionProvider: { triggerCharacters: ["."] },
        codeLensProvider: {},
      },
      serverInfo: { name: "terfyn" },
    };
  });

  /**
   * A check per document, a short while after its last change (typing fires one per key; each
   * check re-validates the whole project), never letting a failure end the server.
   */
  const pending = new Map<string, ReturnType<typeof setTimeout>>();
  const schedule = (uri: string) => {
    clearTimeout(pending.get(uri));
    pending.set(
      uri,
      setTimeout(() => {
        pending.delete(uri);
        check(uri).catch((e: unknown) =>
          connection.console.error(`terfyn lsp: checking ${uri} failed: ${String(e)}`),
        );
      }, CHECK_DELAY_MS),
    );
  };
  documents.onDidChangeContent((e) => schedule(e.document.uri));
  // Closed: the file's diagnostics now come from the disk's version.
  documents.onDidClose((e) => schedule(e.document.uri));

  /** The open `.agent` document at `uri`, if there is one. */
  const agentDocument = (uri: string) => {
    const doc = documents.get(uri);
    return doc?.uri.endsWith(".agent") ? doc : undefined;
  };

  connection.onDocumentFormatting((params) => {
    const doc = agentDocument(params.textDocument.uri);
    if (!doc) return [];
    const r = formatAgentText(doc.uri, doc.getText());
    if (!r.ok || !r.changed) return [];
    return [
      {
        range: { start: { line: 0, character: 0 }, end: doc.positionAt(doc.getText().length) },
        newText: r.text,
      },
    ];
  });

  /** The validated project of a document, and the document's path in it. */
  const located = (uri: string) => {
    if (!uri.startsWith("file:")) return undefined;
    const path = fileURLToPath(uri);
    const root = projectRootOf(path);
    const result = root === undefined ? undefined : validated.get(root);
    const rel = root === undefined ? undefined : projectPath(root, path);
    if (root === undefined || result === undefined || rel === undefined) return undefined;
    return { root, result, rel };
  };
  const locationOf = (root: string, span: Span) => ({
    uri: pathToFileURL(join(root, span.file)).href,
    range: rangeOf(span),
  });

  connection.onHover((params) => {
    const at = located(params.textDocument.uri);
    if (!at) return null;
    const { line, character } = params.position;
    const markdown = hoverAt(at.result, at.rel, line + 1, character + 1);
    return markdown === undefined ? null : { contents: { kind: "markdown", value: markdown } };
  });

  /**
   * Each root's resources at the base revision (`baseRef`, default HEAD), for the code lens:
   * read with git plumbing at most every BASE_TTL_MS; undefined when there is none to read
   * (not a git repository, no such revision, a base that does not validate).
   */
  type Base = { at: number; resources?: ResourceRecord[]; commit?: string };
  const bases = new Map<string, Base>();
  const BASE_TTL_MS = 30_000;
  let baseRef = "HEAD";
  const readBase = async (root: string, at: number): Promise<Base> => {
    try {
      const rev = await readProjectAtRevision(root, baseRef);
      if (!rev.existed) return { at, resources: [], commit: rev.commit };
      const v = validateProject(rev.files);
      if (v.diagnostics.some((d) => d.severity === "error")) return { at };
      return { at, resources: projectResources(v).resources, commit: rev.commit };
    } catch {
      return { at }; // No git, no such revision: no lens.
    }
  };
  const baseOf = async (root: string) => {
    const cached = bases.get(root);
    if (cached && Date.now() - cached.at < BASE_TTL_MS) return cached;
    const base = await readBase(root, Date.now());
    bases.set(root, base);
    return base;
  };

  connection.onCodeLens(async (params) => {
    const at = located(params.textDocument.uri);
    if (at === undefined || !at.rel.endsWith(".agent")) return [];
    const base = await baseOf(at.root);
    if (base.resources === undefined) return [];
    const planned = planProject(
      at.result,
      {
        resources: base.resources,
        source: { source: "git", ref: baseRef, ...(base.commit ? { commit: base.commit } : {}) },
      },
      { path: "." },
    );
    if (!planned.ok) return [];
    const byAgent = new Map(planned.plan.authority.agents.map((a) => [a.address, a]));
    const known = new Set(base.resources.map((r) => r.address));
    return [...at.result.project.agents.values()]
      .filter((a) => a.span.file === at.rel)
      .map((a) => {
        const address = agentAddress(a.name);
        const change = byAgent.get(address);
        const title = !known.has(address)
          ? `new agent vs ${baseRef}`
          : change === undefined ||
              (change.autonomous === "UNCHANGED" && change.gated === "UNCHANGED")
            ? `authority unchanged vs ${baseRef}`
            : `authority vs ${baseRef}: autonomous ${change.autonomous}, gated ${change.gated}`;
        return { range: rangeOf(a.span), command: { title, command: "" } };
      });
  });

  connection.onCompletion((params) => {
    const at = located(params.textDocument.uri);
    const doc = documents.get(params.textDocument.uri);
    if (!at || !doc) return [];
    const items = completionsAt(
      at.result.project,
      at.rel,
      doc.getText(),
      doc.offsetAt(params.position),
    );
    return items.map((c) => ({
      label: c.label,
      kind: COMPLETION_KINDS[c.kind],
      ...(c.detail !== undefined ? { detail: c.detail } : {}),
    }));
  });

  connection.onDefinition((params) => {
    const at = located(params.textDocument.uri);
    if (!at) return null;
    const { line, character } = params.position;
    const symbol = symbolAt(at.result.project, at.rel, line + 1, character + 1);
    const span = symbol && definitionOf(at.result.project, symbol);
    return span ? locationOf(at.root, span) : null;
  });

  connection.onReferences((params) => {
    const at = located(params.textDocument.uri);
    if (!at) return [];
    const { line, character } = params.position;
    const symbol = symbolAt(at.result.project, at.rel, line + 1, character + 1);
    if (!symbol) return [];
    const { definition, uses } = referencesOf(at.result.project, symbol);
    const spans = params.context.includeDeclaration && definition ? [definition, ...uses] : uses;
    return spans.map((s) => locationOf(at.root, s));
  });

  connection.onDocumentSymbol((params) => {
    const doc = agentDocument(params.textDocument.uri);
    if (!doc) return [];
    const source = new SourceText(doc.uri, doc.getText());
    const parsed = parseAgentFile(source);
    const symbols: DocumentSymbol[] = [];
    for (const decl of parsed.file.decls) {
      const name = "name" in decl ? decl.name.name : decl.kind;
      const kind =
        decl.kind === "agent"
          ? SymbolKind.Class
          : decl.kind === "workflow"
            ? SymbolKind.Function
            : decl.kind === "tool"
              ? SymbolKind.Interface
              : SymbolKind.Namespace;
      const range = rangeOf(source.span(decl.range));
      const selectionRange = "name" in decl ? rangeOf(source.span(decl.name.range)) : range;
      symbols.push({ name, detail: decl.kind, kind, range, selectionRange });
    }
    return symbols;
  });

  documents.listen(connection);
  connection.listen();
}
