/**
 * Claude Code's permission rules ordered by containment, by the host's documented semantics:
 * `Bash(ls *)` is a word boundary (ls, ls -la; not lsof), `Bash(ls*)` is not, `Bash(npm:*)` is the
 * legacy prefix form of `Bash(npm *)`, `Tool(*)` is `Tool`, `mcp__server` covers its tools; deny
 * wins over ask over allow, so a removed deny widens and an allow under a deny gives nothing.
 */
import { describe, expect, it } from "vitest";
import {
  type ClaudeRule,
  parseClaudeRule,
  type RuleList,
  ruleChanges,
  ruleContains,
} from "../src/core/hosts/claude-rules.ts";

const rule = (text: string): ClaudeRule => {
  const r = parseClaudeRule(text);
  if ("problem" in r) throw new Error(r.problem);
  return r;
};
const contains = (a: string, b: string) => ruleContains(rule(a), rule(b));
const rules = (lists: Partial<Record<RuleList, string[]>>) => ({
  allow: (lists.allow ?? []).map(rule),
  ask: (lists.ask ?? []).map(rule),
  deny: (lists.deny ?? []).map(rule),
});

describe("Claude Code rules", () => {
  it("parses Tool and Tool(specifier); Tool(*) is the whole tool; a malformed rule is a problem, not a rule", () => {
    expect(parseClaudeRule("Bash")).toEqual({ text: "Bash", tool: "Bash" });
    expect(parseClaudeRule("Bash(*)")).toEqual({ text: "Bash(*)", tool: "Bash" });
    expect(parseClaudeRule("Bash(git log:*)")).toMatchObject({
      tool: "Bash",
      specifier: "git log:*",
    });
    expect(parseClaudeRule("WebFetch(domain:example.com)")).toMatchObject({
      tool: "WebFetch",
      specifier: "domain:example.com",
    });
    expect(parseClaudeRule("Bash(git")).toHaveProperty("problem");
    expect(parseClaudeRule("(ls)")).toHaveProperty("problem");
    expect(parseClaudeRule("Bash()")).toHaveProperty("problem");
    // A glob must be anchored at a server: the host never consults `mcp__*` or `Bash*`.
    expect(parseClaudeRule("mcp__github__*")).toMatchObject({ tool: "mcp__github__*" });
    expect(parseClaudeRule("mcp__*")).toHaveProperty("problem");
    expect(parseClaudeRule("Bash*")).toHaveProperty("problem");
  });

  it.each([
    // [broader, narrower, contained]
    ["Bash", "Bash(rm -rf /)", true],
    ["Bash(*)", "Bash(git push)", true],
    ["Bash(git push)", "Bash", false],
    ["Bash(ls *)", "Bash(ls -la)", true],
    ["Bash(ls *)", "Bash(ls)", true],
    ["Bash(ls *)", "Bash(lsof)", false],
    ["Bash(ls*)", "Bash(lsof)", true],
    ["Bash(ls*)", "Bash(ls *)", true],
    ["Bash(ls *)", "Bash(ls*)", false],
    ["Bash(npm:*)", "Bash(npm *)", true],
    ["Bash(npm *)", "Bash(npm:*)", true],
    ["Bash(npm:*)", "Bash(npmx install)", false],
    ["Bash(git *)", "Bash(git log:*)", true],
    ["Bash(git log:*)", "Bash(git *)", false],
    ["Bash(git * main)", "Bash(git log main)", true],
    ["Bash(git * main)", "Bash(git log * main)", true],
    ["Bash(git log * main)", "Bash(git * main)", false],
    ["Bash(* install)", "Bash(npm install)", true],
    ["Bash(npm run test)", "Bash(npm run test)", true],
    ["Bash(npm run test)", "Bash(npm run test *)", false],
    ["Read", "Read(./src/**)", true],
    ["Read(./src/**)", "Read(./src/a.ts)", true],
    ["Read(./src/a.ts)", "Read(./src/**)", false],
    ["Edit(./src/**)", "Read(./src/a.ts)", false],
    // Paths as gitignore reads them: `*` stays within a directory, `**` crosses them.
    ["Edit(src/*)", "Edit(src/a.ts)", true],
    ["Edit(src/*)", "Edit(src/lib/a.ts)", false],
    ["Edit(src/**)", "Edit(src/lib/a.ts)", true],
    ["Edit(src/*.ts)", "Edit(src/**/*.ts)", false],
    ["Edit(src/**/*.ts)", "Edit(src/lib/*.ts)", true],
    ["Edit(src/)", "Edit(src/lib/a.ts)", true],
    // A name without `/` is at any depth; `./name` only where the session starts.
    ["Read(.env)", "Read(./.env)", true],
    ["Read(.env)", "Read(config/.env)", true],
    ["Read(./.env)", "Read(.env)", false],
    ["Read(*.pem)", "Read(keys/prod/site.pem)", true],
    // Each anchor is its own space: the project root, the working directory, home, the filesystem.
    ["Read(/src/**)", "Read(./src/a.ts)", false],
    ["Read(./src/**)", "Read(/src/a.ts)", false],
    ["Read(//etc/**)", "Read(/etc/passwd)", false],
    ["Read(~/.ssh/**)", "Read(~/.ssh/id_rsa)", true],
    ["Read(~/.ssh/**)", "Read(//home/u/.ssh/id_rsa)", false],
    // `?` and `[…]` are literal in the rule that contains, wildcards in the one contained.
    ["Edit(a?.ts)", "Edit(ab.ts)", false],
    ["Edit(a*.ts)", "Edit(a?.ts)", true],
    ["Edit(a[bc].ts)", "Edit(a[bc].ts)", false],
    ["mcp__github", "mcp__github__create_issue", true],
    ["mcp__github__*", "mcp__github__create_issue", true],
    ["mcp__github__create_issue", "mcp__github", false],
    ["mcp__github", "mcp__gitlab__create_issue", false],
    ["mcp__my_server", "mcp__my_server__do_it", true],
  ])("%s contains %s: %s", (a, b, expected) => {
    expect(contains(a, b)).toBe(expected);
  });
});

