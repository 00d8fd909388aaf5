import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../src/cli/main.ts";
import { runTerfyn } from "./helpers/cli.ts";

const repo = join(import.meta.dirname, "..");
const example = "examples/implement-review-loop";
const run = promisify(execFile);
// Temporary directories the tests make, removed at the end.
const temps: string[] = [];
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

describe("terfyn CLI", () => {
  it("prints help with the commands, exit 0", async () => {
    const r = await runTerfyn(["--help"], repo);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Usage: terfyn <command>");
    expect(r.stdout).toMatch(/validate\s+check a project/);
  });

  it("gives every listed command a --help that starts with its usage", async () => {
    const help = (await runTerfyn(["--help"], repo)).stdout;
    const commands = [...help.matchAll(/^ {2}([a-z]+) {2,}/gm)].map((m) => m[1] as string);
    expect(commands).toEqual(expect.arrayContaining(["validate", "plan", "apply", "test"]));
    for (const c of commands) {
      const r = await runTerfyn([c, "--help"], repo);
      expect(r.code, c).toBe(0);
      expect(r.stdout.startsWith(`Usage: terfyn ${c}`), c).toBe(true);
    }
  });

  it("gives validate --help, also as `terfyn help validate`", async () => {
    const r = await runTerfyn(["validate", "--help"], repo);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Usage: terfyn validate --project DIR");
    const viaHelp = await runTerfyn(["help", "validate"], repo);
    expect(viaHelp.stdout).toBe(r.stdout);
  });

  it("rejects an unknown command and an unknown flag with a suggestion", async () => {
    const cmd = await runTerfyn(["valdate"], repo);
    expect(cmd.code).toBe(1);
    expect(cmd.stderr).toContain("unknown command `valdate`");
    const flag = await runTerfyn(["validate", "--projetc", example], repo);
    expect(flag.code).toBe(1);
    expect(flag.stderr).toContain("Unknown option '--projetc'");
    expect(flag.stderr).toContain("did you mean `--project`?");
    expect(flag.stderr).not.toMatch(/\n\s+at /);
  });

  it("explains a missing project directory or terfyn.yaml in one line", async () => {
    const missing = await runTerfyn(["validate", "--project", "no/such/dir"], repo);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /^terfyn validate: project directory .*no\/such\/dir does not exist\n$/,
    );
    const empty = tempDir("terfyn-empty-");
    const noYaml = await runTerfyn(["validate", "--project", empty], repo);
    expect(noYaml.code).toBe(1);
    expect(noYaml.stderr).toContain("no terfyn.yaml in");
  });

  it("reports a terfyn.yaml without a Project document as a diagnostic", async () => {
    const dir = tempDir("terfyn-noproj-");
    writeFileSync(join(dir, "terfyn.yaml"), "# nothing here yet\n");
    const r = await runTerfyn(["validate", "--project", dir, "--format", "json"], repo);
    expect(r.code).toBe(1);
    const json = JSON.parse(r.stdout);
    expect(json.diagnostics.map((d: { code: string }) => d.code)).toEqual(["TF2005"]);
  });

  it("turns an unexpected failure into 'internal error, please report', trace only with --debug", async () => {
    const io = (out: string[]) => ({
      stdout: () => {
        throw new Error("stdout is gone");
      },
      stderr: (s: string) => {
        out.push(s);
      },
      cwd: repo,
      env: {},
      isTTY: false,
    });
    const plain: string[] = [];
    expect(await runCli(["validate", "--project", example], io(plain))).toBe(1);
    expect(plain.join("")).toContain("internal error, please report: stdout is gone");
    expect(plain.join("")).not.toMatch(/\n\s+at /);
    const debug: string[] = [];
    expect(await runCli(["validate", "--project", example, "--debug"], io(debug))).toBe(1);
    expect(debug.join("")).toMatch(/\n\s+at /);
  });

  it("runs as the installed binary: npx terfyn validate on the example exits 0", async () => {
    const bin = join(repo, "bin", "terfyn.mjs");
    expect(statSync(bin).mode & 0o111).not.toBe(0);
    const pkg = JSON.parse(readFileSync(join(repo, "package.json"), "utf8"));
    expect(pkg.bin.terfyn).toBe("bin/terfyn.mjs");
    const { stdout } = await run(process.execPath, [bin, "validate", "--project", example], {
      cwd: repo,
    });
    expect(stdout).toContain("project implement-review-loop is valid");
    const failing = await run(
      process.execPath,
      [bin, "validate", "--project", "__tests__/golden/validate-errors/project"],
      { cwd: repo },
    ).then(
      () => 0,
      (e: { code: number; stdout: string }) => {
        expect(e.stdout).toContain("error TF3007");
        return e.code;
      },
    );
    expect(failing).toBe(1);
  });
});

describe("src/core stays pure", () => {
  it("imports no fs, process, network, env, GitHub, Probot or SDK modules", () => {
    const forbidden =
      /from\s+["'](node:)?(fs|fs\/promises|child_process|http|https|net|os)["']|from\s+["'](@actions\/|@octokit\/|@anthropic-ai\/|probot|simple-git)|process\.env/;
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, entry.name);
        if (entry.isDirectory()) walk(p);
        else if (p.endsWith(".ts") && forbidden.test(readFileSync(p, "utf8"))) offenders.push(p);
      }
    };
    walk(join(repo, "src", "core"));
    expect(offenders).toEqual([]);
  });
});
