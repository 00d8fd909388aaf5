/**
 * The workspace tool's two bounds for review runs (DESIGN.md "GitHub App: review-response
 * runs"): no path through `.git`, in any case, for reading or writing, whatever else is
 * allowed; and, when a step's writable files are given, no write to any other path. Both are
 * refused at the tool boundary (ok: false, nothing opened), in a real git repository.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { WorkspaceTool } from "../src/adapters/workspace/workspace-tool.ts";

const ENV = { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8", env: ENV });

function repo(): string {
  const dir = mkdtempSync(join(tmpdir(), "terfyn-ws-bounds-"));
  const root = join(dir, "repo");
  mkdirSync(join(root, "src"), { recursive: true });
  mkdirSync(join(root, "sub"), { recursive: true });
  git(dir, "init", "-q", root);
  git(join(root, "sub"), "init", "-q");
  writeFileSync(join(root, "src", "a.js"), "a\n");
  return root;
}

describe("the workspace never reaches into .git", () => {
  const paths = [
    ".git/config",
    ".GIT/config",
    ".Git/hooks/pre-commit",
    "sub/.git/config",
    "./.git/config",
    ".git",
    "src/../.git/config",
  ];

  it.each(paths)("write_file %s is denied, even when the step may write it", async (path) => {
    const root = repo();
    const marker = join(root, "..", "fsmonitor-ran");
    const config = readFileSync(join(root, ".git", "config"), "utf8");
    const ws = await WorkspaceTool.open({ root, writable: [path, path.replace(/^\.\//, "")] });
    const r = await ws.execute("write_file", {
      path,
      content: `[core]\n\tfsmonitor = "touch '${marker}'; false"\n\thooksPath = /tmp\n`,
    });
    expect(r.ok).toBe(false);
    expect(JSON.stringify(r.result)).toMatch(/\.git|\.\./i);
    expect(readFileSync(join(root, ".git", "config"), "utf8")).toBe(config);
    expect(existsSync(join(root, ".GIT"))).toBe(false);
    // Even a plain, unhardened git finds nothing planted to run.
    git(root, "status", "--porcelain");
    git(join(root, "sub"), "status", "--porcelain");
    expect(existsSync(marker)).toBe(false);
    expect(ws.written).toEqual([]);
  });

  it.each([".git/config", ".GIT/HEAD", "sub/.git/config"])(
    "read_file %s is denied",
    async (path) => {
      const ws = await WorkspaceTool.open({ root: repo() });
      const r = await ws.execute("read_file", { path });
      expect(r.ok).toBe(false);
      expect(JSON.stringify(r.result)).toContain(".git");
    },
  );

  it("a name that merely contains .git is an ordinary file", async () => {
    const root = repo();
    const ws = await WorkspaceTool.open({ root });
    expect((await ws.execute("write_file", { path: "docs/.gitkeep", content: "" })).ok).toBe(true);
    expect((await ws.execute("write_file", { path: "x.git/y", content: "" })).ok).toBe(true);
  });
});

describe("a step writes only its own files", () => {
  it("a write outside `writable` is denied before anything is opened; allowed writes are recorded", async () => {
    const root = repo();
    const ws = await WorkspaceTool.open({ root, writable: ["src/a.js", "test/a.test.js"] });
    const outside = await ws.execute("write_file", { path: "README.md", content: "hi\n" });
    expect(outside).toEqual({
      ok: false,
      result: {
        error: "writing README.md is denied: this step may write only src/a.js, test/a.test.js",
      },
    });
    expect(existsSync(join(root, "README.md"))).toBe(false);
    const planned = await ws.execute("write_file", { path: "./test//a.test.js", content: "t\n" });
    expect(planned.ok).toBe(true);
    expect((await ws.execute("write_file", { path: "src/a.js", content: "b\n" })).ok).toBe(true);
    expect(ws.written).toEqual(["test/a.test.js", "src/a.js"]);
  });

  it("an empty `writable` allows no write at all", async () => {
    const root = repo();
    const ws = await WorkspaceTool.open({ root, writable: [] });
    const r = await ws.execute("write_file", { path: "src/a.js", content: "b\n" });
    expect(r.ok).toBe(false);
    expect(readFileSync(join(root, "src", "a.js"), "utf8")).toBe("a\n");
  });
});
