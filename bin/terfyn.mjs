#!/usr/bin/env node
// The `terfyn` binary. It runs the bundled CLI (dist/cli.js, committed and rebuilt by
// `npm run build` and before `npm test`); TERFYN_FROM_SOURCE=1 runs the TypeScript sources
// through tsx instead, for working on the CLI without rebuilding. The installed package holds
// the bundle but neither the sources nor tsx: there the fallback says so instead of failing
// with a stack trace.
import { existsSync } from "node:fs";

const bundle = new URL("../dist/cli.js", import.meta.url);
const fromSource = process.env.TERFYN_FROM_SOURCE === "1";
if (!fromSource && existsSync(bundle)) {
  await import(bundle.href);
} else {
  const sources = new URL("../src/cli/main.ts", import.meta.url);
  const why = fromSource
    ? "TERFYN_FROM_SOURCE=1 runs the TypeScript sources"
    : "dist/cli.js (the bundled CLI) is missing, so it would run the TypeScript sources";
  const fail = (what) => {
    process.stderr.write(`terfyn: ${why}, but ${what}\n`);
    process.exit(1);
  };
  if (!existsSync(sources))
    fail(
      fromSource
        ? "this installation has none (it is the published package): unset TERFYN_FROM_SOURCE"
        : "this installation has none: reinstall terfyn",
    );
  let register;
  try {
    ({ register } = await import("tsx/esm/api"));
  } catch {
    fail("tsx, which runs them, is not installed: run `npm ci` in the checkout");
  }
  register();
  const { main } = await import("../src/cli/main.ts");
  process.exitCode = await main(process.argv.slice(2));
}
