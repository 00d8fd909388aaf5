#!/usr/bin/env node
// The `terfyn` binary: runs the TypeScript sources directly through tsx, so `npm ci` is the
// only set-up step. All behaviour lives in src/cli/main.ts.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
