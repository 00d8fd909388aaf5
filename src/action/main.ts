/**
 * The bundled Action's entry (dist/index.js): only calls run(). TERFYN_ACTION_GLOBAL_FETCH=1
 * (tests) makes it use Node's global fetch, which nock intercepts, with no retries.
 */
import { run } from "./run.ts";

const testing = process.env.TERFYN_ACTION_GLOBAL_FETCH === "1";
await run(testing ? { fetch: globalThis.fetch, retries: 0 } : {});
