/**
 * A review-response run end to end in local mode: examples/review-fix (a real repository with a
 * real defect and six review comments) through `terfyn review`, both gates, to done.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { runTerfyn } from "./helpers/cli.ts";
import {
  approveAndResume,
  type BuiltReview,
  buildReviewExample,
  commitAgentsMd,
  git,
  localSteps,
  reviewStartArgs,
  reviewState,
} from "./helpers/review-run.ts";

const EXAMPLE = join(import.meta.dirname, "..", "examples", "review-fix");

const build = () => buildReviewExample("terfyn-review-e2e-");

const state = reviewState;

type ScriptTurn = { output?: Record<string, unknown> };

/**
 * The example's model script with the output of `agent`'s last turn changed by `edit` (every
 * other turn unchanged), written next to the run directory.
 */
function scriptWith(
  b: { runDir: string },
  agent: "Decider" | "Planner",
  edit: (output: Record<string, unknown>) => Record<string, unknown>,
): string {
  const script = parseYaml(readFileSync(join(EXAMPLE, "model-script.yaml"), "utf8")) as {
    agents: Record<string, ScriptTurn[]>;
  };
  const last = script.agents[agent]?.at(-1);
  if (!last?.output) throw new Error(`the example script has no ${agent} output`);
  last.output = edit(last.output);
  const file = join(b.runDir, "..", "model-script.yaml");
  writeFileSync(file, stringifyYaml(script));
  return file;
}

const startArgs = (b: BuiltReview, script: string) => reviewStartArgs(b, script);

