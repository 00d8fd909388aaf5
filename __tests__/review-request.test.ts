import { describe, expect, it } from "vitest";
import { parseRequest, provenance, requestSchema } from "../src/core/review/request.ts";

const request = requestSchema.parse({
  format_version: "1",
  repository: "octo/add",
  pull_request: 12,
  branch: "fix-add",
  head: "c3c3c3c",
  base: "a1a1a1a",
  threads: [
    {
      id: "t1",
      path: "add.go",
      original_line: 3,
      line: 3,
      original_commit: "c3c3c3c",
      outdated: false,
      comments: [
        { id: "1", author: "rev", body: "Add subtracts", created_at: "x", commit: "c3c3c3c" },
      ],
    },
    {
      id: "t2",
      path: "add.go",
      original_line: 40,
      line: null,
      original_commit: "b2b2b2b",
      outdated: true,
      comments: [
        { id: "2", author: "rev", body: "line 40 leaks", created_at: "x", commit: "b2b2b2b" },
      ],
    },
    {
      id: "t3",
      path: "add.go",
      original_line: 5,
      line: 5,
      original_commit: "c3c3c3c",
      outdated: false,
      resolved: true,
      comments: [{ id: "3", author: "rev", body: "done", created_at: "x", commit: "c3c3c3c" }],
    },
  ],
});

describe("request provenance", () => {
  it("for each unresolved thread: the commit it was made against, how far behind head, whether its anchor moved", () => {
    const behind: Record<string, number> = { c3c3c3c: 0, b2b2b2b: 2 };
    expect(provenance(request, (sha) => behind[sha] ?? null)).toEqual([
      { thread: "t1", made_against: "c3c3c3c", commits_behind: 0, anchor_moved: false },
      { thread: "t2", made_against: "b2b2b2b", commits_behind: 2, anchor_moved: true },
    ]);
  });

  it("rejects a request without the fields provenance needs", () => {
    expect(requestSchema.safeParse({ format_version: "1", threads: [] }).success).toBe(false);
  });
});

describe("an invalid request", () => {
  it("is a short located message per problem (field path, what is expected), not zod's dump", () => {
    const bad = structuredClone(request) as Record<string, unknown>;
    bad.format_version = 2;
    (bad.threads as { comments: { commit: string }[] }[])[1]!.comments[0]!.commit = "HEAD";
    const r = parseRequest(JSON.stringify(bad), "request.json");
    expect(r.problems).toEqual([
      'request.json: format_version: Invalid input: expected "1"',
      "request.json: threads[1].comments[0].commit: a commit id: 7 to 64 lowercase hex digits",
    ]);
    expect(r.problems?.join("\n")).not.toMatch(/[{}[\]"]code"/);
  });

  it("names a file that is not JSON, and caps a long list of problems", () => {
    expect(parseRequest("{ nope", "req.json").problems?.[0]).toMatch(/^req\.json is not JSON: /);
    const many = parseRequest("{}", "request.json").problems ?? [];
    expect(many).toHaveLength(4);
    expect(many.at(-1)).toMatch(/^request\.json: \(and \d+ more\)$/);
  });

  it("a valid one parses", () => {
    expect(parseRequest(JSON.stringify(request), "request.json").request?.head).toBe("c3c3c3c");
  });
});

describe("data that reaches commands", () => {
  it("commit ids in a request are hex only", () => {
    const bad = { ...request, head: "HEAD; touch pwned" };
    expect(requestSchema.safeParse(bad).success).toBe(false);
  });

  it("a test name from the plan never becomes shell text", async () => {
    const { singleTestInvocation } = await import("../src/core/review/steps.ts");
    const { execFileSync } = await import("node:child_process");
    const { existsSync, mkdtempSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const dir = mkdtempSync(join(tmpdir(), "terfyn-inject-"));
    const name = 'x" $(touch pwned) `touch pwned2` "';
    const { command, env } = singleTestInvocation('printf "%s" "<name>"', name);
    const out = execFileSync("/bin/sh", ["-c", command], {
      cwd: dir,
      env: { ...process.env, ...env },
      encoding: "utf8",
    });
    expect(out).toBe(name);
    expect(existsSync(join(dir, "pwned"))).toBe(false);
    expect(existsSync(join(dir, "pwned2"))).toBe(false);
  });
});
