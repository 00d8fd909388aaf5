/**
 * The bundled CLI's entry (dist/cli.js, run by bin/terfyn.mjs).
 */
import { main } from "./main.ts";
import { tuneV8ForShortRuns } from "./v8-tuning.ts";

tuneV8ForShortRuns();
process.exitCode = await main(process.argv.slice(2));
