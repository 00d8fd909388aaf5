#!/usr/bin/env node
// The `terfyn` binary. It runs the bundled CLI (dist/cli.js, committed and rebuilt by
// `npm run build` and before `npm test`); TERFYN_FROM_SOURCE=1 runs the TypeScript sources
// through tsx instead, for working on the CLI without rebuilding.
import { existsSync } from "node:fs";

const bundle = new URL("../dist/cli.js", import.meta.url);
if (process.env.TERFYN_FROM_SOURCE !== "1" && existsSync(bundle)) {
  await import(bundle.href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  const { main } = await import("../src/cli/main.ts");
  process.exitCode = await main(process.argv.slice(2));
}
