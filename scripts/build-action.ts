/**
 * Bundles the Action (src/action/main.ts) into dist/index.js with esbuild: one ESM file for
 * Node 20+, no external dependencies at run time. `--check` fails when the committed bundle
 * differs from a fresh build (CI runs it).
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outfile = join(root, "dist", "index.js");
const check = process.argv.includes("--check");

const result = await build({
  entryPoints: [join(root, "src", "action", "main.ts")],
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  minify: true,
  legalComments: "none",
  write: !check,
  outfile,
  logLevel: "warning",
  // Some dependencies are CommonJS and call require(); give the ESM bundle one.
  banner: {
    js: "import{createRequire as __terfynCreateRequire}from'node:module';const require=__terfynCreateRequire(import.meta.url);",
  },
});
if (check) {
  const fresh = result.outputFiles?.[0]?.text ?? "";
  let committed = "";
  try {
    committed = readFileSync(outfile, "utf8");
  } catch {
    committed = "";
  }
  if (fresh !== committed) {
    console.error("dist/index.js is out of date: run `npm run build:action` and commit dist/");
    process.exitCode = 1;
  } else {
    console.log(`dist/index.js is up to date (${(fresh.length / 1024).toFixed(0)} KiB)`);
  }
} else {
  console.log(`wrote dist/index.js (${(readFileSync(outfile).length / 1024).toFixed(0)} KiB)`);
}
