/**
 * docs/github-app.md, the App operator's guide (issue 23, item 3), against what the App really
 * reads and asks for: every environment variable its source names (the modules `npm start`'s
 * server loads, and the review worker it forks) and every one Probot's server reads, every
 * permission and event in app.yml, the runs directory's layout, and every npm script and
 * package its shell, Dockerfile and systemd examples run. A new variable, permission or event
 * that the guide does not mention fails here.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { Probot } from "probot";
import { describe, expect, it, vi } from "vitest";
import { parse } from "yaml";
import { LOCK_NAME } from "../src/adapters/fs/run-lock.ts";
import { FORBIDDEN_GRAPHQL } from "../src/adapters/github/gateway.ts";
import { runPaths } from "../src/adapters/review/review-runner.ts";
import { DEFAULT_WORKFLOW, terfynApp } from "../src/app/app.ts";
import { unwiredRunner } from "../src/app/unwired-runner.ts";
import { REVIEW_FIX_LABEL } from "../src/core/app/triggers.ts";

const root = join(import.meta.dirname, "..");
const read = (file: string) => readFileSync(join(root, file), "utf8");
const doc = read("docs/github-app.md");

/**
 * The source files the App runs: src/app/server.ts and everything it imports at run time
 * (type-only imports left out), plus the review worker it forks (`new URL("./review-worker.ts")`).
 */
