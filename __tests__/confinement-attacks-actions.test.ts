/**
 * The prompt-injected TestWriter's payload (helpers/attacker.ts) in the Actions placement: the
 * review-fix mode's jobs, each on a fresh machine, carrying the run's state in
 * refs/terfyn/runs/<run>. Inside the sandbox the payload cannot append an approval to the job's
 * run directory (which the state would then carry to the next job), see the job's processes
 * (whose environment holds the workflow token and the model key), or stay behind: the run
 * waits at the publish gate until a permitted human approves on the pull request.
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
import { parseLedger } from "../src/core/app/triggers.ts";
import { build, EXAMPLE, fakeGraphql, git, LATER, reviewFixJob } from "./helpers/app-runner.ts";
import { attackPayload } from "./helpers/attacker.ts";
import { type FakeComment, fakeGitHub, humanComment } from "./helpers/fake-github.ts";

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
    const host = mkdtempSync(join(tmpdir(), "terfyn-attacker-host-"));
    hosts.push(host);
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
      // Each job's runs directory is made here, so the forger knows where to look.
      const runsDirs = [1, 2, 3].map(() => mkdtempSync(join(tmpdir(), "terfyn-rf-job-")));
      call.input.content =
        attackPayload({ host, runs: runsDirs[1]!, port, canary: "VITEST" }) + call.input.content;
      const scriptFile = join(host, "..", `attacker-actions-${Date.now()}.yaml`);
      writeFileSync(scriptFile, stringifyYaml(script));
      const attacker = async () =>
        new ModelRouter({
          script: await ScriptedModel.load(scriptFile),
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
      expect(connections).toBe(0);
    } finally {
      server.close();
    }
  }, 180_000);
});
