/**
 * `terfyn fmt [--check] [--project DIR] [FILE…]`: lays out `.agent` files one way (the
 * formatter in src/core/language/format.ts, which the language server uses too).
 */
import { readFile } from "node:fs/promises";
import { relative, resolve } from "node:path";
import writeFileAtomic from "write-file-atomic";
import { readProjectDirectory } from "../../adapters/fs/read-project.ts";
import type { Diagnostic } from "../../core/diagnostics.ts";
import { formatAgentText } from "../../core/language/format.ts";
import { renderDiagnosticsText } from "../../core/render/diagnostics-text.ts";
import { escapeTerminalText } from "../../core/render/terminal-text.ts";
import { SourceText } from "../../core/source.ts";
import { plural } from "../../core/words.ts";
import { parseFlags } from "../args.ts";
import { readStdinFor, refuseStdinDirectories, STDIN } from "../file-args.ts";
import { type CliIo, UsageError, UserError, useColor } from "../io.ts";

export const FMT_HELP = `Usage: terfyn fmt [--check] [--project DIR] [FILE...]
       terfyn fmt -              (standard input to standard output)

Lay out .agent files one way: two spaces per open brace or parenthesis, one
space between words, at most one blank line, comments kept where they are, line
breaks kept where you put them. Formatting never changes what a file says: the
result is checked to hold the same tokens and comments, and a file that does
not parse is left as it is (its errors are printed, and the exit code is 1).

Without FILE, formats every .agent file of the project (as validate reads it).

Options:
  --project DIR   the directory holding terfyn.yaml (default: .)
  --check         change nothing; list the files that are not formatted and exit
                  1 when there is one (for CI)
  -h, --help      show this help

Exit codes: 0 formatted (or, with --check, nothing to format); 1 a file not
formatted (--check), a file that does not parse, or a usage error.
`;

export async function fmtCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags("fmt", argv, {
    project: { type: "string" },
    check: { type: "boolean" },
  });
  if (values.help) {
    io.stdout(FMT_HELP);
    return 0;
  }
  const check = values.check === true;
  const problems = (diagnostics: readonly Diagnostic[], path: string, text: string) =>
    renderDiagnosticsText(diagnostics, {
      sources: new Map([[path, new SourceText(path, text)]]),
      displayPath: (file) => file,
      color: useColor(io),
    });
  if (positionals.includes(STDIN)) {
    if (positionals.length > 1)
      throw new UsageError("fmt: `-` formats standard input alone; give no other file with it");
    const text = await readStdinFor(io, "fmt");
    const r = formatAgentText(STDIN, text);
    if (!r.ok) {
      io.stderr(`${problems(r.diagnostics, STDIN, text)}\n`);
      return 1;
    }
    if (check) return r.changed ? 1 : 0;
    io.stdout(r.text);
    return 0;
  }
  refuseStdinDirectories("fmt", {
    "--project": { value: values.project, what: "the directory holding terfyn.yaml" },
  });
  let files: { path: string; display: string }[];
  if (positionals.length > 0) {
    if (values.project !== undefined)
      throw new UsageError("fmt: give either --project DIR or files, not both");
    files = positionals.map((p) => {
      if (!p.endsWith(".agent"))
        throw new UsageError(
          `fmt: ${escapeTerminalText(p)} is not an .agent file (only .agent files are formatted)`,
        );
      return { path: resolve(io.cwd, p), display: p };
    });
  } else {
    const root = resolve(io.cwd, (values.project as string | undefined) ?? ".");
    const read = await readProjectDirectory(root);
    files = read.files
      .filter((f) => f.path.endsWith(".agent"))
      .map((f) => {
        const abs = resolve(root, f.path);
        return { path: abs, display: relative(io.cwd, abs) || f.path };
      });
  }
  let changed = 0;
  let broken = 0;
  for (const f of files) {
    let text: string;
    try {
      text = await readFile(f.path, "utf8");
    } catch (e) {
      throw new UserError(
        `fmt: cannot read ${escapeTerminalText(f.display)}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
      );
    }
    const r = formatAgentText(f.display, text);
    if (!r.ok) {
      broken++;
      io.stderr(
        `${problems(r.diagnostics, f.display, text)}\n${escapeTerminalText(f.display)}: not formatted (it does not parse)\n\n`,
      );
      continue;
    }
    if (!r.changed) continue;
    changed++;
    if (check) io.stdout(`${escapeTerminalText(f.display)}\n`);
    else {
      await writeFileAtomic(f.path, r.text);
      io.stdout(`formatted ${escapeTerminalText(f.display)}\n`);
    }
  }
  const rest = plural(files.length - changed - broken, "file");
  const summary = check
    ? `${plural(changed, "file")} not formatted, ${rest} formatted`
    : `${plural(changed, "file")} formatted, ${rest} unchanged`;
  io.stderr(
    `terfyn fmt: ${summary}${broken > 0 ? `, ${plural(broken, "file")} that do not parse` : ""}\n`,
  );
  return broken > 0 || (check && changed > 0) ? 1 : 0;
}
