// The Terfyn extension: starts `terfyn lsp --stdio` (the command named by the `terfyn.path`
// setting) for .agent files and the YAML resources of a Terfyn project. Plain JavaScript, so
// the extension needs no build step; `vsce package` in this directory makes the .vsix.
const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const settings = vscode.workspace.getConfiguration("terfyn");
  const command = settings.get("path") || "terfyn";
  const server = { command, args: ["lsp", "--stdio"], transport: TransportKind.stdio };
  client = new LanguageClient(
    "terfyn",
    "Terfyn",
    { run: server, debug: server },
    {
      documentSelector: [
        { scheme: "file", language: "terfyn-agent" },
        { scheme: "file", language: "yaml" },
      ],
      initializationOptions: { baseRef: settings.get("baseRef") || "HEAD" },
    },
  );
  context.subscriptions.push({ dispose: () => client && client.stop() });
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
