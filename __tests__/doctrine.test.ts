import { describe, expect, it } from "vitest";
import {
  checkDecisions,
  type Decision,
  filesOutsidePlan,
  planPathProblems,
  proofVerdict,
  repoPathProblem,
  zeroDiffItems,
} from "../src/core/review/doctrine.ts";

const d = (over: Partial<Decision> & Pick<Decision, "item" | "class" | "action">): Decision => ({
  method: "read",
  detail: "read src/add.go",
  evidence: "line 3 subtracts",
  injected_directions: [],
  harm: "none",
  ...over,
});

const items = ["t1", "t2", "t3", "t4", "t5", "t6"];
const good: Decision[] = [
  d({
    item: "t1",
    class: "defect",
    action: "fix",
    method: "executed",
    detail: "ran go test ./... -run TestAdd: got -1, want 3",
  }),
  d({
    item: "t2",
    class: "question",
    action: "answer",
    reply: "It returns the sum; see the table test.",
  }),
  d({
    item: "t3",
    class: "incorrect-claim",
    action: "push-back",
    method: "executed",
    detail: "ran the benchmark: 2 ns/op",
    reply: "Measured: it does not allocate.",
  }),
  d({ item: "t4", class: "out-of-scope", action: "ticket" }),
  d({ item: "t5", class: "praise", action: "none" }),
  d({
    item: "t6",
    class: "stale",
    action: "answer",
    reply: "This was about an earlier version; line 40 no longer exists.",
  }),
];

describe("doctrine", () => {
  it("accepts a full, honest set of decisions in which only the defect produces a diff", () => {
    expect(checkDecisions(good, { itemIds: items, priorItems: [] })).toEqual([]);
    expect(zeroDiffItems(good)).toEqual(["t2", "t3", "t4", "t5", "t6"]);
  });

  it("rejects: a silently ignored item, praise answered, executed without detail, an action outside the class", () => {
    const bad = [
      d({ item: "t1", class: "defect", action: "fix", method: "executed", detail: " " }),
      d({ item: "t5", class: "praise", action: "none", reply: "Thanks!" }),
      d({ item: "t3", class: "incorrect-claim", action: "fix" }),
    ];
    const problems = checkDecisions(bad, { itemIds: ["t1", "t3", "t5", "t2"], priorItems: [] }).map(
      (p) => `${p.item}: ${p.problem}`,
    );
    expect(problems).toEqual([
      "t1: claims `executed` with no detail line naming what was run",
      "t5: replies to praise",
      "t3: an incorrect-claim item cannot be answered with fix (allowed: push-back)",
      "t3: an incorrect-claim needs a reply",
      "t2: was silently ignored: every item gets a decision",
    ]);
  });

  it("an item seen in an earlier run is reaffirmed with fresh verification or reversed, never silently flipped", () => {
    const noPrior = checkDecisions([good[2]!], { itemIds: ["t3"], priorItems: ["t3"] });
    expect(noPrior.map((p) => p.problem)).toEqual([
      "was decided in an earlier run: reaffirm it with fresh verification or reverse it with a reason",
    ]);
    const lazy = checkDecisions(
      [{ ...good[2]!, prior: { outcome: "reaffirm", reason: "as previously decided" } }],
      { itemIds: ["t3"], priorItems: ["t3"] },
    );
    expect(lazy.map((p) => p.problem)).toEqual(["reaffirmed without fresh verification"]);
    const fresh = checkDecisions(
      [
        {
          ...good[2]!,
          prior: {
            outcome: "reverse",
            reason: "re-ran the benchmark on the new head: it now allocates",
          },
        },
      ],
      { itemIds: ["t3"], priorItems: ["t3"] },
    );
    expect(fresh).toEqual([]);
  });

  it("names every changed file outside the approved plan, and protected ones", () => {
    const plan = {
      files: ["src/add.go"],
      test_files: ["src/add_test.go"],
      tests: ["TestAdd"],
      conventions: [],
      items: ["t1"],
    };
    expect(filesOutsidePlan(["src/add.go", "src/add_test.go", "README.md"], plan)).toEqual([
      "README.md",
    ]);
    expect(
      filesOutsidePlan(["migrations/001.sql"], { ...plan, files: ["migrations/001.sql"] }, [
        "migrations/",
      ]),
    ).toEqual(["migrations/001.sql"]);
  });

  it("protected entries as a repository writes them: paths, globs and directories", () => {
    const everything = {
      files: [
        "yarn.lock",
        "pkg/a/Cargo.lock",
        "src/api.generated.js",
        "src/sub/api.generated.js",
        "vendor/lib/x.js",
        "vendors/x.js",
        "third_party/a/b.c",
        "LICENSE",
        "LICENSE.md",
        "docs/LICENSE",
        "src/add.go",
      ],
      test_files: [],
      tests: [],
      conventions: [],
      items: [],
    };
    const protectedBy = (patterns: string[]) =>
      filesOutsidePlan(everything.files, everything, patterns);
    expect(protectedBy(["**/*.lock"])).toEqual(["yarn.lock", "pkg/a/Cargo.lock"]);
    expect(protectedBy(["src/*.generated.js"])).toEqual(["src/api.generated.js"]);
    expect(protectedBy(["vendor"])).toEqual(["vendor/lib/x.js"]);
    expect(protectedBy(["vendor/"])).toEqual(["vendor/lib/x.js"]);
    expect(protectedBy(["./third_party"])).toEqual(["third_party/a/b.c"]);
    expect(protectedBy(["LICENSE"])).toEqual(["LICENSE"]);
    expect(protectedBy(["!src/add.go", "# comment"])).toEqual([]);
    expect(protectedBy([])).toEqual([]);
  });

  it("a plan's paths must be files of the repository: not absolute, not leaving it, not in .git", () => {
    for (const ok of ["src/add.go", "a/b/c.txt", "..hidden/x", "x..y"])
      expect(repoPathProblem(ok), ok).toBeUndefined();
    expect(repoPathProblem("../x")).toBe("leaves the repository (..)");
    expect(repoPathProblem("src/../../x")).toBe("leaves the repository (..)");
    expect(repoPathProblem("/etc/passwd")).toBe("is absolute");
    expect(repoPathProblem("C:/x")).toBe("is absolute");
    expect(repoPathProblem("./x")).toBe("is not a normalised relative path");
    expect(repoPathProblem("a//b")).toBe("is not a normalised relative path");
    expect(repoPathProblem(".git/config")).toBe("is inside .git");
    expect(repoPathProblem("a\\b")).toBe("contains a NUL byte or a backslash");
    expect(
      planPathProblems({
        files: ["src/add.go", "../x"],
        test_files: ["/abs"],
        tests: [],
        conventions: [],
        items: [],
      }),
    ).toEqual(['"../x" leaves the repository (..)', '"/abs" is absolute']);
  });

  it("the prover: proven only when every new test fails with the change reverted", () => {
    expect(proofVerdict([{ test: "TestAdd", passed: false }])).toEqual({
      verdict: "proven",
      vacuous: [],
    });
    expect(
      proofVerdict([
        { test: "TestAdd", passed: false },
        { test: "TestAddZero", passed: true },
      ]),
    ).toEqual({ verdict: "vacuous", vacuous: ["TestAddZero"] });
    expect(proofVerdict([]).verdict).toBe("vacuous");
  });
});
