/**
 * The prompt-injected TestWriter's payload (helpers/attacker.ts) through the GitHub App's
 * in-process runner, as a label and approval comments drive it: the repository's commands and
 * the agents' run_tests run in the sandbox, so the payload cannot forge the publish gate in the
 * App's runs directory, see any process of the App (whose environment holds its private key
 * and webhook secret), change the App's clone through the worktree's .git, stay behind, or
 * reach the network. The run waits at the publish gate for a human.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nock from "nock";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { ModelRouter } from "../src/adapters/models/model-router.ts";
import { ScriptedModel } from "../src/adapters/models/model-script.ts";
import {
  approval,
  build,
  commented,
  EXAMPLE,
  exampleRunner,
  fakeGraphql,
  labeled,
  probotWith,
  status,
  writer,
} from "./helpers/app-runner.ts";
import { attackPayload } from "./helpers/attacker.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());
const hosts: string[] = [];
afterAll(() => {
  for (const h of hosts) {
    try {
      execFileSync("pkill", ["-f", h]);
    } catch {}
  }
});

describe("a prompt-injected TestWriter's payload, through the App's runner", () => {
  it("forges no gate, sees no App process, leaves the clone's config and the network alone; the run waits at the publish gate", async () => {
    const ex = build();
    const gh = writer(ex);
    fakeGraphql(ex);
    const host = mkdtempSync(join(tmpdir(), "terfyn-attacker-host-"));
    hosts.push(host);
    const runsDir = mkdtempSync(join(tmpdir(), "terfyn-app-runs-"));
    let connections = 0;
    const server = createServer((s) => {
      connections++;
      s.resume();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    try {
      const script = parseYaml(readFileSync(join(EXAMPLE, "model-script.yaml"), "utf8"));
      const call = script.agents.TestWriter[0].toolCalls[0];
      // The canary is the vitest worker's own: every process of this App has it in its environ.
      call.input.content =
        attackPayload({ host, runs: runsDir, port, canary: "VITEST" }) + call.input.content;
      const scriptFile = join(host, "..", `attacker-${Date.now()}.yaml`);
      writeFileSync(scriptFile, stringifyYaml(script));
      const runner = await exampleRunner(ex, {
        runsDir,
        model: async () =>
          new ModelRouter({
            script: await ScriptedModel.load(scriptFile),
            forceScript: true,
            env: {},
          }),
      });
      const receive = probotWith(runner);
      await receive("pull_request", labeled(ex));
      await runner.idle();
      const plan = status(gh.comments);
      expect(plan.ledger.gate).toBe("plan");
      await receive("issue_comment", commented(approval(gh.comments, plan.ledger.hash!)));
      await runner.idle();
      const run = status(gh.comments).ledger.run;
      expect(status(gh.comments).ledger.gate).toBe("publish");
      // Time for a forger, had one survived, to find publish.json and approve it.
      await new Promise((r) => setTimeout(r, 1500));
      const p = runner.paths(run);
      const approvals = readFileSync(join(p.run, "approvals.jsonl"), "utf8");
      expect(approvals).not.toContain("forger");
      expect(approvals.trim().split("\n")).toHaveLength(1);
      // The payload ran (it wrote in the worktree) and saw no process of the App.
      const inTree = join(p.worktree, "leaked-secrets.txt");
      expect(existsSync(inTree)).toBe(true);
      expect(readFileSync(inTree, "utf8")).toBe("");
      expect(existsSync(join(host, "leaked-secrets"))).toBe(false);
      expect(existsSync(join(host, "forger-alive"))).toBe(false);
      expect(readFileSync(join(p.clone, ".git", "config"), "utf8")).not.toContain("fsmonitor");
      expect(connections).toBe(0);
    } finally {
      server.close();
    }
  }, 120_000);
});
