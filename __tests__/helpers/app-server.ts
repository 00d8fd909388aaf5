/**
 * The App's real server (src/app/server.ts, the package's start script) started as its own
 * process for the startup checks that stop it: only PATH and HOME from this environment, the
 * App's credentials and slug set, then `env`. Its exit, stdout and stderr.
 */
import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appKeyPair } from "./app-key.ts";

const ROOT = join(import.meta.dirname, "..", "..");

/** A real RSA key: the start-up checks read and check the key before anything else. */
const KEY = appKeyPair().privateKey;

export function startAppServer(env: Record<string, string>): SpawnSyncReturns<string> {
  return spawnSync(
    process.execPath,
    [join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), join(ROOT, "src", "app", "server.ts")],
    {
      // An empty working directory: Probot (and so the App) reads .env and *.pem from it.
      cwd: mkdtempSync(join(tmpdir(), "terfyn-app-cwd-")),
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: process.env.HOME ?? "/",
        // Credentials, so the App starts as itself (none at all is the setup flow).
        APP_ID: "1",
        PRIVATE_KEY: KEY,
        WEBHOOK_SECRET: "test-secret",
        TERFYN_APP_SLUG: "terfyn-test",
        ...env,
      },
      encoding: "utf8",
      timeout: 60_000,
    },
  );
}
