/**
 * The bundled Action on pull requests that change a project's `.claude/settings.json` (real git
 * repositories, GitHub a fake on nock): a widening is one row per widened rule in the comment's
 * "Authority widened" table, a warning annotation on the rule's line, a pending approval and a
 * failure under `fail-on: widening`; a narrowing stays green and approved.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { git, pullRequestOpened, runAction } from "./helpers/action-harness.ts";
import { prRepo } from "./helpers/example-project.ts";
import { fakeGitHub } from "./helpers/fake-github.ts";

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());

// biome-ignore lint/suspicious/noExplicitAny: webhook example payloads are loose JSON
type Loose = Record<string, any>;

const settingsOf = (p: Record<string, unknown>) =>
  `${JSON.stringify({ permissions: p }, null, 2)}\n`;

const writeSettings = (text: string) => (project: string) => {
  mkdirSync(join(project, ".claude"), { recursive: true });
  writeFileSync(join(project, ".claude", "settings.json"), text);
};

async function open(r: { repo: string; base: string; head: string }, failOn?: string) {
  const gh = fakeGitHub({ pr: { headSha: r.head, baseSha: r.base, author: "alice" } });
  const run = await runAction({
    event: "pull_request",
    payload: pullRequestOpened(r.base, r.head),
    workspace: r.repo,
    inputs: { project: "agents", ...(failOn ? { "fail-on": failOn } : {}) },
  });
  gh.done();
  const comment =
    gh.comments.find((c) => c.body.includes("terfyn:plan project=agents"))?.body ?? "";
  const approval = gh.statuses.find((s) => s.context === "terfyn/approval");
  const annotations = (((gh.checkRuns[0]?.body ?? {}) as Loose).output?.annotations ??
    []) as Loose[];
  return { run, comment, approval, annotations };
}

describe("the Action on a project's Claude Code settings", () => {
  const base = settingsOf({ allow: ["Bash(git log *)", "Read"], deny: ["Bash(rm *)"] });

  it("a pull request that widens: a row and an annotation at the rule's line, approval pending, fail-on: widening fails", async () => {
    const head = settingsOf({ allow: ["Bash(git *)", "Read"], deny: ["Bash(rm *)"] });
    const r = prRepo(writeSettings(head), writeSettings(base));
    const dflt = await open(r);
    expect(dflt.run.failed).toBe(false);
    expect(dflt.comment.split("\n")[1]).toMatch(/^### ⚠️ Terfyn · `agents` · needs approval/);
    expect(dflt.comment).toContain("**Authority widened**");
    expect(dflt.comment).toMatch(
      /\| `Host\/claude-code` \| `process\.exec` \| autonomous \(allows what no rule allowed before, without asking\) \| `added allow Bash\(git \*\)` \| high \| `agents\/\.claude\/settings\.json:4` \|/,
    );
    expect(dflt.approval?.state).not.toBe("success");
    const widened = dflt.annotations.find((a) => a.title === "Authority WIDENED: Host/claude-code");
    expect(widened).toMatchObject({
      path: "agents/.claude/settings.json",
      start_line: 4,
      annotation_level: "warning",
    });
    expect(git(r.repo, "show", `${r.head}:agents/.claude/settings.json`).split("\n")[3]).toContain(
      '"Bash(git *)"',
    );
    const strict = await open(r, "widening");
    expect(strict.run.failed).toBe(true);
  });

  it("a pull request that narrows: green, approved, nothing annotated as widened", async () => {
    const head = settingsOf({ allow: ["Read"], deny: ["Bash(rm *)", "WebFetch"] });
    const r = prRepo(writeSettings(head), writeSettings(base));
    const strict = await open(r, "widening");
    expect(strict.run.failed).toBe(false);
    expect(strict.comment).not.toContain("**Authority widened**");
    expect(strict.approval?.state).toBe("success");
    expect(strict.annotations.filter((a) => /WIDENED/.test(a.title))).toEqual([]);
  });

  it("a project policy forbids what the settings now allow: blocked, on the rule's line", async () => {
    const policy = `apiVersion: terfyn.dev/v1
kind: Policy
metadata: { name: claude-no-push }
spec:
  rules:
    - forbid: { agent: Host/claude-code, effect: network.egress }
`;
    const quiet = settingsOf({ allow: ["Read"], deny: ["WebFetch", "WebSearch"] });
    const r = prRepo(
      writeSettings(
        settingsOf({ allow: ["Read", "WebFetch(domain:example.com)"], deny: ["WebSearch"] }),
      ),
      (p) => {
        writeSettings(quiet)(p);
        writeFileSync(join(p, "claude-policy.yaml"), policy);
      },
    );
    const dflt = await open(r);
    expect(dflt.run.failed).toBe(true);
    expect(dflt.comment.split("\n")[1]).toMatch(/^### ⛔ Terfyn · `agents` · /);
    const failure = dflt.annotations.find((a) => a.annotation_level === "failure");
    // `"WebFetch(domain:example.com)"` is on line 5 of the pretty-printed file.
    expect(failure).toMatchObject({ path: "agents/.claude/settings.json", start_line: 5 });
  });
});
