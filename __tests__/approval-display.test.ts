/**
 * What the approver sees is what runs: a paused run shows the gated call's operation and every
 * input field in full, a long value folded with its size and sha256 (never cut silently), and
 * the full value in `terfyn runs show DIR --json`; an `approve` statement shows the value being
 * approved; control characters are escaped everywhere. Through the CLI, in real temp dirs.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runTerfyn } from "./helpers/cli.ts";

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

const LONG = `${"0123456789".repeat(500)}`; // 5,000 characters on one line
const NOTES =
  "first line\nsecond \u001b[31mred\u001b[0m line\n  approve with: terfyn approve --hash sha256:forged\n";
const CONFIG = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i]));
const MANY_LINES = Array.from({ length: 41 }, (_, i) => `line ${i}`).join("\n");
const sha = (s: string) => createHash("sha256").update(s).digest("hex");

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), "terfyn-approval-"));
  made.push(dir);
  const input = {
    version: "1.2.3",
    notes: NOTES,
    script: LONG,
    dry_run: false,
    config: CONFIG,
    many: MANY_LINES,
  };
  const files: Record<string, string> = {
    "terfyn.yaml":
      "apiVersion: terfyn.dev/v1\nkind: Project\nmetadata: { name: approvals }\nspec: {}\n",
    "schemas.yaml": `apiVersion: terfyn.dev/v1
kind: Schema
metadata: { name: Release }
spec:
  type: object
  required: [version]
  properties:
    version: { type: string }
    notes: { type: string }
    approved: { type: boolean }
`,
    "tools.yaml": `apiVersion: terfyn.dev/v1
kind: Tool
metadata: { name: deploy }
spec:
  adapter: command
  command: { argv: [/bin/cat] }
  operations:
    release:
      effects: [process.exec, deploy.production]
      idempotent: false
      input:
        type: object
        required: [version]
        properties:
          version: { type: string }
          notes: { type: string }
          script: { type: string }
          dry_run: { type: boolean }
`,
    "main.agent": `agent Deployer {
  model "mock/script"
  input Release
  output Release
  instructions "release"
  grants { tool.deploy.release requires approval }
}
workflow Ship(r: Release) -> Release effects { process.exec, deploy.production } { return Deployer(r) }
workflow Sign(r: Release) -> Release effects { } {
  approve r "ship the release notes"
  return r
}
`,
    "script.yaml": `agents:\n  Deployer:\n    - toolCalls: [ { tool: tool.deploy.release, input: ${JSON.stringify(input)} } ]\n    - output: { version: "1.2.3" }\n`,
    "input.json": JSON.stringify({ version: "1.2.3", notes: NOTES }),
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const run = (dir: string, wf: string, runDir: string) =>
  runTerfyn(
    [
      "run",
      `workflow/${wf}`,
      "--project",
      dir,
      "--input-file",
      join(dir, "input.json"),
      "--model-script",
      join(dir, "script.yaml"),
      "--run-dir",
      runDir,
    ],
    dir,
    { PATH: process.env.PATH ?? "/usr/bin:/bin" },
  );

/** Every control character but the line feed: none may reach the terminal raw. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

describe("a gated tool call's approval prompt", () => {
  it("shows the operation and every input field, folding the long one with size and sha256", async () => {
    const dir = project();
    const r = await run(dir, "Ship", join(dir, "run"));
    expect(r.code, r.stderr).toBe(2);
    const e = r.stderr;
    expect(e).toContain("terfyn: paused for approval of Deployer -> tool.deploy.release\n");
    expect(e).toContain("  agent: Deployer\n");
    expect(e).toContain("  operation: tool.deploy.release\n");
    expect(e).toContain('    version: "1.2.3"\n');
    expect(e).toContain("    dry_run: false\n");
    // A multi-line value: every line, behind a gutter, control characters escaped, so a line
    // of it cannot pass for Terfyn's own "approve with" line.
    expect(e).toContain("    notes: (text, 3 lines)\n");
    expect(e).toContain("      | first line\n");
    expect(e).toContain("      | second \\x1b[31mred\\x1b[0m line\n");
    expect(e).toContain("      |   approve with: terfyn approve --hash sha256:forged\n");
    expect(e).toContain(`    script: (folded text: 5000 bytes, 1 line, sha256:${sha(LONG)})\n`);
    // Over 40 lines folds too; a non-string folds as its compact JSON text.
    expect(e).toContain(
      `    many: (folded text: ${MANY_LINES.length} bytes, 41 lines, sha256:${sha(MANY_LINES)})\n`,
    );
    const compact = JSON.stringify(CONFIG);
    expect(e).toContain(
      `    config: (folded JSON: ${compact.length} bytes, 52 lines, sha256:${sha(compact)})\n`,
    );
    expect(e).toContain("(folded values in full: terfyn runs show run --json)");
    expect(e).not.toMatch(RAW_CONTROL);
    expect(e).toMatch(/approve with: terfyn approve --run run --hash sha256:[0-9a-f]{64}\n/);

    // runs show prints the awaited item whole, the same way.
    const show = await runTerfyn(["runs", "show", "run"], dir);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain("awaiting approval: Deployer -> tool.deploy.release (sha256:");
    expect(show.stdout).toContain("  operation: tool.deploy.release\n");
    expect(show.stdout).toContain("      | second \\x1b[31mred\\x1b[0m line\n");
    expect(show.stdout).toContain(`sha256:${sha(LONG)})`);
    expect(show.stdout).not.toMatch(RAW_CONTROL);
    // Journal lines in the tail are marked when cut, never cut silently.
    expect(show.stdout).toMatch(/… \(\d+ more characters: --format json shows every event whole\)/);

    // --json (and --format json) hold the full value.
    for (const flags of [["--json"], ["--format", "json"]]) {
      const j = await runTerfyn(["runs", "show", "run", ...flags], dir);
      const doc = JSON.parse(j.stdout);
      expect(doc.format_version).toBe("1");
      expect(doc.awaiting.subject).toEqual({
        kind: "gated-grant",
        agent: "Deployer",
        tool: "tool.deploy.release",
        input: {
          version: "1.2.3",
          notes: NOTES,
          script: LONG,
          dry_run: false,
          config: CONFIG,
          many: MANY_LINES,
        },
      });
      expect(doc.state.status).toBe("awaiting-approval");
      expect(doc.events.some((ev: { type: string }) => ev.type === "approval.requested")).toBe(
        true,
      );
    }
    // terfyn approve repeats what it approved.
    const hash = /--hash (sha256:[0-9a-f]{64})/.exec(e)?.[1] as string;
    const ok = await runTerfyn(["approve", "--run", "run", "--hash", hash], dir);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain("approved Deployer -> tool.deploy.release (sha256:");
    expect(ok.stdout).toContain("  operation: tool.deploy.release\n");
    expect(ok.stdout).toContain(`sha256:${sha(LONG)})`);
    // The folded hash is the hash of exactly what runs.
    const state = JSON.parse(readFileSync(join(dir, "run", "state.json"), "utf8"));
    expect(sha(state.awaiting.subject.input.script)).toBe(sha(LONG));
  });

  it("an approve statement shows the value being approved", async () => {
    const dir = project();
    const r = await run(dir, "Sign", join(dir, "sign"));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain("  approve: ship the release notes\n");
    expect(r.stderr).toContain("  value:\n");
    expect(r.stderr).toContain('    version: "1.2.3"\n');
    expect(r.stderr).toContain("      | second \\x1b[31mred\\x1b[0m line\n");
    expect(r.stderr).not.toMatch(RAW_CONTROL);
  });
});

describe("runs list", () => {
  it("--json and --format json give a versioned document; text is escaped", async () => {
    const dir = project();
    writeFileSync(
      join(dir, "terfyn.yaml"),
      "apiVersion: terfyn.dev/v1\nkind: Project\nmetadata: { name: approvals }\nspec: { runs: runs }\n",
    );
    expect((await run(dir, "Sign", join(dir, "runs", "one"))).code).toBe(2);
    for (const flags of [["--json"], ["--format", "json"]]) {
      const r = await runTerfyn(["runs", "list", "--project", dir, ...flags], dir);
      expect(r.code).toBe(0);
      const doc = JSON.parse(r.stdout);
      expect(doc.format_version).toBe("1");
      expect(doc.runs).toHaveLength(1);
      expect(doc.runs[0]).toMatchObject({ workflow: "Sign", status: "awaiting-approval" });
      expect(doc.runs[0].awaiting.label).toBe("ship the release notes");
    }
    const text = await runTerfyn(["runs", "list", "--project", dir], dir);
    expect(text.stdout).toMatch(/ Sign {2}awaiting-approval {2}iteration 0 /);
    const bad = await runTerfyn(["runs", "list", "--project", dir, "--format", "yaml"], dir);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("--format must be text or json");
  });
});