describe("a change to Claude Code's rules, by direction", () => {
  const of = (
    base: Partial<Record<RuleList, string[]>>,
    head: Partial<Record<RuleList, string[]>>,
  ) =>
    ruleChanges(rules(base), rules(head)).map(
      (c) => `${c.change} ${c.list} ${c.rule}: ${c.direction}`,
    );

  it("an added allow is a widening unless an existing allow covers it, or a deny or ask holds it", () => {
    expect(of({ allow: ["Bash(npm test)"] }, { allow: ["Bash(npm test)", "Bash(git *)"] })).toEqual(
      ["added allow Bash(git *): widened"],
    );
    expect(of({ allow: ["Bash(git *)"] }, { allow: ["Bash(git *)", "Bash(git log:*)"] })).toEqual([
      "added allow Bash(git log:*): neutral",
    ]);
    expect(
      of({ deny: ["Bash(aws *)"] }, { deny: ["Bash(aws *)"], allow: ["Bash(aws s3 ls)"] }),
    ).toEqual(["added allow Bash(aws s3 ls): neutral"]);
    expect(
      of(
        { ask: ["Bash(git push *)"] },
        { ask: ["Bash(git push *)"], allow: ["Bash(git push origin)"] },
      ),
    ).toEqual(["added allow Bash(git push origin): neutral"]);
  });

  it("a removed deny widens unless another deny still covers it; an added deny narrows", () => {
    expect(of({ deny: ["Bash(rm *)"] }, {})).toEqual(["removed deny Bash(rm *): widened"]);
    // Another deny that does not cover it changes nothing.
    expect(of({ deny: ["Bash(rm *)", "WebFetch"] }, { deny: ["WebFetch"] })).toEqual([
      "removed deny Bash(rm *): widened",
    ]);
    expect(of({ deny: ["Bash(rm *)", "Bash"] }, { deny: ["Bash"] })).toEqual([
      "removed deny Bash(rm *): neutral",
    ]);
    expect(of({}, { deny: ["WebFetch"] })).toEqual(["added deny WebFetch: narrowed"]);
  });

  it("a removed ask widens unless a deny or ask still holds it; an added ask narrows", () => {
    expect(of({ ask: ["Bash(git push *)"] }, {})).toEqual([
      "removed ask Bash(git push *): widened",
    ]);
    expect(of({ ask: ["Bash(git push *)"] }, { ask: ["Bash(git *)"] })).toEqual([
      "added ask Bash(git *): narrowed",
      "removed ask Bash(git push *): neutral",
    ]);
    expect(of({}, { ask: ["Bash(curl *)"] })).toEqual(["added ask Bash(curl *): narrowed"]);
  });

  it("a removed allow narrows unless another still allows it; reordering and repeating are no change", () => {
    expect(of({ allow: ["Bash(npm *)"] }, {})).toEqual(["removed allow Bash(npm *): narrowed"]);
    expect(of({ allow: ["Bash(npm test)", "Bash(npm *)"] }, { allow: ["Bash(npm *)"] })).toEqual([
      "removed allow Bash(npm test): neutral",
    ]);
    expect(
      of(
        { allow: ["Read", "Bash(npm *)"], deny: ["Bash(rm *)"] },
        { allow: ["Bash(npm *)", "Read"], deny: ["Bash(rm *)"] },
      ),
    ).toEqual([]);
  });

  it("a widened rule is one row whatever else changes in the lists", () => {
    expect(
      of(
        { allow: ["Bash(git log:*)", "Read"], deny: ["Bash(rm *)"] },
        { allow: ["Bash(git *)", "Read", "Edit(./docs/**)"], deny: ["Bash(rm *)", "WebFetch"] },
      ),
    ).toEqual([
      "added deny WebFetch: narrowed",
      "added allow Bash(git *): widened",
      "added allow Edit(./docs/**): widened",
      "removed allow Bash(git log:*): neutral",
    ]);
  });
});
