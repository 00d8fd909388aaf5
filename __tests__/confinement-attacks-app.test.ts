import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { ModelRouter } from "../src/adapters/models/model-router.ts";
import { ScriptedModel } from "../src/adapters/models/model-script.ts";
import {
  approval,
  build,
  commented,
  exampleRunner,
  fakeGraphql,
  labeled,
  probotWith,
  status,
  writer,
} from "./helpers/app-runner.ts";
import { attackScenario } from "./helpers/attacker.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

describe("a prompt-injected TestWriter's payload, through the App's runner", () => {
  it("forges no gate, sees no App process, leaves the clone's config and the network alone; the run waits at the publish gate", async () => {
    const ex = build();
    const gh = writer(ex);
    fakeGraphql(ex);
    const runsDir = mkdtempSync(join(tmpdir(), "terfyn-app-runs-"));
    // The canary is the vitest worker's own: every process of this App has it in its environ.
    const attacker = await attackScenario({ runs: runsDir, canary: "VITEST" });
    const { host } = attacker;
    try {
      const runner = await exampleRunner(ex, {
        runsDir,
        model: async () =>
          new ModelRouter({
            script: await ScriptedModel.load(attacker.script),
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
      expect(attacker.connections()).toBe(0);
    } finally {
      attacker.done();
    }
  }, 120_000);
});