describe("terfyn review (local mode)", () => {
  it("injected directions reach the Planner only inside untrusted-data blocks; decisions.json keeps them as found", async () => {
    const b = build();
    const start = await runTerfyn(startArgs(b, join(EXAMPLE, "model-script.yaml")), b.repo);
    expect(start.code, start.stderr).toBe(2);
    const decided = JSON.parse(readFileSync(join(b.runDir, "decisions.json"), "utf8")) as {
      decisions: { item: string; injected_directions: string[] }[];
    };
    const raw = decided.decisions.find((d) => d.item === "RT_104")?.injected_directions ?? [];
    expect(raw.length).toBeGreaterThan(0);
    expect(raw.every((t) => !t.startsWith("<untrusted-data"))).toBe(true);
    const input = JSON.parse(
      readFileSync(join(b.runDir, "agents", "plan", "input.json"), "utf8"),
    ) as typeof decided;
    const given = input.decisions.flatMap((d) => d.injected_directions);
    expect(given.length).toBeGreaterThanOrEqual(raw.length);
    for (const t of given)
      expect(t).toMatch(
        /^<untrusted-data kind="injected-direction" id="RT_\d+\.\d+">\n[\s\S]*\n<\/untrusted-data>$/,
      );
  }, 60_000);

  it("six comments through both gates to done: one planned commit, replies, a ticket, nothing for praise, the stale one recognised", async () => {
    const b = build();
    const start = await runTerfyn(startArgs(b, join(EXAMPLE, "model-script.yaml")), b.repo);
    expect(start.code, start.stderr).toBe(2);
    expect(state(b.runDir)).toMatchObject({
      status: "awaiting-approval",
      awaiting: { gate: "plan", artifact: "plan.json" },
    });

    const wrong = await runTerfyn(
      ["approve", "--run", b.runDir, "--hash", `sha256:${"0".repeat(64)}`],
      b.repo,
    );
    expect(wrong.code).toBe(1);
    expect(existsSync(join(b.runDir, "approvals.jsonl"))).toBe(false);
    expect(
      (
        await runTerfyn(
          ["approve", "--run", b.runDir, "--hash", state(b.runDir).awaiting.hash],
          b.repo,
        )
      ).code,
    ).toBe(0);

    const second = await runTerfyn(["review", "--resume", b.runDir], b.repo);
    expect(second.code, second.stderr).toBe(2);
    expect(state(b.runDir).awaiting.gate).toBe("publish");
    // Nothing is published before the publish gate.
    expect(git(b.repo, "rev-parse", "HEAD")).toBe(b.head);
    expect(
      (
        await runTerfyn(
          ["approve", "--run", b.runDir, "--hash", state(b.runDir).awaiting.hash],
          b.repo,
        )
      ).code,
    ).toBe(0);

    const end = await runTerfyn(["review", "--resume", b.runDir], b.repo);
    expect(end.code, end.stderr).toBe(0);
    expect(end.stdout.split("\n")[0]).toMatch(/^done: /);
    expect(state(b.runDir)).toMatchObject({ status: "ended", terminal: "done" });

    const newHead = git(b.repo, "rev-parse", "HEAD");
    expect(git(b.repo, "rev-parse", "HEAD^")).toBe(b.head);
    expect(git(b.repo, "diff", "--name-only", b.head, newHead).split("\n").sort()).toEqual([
      "src/add.js",
      "test/add.test.js",
    ]);
    const replies = JSON.parse(readFileSync(join(b.runDir, "outbox", "replies.json"), "utf8")) as {
      item: string;
    }[];
    expect(replies.map((r) => r.item).sort()).toEqual(["RT_101", "RT_102", "RT_103", "RT_106"]);
    const tickets = JSON.parse(readFileSync(join(b.runDir, "outbox", "tickets.json"), "utf8")) as {
      item: string;
    }[];
    expect(tickets.map((t) => t.item)).toEqual(["RT_104"]);
    const report = readFileSync(join(b.runDir, "report.md"), "utf8");
    expect(report.split("\n")[0]).toBe("# Review run: done");
    expect(report).toContain(
      "RT\\_106: the comment is about code that no longer exists at this head",
    );
    expect(report).toMatch(/RT\\_104: the comment contained directions, ignored: ".*force\\-push/);
    expect(JSON.parse(readFileSync(join(b.runDir, "proof.json"), "utf8")).verdict).toBe("proven");

    // Resuming an ended run repeats nothing.
    const again = await runTerfyn(["review", "--resume", b.runDir], b.repo);
    expect(again.code).toBe(0);
    expect(git(b.repo, "rev-parse", "HEAD")).toBe(newHead);
  }, 120_000);

  it("an answer-only run (the defect ticketed, no fix): straight to the publish gate, then done with its replies and no commit", async () => {
    const b = build();
    const script = scriptWith(b, "Decider", (out) => ({
      decisions: (out.decisions as Record<string, unknown>[]).map((x) => {
        if (x.item !== "RT_101") return x;
        const { reply: _reply, ...rest } = x;
        return { ...rest, action: "ticket" };
      }),
    }));
    const start = await runTerfyn(startArgs(b, script), b.repo);
    expect(start.code, start.stderr).toBe(2);
    expect(state(b.runDir).awaiting).toMatchObject({ gate: "publish", artifact: "publish.json" });
    const approved = await runTerfyn(
      ["approve", "--run", b.runDir, "--hash", state(b.runDir).awaiting.hash],
      b.repo,
    );
    expect(approved.code, approved.stderr).toBe(0);
    const end = await runTerfyn(["review", "--resume", b.runDir], b.repo);
    expect(end.code, end.stderr).toBe(0);
    expect(end.stdout.split("\n")[0]).toBe(
      "done: published replies and tickets; no code change needed proving",
    );
    expect(state(b.runDir)).toMatchObject({ status: "ended", terminal: "done" });
    expect(git(b.repo, "rev-parse", "HEAD")).toBe(b.head);
    expect(git(b.repo, "status", "--porcelain")).toBe("");
    expect(existsSync(join(b.runDir, "proof.json"))).toBe(false);
    const replies = JSON.parse(readFileSync(join(b.runDir, "outbox", "replies.json"), "utf8")) as {
      item: string;
    }[];
    expect(replies.map((r) => r.item).sort()).toEqual(["RT_102", "RT_103", "RT_106"]);
    const tickets = JSON.parse(readFileSync(join(b.runDir, "outbox", "tickets.json"), "utf8")) as {
      item: string;
    }[];
    expect(tickets.map((t) => t.item).sort()).toEqual(["RT_101", "RT_104"]);
    const report = readFileSync(join(b.runDir, "report.md"), "utf8");
    expect(report.split("\n")[0]).toBe("# Review run: done");
    expect(report).toContain("no code change needed proving");
  }, 120_000);

  it("an edited plan.json after approval needs a fresh approval", async () => {
    const b = build();
    await runTerfyn(startArgs(b, join(EXAMPLE, "model-script.yaml")), b.repo);
    const first = state(b.runDir).awaiting.hash;
    await runTerfyn(["approve", "--run", b.runDir, "--hash", first], b.repo);
    const planPath = join(b.runDir, "plan.json");
    writeFileSync(
      planPath,
      readFileSync(planPath, "utf8").replace('"src/add.js"', '"src/add.js", "LICENSE"'),
    );
    const r = await runTerfyn(["review", "--resume", b.runDir], b.repo);
    expect(r.code).toBe(2);
    expect(state(b.runDir).awaiting.hash).not.toBe(first);
  }, 120_000);

  /** The example with its AGENTS.md edited at head (the request follows the new head). */
  const withAgentsMd = (edit: (text: string) => string) => {
    const b = build();
    commitAgentsMd(b, edit);
    return b;
  };

  for (const [what, edit, message] of [
    [
      "a missing single-test command",
      (t: string) => t.replace(/^.*single test.*$/im, ""),
      "AGENTS.md does not declare: single test",
    ],
    [
      "a single-test command that does not take the test's name",
      (t: string) => t.replace(/^- single test:.*$/im, "- single test: `node --test`"),
      "does not take the test's name: write <name> where it goes",
    ],
    [
      "an unknown test report format",
      (t: string) => `${t}\n- test report: \`xunit\`\n`,
      "test report `xunit` is not one of: tap, junit <path>, summary",
    ],
  ] as const) {
    it(`${what} stops the run at intake naming it, with a report`, async () => {
      const b = withAgentsMd(edit);
      const r = await runTerfyn(startArgs(b, join(EXAMPLE, "model-script.yaml")), b.repo);
      expect(r.code).toBe(1);
      expect(state(b.runDir)).toMatchObject({ terminal: "bad-input" });
      expect(readFileSync(join(b.runDir, "report.md"), "utf8")).toContain(message);
    }, 120_000);
  }

  it("a gate AGENTS.md does not declare is reported, not guessed; a failing lint gate is a failing verdict", async () => {
    const b = withAgentsMd((t) =>
      t
        .replace(/^.*typecheck.*$/im, "")
        .replace(
          /^- lint:.*$/im,
          "- lint: `node -e \"console.error('lint: 1 problem'); process.exit(3)\"`",
        ),
    );
    const start = await runTerfyn(startArgs(b, join(EXAMPLE, "model-script.yaml")), b.repo);
    expect(start.code, start.stderr).toBe(2);
    await runTerfyn(
      ["approve", "--run", b.runDir, "--hash", state(b.runDir).awaiting.hash],
      b.repo,
    );
    const r = await runTerfyn(["review", "--resume", b.runDir], b.repo);
    // The lint gate fails the same way twice: the referee escalates to a re-plan (a new gate).
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain("build 2: ESCALATE");
    const verdict = JSON.parse(readFileSync(join(b.runDir, "verdict-1.json"), "utf8"));
    expect(verdict).toMatchObject({ status: "fail", reason: "the lint command exited 3" });
    expect(verdict.gates).toContainEqual({ gate: "typecheck", status: "not declared" });
    expect(verdict.gates).toContainEqual(
      expect.objectContaining({ gate: "lint", status: "fail", code: 3 }),
    );
    expect(verdict.gates).toContainEqual(expect.objectContaining({ gate: "test", status: "pass" }));
  }, 120_000);
});

describe("terfyn review: every exit is a terminal state with a report", () => {
  const SCRIPT = join(EXAMPLE, "model-script.yaml");
  const approveAwaited = async (b: { runDir: string; repo: string }) => {
    const r = await runTerfyn(
      ["approve", "--run", b.runDir, "--hash", state(b.runDir).awaiting.hash],
      b.repo,
    );
    expect(r.code, r.stderr).toBe(0);
  };
  /** A human's commit on the branch, of a file the run does not touch. */
  const humanPush = (repo: string) => {
    writeFileSync(join(repo, "README.md"), "# edited by a human while the run waited\n");
    execFileSync(
      "git",
      ["-c", "user.name=h", "-c", "user.email=h@x", "commit", "-qm", "human", "--", "README.md"],
      { cwd: repo },
    );
    return git(repo, "rev-parse", "HEAD");
  };

  for (const gate of ["plan", "publish"] as const) {
    it(`a branch moved while the run waited at the ${gate} gate: stuck, exit 1, a report naming both commits, nothing published`, async () => {
      const b = build();
      let r = await runTerfyn(startArgs(b, SCRIPT), b.repo);
      expect(r.code, r.stderr).toBe(2);
      if (gate === "publish") {
        await approveAwaited(b);
        r = await runTerfyn(["review", "--resume", b.runDir], b.repo);
        expect(r.code, r.stderr).toBe(2);
      }
      expect(state(b.runDir).awaiting.gate).toBe(gate);
      const paused = readFileSync(join(b.runDir, "report.md"), "utf8");
      expect(paused).toContain(`awaiting approval at the ${gate} gate`);
      expect(paused).toContain(
        `terfyn approve --run ${b.runDir} --hash ${state(b.runDir).awaiting.hash}`,
      );
      const moved = humanPush(b.repo);
      await approveAwaited(b);
      r = await runTerfyn(["review", "--resume", b.runDir], b.repo);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).not.toContain("internal error");
      expect(state(b.runDir)).toMatchObject({ status: "ended", terminal: "stuck" });
      const report = readFileSync(join(b.runDir, "report.md"), "utf8");
      expect(report.split("\n")[0]).toBe("# Review run: stuck");
      expect(report).toContain(`waited at the ${gate} gate`);
      expect(report).toContain(b.head);
      expect(report).toContain(moved);
      expect(git(b.repo, "rev-parse", "HEAD")).toBe(moved);
      expect(existsSync(join(b.runDir, "publishing.json"))).toBe(false);
      expect(existsSync(join(b.runDir, "outbox"))).toBe(false);
    }, 120_000);
  }

  it("the run works in its own worktree next to the run directory: the user's checkout is untouched while it waits, and the worktree is gone when it ends", async () => {
    const b = build();
    const status = git(b.repo, "status", "--porcelain");
    let r = await runTerfyn(startArgs(b, SCRIPT), b.repo);
    expect(r.code, r.stderr).toBe(2);
    const worktree = `${b.runDir}.worktree`;
    expect(git(worktree, "rev-parse", "HEAD")).toBe(b.head);
    await approveAwaited(b);
    r = await runTerfyn(["review", "--resume", b.runDir], b.repo);
    expect(r.code, r.stderr).toBe(2);
    // Red tests and the fix exist in the worktree only.
    expect(existsSync(join(worktree, "test", "add.test.js"))).toBe(true);
    expect(existsSync(join(b.repo, "test", "add.test.js"))).toBe(false);
    expect(git(b.repo, "status", "--porcelain")).toBe(status);
    await approveAwaited(b);
    r = await runTerfyn(["review", "--resume", b.runDir], b.repo);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(worktree)).toBe(false);
    expect(git(b.repo, "worktree", "list", "--porcelain")).not.toContain("run.worktree");
  }, 120_000);

  it("a run directory inside the repository is refused before anything is made: no worktree, no files", async () => {
    const b = build();
    const runDir = join(b.repo, ".terfyn", "runs", "r1");
    const r = await runTerfyn(startArgs({ ...b, runDir }, SCRIPT), b.repo);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain("is inside the repository under review");
    const worktrees = git(b.repo, "worktree", "list", "--porcelain")
      .split("\n")
      .filter((l) => l.startsWith("worktree "));
    expect(worktrees).toHaveLength(1);
    expect(existsSync(runDir)).toBe(false);
  }, 120_000);

  it("a worktree moved to another commit while the run waited is not reused: stuck, with a report", async () => {
    const b = build();
    let r = await runTerfyn(startArgs(b, SCRIPT), b.repo);
    expect(r.code, r.stderr).toBe(2);
    const worktree = `${b.runDir}.worktree`;
    git(worktree, "checkout", "-q", "--detach", "HEAD^");
    await approveAwaited(b);
    r = await runTerfyn(["review", "--resume", b.runDir], b.repo);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).not.toContain("internal error");
    expect(state(b.runDir)).toMatchObject({ status: "ended", terminal: "stuck" });
    expect(state(b.runDir).reason).toContain("is at");
    expect(git(b.repo, "rev-parse", "HEAD")).toBe(b.head);
  }, 120_000);

  it("a plan naming a path outside the repository is refused at the plan phase: bad-input, exit 1", async () => {
    const b = build();
    const script = scriptWith(b, "Planner", (plan) => ({ ...plan, files: ["../outside.js"] }));
    const r = await runTerfyn(startArgs(b, script), b.repo);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).not.toContain("internal error");
    expect(state(b.runDir)).toMatchObject({ terminal: "bad-input" });
    expect(r.stdout.split("\n")[0]).toBe(
      'bad-input: the plan names paths that are not files of the repository: "../outside.js" leaves the repository (..)',
    );
    expect(existsSync(join(b.runDir, "plan.json"))).toBe(false);
    expect(readFileSync(join(b.runDir, "report.md"), "utf8")).toContain("(phase plan)");
  }, 120_000);

  it("an invalid request.json: a short located message, bad-input, exit 1", async () => {
    const b = build();
    const request = JSON.parse(readFileSync(b.request, "utf8"));
    request.threads[2].comments[0].commit = "HEAD~1";
    delete request.branch;
    writeFileSync(b.request, JSON.stringify(request));
    const r = await runTerfyn(startArgs(b, SCRIPT), b.repo);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout.split("\n")[0]).toBe(
      "bad-input: the request could not be read: request.json: branch: Invalid input: expected string, received undefined; request.json: threads[2].comments[0].commit: a commit id: 7 to 64 lowercase hex digits",
    );
    expect(r.stdout).not.toContain('"code"');
    expect(state(b.runDir)).toMatchObject({ terminal: "bad-input" });
    expect(readFileSync(join(b.runDir, "report.md"), "utf8").split("\n")[0]).toBe(
      "# Review run: bad-input",
    );
  }, 120_000);
});

