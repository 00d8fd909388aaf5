/**
 * The benchmark's floor: the work every correct tool must do for `terfyn validate` on a
 * project, and nothing more. It walks the project the way Terfyn does, reads exactly the
 * project's bytes, parses every YAML file with the same `yaml` library and options, and
 * tokenises every `.agent` file with Terfyn's own lexer. With `--against REV` it also reads the
 * project at that git revision from git objects and does the same for those bytes (the floor
 * of `plan --against`). Bundled into a standalone .mjs by bench/ratios.ts and run as a process,
 * so it pays Node's start-up like the CLI does.
 *
 *   node floor.mjs DIR [--against REV]
 */
import { LineCounter, parseAllDocuments } from "yaml";
import { readProjectDirectory } from "../src/adapters/fs/read-project.ts";
import { readProjectAtRevision } from "../src/adapters/git/read-revision.ts";
import { YAML_PARSE_OPTIONS } from "../src/core/config/yaml-value.ts";
import { lex } from "../src/core/language/lexer.ts";
import { SourceText } from "../src/core/source.ts";

function parseAll(files: readonly { path: string; text: string }[]): number {
  let units = 0;
  for (const f of files) {
    if (f.path.endsWith(".agent")) units += lex(new SourceText(f.path, f.text)).tokens.length;
    else
      units += parseAllDocuments(f.text, {
        lineCounter: new LineCounter(),
        ...YAML_PARSE_OPTIONS,
      }).length;
  }
  return units;
}

const [dir, flag, rev] = process.argv.slice(2);
if (!dir) {
  process.stderr.write("usage: floor.mjs DIR [--against REV]\n");
  process.exit(2);
}
let units = parseAll((await readProjectDirectory(dir)).files);
if (flag === "--against" && rev) units += parseAll((await readProjectAtRevision(dir, rev)).files);
process.stdout.write(`${units}\n`);
