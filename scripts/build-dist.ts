/**
 * Bundles with esbuild, ESM with no run-time dependencies, each for the Node it runs on
 * (scripts/node-targets.ts):
 * - the Action (src/action/main.ts) into dist/index.js, which action.yml runs (node24);
 * - the CLI (src/cli/bin.ts) into dist/cli.js, which bin/terfyn.mjs runs, for the lowest Node
 *   package.json's engines admits: it starts in a fraction of the time the TypeScript sources
 *   take through tsx.
 * `--check` fails when a committed bundle differs from a fresh build (CI runs it).
 *
 * Start-up: `undici` and `tunnel` (CommonJS, imported by @actions/http-client, which
 * @actions/core imports for OIDC, and by @actions/github) are evaluated on first use instead of
 * when the bundle loads (see `lazyCommonJs`): they are the HTTP client and its proxy tunnels,
 * which a run with nothing to do never uses, and evaluating them was ~25 ms of the bundle's
 * ~150 ms cold start (`npm run bench -- --action-only`).
 */

import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";
import { BUNDLE_ALIASES } from "./bundle-aliases.ts";
import { actionTarget, cliTarget } from "./node-targets.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const check = process.argv.includes("--check");

/**
 * CommonJS packages evaluated on first use rather than when the bundle loads. An ES module's
 * `import { x } from "cjs"` makes esbuild call the package's CommonJS wrapper at load time; a
 * `require()` inside a function calls it only when the function runs. So every import of these
 * packages resolves to a stand-in (CommonJS too) with one getter per export of the real package,
 * read from the package itself here: the first access of any export `require`s the real package,
 * bundled as usual, and returns its value. Importers use them as before (`new ProxyAgent(…)`,
 * `tunnel.httpsOverHttp(…)`, `fetch(…)`).
 */
const LAZY_COMMONJS = ["undici", "tunnel"];
const LAZY_NAMESPACE = "terfyn-lazy-commonjs";

function lazyCommonJs(): Plugin {
  const filter = new RegExp(`^(${LAZY_COMMONJS.join("|")})$`);
  return {
    name: LAZY_NAMESPACE,
    setup(b) {
      b.onResolve({ filter }, async (args) => {
        if (args.pluginData === LAZY_NAMESPACE) return undefined;
        // Where the importer's own resolution leads (so each importer keeps its version).
        const real = await b.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: LAZY_NAMESPACE,
        });
        if (real.errors.length > 0) return { errors: real.errors };
        // Relative to the repository, like zodEnglishOnly's: no checkout's path in the bundle.
        return { path: relative(root, real.path), namespace: LAZY_NAMESPACE };
      });
      b.onLoad({ filter: /.*/, namespace: LAZY_NAMESPACE }, (args) => {
        const path = join(root, args.path);
        const names = Object.getOwnPropertyNames(createRequire(import.meta.url)(path));
        if (names.includes("__esModule"))
          return { errors: [{ text: `${args.path} sets __esModule; it cannot be loaded lazily` }] };
        const contents = [
          "let loaded;",
          `const load = () => (loaded ??= require(${JSON.stringify(`./${basename(path)}`)}));`,
          `for (const name of ${JSON.stringify(names)})`,
          "  Object.defineProperty(module.exports, name, { enumerable: true, get: () => load()[name] });",
          "",
        ].join("\n");
        return { contents, loader: "js", resolveDir: dirname(path) };
      });
    },
  };
}

/**
 * zod's `locales` namespace (`z.locales`: error messages in some forty languages) is left out:
 * nothing here calls `z.config(z.locales.xx())`, and the English messages zod uses by default
 * come from its own import of `locales/en.js`, which stays. Compiling the other languages was
 * ~8 ms of every process that loads zod (`terfyn validate` and `test` among them).
 */
const ZOD_LOCALES = /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/;

function zodEnglishOnly(): Plugin {
  return {
    name: "terfyn-zod-english-only",
    setup(b) {
      b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, async (args) => {
        if (args.pluginData === "terfyn-zod-english-only") return undefined;
        const real = await b.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: "terfyn-zod-english-only",
        });
        if (real.errors.length > 0 || !ZOD_LOCALES.test(real.path)) return real;
        // Relative to the repository: a path in a plugin's namespace goes into the chunks'
        // content hashes, so an absolute one made dist/ differ from one checkout to another.
        return { path: relative(root, real.path), namespace: "terfyn-zod-english-only" };
      });
      b.onLoad({ filter: /.*/, namespace: "terfyn-zod-english-only" }, (args) => ({
        contents: 'export { default as en } from "./en.js";\n',
        loader: "js",
        resolveDir: dirname(join(root, args.path)),
      }));
    },
  };
}