describe("terfyn review: SIGKILL between phases", () => {
  const BIN = join(import.meta.dirname, "..", "bin", "terfyn.mjs");
  const ARTIFACTS = [
    "request.json",
    "decisions.json",
    "plan.json",
    "red-tests.json",
    "verdict.json",
    "proof.json",
    "publish.json",
    "published.json",
  ];

  function cli(args: string[], env: Record<string, string> = {}) {
    const r = spawnSync(process.execPath, [BIN, ...args], {
      encoding: "utf8",
      // From source: a resume must reuse the run's worktree as this tree does it.
      env: { ...process.env, TERFYN_FROM_SOURCE: "1", ...env },
    });
    return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
  }

  it.each(ARTIFACTS)(
    "killed right after %s, then resumed: done, one commit, no phase repeated, no approval asked twice",
    async (artifact) => {
      const b = build();
      const base = startArgs(b, join(EXAMPLE, "model-script.yaml"));
      let killed = false;
      let approvalsAsked = 0;
      let r = cli(base, { TERFYN_TEST_KILL_AFTER_ARTIFACT: artifact });
      for (let i = 0; i < 8; i++) {
        if (r.signal === "SIGKILL") killed = true;
        else if (r.code === 2) {
          approvalsAsked++;
          const hash = state(b.runDir).awaiting.hash;
          expect(cli(["approve", "--run", b.runDir, "--hash", hash]).code).toBe(0);
        } else break;
        r = cli(
          ["review", "--resume", b.runDir],
          killed ? {} : { TERFYN_TEST_KILL_AFTER_ARTIFACT: artifact },
        );
      }
      expect(killed, artifact).toBe(true);
      expect(r.code, r.stderr).toBe(0);
      expect(state(b.runDir)).toMatchObject({ terminal: "done" });
      expect(approvalsAsked).toBe(2);
      expect(git(b.repo, "rev-list", "--count", `${b.head}..HEAD`)).toBe("1");
      expect(git(b.repo, "rev-parse", "HEAD^")).toBe(b.head);
      const approvals = readFileSync(join(b.runDir, "approvals.jsonl"), "utf8").trim().split("\n");
      expect(approvals).toHaveLength(2);
    },
    120_000,
  );
});

