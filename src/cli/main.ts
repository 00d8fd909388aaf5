/**
 * The `terfyn` command line: dispatches to a command, turns user errors into one clear line and
 * exit 1, and reports anything unexpected as an internal error (stack trace only with --debug).
 */
import { createInterface } from "node:readline/promises";
import { escapeTerminalText } from "../core/render/terminal-text.ts";
import { type CliIo, UsageError, UserError } from "./io.ts";
import { VERSION } from "./version.ts";

export { VERSION };

type Command = { summary: string; run: (argv: string[], io: CliIo) => Promise<number> };

// Each command's module is imported when it runs, not when the CLI loads: in the bundle
// (dist/cli.js) esbuild then evaluates a module and its dependencies on first import, so
// `terfyn validate` no longer evaluates the Anthropic SDK, JUnit and SARIF builders and the
// review machinery it never uses (~25 ms of CPU per process, measured by the benchmark).

const COMMANDS: Record<string, Command> = {
  init: {
    summary: "create a project to start from: an agent, a tool, a policy, a test, the Action",
    run: (a, io) => import("./commands/init.ts").then((m) => m.initCommand(a, io)),
  },
  validate: {
    summary: "check a project's .agent files and YAML resources",
    run: (a, io) => import("./commands/validate.ts").then((m) => m.validateCommand(a, io)),
  },
  fmt: {
    summary: "lay out .agent files one way (--check for CI)",
    run: (a, io) => import("./commands/fmt.ts").then((m) => m.fmtCommand(a, io)),
  },
  lsp: {
    summary: "the language server for editors (--stdio)",
    run: (a, io) => import("./commands/lsp.ts").then((m) => m.lspCommand(a, io)),
  },
  plan: {
    summary: "show what would change, above all in agents' authority",
    run: (a, io) => import("./commands/plan.ts").then((m) => m.planCommand(a, io)),
  },
  apply: {
    summary: "record the resources and effect bounds in the state file",
    run: (a, io) => import("./commands/apply.ts").then((m) => m.applyCommand(a, io)),
  },
  test: {
    summary: "check capability assertions over the effect bounds, with no model",
    run: (a, io) => import("./commands/test.ts").then((m) => m.testCommand(a, io)),
  },
  run: {
    summary: "execute a workflow: capability gate, sandbox, journal, resume",
    run: (a, io) => import("./commands/run.ts").then((m) => m.runCommand(a, io)),
  },
  approve: {
    summary: "approve what a paused run awaits, by its content hash",
    run: (a, io) => import("./commands/approve.ts").then((m) => m.approveCommand(a, io)),
  },
  runs: {
    summary: "list runs, or show one run's state and journal",
    run: (a, io) => import("./commands/runs.ts").then((m) => m.runsCommand(a, io)),
  },
  review: {
    summary: "answer and fix review comments from a request file (local mode)",
    run: (a, io) => import("./commands/review.ts").then((m) => m.reviewCommand(a, io)),
  },
};

export function mainHelp(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return `terfyn ${VERSION}: deterministic, bounded control around nondeterministic AI agents

Usage: terfyn <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`)
  .join("\n")}

Global options: --no-color (as NO_COLOR=1), --debug (stack traces for internal errors).
Run \`terfyn <command> --help\` for a command's options.
`;
}

export async function runCli(argvIn: string[], ioIn: CliIo): Promise<number> {
  // --no-color anywhere is NO_COLOR=1 for every command.
  const noColor = argvIn.includes("--no-color");
  const argv = noColor ? argvIn.filter((a) => a !== "--no-color") : argvIn;
  const io = noColor ? { ...ioIn, env: { ...ioIn.env, NO_COLOR: "1" } } : ioIn;
  const [first, ...rest] = argv;
  const debug = argv.includes("--debug");
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    if (first === "help" && rest[0] && COMMANDS[rest[0]]) return runCli([rest[0], "--help"], io);
    io.stdout(mainHelp());
    return first === undefined ? 1 : 0;
  }
  if (first === "--version" || first === "-v") {
    io.stdout(`${VERSION}\n`);
    return 0;
  }
  const command = COMMANDS[first];
  if (!command) {
    io.stderr(`terfyn: unknown command \`${escapeTerminalText(first)}\`\n\n${mainHelp()}`);
    return 1;
  }
  try {
    return await command.run(rest, io);
  } catch (e) {
    // Messages quote paths, names and file contents: none of it may reach the terminal raw.
    const message = escapeTerminalText(String((e as Error)?.message ?? e), { multiline: true });
    if (e instanceof UsageError) {
      io.stderr(`terfyn ${message}\nRun \`terfyn ${first} --help\` for usage.\n`);
      return 1;
    }
    if (await isUserFacing(e)) {
      io.stderr(`terfyn ${first}: ${message}\n`);
      return 1;
    }
    const err = e as Error;
    io.stderr(`terfyn ${first}: internal error, please report: ${message}\n`);
    if (debug) io.stderr(`${err?.stack ?? ""}\n`);
    else io.stderr("(run again with --debug to see the stack trace)\n");
    return 1;
  }
}

/**
 * Whether an error is the user's to fix (a message, exit 1) rather than a bug. The adapters'
 * error classes are imported here only when an error happened: importing them when the CLI
 * loads would evaluate their modules (YAML, zod, the engine) for every command, `--version`
 * included; a module that threw is loaded already, so this costs nothing then.
 */
async function isUserFacing(e: unknown): Promise<boolean> {
  if (e instanceof UserError) return true;
  const classes = await Promise.all([
    import("../adapters/fs/read-project.ts").then((m) => m.ProjectNotFoundError),
    import("../adapters/fs/state-file.ts").then((m) => m.StateFileError),
    import("../adapters/fs/run-store.ts").then((m) => m.RunDirectoryError),
    import("../adapters/models/model-script.ts").then((m) => m.ModelScriptError),
    import("../adapters/workspace/tool-router.ts").then((m) => m.ToolSetupError),
    import("../adapters/git/read-revision.ts").then((m) => m.GitRevisionError),
  ]);
  return classes.some((c) => e instanceof c);
}

/**
 * A process stream that goes quiet once its reader has gone (`terfyn plan … | head -1`):
 * without an error listener, the EPIPE is an unhandled 'error' event with a stack trace. The
 * command still finishes its work and exits with its own code; only its output has no reader.
 */
function quietWhenClosed(stream: NodeJS.WriteStream): (text: string) => void {
  let open = true;
  stream.on("error", () => {
    // EPIPE, or the stream failing otherwise: either way there is nowhere left to write.
    open = false;
  });
  return (text) => {
    if (open) stream.write(text);
  };
}

/** Entry for the `terfyn` binary. */
export async function main(argv: string[]): Promise<number> {
  return runCli(argv, {
    stdout: quietWhenClosed(process.stdout),
    stderr: quietWhenClosed(process.stderr),
    cwd: process.cwd(),
    env: process.env,
    isTTY: Boolean(process.stdout.isTTY),
    readStdin: async () => {
      const { text } = await import("node:stream/consumers");
      return text(process.stdin);
    },
    ...(process.stdin.isTTY
      ? {
          prompt: async (question: string) => {
            const rl = createInterface({ input: process.stdin, output: process.stderr });
            try {
              return await rl.question(question);
            } finally {
              rl.close();
            }
          },
        }
      : {}),
  });
}
