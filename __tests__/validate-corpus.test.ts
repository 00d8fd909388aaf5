/**
 * The invalid-project corpus: `__tests__/corpus/invalid/<case>/` is a small, complete project
 * with exactly one defect, and `expected.json` names the one diagnostic that defect must give
 * (`code`, project-relative `file`, 1-based `line`/`column` of the span's start, and `why`).
 *
 * Each case runs `terfyn validate --format json` in-process, as a user would, and must exit 1
 * with that diagnostic and nothing else: one defect is one error, with no cascade of follow-on
 * errors or warnings. `corpus/warnings/` holds projects whose one problem is a warning: they
 * exit 0 with exactly that warning.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../src/cli/io.ts";
import { runCli } from "../src/cli/main.ts";
import { DIAGNOSTIC_CODES, type DiagnosticCode } from "../src/core/diagnostics.ts";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const CORPUS = join(REPO_ROOT, "__tests__", "corpus");
const INVALID = join(CORPUS, "invalid");
const WARNINGS = join(CORPUS, "warnings");

/** Every error code of DESIGN.md's static rules, each of which the corpus must exercise. */
const REQUIRED_CODES = [
  "TF1002",
  "TF1010",
  "TF1011",
  "TF1012",
  "TF1013",
  "TF2001",
  "TF2002",
  "TF2003",
  "TF2004",
  "TF2007",
  "TF3001",
  "TF3002",
  "TF3003",
  "TF3004",
  "TF3005",
  "TF3006",
  "TF3007",
  "TF3008",
  "TF3009",
  "TF3010",
  "TF4001",
  "TF4002",
  "TF4003",
  "TF4004",
  "TF4005",
  "TF4006",
  "TF4007",
  "TF4008",
  "TF4009",
  "TF5001",
  "TF5002",
  "TF5003",
  "TF5005",
  "TF5006",
  "TF5007",
] as const;

interface Expected {
  code: DiagnosticCode;
  file: string;
  line: number;
  column: number;
  why: string;
}

interface JsonDiagnostic {
  code: string;
  severity: "error" | "warning" | "info";
  message: string;
  file: string;
  line: number;
  column: number;
}

interface ValidateOutcome {
  exitCode: number;
  diagnostics: JsonDiagnostic[];
  summary: { errors: number; warnings: number };
  stderr: string;
}

function caseNames(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

function readExpected(caseDir: string): Expected {
  return JSON.parse(readFileSync(join(caseDir, "expected.json"), "utf8")) as Expected;
}

/** `terfyn validate --project <dir> --format json`, in-process, from `cwd`. */
async function validate(project: string, cwd: string): Promise<ValidateOutcome> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const io: CliIo = {
    stdout: (s) => stdout.push(s),
    stderr: (s) => stderr.push(s),
    cwd,
    env: {},
    isTTY: false,
  };
  const exitCode = await runCli(["validate", "--project", project, "--format", "json"], io);
  const report = JSON.parse(stdout.join("")) as Omit<ValidateOutcome, "exitCode" | "stderr">;
  return {
    exitCode,
    diagnostics: report.diagnostics,
    summary: report.summary,
    stderr: stderr.join(""),
  };
}

/** One diagnostic as a line, so a failing assertion shows everything the checker said. */
function describeDiagnostic(d: JsonDiagnostic): string {
  return `${d.severity} ${d.code} ${d.file}:${d.line}:${d.column}: ${d.message}`;
}

/**
 * Validates one corpus case from its parent directory and checks that the expected diagnostic,
 * and only it, is reported. Returns the outcome for severity-specific checks.
 */
async function checkCase(
  caseDir: string,
): Promise<{ outcome: ValidateOutcome; found: JsonDiagnostic }> {
  const expected = readExpected(caseDir);
  const cwd = dirname(caseDir);
  const outcome = await validate(basename(caseDir), cwd);
  const all = outcome.diagnostics.map(describeDiagnostic);
  expect(outcome.stderr, "validate must not fail internally").toBe("");

  // The JSON report gives paths relative to the working directory.
  const file = relative(cwd, resolve(caseDir, expected.file));
  const index = outcome.diagnostics.findIndex(
    (d) =>
      d.code === expected.code &&
      d.file === file &&
      d.line === expected.line &&
      d.column === expected.column &&
      (d.severity === "error" || d.severity === "warning"),
  );
  expect(
    index,
    `expected ${expected.code} at ${file}:${expected.line}:${expected.column} (${expected.why}); got:\n${all.join("\n")}`,
  ).toBeGreaterThanOrEqual(0);
  const others = outcome.diagnostics.filter((_, i) => i !== index).map(describeDiagnostic);
  expect(
    others,
    `one defect must give one diagnostic; all diagnostics:\n${all.join("\n")}`,
  ).toEqual([]);
  return { outcome, found: outcome.diagnostics[index] as JsonDiagnostic };
}

const invalidCases = caseNames(INVALID);
const warningCases = caseNames(WARNINGS);

describe("invalid project corpus", () => {
  it.each(invalidCases)("%s: exits 1 with exactly the expected error", async (name) => {
    const { outcome, found } = await checkCase(join(INVALID, name));
    expect(found.severity).toBe("error");
    expect(outcome.exitCode).toBe(1);
  });

  it("has at least 35 well-formed cases covering every static-rule error code", () => {
    expect(invalidCases.length).toBeGreaterThanOrEqual(35);
    const covered = new Set<string>();
    for (const name of invalidCases) {
      const dir = join(INVALID, name);
      expect(existsSync(join(dir, "terfyn.yaml")), `${name} has a terfyn.yaml`).toBe(true);
      const expected = readExpected(dir);
      expect(
        DIAGNOSTIC_CODES[expected.code]?.severity,
        `${name}: ${expected.code} is an error code`,
      ).toBe("error");
      expect(existsSync(join(dir, expected.file)), `${name}: ${expected.file} exists`).toBe(true);
      expect(
        Number.isInteger(expected.line) && expected.line >= 1,
        `${name}: line is 1-based`,
      ).toBe(true);
      expect(
        Number.isInteger(expected.column) && expected.column >= 1,
        `${name}: column is 1-based`,
      ).toBe(true);
      expect(expected.why.trim(), `${name}: says why`).not.toBe("");
      covered.add(expected.code);
    }
    const missing = REQUIRED_CODES.filter((code) => !covered.has(code));
    expect(missing, "codes without a corpus case").toEqual([]);
  });
});

describe("warning corpus", () => {
  it.each(warningCases)("%s: exits 0 with exactly the expected warning", async (name) => {
    const { outcome, found } = await checkCase(join(WARNINGS, name));
    expect(found.severity).toBe("warning");
    expect(outcome.summary.errors).toBe(0);
    expect(outcome.exitCode).toBe(0);
  });

  it("includes the declared-but-unreachable effect warning (TF5004)", () => {
    const codes = warningCases.map((name) => readExpected(join(WARNINGS, name)).code);
    expect(codes).toContain("TF5004");
  });
});

describe("the valid example", () => {
  it("examples/implement-review-loop exits 0 with no errors", async () => {
    const outcome = await validate("examples/implement-review-loop", REPO_ROOT);
    const errors = outcome.diagnostics
      .filter((d) => d.severity === "error")
      .map(describeDiagnostic);
    expect(errors).toEqual([]);
    expect(outcome.summary.errors).toBe(0);
    expect(outcome.stderr).toBe("");
    expect(outcome.exitCode).toBe(0);
  });
});