describe("terfyn review --sweep", () => {
  it("records runs abandoned mid-flight as stuck with a report, and leaves others alone", async () => {
    const { mkdirSync } = await import("node:fs");
    const root = mkdtempSync(join(tmpdir(), "terfyn-sweep-"));
    const make = (name: string, status: string, updated: string) => {
      const dir = join(root, name);
      mkdirSync(dir);
      writeFileSync(join(dir, "run.json"), "{}");
      writeFileSync(
        join(dir, "state.json"),
        JSON.stringify({
          run_id: name,
          phase: "build",
          status,
          build: { iteration: 1, identical_retries: 0, escalations: 0 },
          updated_at: updated,
        }),
      );
    };
    make("old", "running", "2020-01-01T00:00:00Z");
    make("paused", "awaiting-approval", "2020-01-01T00:00:00Z");
    make("fresh", "running", new Date().toISOString());
    const r = await runTerfyn(["review", "--sweep", root, "--max-idle-minutes", "30"], root);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("1 abandoned run recorded");
    expect(state(join(root, "old"))).toMatchObject({ status: "ended", terminal: "stuck" });
    expect(readFileSync(join(root, "old", "report.md"), "utf8")).toContain(
      "abandoned mid-flight in phase build",
    );
    expect(state(join(root, "paused")).status).toBe("awaiting-approval");
    expect(state(join(root, "fresh")).status).toBe("running");
  });
});

