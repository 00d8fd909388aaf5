/**
 * What the App needs from its environment (issue 23, item 1): checked at start with one message
 * naming every problem; no credentials at all is Probot's setup (manifest) flow, which needs no
 * slug; with credentials and no TERFYN_APP_SLUG the slug is read from `GET /app` with the App's
 * JWT. The real server (`npm start`'s src/app/server.ts) in a child process; GitHub Enterprise
 * is a local HTTP server (GHE_HOST, GHE_PROTOCOL=http), so nothing leaves the machine. Each
 * server runs in an empty working directory of its own (Probot reads `.env` and a lone `*.pem`
 * there), given the files a test puts in it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHmac, generateKeyPairSync } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkAppEnv } from "../src/core/app/app-env.ts";
import { appKeyPair, verifiedJwt } from "./helpers/app-key.ts";
import { freePort } from "./helpers/local-server.ts";

const repo = join(import.meta.dirname, "..");
const serverTs = join(repo, "src", "app", "server.ts");
// Resolved here: the server's working directory is a temporary one, with no node_modules.
const tsx = import.meta.resolve("tsx");
const { privateKey, publicKey } = appKeyPair();

/** An empty working directory for one server, holding `files` (name → text). */
function workDir(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "terfyn-app-env-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

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

function startServer(
  env: Record<string, string>,
  cwd: string = workDir(),
): {
  child: ChildProcess;
  output: () => string;
  until: (text: string, ms?: number) => Promise<void>;
  exit: Promise<number | null>;
} {
  const child = spawn(process.execPath, ["--import", tsx, serverTs], {
    cwd,
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
    // The setup flow reads app.yml (and package.json) from the working directory.
    const cwd = workDir({
      "app.yml": readFileSync(join(repo, "app.yml"), "utf8"),
      "package.json": readFileSync(join(repo, "package.json"), "utf8"),
    });
    const s = startServer(
      { PORT: String(port), WEBHOOK_PROXY_URL: "https://smee.example/terfyn-test-channel" },
      cwd,
    );
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

/** Credentials that need no network: the slug given, the runner that executes nothing. */
const offline = (port: number): Record<string, string> => ({
  TERFYN_APP_RUNNER: "unwired",
  TERFYN_APP_SLUG: "acme-terfyn",
  PORT: String(port),
});

/** Runs `body` against a started server, then stops it. */
async function withServer(
  s: ReturnType<typeof startServer>,
  body: () => Promise<void>,
): Promise<void> {
  try {
    await body();
  } finally {
    s.child.kill("SIGTERM");
    await s.exit;
  }
}

describe(".env in the working directory, loaded before the checks", () => {
  it("credentials kept only in .env start the App, and .env's values override the environment", async () => {
    const port = await freePort();
    // As Probot's setup flow writes it: the key in double quotes, its newlines as \n.
    const cwd = workDir({
      ".env": `APP_ID=123\nPRIVATE_KEY="${privateKey.trim().replace(/\n/g, "\\n")}"\nWEBHOOK_SECRET=from-dotenv\n`,
    });
    const s = startServer({ ...offline(port), APP_ID: "twelve" }, cwd);
    await withServer(s, async () => {
      await s.until("terfyn app: running as acme-terfyn[bot]");
      expect(s.output()).not.toContain("setup flow");
    });
  });

  it("a .env that cannot be read is a start-up problem naming the file", async () => {
    const cwd = workDir();
    mkdirSync(join(cwd, ".env"));
    const s = startServer({ APP_ID: "twelve" }, cwd);
    expect(await s.exit).toBe(1);
    const out = s.output();
    expect(out).toContain("terfyn app: cannot start:\n");
    expect(out).toContain(
      `${join(cwd, ".env")} (the .env file Probot loads from the working directory) cannot be read: EISDIR`,
    );
    // One message: the other problems are named with it.
    expect(out).toContain('APP_ID must be a positive integer, not "twelve"');
  });
});

describe("the private key, read and checked as Probot will use it", () => {
  const creds = { APP_ID: "123", WEBHOOK_SECRET: "s" };

  it("a PRIVATE_KEY Probot cannot read stops the App, without printing it", async () => {
    const s = startServer({ ...creds, PRIVATE_KEY: "not-a-key-0123456789" });
    expect(await s.exit).toBe(1);
    expect(s.output()).toContain(
      "terfyn app: cannot start:\n  - PRIVATE_KEY is not a PEM private key",
    );
    expect(s.output()).not.toContain("not-a-key-0123456789");
    expect(s.output()).not.toContain("setup flow");
  });

  it("a bad key and nothing else is a problem, never the setup flow", async () => {
    const s = startServer({ PRIVATE_KEY: "not-a-key-0123456789" });
    expect(await s.exit).toBe(1);
    expect(s.output()).toContain("  - PRIVATE_KEY is not a PEM private key");
    expect(s.output()).toContain("  - APP_ID is not set");
    expect(s.output()).not.toContain("setup flow");
  });

  it("a PEM that does not parse is not a valid private key", async () => {
    const broken = "-----BEGIN RSA PRIVATE KEY-----\nAAAAbroken\n-----END RSA PRIVATE KEY-----\n";
    const s = startServer({ ...creds, PRIVATE_KEY: broken });
    expect(await s.exit).toBe(1);
    expect(s.output()).toContain("  - PRIVATE_KEY is not a valid private key (");
    expect(s.output()).not.toContain("AAAAbroken");
  });

  it("a PRIVATE_KEY_PATH naming no file stops the App, naming the path", async () => {
    const cwd = workDir();
    const s = startServer({ ...creds, PRIVATE_KEY_PATH: "keys/app.pem" }, cwd);
    expect(await s.exit).toBe(1);
    expect(s.output()).toContain(
      `  - PRIVATE_KEY_PATH names no file: ${join(cwd, "keys", "app.pem")} does not exist`,
    );
  });

  it("a key that is not RSA is refused (GitHub App JWTs are RS256)", async () => {
    const ec = generateKeyPairSync("ec", {
      namedCurve: "P-256",
      privateKeyEncoding: { type: "pkcs8", format: "pem" },
      publicKeyEncoding: { type: "spki", format: "pem" },
    }).privateKey;
    const s = startServer({ ...creds, PRIVATE_KEY: ec });
    expect(await s.exit).toBe(1);
    expect(s.output()).toContain("  - PRIVATE_KEY is an EC key; a GitHub App's key is RSA");
  });

  it("a lone *.pem in the working directory is the key, as Probot takes it", async () => {
    const port = await freePort();
    const cwd = workDir({ "acme.2026-12-01.private-key.pem": privateKey });
    const s = startServer({ ...creds, ...offline(port) }, cwd);
    await withServer(s, async () => {
      await s.until("terfyn app: running as acme-terfyn[bot]");
    });
  });

  it("a lone *.pem and no APP_ID is not the setup flow", async () => {
    const cwd = workDir({ "app.pem": privateKey });
    const s = startServer({}, cwd);
    expect(await s.exit).toBe(1);
    expect(s.output()).toContain("  - APP_ID is not set");
  });
});

describe("webhooks at /, where Probot's setup flow registers them", () => {
  const secret = "a-webhook-secret";
  const ping = JSON.stringify({ zen: "Keep it logically awesome.", hook_id: 1 });
  const post = (port: number, path: string, headers: Record<string, string>) =>
    fetch(`http://127.0.0.1:${port}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "ping",
        "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
        ...headers,
      },
      body: ping,
    });
  const signed = `sha256=${createHmac("sha256", secret).update(ping).digest("hex")}`;

  it("takes a signed webhook at / and refuses an unsigned or wrongly signed one", async () => {
    const port = await freePort();
    const s = startServer({
      ...offline(port),
      APP_ID: "123",
      PRIVATE_KEY: privateKey,
      WEBHOOK_SECRET: secret,
    });
    await withServer(s, async () => {
      await s.until(`:${port}`);
      expect((await post(port, "/", { "x-hub-signature-256": signed })).status).toBe(200);
      expect(
        (await post(port, "/api/github/webhooks", { "x-hub-signature-256": signed })).status,
      ).toBe(200);
      // Refused before any handler runs: no signature (400), a signature with another secret.
      expect((await post(port, "/", {})).status).toBe(400);
      const wrong = `sha256=${createHmac("sha256", "another").update(ping).digest("hex")}`;
      expect([400, 401]).toContain(
        (await post(port, "/", { "x-hub-signature-256": wrong })).status,
      );
    });
  });

  it("with WEBHOOK_PATH set, takes webhooks there only", async () => {
    const port = await freePort();
    const s = startServer({
      ...offline(port),
      APP_ID: "123",
      PRIVATE_KEY: privateKey,
      WEBHOOK_SECRET: secret,
      WEBHOOK_PATH: "/hooks",
    });
    await withServer(s, async () => {
      await s.until(`:${port}`);
      expect((await post(port, "/hooks", { "x-hub-signature-256": signed })).status).toBe(200);
      expect((await post(port, "/", { "x-hub-signature-256": signed })).status).toBe(404);
    });
  });
});

describe("settings checked at start", () => {
  it("names an empty runs directory, a missing model script, an unknown runner and placement, an override of an agent there is not", async () => {
    const cwd = workDir();
    mkdirSync(join(cwd, "a-directory"));
    const s = startServer(
      {
        TERFYN_APP_RUNS_DIR: "",
        TERFYN_MODEL_SCRIPT: "scripts/missing.yaml",
        TERFYN_APP_RUNNER: "wired",
        TERFYN_APP_PLACEMENT: "elsewhere",
        TERFYN_APP_AGENT_MODELS: "Builder=anthropic/claude-haiku-5-5,Reviewer=mock/gpt-4",
      },
      cwd,
    );
    expect(await s.exit).toBe(1);
    const out = s.output();
    expect(out).toContain("terfyn app: cannot start:\n");
    for (const text of [
      "TERFYN_APP_RUNS_DIR is set but empty (it would be the working directory): set it to a directory or unset it",
      `TERFYN_MODEL_SCRIPT names no file: ${join(cwd, "scripts", "missing.yaml")} does not exist`,
      'TERFYN_APP_RUNNER must be unwired (the runner that ends every run stuck) or unset, not "wired"',
      'TERFYN_APP_PLACEMENT must be in-process or actions, not "elsewhere"',
      "TERFYN_APP_AGENT_MODELS: there is no agent Reviewer (the agents: Builder, Decider, Planner, StandardsReviewer, TestWriter)",
    ])
      expect(out).toContain(text);
    expect(out.match(/cannot start/g)).toHaveLength(1);
    const t = startServer({ TERFYN_MODEL_SCRIPT: "a-directory" }, cwd);
    expect(await t.exit).toBe(1);
    expect(t.output()).toContain(
      `TERFYN_MODEL_SCRIPT must name a model script file: ${join(cwd, "a-directory")} is not a file`,
    );
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
  it("the key as read: a problem is named and is never the setup flow; a key found needs APP_ID", () => {
    const problem = { kind: "problem", problem: "PRIVATE_KEY is not a PEM private key" } as const;
    expect(checkAppEnv({}, { kind: "absent" })).toEqual({ mode: "setup", problems: [] });
    expect(checkAppEnv({}, problem)).toEqual({
      mode: "app",
      problems: [
        expect.stringContaining("APP_ID is not set"),
        problem.problem,
        expect.stringContaining("WEBHOOK_SECRET"),
      ],
    });
    expect(checkAppEnv({}, { kind: "found" }).mode).toBe("app");
    expect(checkAppEnv({ APP_ID: "1", WEBHOOK_SECRET: "s" }, { kind: "found" })).toEqual({
      mode: "app",
      problems: [],
    });
    expect(checkAppEnv({ TERFYN_APP_RUNS_DIR: " " }).problems).toHaveLength(1);
    expect(checkAppEnv({ TERFYN_APP_RUNNER: "unwired" }).problems).toEqual([]);
    expect(
      checkAppEnv({}, undefined, { modelScript: "TERFYN_MODEL_SCRIPT names no file" }).problems,
    ).toEqual(["TERFYN_MODEL_SCRIPT names no file"]);
  });
});
