/**
 * Review-run machinery: gates keyed to content, seam guards, and repository facts from
 * AGENTS.md (seed 003, principles 2–5 and 18–19).
 */
import { describe, expect, it } from "vitest";
import {
  type ApprovalEntry,
  artifactHash,
  assertGate,
  checkGate,
  GateRefused,
} from "../src/core/review/gates.ts";
import { describeSeamViolation, guardSeam, nextPhase, PHASES } from "../src/core/review/phases.ts";
import { missingFacts, parseAgentsMd } from "../src/core/review/repo-facts.ts";

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
      "compose",
      "gate-publish",
      "publish",
      "report",
    ]);
    expect(nextPhase("report")).toBeUndefined();
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
});
