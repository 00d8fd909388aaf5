#!/usr/bin/env node
// Builds the repository of the review-fix example: a real git repository in OUT_DIR, made from
// repo-template/ with a history of three commits, on branch `fix-add`, pushed to a bare
// `origin` next to it (OUT_DIR/../origin.git). Identity and dates are fixed, so the commit
// shas are the same on every machine. Also writes the filled request (request.template.json
// with {{HEAD}}, {{BASE}} and {{OLDER}} replaced) to OUT_DIR/../request.json.
//
//   node examples/review-fix/build-repo.mjs OUT_DIR
//
// Prints { repo, origin, request, head, base, older } as JSON on stdout. No network.
//
// History (base is `main`; the other two commits are on `fix-add`):
//   1. base   "Start the numbers library": format(), its tests, AGENTS.md, LICENSE, CHANGELOG.md
//   2. older  "Add add() and formatTotal()": add() subtracts (the defect) and logs every call
//   3. head   "Drop the debug logging from add()": the console.log line is gone; the defect stays
import { execFileSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { devNull } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const TEMPLATE = join(HERE, "repo-template");
const REQUEST_TEMPLATE = join(HERE, "request.template.json");

/** Files as they were before head, where they differ from repo-template/. */
const BASE_FORMAT_JS = `/** Formats numbers as a sorted, comma-separated list; the caller's array is left as it is. */
export function format(values) {
  return [...values].sort((x, y) => x - y).join(", ");
}
`;
const BASE_CHANGELOG_MD = `# Changelog

Entries are appended at the end; existing entries are never rewritten.

## 0.1.0

- \`format(values)\`: the values as a sorted, comma-separated list.
`;
const BASE_README_MD = `# numbers

A tiny numbers library with no dependencies.

- \`format(values)\`: the values as a sorted, comma-separated list (the array is not modified).

Run the tests with \`npm test\` (\`node --test\`).
`;
const BASE_PACKAGE_VERSION = "0.1.0";
/** Line 3 is the one the stale review comment is anchored to; commit 3 removes it. */
const OLDER_ADD_JS = `/** Adds two numbers. */
export function add(a, b) {
  console.log("add", a, b);
  return a - b;
}
`;

const COMMITS = [
  { message: "Start the numbers library", date: "2026-01-05T10:00:00+00:00" },
  { message: "Add add() and formatTotal()", date: "2026-01-06T10:00:00+00:00" },
  { message: "Drop the debug logging from add()", date: "2026-01-06T15:00:00+00:00" },
];

function usage(message) {
  process.stderr.write(`${message}\nusage: node examples/review-fix/build-repo.mjs OUT_DIR\n`);
  process.exit(2);
}

const outArg = process.argv[2];
if (!outArg || process.argv.length > 3) usage("build-repo: expected exactly one argument");
const repo = resolve(outArg);
const parent = dirname(repo);
const origin = join(parent, "origin.git");
const requestPath = join(parent, "request.json");
if (existsSync(repo) && readdirSync(repo).length > 0)
  usage(`build-repo: ${repo} exists and is not empty`);
for (const p of [origin, requestPath])
  if (existsSync(p)) usage(`build-repo: ${p} already exists; choose a fresh OUT_DIR`);

// A clean git environment: no user or system config (signing, hooks, templates, autocrlf), no
// inherited repository, and the fixed identity and dates that make the shas stable.
const baseEnv = { ...process.env };
for (const k of Object.keys(baseEnv)) if (k.startsWith("GIT_")) delete baseEnv[k];
Object.assign(baseEnv, {
  GIT_CONFIG_GLOBAL: devNull,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_TERMINAL_PROMPT: "0",
  GIT_AUTHOR_NAME: "Numbers Author",
  GIT_AUTHOR_EMAIL: "author@numbers.example",
  GIT_COMMITTER_NAME: "Numbers Author",
  GIT_COMMITTER_EMAIL: "author@numbers.example",
  LC_ALL: "C",
});

function git(args, { cwd = repo, date } = {}) {
  const env = date ? { ...baseEnv, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date } : baseEnv;
  return execFileSync("git", args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
    .toString()
    .trim();
}

function write(path, text) {
  const full = join(repo, path);
  mkdirSync(dirname(full), { recursive: true });
  writeFileSync(full, text);
}

function fromTemplate(path) {
  return readFileSync(join(TEMPLATE, path), "utf8");
}

function commit(n) {
  const { message, date } = COMMITS[n];
  git(["add", "-A"]);
  git(["commit", "-q", "--no-verify", "-m", message], { date });
}

mkdirSync(repo, { recursive: true });
git(["init", "-q", "-b", "main"]);
git(["config", "core.autocrlf", "false"]);
git(["config", "commit.gpgsign", "false"]);
// An identity for commits made later in this repository (the review run's fix).
git(["config", "user.name", "Numbers Author"]);
git(["config", "user.email", "author@numbers.example"]);

// 1. base: everything but add() and formatTotal(), on main.
cpSync(TEMPLATE, repo, { recursive: true });
rmSync(join(repo, "src", "add.js"));
rmSync(join(repo, "test", "total.test.js"));
write("src/format.js", BASE_FORMAT_JS);
write("CHANGELOG.md", BASE_CHANGELOG_MD);
write("README.md", BASE_README_MD);
write(
  "package.json",
  fromTemplate("package.json").replace(/"version": "[^"]*"/, `"version": "${BASE_PACKAGE_VERSION}"`),
);
commit(0);
const base = git(["rev-parse", "HEAD"]);

// 2. older: add() (subtracting, and logging every call) and formatTotal(), on fix-add.
git(["checkout", "-q", "-b", "fix-add"]);
for (const p of ["src/format.js", "test/total.test.js", "CHANGELOG.md", "README.md", "package.json"])
  write(p, fromTemplate(p));
write("src/add.js", OLDER_ADD_JS);
commit(1);
const older = git(["rev-parse", "HEAD"]);

// 3. head: the logging line is gone; add() still subtracts.
write("src/add.js", fromTemplate("src/add.js"));
commit(2);
const head = git(["rev-parse", "HEAD"]);

// Head must be exactly the template: copy it over again and expect no change.
cpSync(TEMPLATE, repo, { recursive: true });
const drift = git(["status", "--porcelain"]);
if (drift !== "") throw new Error(`build-repo: head differs from repo-template/:\n${drift}`);

// The bare origin, with both branches; fix-add tracks origin/fix-add.
git(["init", "-q", "--bare", "-b", "main", origin], { cwd: parent });
git(["remote", "add", "origin", origin]);
git(["push", "-q", "-u", "origin", "main", "fix-add"]);

// The request, with the shas filled in.
const filled = readFileSync(REQUEST_TEMPLATE, "utf8")
  .replaceAll("{{HEAD}}", head)
  .replaceAll("{{BASE}}", base)
  .replaceAll("{{OLDER}}", older);
if (/\{\{[A-Z]+\}\}/.test(filled)) throw new Error("build-repo: an unknown placeholder is left");
writeFileSync(requestPath, `${JSON.stringify(JSON.parse(filled), null, 2)}\n`);

process.stdout.write(
  `${JSON.stringify({ repo, origin, request: requestPath, head, base, older }, null, 2)}\n`,
);
