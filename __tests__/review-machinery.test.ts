/**
 * Review-run machinery: gates keyed to content, seam guards, and repository facts from
 * AGENTS.md (docs/review-doctrine.md, principles 2–5 and 18–19).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ARTIFACTS } from "../src/core/review/artifacts.ts";
import {
  type ApprovalEntry,
  artifactHash,
  assertGate,
  checkGate,
  GateRefused,
} from "../src/core/review/gates.ts";
import { phaseContext } from "../src/core/review/phase.ts";
import { PHASE_TABLE } from "../src/core/review/phase-table.ts";
import { describeSeamViolation, guardSeam, nextPhase, PHASES } from "../src/core/review/phases.ts";
import type { ReviewPorts } from "../src/core/review/ports.ts";
import { DEFAULT_LIMITS } from "../src/core/review/referee.ts";
import {
  isAppendedAtEnd,
  matchesRepoPattern,
  missingFacts,
  parseAgentsMd,
} from "../src/core/review/repo-facts.ts";

const plan = '{"files":["src/add.go"],"tests":["TestAdd"]}';
const approve = (gate: "plan" | "publish", bytes: string): ApprovalEntry => ({
  gate,
  hash: artifactHash(bytes),
  approved_at: "t",
  by: "me",
});

describe("gates", () => {
  it("pass only for an approval of exactly these bytes at this gate", () => {
    expect(checkGate("plan", plan, [approve("plan", plan)]).ok).toBe(true);
    expect(checkGate("publish", plan, [approve("plan", plan)]).ok).toBe(false);
  });

  it("a revised artifact needs a fresh approval, and says so", () => {
    const edited = plan.replace("TestAdd", "TestAddNegative");
    const r = checkGate("plan", edited, [approve("plan", plan)]);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toContain("changed since it was approved");
  });

  it("an approval of another hash is refused", () => {
    const r = checkGate("plan", plan, [
      { gate: "plan", hash: `sha256:${"0".repeat(64)}`, approved_at: "t", by: "x" },
    ]);
    expect(r.ok).toBe(false);
  });

  it("a refusal of the bytes wins over an approval of them, in either order", () => {
    const deny = { ...approve("plan", plan), decision: "deny" as const, reason: "no" };
    for (const log of [
      [approve("plan", plan), deny],
      [deny, approve("plan", plan)],
    ]) {
      const r = checkGate("plan", plan, log);
      expect(r.ok).toBe(false);
      expect(!r.ok && r.refused).toBe(true);
      expect(() => assertGate("plan", plan, log)).toThrow(GateRefused);
    }
    // A refusal of other bytes, or at the other gate, refuses nothing here.
    expect(checkGate("plan", plan, [approve("plan", plan), { ...deny, gate: "publish" }]).ok).toBe(
      true,
    );
  });

  it("a publisher called without the publish approval throws", () => {
    expect(() => assertGate("publish", "diff + replies", [approve("plan", plan)])).toThrow(
      GateRefused,
    );
    expect(assertGate("publish", "diff + replies", [approve("publish", "diff + replies")])).toBe(
      artifactHash("diff + replies"),
    );
  });
});

describe("seams", () => {
  it("each phase's inputs must exist and be non-empty; the violation names the phase and file", () => {
    const files = new Map([
      ["request.json", 120],
      ["decisions.json", 0],
    ]);
    const v = guardSeam("plan", (f) => files.get(f));
    expect(v).toEqual([{ phase: "plan", file: "decisions.json", problem: "empty" }]);
    expect(describeSeamViolation(v[0]!)).toBe(
      "phase plan cannot start: its input decisions.json is empty",
    );
    expect(guardSeam("build", (f) => files.get(f)).map((x) => `${x.file}:${x.problem}`)).toEqual([
      "plan.json:missing",
      "red-tests.json:missing",
      // The Builder is shown the decisions behind the plan: build reads them too.
      "decisions.json:empty",
    ]);
  });

  it("phases run in the seed's order, with both gates", () => {
    expect(PHASES).toEqual([
      "intake",
      "decide",
      "plan",
      "gate-plan",
      "red-tests",
      "build",
      "prove",
      "standards",
      "compose",
      "gate-publish",
      "publish",
      "report",
    ]);
    expect(nextPhase("report")).toBeUndefined();
  });
});

describe("the phase table", () => {
  it("has one entry per phase, named as its key, and every artifact it names is in the registry", () => {
    expect(Object.keys(PHASE_TABLE)).toEqual([...PHASES]);
    for (const [name, phase] of Object.entries(PHASE_TABLE)) {
      expect(phase.name).toBe(name);
      for (const a of [...phase.reads, ...phase.optionalReads, ...phase.writes])
        expect(Object.keys(ARTIFACTS), `${name}: ${a}`).toContain(a);
    }
  });

  it("every input a phase requires is written by a phase before it", () => {
    const written = new Set<string>();
    for (const p of PHASES) {
      for (const r of PHASE_TABLE[p].reads) expect(written, `${p} reads ${r}`).toContain(r);
      for (const w of PHASE_TABLE[p].writes) written.add(w);
    }
  });

  it("the orchestrator has no per-phase branch: it names no phase", () => {
    const source = readFileSync(
      join(import.meta.dirname, "..", "src", "core", "review", "orchestrator.ts"),
      "utf8",
    );
    expect(source).not.toMatch(/\bswitch\b|\bcase\b/);
    for (const p of PHASES) expect(source, p).not.toContain(`"${p}"`);
  });

  it("a phase may only read and write the artifacts its entry declares", async () => {
    const files = new Map([["proof.json", "{}"]]);
    const ports = {
      files: {
        read: async (n: string) => files.get(n),
        write: async (n: string, t: string) => void files.set(n, t),
        size: async (n: string) => files.get(n)?.length,
      },
    } as unknown as ReviewPorts;
    const state = () => ({
      run_id: "r",
      status: "running" as const,
      build: { iteration: 0, identical_retries: 0, escalations: 0 },
      updated_at: "t",
    });
    const ctx = phaseContext(PHASE_TABLE.decide, ports, DEFAULT_LIMITS, state, async () => {});
    await expect(ctx.readOptional("proof.json")).rejects.toThrow(
      "phase decide reads proof.json, which its table entry does not declare",
    );
    await expect(ctx.write("plan.md", "x")).rejects.toThrow(
      "phase decide writes plan.md, which its table entry does not declare",
    );
    expect(files.has("plan.md")).toBe(false);
  });
});

describe("repository facts from AGENTS.md", () => {
  const agentsMd = `# Working here

## Commands
- install: \`npm ci\`
- test: \`npm test\`
- single test: \`npx vitest run -t "<name>"\`
- **lint**: \`npm run lint\`
- typecheck: npx tsc --noEmit

## Protected files
- \`migrations/\` — never edit a shipped migration
- package-lock.json

## Extend-only files
- CHANGELOG.md (append entries at the top)
`;

  it("reads the commands and the protected and extend-only files", () => {
    const facts = parseAgentsMd(agentsMd);
    expect(facts.commands).toEqual({
      install: "npm ci",
      test: "npm test",
      "single test": 'npx vitest run -t "<name>"',
      lint: "npm run lint",
      typecheck: "npx tsc --noEmit",
    });
    expect(facts.protected).toEqual(["migrations/", "package-lock.json"]);
    expect(facts.extendOnly).toEqual(["CHANGELOG.md"]);
  });

  it("names the missing fact instead of guessing it", () => {
    expect(missingFacts(parseAgentsMd(agentsMd))).toEqual(["format"]);
    expect(missingFacts(parseAgentsMd("# nothing here\n"))).toEqual([
      "install",
      "test",
      "single test",
      "lint",
      "format",
      "typecheck",
    ]);
  });

  it("reads protected globs and directories as written", () => {
    const facts = parseAgentsMd(
      "## Protected files\n- `**/*.lock` — lock files\n- `src/*.generated.js`\n- vendor (third-party code)\n\n## Extend-only files\n- `docs/adr/*.md`\n",
    );
    expect(facts.protected).toEqual(["**/*.lock", "src/*.generated.js", "vendor"]);
    expect(facts.extendOnly).toEqual(["docs/adr/*.md"]);
    expect(matchesRepoPattern("docs/adr/0001-x.md", "docs/adr/*.md")).toBe(true);
    expect(matchesRepoPattern("vendor/a/b.js", "vendor")).toBe(true);
    expect(matchesRepoPattern("vendored.js", "vendor")).toBe(false);
  });
});

describe("extend-only: appended at the end only", () => {
  const b = (s: string) => Buffer.from(s);
  it("accepts an append at the end, and a new file", () => {
    expect(isAppendedAtEnd(b("a\nb\n"), b("a\nb\nc\n"))).toBe(true);
    expect(isAppendedAtEnd(b("a\nb"), b("a\nb\nc\n"))).toBe(true);
    expect(isAppendedAtEnd(b("a\n"), b("a\n"))).toBe(true);
    expect(isAppendedAtEnd(b(""), b("x\n"))).toBe(true);
    expect(isAppendedAtEnd(undefined, b("x\n"))).toBe(true);
  });

  it("refuses an insertion in the middle or at the top, an edit, a shortening and a deletion", () => {
    expect(isAppendedAtEnd(b("a\nb\n"), b("a\nnew\nb\n"))).toBe(false);
    expect(isAppendedAtEnd(b("a\nb\n"), b("new\na\nb\n"))).toBe(false);
    expect(isAppendedAtEnd(b("a\nb\n"), b("a\nB\n"))).toBe(false);
    expect(isAppendedAtEnd(b("a\nb"), b("a\nbc\n"))).toBe(false);
    expect(isAppendedAtEnd(b("a\nb\n"), b("a\n"))).toBe(false);
    expect(isAppendedAtEnd(b("a\n"), undefined)).toBe(false);
  });
});
