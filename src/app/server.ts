/**
 * The App as a standalone server (the package's start script; Probot's run: APP_ID, PRIVATE_KEY,
 * WEBHOOK_SECRET from the environment or .env). TERFYN_APP_SLUG names the App (its bot login is
 * `<slug>[bot]`). To host it behind another Node server instead, mount
 * `createNodeMiddleware(terfynApp(...), { probot })` from probot.
 */
import { run } from "probot";
import { terfynApp } from "./app.ts";
import { unwiredRunner } from "./unwired-runner.ts";

const appSlug = process.env.TERFYN_APP_SLUG;
if (!appSlug) {
  process.stderr.write(
    "terfyn app: set TERFYN_APP_SLUG to the App's slug (its bot login is <slug>[bot])\n",
  );
  process.exit(1);
}
await run(terfynApp({ appSlug, runner: unwiredRunner }));