/**
 * The CLI is split (`chunks`): its entry dist/cli.js holds what every command needs, and each
 * command's modules (imported when the command runs, src/cli/main.ts) are chunks under
 * dist/cli-chunks/. So `terfyn validate` no longer compiles the Anthropic SDK, the JUnit and
 * SARIF builders or the review machinery: V8 parses all of a module's source before running
 * any of it, and that was ~25 ms of CPU per process on top of not evaluating them. The Action
 * is two self-contained files: action.yml runs dist/index.js (the plan mode), which loads
 * dist/review-fix.js only for `mode: review-fix` (chunks shared between the two would be one
 * module instance across the tests' fresh imports of dist/index.js, and keep stale state).
 */
const BUNDLES = [
  {
    entry: join(root, "src", "action", "main.ts"),
    out: join(root, "dist", "index.js"),
    target: actionTarget(root),
  },
  // `mode: review-fix`, loaded by dist/index.js only in that mode (src/action/run.ts).
  {
    entry: join(root, "src", "action", "review-fix-entry.ts"),
    out: join(root, "dist", "review-fix.js"),
    target: actionTarget(root),
  },
  {
    entry: join(root, "src", "cli", "bin.ts"),
    out: join(root, "dist", "cli.js"),
    chunks: join(root, "dist", "cli-chunks"),
    target: cliTarget(root),
  },
];

/** Every file below a directory (empty when it does not exist). */
function filesBelow(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

let stale = 0;
for (const { entry, out, chunks, target } of BUNDLES) {
  const split =
    chunks === undefined
      ? { outfile: out }
      : {
          outdir: dirname(out),
          splitting: true,
          entryNames: "[name]",
          chunkNames: `${relative(dirname(out), chunks)}/[name]-[hash]`,
        };
  if (chunks !== undefined && !check) rmSync(chunks, { recursive: true, force: true });
  const result = await build({
    entryPoints: chunks === undefined ? [entry] : [{ in: entry, out: "cli" }],
    bundle: true,
    platform: "node",
    format: "esm",
    target,
    minify: true,
    legalComments: "none",
    write: !check,
    ...split,
    logLevel: "warning",
    plugins: [lazyCommonJs(), zodEnglishOnly()],
    alias: BUNDLE_ALIASES,
    // Some dependencies are CommonJS and use require(), __filename and __dirname (write-file-atomic
    // does); give the ESM bundle all three.
    banner: {
      js: "import{createRequire as __terfynCreateRequire}from'node:module';import{fileURLToPath as __terfynPath}from'node:url';const require=__terfynCreateRequire(import.meta.url);const __filename=__terfynPath(import.meta.url);const __dirname=__terfynPath(new URL('.',import.meta.url));",
    },
  });
  const name = out.slice(root.length + 1);
  const outputs = [out, ...(chunks === undefined ? [] : filesBelow(chunks))];
  if (check) {
    const fresh = new Map((result.outputFiles ?? []).map((f) => [f.path, f.text]));
    const paths = new Set([...fresh.keys(), ...outputs]);
    let differs = false;
    for (const path of paths) {
      let committed: string | undefined;
      try {
        committed = readFileSync(path, "utf8");
      } catch {
        committed = undefined;
      }
      if (fresh.get(path) !== committed) differs = true;
    }
    if (differs) {
      console.error(`${name} is out of date: run \`npm run build\` and commit dist/`);
      stale++;
    } else {
      const bytes = [...fresh.values()].reduce((n, t) => n + t.length, 0);
      console.log(`${name} is up to date (${(bytes / 1024).toFixed(0)} KiB)`);
    }
  } else {
    const bytes = outputs.reduce((n, p) => n + statSync(p).size, 0);
    const files = outputs.length > 1 ? ` in ${outputs.length} files` : "";
    console.log(`wrote ${name} (${(bytes / 1024).toFixed(0)} KiB${files})`);
  }
}
process.exitCode = stale > 0 ? 1 : 0;