describe("extend-only files in local mode", () => {
  it("the local steps report a shortened extend-only file, and accept one only added to", async () => {
    const { steps, root } = await localSteps(build());
    // The run works in its own worktree, so that is where a change is looked for.
    const changelog = join(root, "CHANGELOG.md");
    const original = readFileSync(changelog, "utf8");
    writeFileSync(changelog, `${original}\n- a new entry\n`);
    expect(await steps.extendOnlyViolations()).toEqual([]);
    writeFileSync(changelog, original.split("\n").slice(1).join("\n"));
    expect(await steps.extendOnlyViolations()).toEqual(["CHANGELOG.md"]);
    // An insertion in the middle removes no line, but it is not an append at the end.
    const lines = original.split("\n");
    const middle = Math.max(1, Math.floor(lines.length / 2));
    writeFileSync(
      changelog,
      [...lines.slice(0, middle), "- inserted in the middle", ...lines.slice(middle)].join("\n"),
    );
    expect(await steps.extendOnlyViolations()).toEqual(["CHANGELOG.md"]);
    writeFileSync(changelog, `- inserted at the top\n${original}`);
    expect(await steps.extendOnlyViolations()).toEqual(["CHANGELOG.md"]);
  });

  it("extend-only entries may be globs: a file they match is held to append-only too; AGENTS.md is read as the head has it", async () => {
    const b = build();
    const agentsAtHead = join(b.repo, "AGENTS.md");
    const original = readFileSync(agentsAtHead, "utf8");
    writeFileSync(agentsAtHead, original.replace("- `CHANGELOG.md`", "- `*.md`"));
    git(b.repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", "glob");
    const request = JSON.parse(readFileSync(b.request, "utf8"));
    writeFileSync(
      b.request,
      JSON.stringify({ ...request, head: git(b.repo, "rev-parse", "HEAD") }),
    );
    const { steps, root } = await localSteps(b);
    // An agent rewriting AGENTS.md in the worktree (to drop the rule) changes nothing the run reads.
    writeFileSync(join(root, "AGENTS.md"), original);
    const readme = join(root, "README.md");
    writeFileSync(readme, `new first line\n${readFileSync(readme, "utf8")}`);
    expect(await steps.extendOnlyViolations()).toEqual(["AGENTS.md", "README.md"]);
  });
});

describe("terfyn review: a new test ran, or it did not", () => {
  const SCRIPT = join(EXAMPLE, "model-script.yaml");
  const withAgentsMd = commitAgentsMd;
  /** Starts, approves the plan, resumes: the red-tests phase's outcome. */
  const throughRedTests = async (b: ReturnType<typeof build>, script = SCRIPT) => {
    const start = await runTerfyn(startArgs(b, script), b.repo);
    expect(start.code, start.stderr).toBe(2);
    await runTerfyn(
      ["approve", "--run", b.runDir, "--hash", state(b.runDir).awaiting.hash],
      b.repo,
    );
    return runTerfyn(["review", "--resume", b.runDir], b.repo);
  };

  it("a single-test command that runs no test (exit 0, no count): stuck at red tests, saying the test did not run", async () => {
    const b = build();
    withAgentsMd(b, (t) => t.replace(/^- single test:.*$/im, '- single test: `echo "<name>"`'));
    const r = await throughRedTests(b);
    expect(r.code).toBe(1);
    expect(state(b.runDir)).toMatchObject({ terminal: "stuck" });
    expect(state(b.runDir).reason).toContain(
      "the new tests must run and fail, but the output shows these did not run: add returns the sum",
    );
    expect(state(b.runDir).reason).toContain("no count of tests run");
  }, 120_000);

  it("a test the TestWriter named differently from the plan matches nothing: stuck at red tests, not 'passing'", async () => {
    const b = build();
    const script = parseYaml(readFileSync(SCRIPT, "utf8")) as {
      agents: Record<string, { toolCalls?: { input: { content?: string } }[] }[]>;
    };
    const write = script.agents.TestWriter?.[0]?.toolCalls?.[0];
    if (!write?.input.content) throw new Error("the example's TestWriter writes no file");
    write.input.content = write.input.content.replace("add returns the sum", "add gives the total");
    const file = join(b.runDir, "..", "renamed.yaml");
    writeFileSync(file, stringifyYaml(script));
    const r = await throughRedTests(b, file);
    expect(r.code).toBe(1);
    expect(state(b.runDir).reason).toContain("these did not run: add returns the sum");
  }, 120_000);

  it("a declared TAP report is read for names and counts: the example runs to done with it", async () => {
    const b = build();
    withAgentsMd(b, (t) =>
      t.replace(
        /^- single test:.*$/im,
        '- single test: `node --test --test-reporter=tap --test-name-pattern "<name>"`\n- test report: `tap`',
      ),
    );
    const r = await throughRedTests(b);
    expect(r.code, r.stderr).toBe(2);
    const red = JSON.parse(readFileSync(join(b.runDir, "red-tests.json"), "utf8"));
    expect(red.tests[0]).toMatchObject({ test: "add returns the sum", failed: true, ran: true });
    expect(red.tests[0].evidence).toContain("tap: 1 ran");
    const verdict = JSON.parse(readFileSync(join(b.runDir, "verdict.json"), "utf8"));
    expect(verdict).toMatchObject({ status: "pass", new_tests_run: 1 });
  }, 120_000);
});

describe("terfyn review: the referee gets facts", () => {
  const SCRIPT = join(EXAMPLE, "model-script.yaml");
  const withTestCommand = (command: string) => {
    const b = build();
    commitAgentsMd(b, (t) => t.replace(/^- test:.*$/im, `- test: \`${command}\``));
    return b;
  };
  const pastPlanGate = async (b: ReturnType<typeof build>) => {
    expect((await runTerfyn(startArgs(b, SCRIPT), b.repo)).code).toBe(2);
    await runTerfyn(
      ["approve", "--run", b.runDir, "--hash", state(b.runDir).awaiting.hash],
      b.repo,
    );
    return runTerfyn(["review", "--resume", b.runDir], b.repo);
  };

  it("the same failure with different durations and temp paths is the same failure: it escalates to a fresh plan from the head", async () => {
    const b = withTestCommand(
      `node -e "const d=require('node:os').tmpdir()+'/t'+process.pid; console.log('assertion failed after '+(Math.random()*100).toFixed(3)+'ms in '+d+' at '+new Date().toISOString()); process.exit(1)"`,
    );
    const r = await pastPlanGate(b);
    expect(r.code, r.stderr).toBe(2);
    const v1 = JSON.parse(readFileSync(join(b.runDir, "verdict-1.json"), "utf8"));
    const v2 = JSON.parse(readFileSync(join(b.runDir, "verdict-2.json"), "utf8"));
    expect(v1.evidence).not.toBe(v2.evidence);
    expect(v1.failure_signature).toBe(v2.failure_signature);
    // The re-plan is a new planning round with its own Planner run, and a new approval.
    expect(state(b.runDir)).toMatchObject({ awaiting: { gate: "plan" } });
    expect(JSON.parse(readFileSync(join(b.runDir, "plan.json"), "utf8")).round).toBe(2);
    expect(readdirSync(join(b.runDir, "agents")), r.stderr).toContain("plan-2");
    // The worktree was put back to the head before the next round's red tests.
    expect(r.stderr).toContain("re-planning from the head: put back");
  }, 180_000);

  it("a test command that is not there is environmental: the run stops and says so instead of changing code", async () => {
    const b = withTestCommand("terfyn-no-such-command-xyz --run");
    const r = await pastPlanGate(b);
    expect(r.code, r.stderr).toBe(1);
    expect(state(b.runDir)).toMatchObject({ terminal: "stuck" });
    expect(state(b.runDir).reason).toContain("environmental failure");
    const v = JSON.parse(readFileSync(join(b.runDir, "verdict-1.json"), "utf8"));
    expect(v).toMatchObject({ failure_class: "environmental" });
    expect(v.failure_evidence).toContain("command not found");
    expect(existsSync(join(b.runDir, "verdict-2.json"))).toBe(false);
  }, 180_000);
});

describe("terfyn review: the repository's install command", () => {
  const withInstall = (command: string) => {
    const b = build();
    commitAgentsMd(b, (t) => t.replace(/^- install:.*$/im, `- install: \`${command}\``));
    return b;
  };

  it("runs once in the run's fresh worktree, before any agent; what it installs is not an edit", async () => {
    const b = withInstall("mkdir -p deps && echo installed > deps/marker.txt");
    const r = await runTerfyn(startArgs(b, join(EXAMPLE, "model-script.yaml")), b.repo);
    expect(r.code, r.stderr).toBe(2);
    expect(readFileSync(join(`${b.runDir}.worktree`, "deps", "marker.txt"), "utf8")).toBe(
      "installed\n",
    );
  }, 120_000);

  it("a resumed run whose worktree is gone works in a fresh one, and the install runs there again", async () => {
    const b = withInstall("mkdir -p deps && echo installed >> deps/marker.txt");
    const r = await runTerfyn(startArgs(b, join(EXAMPLE, "model-script.yaml")), b.repo);
    expect(r.code, r.stderr).toBe(2);
    // The worktree is deleted while the run waits at the plan gate (a temp dir cleaned).
    rmSync(`${b.runDir}.worktree`, { recursive: true, force: true });
    const resumed = await approveAndResume(b, "publish");
    expect(resumed.code, resumed.stderr).toBe(2);
    expect(reviewState(b.runDir).awaiting.gate).toBe("publish");
    expect(readFileSync(join(`${b.runDir}.worktree`, "deps", "marker.txt"), "utf8")).toBe(
      "installed\n",
    );
  }, 180_000);

  it("a failing install stops the run before any agent works, naming the command", async () => {
    const b = withInstall("echo 'npm ERR! network' >&2; exit 7");
    const r = await runTerfyn(startArgs(b, join(EXAMPLE, "model-script.yaml")), b.repo);
    expect(r.code).toBe(1);
    expect(state(b.runDir)).toMatchObject({ terminal: "stuck" });
    expect(state(b.runDir).reason).toContain("the repository's install command");
    expect(state(b.runDir).reason).toContain("exited 7: npm ERR! network");
    expect(existsSync(join(b.runDir, "decisions.json"))).toBe(false);
  }, 120_000);
});

describe("terfyn review: a test that does not test the change", () => {
  it("a test that fails at first and then passes whatever the code (flaky, vacuous): done-but-unproven, said first, and the reply says it is not proven", async () => {
    const b = build();
    const script = parseYaml(readFileSync(join(EXAMPLE, "model-script.yaml"), "utf8")) as {
      agents: Record<string, { toolCalls?: { input: { content?: string } }[] }[]>;
    };
    const write = script.agents.TestWriter?.[0]?.toolCalls?.[0];
    if (!write?.input.content) throw new Error("the example's TestWriter writes no file");
    // It asserts nothing about add(): it fails on its first two runs and passes from then on.
    write.input.content = [
      'import assert from "node:assert/strict";',
      'import { existsSync, readFileSync, writeFileSync } from "node:fs";',
      'import { test } from "node:test";',
      "",
      'test("add returns the sum", () => {',
      '  const f = "test/.runs";',
      '  const n = existsSync(f) ? Number(readFileSync(f, "utf8")) : 0;',
      "  writeFileSync(f, String(n + 1));",
      "  assert.ok(n > 1);",
      "});",
      "",
    ].join("\n");
    const file = join(b.runDir, "..", "vacuous.yaml");
    writeFileSync(file, stringifyYaml(script));
    expect((await runTerfyn(startArgs(b, file), b.repo)).code).toBe(2);
    let r = { code: 2, stdout: "", stderr: "" };
    for (let i = 0; i < 3 && r.code === 2; i++) {
      await runTerfyn(
        ["approve", "--run", b.runDir, "--hash", state(b.runDir).awaiting.hash],
        b.repo,
      );
      r = await runTerfyn(["review", "--resume", b.runDir], b.repo);
    }
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split("\n")[0]).toMatch(/^done-but-unproven: /);
    expect(readFileSync(join(b.runDir, "report.md"), "utf8").split("\n")[0]).toBe(
      "# Review run: done-but-unproven",
    );
    const proof = JSON.parse(readFileSync(join(b.runDir, "proof.json"), "utf8"));
    expect(proof).toMatchObject({ verdict: "vacuous", vacuous: ["add returns the sum"] });
    const replies = JSON.parse(readFileSync(join(b.runDir, "outbox", "replies.json"), "utf8"));
    const fix = replies.find((x: { item: string }) => x.item === "RT_101");
    expect(fix.body).toMatch(/^Not proven: "add returns the sum" still passes/);
  }, 180_000);
});

