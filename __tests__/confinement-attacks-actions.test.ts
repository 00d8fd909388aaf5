import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { ModelRouter } from "../src/adapters/models/model-router.ts";
import { ScriptedModel } from "../src/adapters/models/model-script.ts";
import { parseLedger } from "../src/core/app/triggers.ts";
import { build, fakeGraphql, git, LATER, reviewFixJob } from "./helpers/app-runner.ts";
import { attackScenario } from "./helpers/attacker.ts";
import { type FakeComment, fakeGitHub, humanComment } from "./helpers/fake-github.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

const BOT = "github-actions[bot]";

function ledger(comments: FakeComment[]) {
  const mine = comments.filter((c) => c.user.login === BOT && parseLedger(c.body));
  expect(mine).toHaveLength(1);
  return parseLedger(mine[0]!.body)!;
}

describe("a prompt-injected TestWriter's payload, in the Actions placement", () => {
  it("no approval forged into the job's run directory or the saved state, no process of the job seen; the run waits at the publish gate", async () => {
    const ex = build();
    const gh = fakeGitHub({
      me: BOT,
      roles: { maria: { role_name: "write", permission: "write" } },
      pr: { headSha: ex.head, baseSha: ex.base, author: "alice", headRef: "fix-add" },
    });
    fakeGraphql(ex, { slug: "github-actions" });
    // Each job's runs directory is made here, so the forger knows where to look.
    const runsDirs = [1, 2, 3].map(() => mkdtempSync(join(tmpdir(), "terfyn-rf-job-")));
    const attack = await attackScenario({ runs: runsDirs[1]!, canary: "VITEST" });
    const { host } = attack;
    try {
      const attacker = async () =>
        new ModelRouter({
          script: await ScriptedModel.load(attack.script),
          forceScript: true,
          env: {},
        });
      const job = (n: number, inputs: Record<string, string>) =>
        reviewFixJob(ex.origin, inputs, attacker, runsDirs[n]);

      const first = await job(0, { "pull-request": "7", "head-sha": ex.head });
      const run = first.run!;
      expect(ledger(gh.comments).gate).toBe("plan");
      const approve = (hash: string) => {
        const c = humanComment("maria", `/terfyn approve ${hash}`);
        c.created_at = LATER;
        c.updated_at = LATER;
        gh.comments.push(c);
      };
      approve(ledger(gh.comments).hash!);
      const second = await job(1, { "pull-request": "7", "head-sha": ex.head, run });
      expect(second).toMatchObject({ run, state: "awaiting-approval" });
      expect(ledger(gh.comments).gate).toBe("publish");
      await new Promise((r) => setTimeout(r, 1500));
      const third = await job(2, { "pull-request": "7", "head-sha": ex.head, run });
      expect(third).toMatchObject({ run, state: "awaiting-approval" });
      expect(ledger(gh.comments).gate).toBe("publish");
      expect(git(ex.origin, "rev-parse", "fix-add")).toBe(ex.head);
      const saved = git(ex.origin, "show", `refs/terfyn/runs/${run}:run/approvals.jsonl`);
      expect(saved).not.toContain("forger");
      expect(existsSync(join(host, "leaked-secrets"))).toBe(false);
      expect(existsSync(join(host, "forger-alive"))).toBe(false);
      expect(attack.connections()).toBe(0);
    } finally {
      attack.done();
    }
  }, 180_000);
});