function appSourceFiles(): string[] {
  const seen = new Set<string>();
  const stack = [join(root, "src", "app", "server.ts")];
  while (stack.length > 0) {
    const file = stack.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, "utf8");
    const specs = [
      ...text.matchAll(
        /^(?:import|export)(?!\s+type\b)[^;]*?\bfrom\s+["'](\.{1,2}\/[^"']+\.ts)["']/gms,
      ),
    ].map((m) => m[1] as string);
    for (const m of text.matchAll(/(?:import\(|new URL\()\s*["'](\.{1,2}\/[^"']+\.ts)["']/g))
      specs.push(m[1] as string);
    for (const spec of specs) stack.push(resolve(dirname(file), spec));
  }
  return [...seen];
}

/** `NAME` as the guide writes a variable: in backticks (alone, or as `NAME=value`). */
const mentions = (text: string, name: string) => new RegExp(`\`${name}(?:\`|=)`).test(text);

/** Names read as `env.NAME`, `env["NAME"]` or `process.env.NAME` (never one being assigned). */
function envReads(text: string): string[] {
  return [
    ...text.matchAll(
      /\b(?:env|process\.env)(?:\.([A-Z][A-Z0-9_]+)|\[["']([A-Z][A-Z0-9_]+)["']\])\b(?!\s*=[^=])/g,
    ),
  ].map((m) => (m[1] ?? m[2]) as string);
}

/** The fenced blocks of the guide in one of `langs`. */
function blocks(...langs: string[]): { lang: string; text: string }[] {
  return [...doc.matchAll(/```([a-z]*)\n([\s\S]*?)```/g)]
    .filter((m) => langs.includes(m[1] as string))
    .map((m) => ({ lang: m[1] as string, text: m[2] as string }));
}

describe("docs/github-app.md, the App operator's guide", () => {
  it("names every TERFYN_ variable the App's source mentions, and every variable it reads", () => {
    const files = appSourceFiles();
    // The walk reaches the server, the handlers, the worker and the sandbox (not a vacuous scan).
    for (const f of [
      "src/app/app.ts",
      "src/core/app/app-env.ts",
      "src/adapters/review/review-worker.ts",
      "src/adapters/sandbox/open-sandbox.ts",
    ])
      expect(files.map((x) => relative(root, x))).toContain(f);
    const terfyn = new Set<string>();
    const reads = new Set<string>();
    for (const f of files) {
      const text = readFileSync(f, "utf8");
      for (const m of text.matchAll(/TERFYN_[A-Z0-9_]*[A-Z0-9]/g)) terfyn.add(m[0]);
      for (const n of envReads(text)) reads.add(n);
    }
    expect(terfyn).toContain("TERFYN_APP_RUNS_DIR");
    expect(reads).toContain("ANTHROPIC_API_KEY");
    const missing = [...terfyn, ...reads].filter((n) => !mentions(doc, n));
    expect(missing, "variables the App reads that docs/github-app.md does not name").toEqual([]);
  });

  it("names every variable Probot's server and setup flow read", () => {
    const probot = join(root, "node_modules", "probot", "lib");
    const names = new Set(["PRIVATE_KEY", "PRIVATE_KEY_PATH"]); // @probot/get-private-key
    for (const f of [
      "bin/read-env-options.js",
      "create-probot.js",
      "apps/setup.js",
      "manifest-creation.js",
      "helpers/is-production.js",
    ])
      for (const n of envReads(readFileSync(join(probot, f), "utf8"))) names.add(n);
    for (const n of ["APP_ID", "WEBHOOK_SECRET", "WEBHOOK_PATH", "WEBHOOK_PROXY_URL", "PORT"])
      expect(names).toContain(n);
    const missing = [...names].filter((n) => !mentions(doc, n));
    expect(missing, "Probot's variables docs/github-app.md does not name").toEqual([]);
    // Probot's defaults, as the guide gives them.
    const server = readFileSync(join(probot, "server", "server.js"), "utf8");
    const path = /defaultWebhookPath = "([^"]+)"/.exec(server)?.[1];
    expect(path).toBe("/api/github/webhooks");
    expect(doc).toContain(`| \`WEBHOOK_PATH\` | \`${path}\` |`);
    expect(doc).toContain("| `PORT` | `3000` |");
    expect(doc).toContain("| `HOST` | `localhost` |");
  });

  it("explains every permission (with its level) and every event in app.yml", () => {
    const app = parse(read("app.yml")) as {
      default_permissions: Record<string, string>;
      default_events: string[];
    };
    expect(Object.keys(app.default_permissions).length).toBeGreaterThan(0);
    for (const [permission, level] of Object.entries(app.default_permissions))
      expect(doc, permission).toMatch(new RegExp(`\\n\\| \`${permission}\` \\| ${level} \\| \\S`));
    expect(app.default_events.length).toBeGreaterThan(0);
    for (const event of app.default_events)
      expect(doc, event).toMatch(new RegExp(`\\n\\| \`${event}\` \\| [^|]+\\| \\S`));
    expect(doc).toContain("`workflows`");
    for (const name of FORBIDDEN_GRAPHQL) expect(doc, name).toContain(`\`${name}\``);
    expect(doc).toContain(`\`${REVIEW_FIX_LABEL}\``);
    expect(doc).toContain(`\`${DEFAULT_WORKFLOW}\``);
  });

  it("app.yml subscribes exactly the events the App registers handlers for", async () => {
    const { default_events } = parse(read("app.yml")) as { default_events: string[] };
    // The handlers a Probot instance gets when the App is loaded into it (both placements).
    const handled = new Set<string>();
    for (const placement of [
      { kind: "in-process" },
      { kind: "actions", workflow: DEFAULT_WORKFLOW },
    ] as const) {
      const probot = new Probot({ githubToken: "test", logLevel: "fatal" });
      const on = vi.spyOn(probot, "on");
      await probot.load(terfynApp({ appSlug: "terfyn-test", runner: unwiredRunner, placement }));
      for (const [names] of on.mock.calls)
        for (const name of [names].flat()) handled.add(String(name).split(".")[0] as string);
    }
    expect(handled.size).toBeGreaterThan(0);
    // An event subscribed and never handled is a delivery (and a grant) the App does not need;
    // one handled and not subscribed never arrives.
    expect([...default_events].sort()).toEqual([...handled].sort());
  });

  it("lays out the runs directory as the runner names its files", () => {
    const layout = doc.slice(doc.indexOf("TERFYN_APP_RUNS_DIR/\n"));
    const p = runPaths("/runs", "pr1-0123456789ab-x");
    for (const path of [p.run, p.clone, p.worktree, p.gitDir])
      expect(layout).toMatch(new RegExp(`\\n {4}${path.split("/").at(-1)}/ `));
    for (const path of [p.job, p.spend]) expect(layout).toContain(`    ${path.split("/").at(-1)} `);
    for (const name of [LOCK_NAME, "state.json", "approvals.jsonl", "report.md"])
      expect(layout).toContain(`      ${name} `);
    expect(layout).toContain("  .claims/");
  });

  it("runs only npm scripts package.json has, and installs the packages they load", () => {
    const pkg = JSON.parse(read("package.json")) as {
      scripts: Record<string, string>;
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
    };
    const shell = blocks("sh", "ini", "dockerfile");
    for (const lang of ["sh", "ini", "dockerfile"])
      expect(shell.map((b) => b.lang)).toContain(lang);
    const scripts: string[] = [];
    const packages: string[] = [];
    for (const { text } of shell) {
      for (const m of text.matchAll(
        /\bnpm (?:run(?:-script)? ([\w:.-]+)|(start|test|stop|restart)\b)/g,
      ))
        scripts.push((m[1] ?? m[2]) as string);
      // A Dockerfile's exec form: ["npm", "start"], ["npm", "run", "x"].
      for (const m of text.matchAll(/"npm",\s*"(?:run",\s*"([\w:.-]+)|(start|test))"/g))
        scripts.push((m[1] ?? m[2]) as string);
      for (const m of text.matchAll(/(?:\bnpx (?!--)|--import )([@\w/.-]+)/g))
        packages.push(m[1] as string);
    }
    expect(scripts).toContain("start");
    expect(scripts.filter((s) => !(s in pkg.scripts))).toEqual([]);
    // The published package is the bundled CLI alone: the App runs from a checkout with its
    // development dependencies (Probot, tsx), so the guide never installs without them.
    expect(packages).toContain("tsx");
    const installed = { ...pkg.dependencies, ...pkg.devDependencies };
    expect(packages.filter((p) => !(p in installed))).toEqual([]);
    expect(shell.filter((b) => /--omit[= ]dev|--production\b/.test(b.text))).toEqual([]);
  });

  it("links only files that exist in the repository, and is linked from the README and the placement guide", () => {
    for (const m of doc.matchAll(/\]\(([^)#]+\.md)(?:#[^)]*)?\)/g)) {
      const target = m[1] as string;
      if (/^https?:/.test(target)) continue;
      expect(existsSync(join(root, "docs", target)), target).toBe(true);
    }
    expect(doc).not.toContain("../");
    expect(read("README.md")).toContain("(docs/github-app.md)");
    expect(read("docs/github-app-placement.md")).toContain("(github-app.md)");
  });
});
