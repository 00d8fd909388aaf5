/**
 * The bundled CLI's entry (dist/cli.js, run by bin/terfyn.mjs).
 */
import { main } from "./main.ts";

process.exitCode = await main(process.argv.slice(2));