describe("terfyn review: the plan names the conventions it follows", () => {
  it("a plan that names none gets one repair turn, told the rule; the repaired plan goes to the gate", async () => {
    const b = build();
    const file = scriptWith(b, "Planner", (out) => ({ ...out, conventions: [] }));
    const script = parseYaml(readFileSync(file, "utf8")) as {
      agents: Record<string, ScriptTurn[]>;
    };
    const original = parseYaml(readFileSync(join(EXAMPLE, "model-script.yaml"), "utf8")) as {
      agents: Record<string, ScriptTurn[]>;
    };
    // The repair turn (its own step) answers with the example's own plan, conventions named.
    script.agents["Planner@plan-repair"] = [
      { output: structuredClone(original.agents.Planner?.at(-1)?.output) },
    ];
    writeFileSync(file, stringifyYaml(script));
    const r = await runTerfyn(startArgs(b, file), b.repo);
    expect(r.code, r.stderr).toBe(2);
    expect(state(b.runDir).awaiting?.gate).toBe("plan");
    const plan = JSON.parse(readFileSync(join(b.runDir, "plan.json"), "utf8"));
    expect(plan.conventions.length).toBeGreaterThan(0);
    const input = JSON.parse(
      readFileSync(join(b.runDir, "agents", "plan-repair", "input.json"), "utf8"),
    );
    expect(input.repair.broken_rules[0]).toMatch(/^the plan names none of the conventions/);
  }, 120_000);

  it("a plan that changes code and names none of AGENTS.md's conventions stops the run", async () => {
    const b = build();
    const file = scriptWith(b, "Planner", (out) => ({ ...out, conventions: [] }));
    const r = await runTerfyn(startArgs(b, file), b.repo);
    expect(r.code).toBe(1);
    expect(state(b.runDir)).toMatchObject({ terminal: "stuck" });
    expect(state(b.runDir).reason).toContain(
      "the plan names none of the conventions the repository's AGENTS.md declares (3)",
    );
  }, 120_000);
});
