/**
 * The second example, end to end and offline: a real tracker on 127.0.0.1 (the project is
 * copied with the server's port written into tools.yaml; the host is configuration, not
 * input), the Triager's denied attempts, the Deployer's gated release paused, approved,
 * resumed, and the release command run exactly once.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { JournalEvent } from "../src/core/engine/journal.ts";
import { runTerfyn } from "./helpers/cli.ts";
import { type LocalServer, startServer } from "./helpers/local-server.ts";

const EXAMPLE = join(import.meta.dirname, "..", "examples", "triage-deploy");
const SECRET = "tracker-secret-7f3a9c";

function copyWithPort(port: number): string {
  const dir = mkdtempSync(join(tmpdir(), "terfyn-triage-"));
  cpSync(EXAMPLE, dir, { recursive: true });
  rmSync(join(dir, ".terfyn"), { recursive: true, force: true });
  const tools = join(dir, "tools.yaml");
  const text = readFileSync(tools, "utf8");
  expect(text).toContain("http://127.0.0.1:8080/");
  writeFileSync(tools, text.replaceAll("http://127.0.0.1:8080/", `http://127.0.0.1:${port}/`));
  return dir;
}

let server: LocalServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("examples/triage-deploy", () => {
  it("validates, plans (showing what each operation reaches) and passes its capability tests", async () => {
    const validate = await runTerfyn(["validate", "--project", EXAMPLE], EXAMPLE);
    expect(validate.code, validate.stderr + validate.stdout).toBe(0);
    const plan = await runTerfyn(["plan", "--project", EXAMPLE], EXAMPLE);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain(
      'spec.operations.get_issue.reaches: -> "GET http://127.0.0.1:8080/issues/{id}"',
    );
    expect(plan.stdout).toContain(
      'spec.operations.release.reaches: -> "exec node scripts/deploy.mjs"',
    );
    expect(plan.stdout).toContain('spec.command.env.0: -> "DEPLOY_LOG"');
    expect(plan.stdout).toContain(
      'spec.http.headers.Authorization: -> "Bearer <env:TRACKER_TOKEN>"',
    );
    const test = await runTerfyn(["test", "--project", EXAMPLE], EXAMPLE);
    expect(test.code, test.stdout).toBe(0);
    expect(test.stdout.trim().split("\n").at(-1)).toBe("5 passed, 0 failed");
  });

  it("runs offline: denied attempts, a paused release, approve, resume, one release", async () => {
    server = await startServer((req, res) => {
      res.setHeader("content-type", "application/json");
      if (req.method === "GET" && req.url === "/issues/42")
        res.end(JSON.stringify({ id: "42", title: "Checkout fails for EU cards", labels: [] }));
      else if (req.method === "POST" && req.url === "/issues/42/labels") res.end('{"ok":true}');
      else {
        res.statusCode = 404;
        res.end('{"error":"no such route"}');
      }
    });
    const project = copyWithPort(server.port);
    const runDir = join(mkdtempSync(join(tmpdir(), "terfyn-triage-run-")), "run");
    // In the project root: the command runs in the sandbox, where nothing else is writable.
    const deployLog = join(project, "deploys.log");
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      // Where the operator's toolchain lives outside /usr (.ci/run's fetched Node): the sandbox
      // shows it, or the command's `node` is not there.
      ...(process.env.TERFYN_SANDBOX_READ_ONLY
        ? { TERFYN_SANDBOX_READ_ONLY: process.env.TERFYN_SANDBOX_READ_ONLY }
        : {}),
      TRACKER_TOKEN: SECRET,
      DEPLOY_LOG: deployLog,
      GITHUB_TOKEN: "must-not-reach-the-command",
    };
    const first = await runTerfyn(
      [
        "run",
        "workflow/TriageAndDeploy",
        "--project",
        project,
        "--input-file",
        join(project, "fixtures", "input.json"),
        "--run-dir",
        runDir,
      ],
      project,
      env,
    );
    expect(first.code, first.stderr).toBe(2);
    expect(existsSync(deployLog)).toBe(false);
    // The Triager read and labelled, with the secret header; it never reached DELETE.
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      "GET /issues/42",
      "POST /issues/42/labels",
    ]);
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(JSON.parse(server.requests[1]?.body ?? "")).toEqual({ label: "severity:high" });

    const journal = () =>
      readFileSync(join(runDir, "journal.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as JournalEvent & Record<string, unknown>);
    const denied = journal().filter((e) => e.type === "tool.denied");
    expect(denied.map((e) => [e.agent, e.tool])).toEqual([
      ["Triager", "tool.tracker.close_issue"],
      ["Triager", "tool.deploy.release"],
    ]);
    const state = JSON.parse(readFileSync(join(runDir, "state.json"), "utf8"));
    expect(state.status).toBe("awaiting-approval");

    const ok = await runTerfyn(
      ["approve", "--run", runDir, "--hash", state.awaiting.hash],
      project,
    );
    expect(ok.code, ok.stderr).toBe(0);
    const resumed = await runTerfyn(["run", "--resume", runDir], project, env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toEqual({
      id: "42",
      deployed: true,
      version: "1.4.2",
      note: "released 1.4.2",
    });
    expect(readFileSync(deployLog, "utf8")).toBe('{"version":"1.4.2","ticket":"42"}\n');
    // Completed tracker calls were not repeated on resume.
    expect(server.requests).toHaveLength(2);

    const events = journal();
    const release = events.filter(
      (e) =>
        e.type === "effect.result" &&
        String(e.key).length > 0 &&
        JSON.stringify(e.result).includes("released"),
    );
    expect(release).toHaveLength(1);
    expect(release[0]?.result).toMatchObject({
      exit_code: 0,
      timed_out: false,
      stdout: { released: "1.4.2", ticket: "42" },
    });
    const intents = events.filter((e) => e.type === "effect.intent").map((e) => e.tool);
    expect(intents).toEqual([
      "tool.tracker.get_issue",
      "tool.tracker.label_issue",
      "tool.deploy.release",
    ]);
    // The secret reached the server and nowhere else.
    const everything = [
      readFileSync(join(runDir, "journal.jsonl"), "utf8"),
      readFileSync(join(runDir, "state.json"), "utf8"),
      first.stdout,
      first.stderr,
      resumed.stdout,
      resumed.stderr,
    ].join("\n");
    expect(everything).not.toContain(SECRET);

    const again = await runTerfyn(["run", "--resume", runDir], project, env);
    expect(again.code).toBe(0);
    expect(readFileSync(deployLog, "utf8").trim().split("\n")).toHaveLength(1);
  });

  it("a changed host or argv diffs as an update of the Tool, and a paused run will not resume on it", async () => {
    const project = copyWithPort(8080);
    const applied = await runTerfyn(["apply", "--project", project, "--auto-approve"], project);
    expect(applied.code, applied.stderr).toBe(0);
    const tools = join(project, "tools.yaml");
    const original = readFileSync(tools, "utf8");
    writeFileSync(
      tools,
      original
        .replace('http://127.0.0.1:8080/issues/{id}"', 'http://tracker.example.com/issues/{id}"')
        .replace("argv: [node, scripts/deploy.mjs]", "argv: [node, scripts/deploy.mjs, --force]"),
    );
    const plan = await runTerfyn(["plan", "--project", project], project);
    expect(plan.stdout).toContain("~ update Tool/tracker");
    expect(plan.stdout).toContain(
      'spec.operations.get_issue.reaches: "GET http://127.0.0.1:8080/issues/{id}" -> "GET http://tracker.example.com/issues/{id}"',
    );
    expect(plan.stdout).toContain("~ update Tool/deploy");
    expect(plan.stdout).toContain(
      'spec.operations.release.reaches: "exec node scripts/deploy.mjs" -> "exec node scripts/deploy.mjs --force"',
    );

    // A run paused on the old declarations refuses to resume on the new argv.
    writeFileSync(tools, original.replaceAll("127.0.0.1:8080", "127.0.0.1:9"));
    const runDir = join(mkdtempSync(join(tmpdir(), "terfyn-triage-run-")), "run");
    writeFileSync(
      join(project, "fixtures", "model-script.yaml"),
      'agents:\n  Triager:\n    - output: { id: "42", severity: low, deploy: true, version: "1" }\n  Deployer:\n    - toolCalls: [ { tool: tool.deploy.release, input: { version: "1", ticket: "42" } } ]\n    - output: { id: "42", deployed: true }\n',
    );
    const env = { PATH: process.env.PATH ?? "", TRACKER_TOKEN: "x" };
    const first = await runTerfyn(
      [
        "run",
        "workflow/TriageAndDeploy",
        "--project",
        project,
        "--input-file",
        join(project, "fixtures", "input.json"),
        "--run-dir",
        runDir,
      ],
      project,
      env,
    );
    expect(first.code, first.stderr).toBe(2);
    writeFileSync(
      tools,
      readFileSync(tools, "utf8").replace(
        "argv: [node, scripts/deploy.mjs]",
        "argv: [node, scripts/other.mjs]",
      ),
    );
    const resumed = await runTerfyn(["run", "--resume", runDir], project, env);
    expect(resumed.code).toBe(1);
    expect(resumed.stderr).toContain("the project changed since run");
  });

  it("refuses to start when the tracker's header variable is unset, naming it", async () => {
    const project = copyWithPort(9);
    const r = await runTerfyn(
      [
        "run",
        "workflow/TriageAndDeploy",
        "--project",
        project,
        "--input-file",
        join(project, "fixtures", "input.json"),
      ],
      project,
      { PATH: process.env.PATH ?? "" },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("TRACKER_TOKEN");
    expect(r.stderr).toContain("Tool/tracker");
  });

  it("an external tool fails at run time with a message naming it", async () => {
    const project = copyWithPort(9);
    const tools = join(project, "tools.yaml");
    writeFileSync(
      tools,
      readFileSync(tools, "utf8")
        .replace("adapter: command", "adapter: external")
        .replace(/ {2}command:\n(?: {4}.*\n)+/, ""),
    );
    const v = await runTerfyn(["validate", "--project", project], project);
    expect(v.code, v.stdout + v.stderr).toBe(0);
    const r = await runTerfyn(
      [
        "run",
        "workflow/TriageAndDeploy",
        "--project",
        project,
        "--input-file",
        join(project, "fixtures", "input.json"),
      ],
      project,
      { PATH: process.env.PATH ?? "", TRACKER_TOKEN: "x" },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Tool/deploy uses the external adapter");
    expect(r.stderr).toContain("cannot run");
  });
});
