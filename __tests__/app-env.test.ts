/**
 * What the App needs from its environment (issue 23, item 1): checked at start with one message
 * naming every problem; no credentials at all is Probot's setup (manifest) flow, which needs no
 * slug; with credentials and no TERFYN_APP_SLUG the slug is read from `GET /app` with the App's
 * JWT. The real server (`npm start`'s src/app/server.ts) in a child process; GitHub Enterprise
 * is a local HTTP server (GHE_HOST, GHE_PROTOCOL=http), so nothing leaves the machine.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkAppEnv } from "../src/core/app/app-env.ts";
import { appKeyPair, verifiedJwt } from "./helpers/app-key.ts";
import { freePort } from "./helpers/local-server.ts";

const repo = join(import.meta.dirname, "..");
const { privateKey, publicKey } = appKeyPair();

/** The parent's PATH and HOME, no App settings, no network helpers. */
function baseEnv(extra: Record<string, string>): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    NO_SMEE_SETUP: "true",
    LOG_LEVEL: "info",
    ...extra,
  };
}

function startServer(env: Record<string, string>): {
  child: ChildProcess;
  output: () => string;
  until: (text: string, ms?: number) => Promise<void>;
  exit: Promise<number | null>;
} {
  const child = spawn(process.execPath, ["--import", "tsx", "src/app/server.ts"], {
    cwd: repo,
    env: baseEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.on("data", (d) => (out += d));
  const exit = new Promise<number | null>((r) => child.on("exit", (c) => r(c)));
  const until = async (text: string, ms = 20_000) => {
    const end = Date.now() + ms;
    while (!out.includes(text)) {
      if (Date.now() > end || child.exitCode !== null)
        throw new Error(`waited for ${JSON.stringify(text)}; the server said:\n${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return { child, output: () => out, until, exit };
}

describe("the App's environment, checked at start", () => {
  it("names every problem in one message and stops", async () => {
    const s = startServer({
      APP_ID: "twelve",
      TERFYN_APP_MAX_TOKENS: "lots",
      TERFYN_LOCK_STALE_SECONDS: "5",
      GHE_HOST: "https://ghe.example/api",
    });
    expect(await s.exit).toBe(1);
    const out = s.output();
    expect(out).toContain("terfyn app: cannot start:\n");
    for (const text of [
      'APP_ID must be a positive integer, not "twelve"',
      "PRIVATE_KEY (the PEM text) or PRIVATE_KEY_PATH (its file) is not set",
      "WEBHOOK_SECRET is not set",
      'TERFYN_APP_MAX_TOKENS must be a positive integer, not "lots"',
      'TERFYN_LOCK_STALE_SECONDS must be an integer of at least 60, not "5"',
      "GHE_HOST must be a host name",
    ])
      expect(out).toContain(text);
  });

  it("with no credentials at all starts the setup flow, without asking for a slug", async () => {
    const port = await freePort();
    const s = startServer({
      PORT: String(port),
      WEBHOOK_PROXY_URL: "https://smee.example/terfyn-test-channel",
    });
    try {
      await s.until("starting the setup flow");
      await s.until(`localhost:${port}`);
      const res = await fetch(`http://127.0.0.1:${port}/`, { redirect: "manual" });
      expect([200, 302]).toContain(res.status);
      // The setup page's manifest is app.yml's, with the webhook URL the flow fills in.
      const page = await (await fetch(`http://127.0.0.1:${port}/probot`)).text();
      const manifest = JSON.parse(/name="manifest"[^>]*value='([^']*)'/.exec(page)?.[1] ?? "{}");
      expect(manifest.name).toBe("Terfyn");
      expect(manifest.default_permissions.workflows).toBeUndefined();
      expect(manifest.hook_attributes.url).toBe("https://smee.example/terfyn-test-channel");
      expect(s.output()).not.toContain("TERFYN_APP_SLUG");
    } finally {
      s.child.kill("SIGTERM");
      await s.exit;
    }
  });

  it("with credentials and no TERFYN_APP_SLUG reads the slug from GET /app, with the App's JWT", async () => {
    let auth = "";
    const ghe: Server = createServer((req, res) => {
      if (req.method === "GET" && req.url === "/api/v3/app") {
        auth = String(req.headers.authorization ?? "");
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ id: 123, slug: "acme-terfyn", name: "Acme Terfyn" }));
        return;
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => ghe.listen(0, "127.0.0.1", r));
    const port = await freePort();
    const s = startServer({
      APP_ID: "123",
      PRIVATE_KEY: privateKey,
      WEBHOOK_SECRET: "a-webhook-secret",
      GHE_HOST: `127.0.0.1:${(ghe.address() as AddressInfo).port}`,
      GHE_PROTOCOL: "http",
      TERFYN_APP_RUNNER: "unwired",
      PORT: String(port),
    });
    try {
      await s.until("terfyn app: running as acme-terfyn[bot]");
      expect(verifiedJwt(auth, publicKey)).toBeDefined();
    } finally {
      s.child.kill("SIGTERM");
      await s.exit;
      await new Promise((r) => ghe.close(r));
    }
  });
});

describe("checkAppEnv, from source", () => {
  it("no credentials is setup; one of the two is a problem; production never sets up", () => {
    expect(checkAppEnv({})).toEqual({ mode: "setup", problems: [] });
    expect(checkAppEnv({ NODE_ENV: "production" }).problems).toHaveLength(1);
    expect(checkAppEnv({ APP_ID: "1" }).problems.join()).toContain("PRIVATE_KEY");
    expect(checkAppEnv({ PRIVATE_KEY_PATH: "k.pem" }).problems.join()).toContain(
      "APP_ID is not set",
    );
    expect(
      checkAppEnv({
        APP_ID: "1",
        PRIVATE_KEY: "k",
        WEBHOOK_SECRET: "s",
        TERFYN_APP_SLUG: "my-app",
      }),
    ).toEqual({ mode: "app", problems: [] });
    expect(
      checkAppEnv({ APP_ID: "1", PRIVATE_KEY: "k", WEBHOOK_SECRET: "s", TERFYN_APP_SLUG: "a b" })
        .problems,
    ).toHaveLength(1);
  });
});
