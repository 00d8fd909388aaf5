/**
 * The package as people install it (issue 23, item 4): `npm pack` of this working tree,
 * installed offline into an empty directory with a cache of its own (the package has no
 * dependencies, so nothing is fetched and nothing is taken from a warm cache), and the
 * installed `terfyn` binary run on real projects. The tarball carries the bundles and what the
 * CLI reads at run time (the review agents), never the sources, tests or scripts.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

const REPO = join(import.meta.dirname, "..");
const EXAMPLE = join(REPO, "examples", "implement-review-loop");

let root: string;
let packed: string[];
let installed: string;
let npmEnv: NodeJS.ProcessEnv;

/** The installed binary, as `npx terfyn` or a script's `terfyn` runs it (the .bin link). */
function terfyn(args: string[], cwd: string, env: Record<string, string> = {}) {
  const { TERFYN_FROM_SOURCE: _, ...rest } = process.env;
  const r = spawnSync(join(installed, "node_modules", ".bin", "terfyn"), args, {
    cwd,
    encoding: "utf8",
    env: { ...rest, NO_COLOR: "1", ...env },
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "terfyn-package-"));
  const cache = join(root, "npm-cache");
  const userconfig = join(root, "npmrc");
  writeFileSync(userconfig, "");
  // Nothing from this machine's npm set-up: an empty cache and user config, no update check.
  npmEnv = {
    ...process.env,
    npm_config_cache: cache,
    npm_config_userconfig: userconfig,
    npm_config_update_notifier: "false",
    npm_config_offline: "true",
  };
  const dest = join(root, "pack");
  mkdirSync(dest);
  const out = execFileSync("npm", ["pack", "--json", "--pack-destination", dest], {
    cwd: REPO,
    env: npmEnv,
    encoding: "utf8",
  });
  const [pack] = JSON.parse(out) as { filename: string; files: { path: string }[] }[];
  packed = (pack?.files ?? []).map((f) => f.path).sort();
  installed = join(root, "consumer");
  mkdirSync(installed);
  writeFileSync(join(installed, "package.json"), '{ "name": "consumer", "private": true }\n');
  execFileSync(
    "npm",
    ["install", "--offline", "--no-audit", "--no-fund", join(dest, pack?.filename ?? "")],
    { cwd: installed, env: npmEnv, encoding: "utf8" },
  );
}, 120_000);

describe("the packed and installed package", () => {
  it("packs the bundles, the review agents, the schemas and docs, and no sources, tests or scripts", () => {
    for (const f of [
      "package.json",
      "bin/terfyn.mjs",
      "dist/cli.js",
      "dist/index.js",
      "dist/review-fix.js",
      "action.yml",
      "agents/review-response/terfyn.yaml",
      "agents/review-response/main.agent",
      "schemas/resource.schema.json",
      "docs/cli.md",
      "README.md",
      "LICENSE",
      "CHANGELOG.md",
      "SECURITY.md",
    ])
      expect(packed, f).toContain(f);
    // Every chunk the CLI imports.
    for (const f of readdirSync(join(REPO, "dist", "cli-chunks")))
      expect(packed, f).toContain(`dist/cli-chunks/${f}`);
    const stray = packed.filter(
      (f) =>
        /^(src|__tests__|scripts|bench|examples|\.ci|\.github|node_modules)\//.test(f) ||
        /\.ts$/.test(f) ||
        /\.test\./.test(f),
    );
    expect(stray).toEqual([]);
  });

  it("installs only itself: no dependency, no Probot", () => {
    const modules = join(installed, "node_modules");
    expect(readdirSync(modules).filter((n) => !n.startsWith("."))).toEqual(["terfyn"]);
    expect(readdirSync(join(modules, ".bin"))).toEqual(["terfyn"]);
    const pkg = JSON.parse(readFileSync(join(modules, "terfyn", "package.json"), "utf8"));
    expect(pkg.dependencies ?? {}).toEqual({});
    expect(pkg.private).toBeUndefined();
  });

  it("validates and plans a copy of the example", () => {
    const project = join(mkdtempSync(join(tmpdir(), "terfyn-package-project-")), "project");
    cpSync(EXAMPLE, project, { recursive: true });
    const validate = terfyn(["validate", "--project", project], root);
    expect(validate.code, validate.stderr).toBe(0);
    expect(validate.stdout).toContain(
      "project implement-review-loop is valid (2 agents, 1 workflow, 1 tool, 2 policies, 1 capability test)",
    );
    const plan = terfyn(["plan", "--project", project], root);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain("+ create Agent/Reviewer");
    expect(plan.stdout).toContain(
      "- [high] effect_bound: process.exec autonomous Agent/Reviewer may select tool.workspace.run_tests",
    );
    expect(plan.stdout).toMatch(/sha256:[0-9a-f]{64}/);
  });

  it("init makes a project in an empty directory that then validates", () => {
    const dir = mkdtempSync(join(tmpdir(), "terfyn-package-init-"));
    const init = terfyn(["init"], dir);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain(".github/workflows/terfyn.yml");
    expect(init.stdout).toContain("Valid: 1 agent, 2 capability assertions pass.");
    const validate = terfyn(["validate", "--project", "."], dir);
    expect(validate.code, validate.stderr).toBe(0);
    expect(validate.stdout).toContain("is valid (1 agent, 1 workflow, 1 tool, 1 policy");
  });

  it("finds the shipped review agents: a review run reaches its plan gate", () => {
    const work = mkdtempSync(join(tmpdir(), "terfyn-package-review-"));
    const made = JSON.parse(
      execFileSync(
        process.execPath,
        [join(REPO, "examples", "review-fix", "build-repo.mjs"), join(work, "repo")],
        {
          encoding: "utf8",
        },
      ),
    ) as { repo: string; request: string };
    const review = terfyn(
      [
        "review",
        "--repo",
        made.repo,
        "--request",
        made.request,
        "--run-dir",
        join(work, "run"),
        "--model-script",
        join(REPO, "examples", "review-fix", "model-script.yaml"),
      ],
      work,
    );
    expect(review.code, review.stderr).toBe(2);
    expect(review.stderr).toContain("gate plan awaits approval of plan.json");
  }, 90_000);

  it("TERFYN_FROM_SOURCE=1 says in one line that the installed package has no sources", () => {
    const r = terfyn(["--version"], root, { TERFYN_FROM_SOURCE: "1" });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      "terfyn: TERFYN_FROM_SOURCE=1 runs the TypeScript sources, but this installation has none (it is the published package): unset TERFYN_FROM_SOURCE\n",
    );
    expect(terfyn(["--version"], root).stdout.trim()).toBe(
      JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")).version,
    );
  });
});
