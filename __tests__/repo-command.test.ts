/**
 * The repository's own commands in a review run (src/adapters/review/repo-command.ts): a
 * stripped environment (no model key, no GitHub token), a timeout, and the whole process group
 * killed with it, so nothing a test started outlives the run.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runRepoCommand } from "../src/adapters/review/repo-command.ts";
import { parseAgentsMd, passableEnvNames } from "../src/core/review/repo-facts.ts";
import { testSandbox } from "./helpers/sandbox.ts";

const PARENT = {
  PATH: process.env.PATH,
  HOME: "/home/someone",
  LANG: "C.UTF-8",
  TMPDIR: tmpdir(),
  ANTHROPIC_API_KEY: "sk-test",
  GITHUB_TOKEN: "ghp-test",
  AWS_SECRET_ACCESS_KEY: "aws-test",
  NAMED_BY_CONFIG: "yes",
};

/** Processes (not zombies) whose command line holds `marker`, as the host sees them. */
const running = (marker: string): string[] => {
  try {
    return execFileSync("pgrep", ["-a", "-f", marker], { encoding: "utf8" })
      .split("\n")
      .filter((l) => l !== "")
      .filter((l) => {
        const pid = l.split(" ")[0];
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
      });
  } catch {
    return [];
  }
};

describe("runRepoCommand", () => {
  it("sees only PATH, HOME, LANG, TMPDIR, the variables the run names, and its own", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "terfyn-repo-cmd-"));
    const r = await runRepoCommand("env", {
      cwd,
      parentEnv: PARENT,
      passEnv: ["NAMED_BY_CONFIG"],
      env: { TERFYN_TEST_NAME: "a test" },
      sandbox: await testSandbox(),
    });
    expect(r.code).toBe(0);
    const names = r.output
      .split("\n")
      .map((l) => l.split("=")[0])
      .filter((n) => n && n !== "PWD" && n !== "SHLVL" && n !== "_" && n !== "OLDPWD");
    expect(names.sort()).toEqual(
      ["HOME", "LANG", "NAMED_BY_CONFIG", "PATH", "TERFYN_TEST_NAME", "TMPDIR"].sort(),
    );
    expect(r.output).not.toMatch(/sk-test|ghp-test|aws-test/);
  });

  it("stops a command at its timeout and kills what it left running, setsid included", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "terfyn-repo-cmd-"));
    const marker = `terfyn-repo-cmd-timeout-${process.pid}-${Date.now()}`;
    const started = Date.now();
    const r = await runRepoCommand(
      `setsid sh -c 'sleep 30; :' ${marker} & sh -c 'sleep 30; :' ${marker}`,
      {
        cwd,
        parentEnv: PARENT,
        timeoutMs: 300,
        sandbox: await testSandbox(),
      },
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(r).toMatchObject({ timedOut: true, code: 124 });
    await new Promise((res) => setTimeout(res, 100));
    expect(running(marker)).toEqual([]);
  });

  it("a background process of a command that finished goes with it", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "terfyn-repo-cmd-"));
    const marker = `terfyn-repo-cmd-bg-${process.pid}-${Date.now()}`;
    const r = await runRepoCommand(`sh -c 'sleep 30; :' ${marker} >/dev/null 2>&1 & echo started`, {
      cwd,
      parentEnv: PARENT,
      sandbox: await testSandbox(),
    });
    expect(r.code).toBe(0);
    expect(r.output).toContain("started");
    await new Promise((res) => setTimeout(res, 100));
    expect(running(marker)).toEqual([]);
  });
});

describe("variables the repository names (AGENTS.md)", () => {
  it("reads an environment line, and never passes a secret-shaped name whatever it says", () => {
    const facts = parseAgentsMd(
      "## Commands\n- test: `make check`\n- environment: `LOCALE_DIR`, `GITHUB_TOKEN` (needed), DB_URL ANTHROPIC_API_KEY my_secret AWS_SESSION_X 1BAD\n",
    );
    expect(facts.commands).toEqual({ test: "make check" });
    expect(facts.environment).toEqual([
      "LOCALE_DIR",
      "GITHUB_TOKEN",
      "DB_URL",
      "ANTHROPIC_API_KEY",
      "my_secret",
      "AWS_SESSION_X",
      "1BAD",
    ]);
    expect(passableEnvNames(facts.environment ?? [])).toEqual({
      passed: ["LOCALE_DIR", "DB_URL"],
      refused: ["GITHUB_TOKEN", "ANTHROPIC_API_KEY", "my_secret", "AWS_SESSION_X", "1BAD"],
    });
  });
});
