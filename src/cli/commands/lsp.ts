/**
 * `terfyn lsp --stdio`: the language server, on standard input and output, for an editor to
 * start (editors/vscode does). It runs until the editor closes the connection.
 */
import {
  createConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-languageserver/node";
import { startLanguageServer } from "../../adapters/lsp/server.ts";
import { parseFlags } from "../args.ts";
import { type CliIo, UsageError } from "../io.ts";

export const LSP_HELP = `Usage: terfyn lsp --stdio

Run the Terfyn language server on standard input and output (the Language
Server Protocol), for an editor to start. It reports what \`terfyn validate\`
reports, as you type, for the project of each open .agent or YAML file (the
nearest directory above it holding terfyn.yaml); on hover over an agent or a
grant, shows what it reaches and the policies that bear on it; goes to the
definition of an agent, workflow, tool, operation or schema and finds its
references; formats .agent files as \`terfyn fmt\` does; and lists a file's
agents, workflows and tools.

Options:
  --stdio      speak the protocol on standard input and output (required)
  -h, --help   show this help
`;

export async function lspCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags("lsp", argv, { stdio: { type: "boolean" } });
  if (values.help) {
    io.stdout(LSP_HELP);
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError(`lsp: unexpected argument \`${positionals[0]}\``);
  if (values.stdio !== true)
    throw new UsageError("lsp: pass --stdio (the server speaks on standard input and output)");
  const connection = createConnection(
    new StreamMessageReader(process.stdin),
    new StreamMessageWriter(process.stdout),
  );
  const closed = new Promise<void>((done) => connection.onExit(() => done()));
  startLanguageServer(connection);
  await closed;
  // The editor said exit: stop reading, so the process can end.
  connection.dispose();
  process.stdin.destroy();
  return 0;
}
