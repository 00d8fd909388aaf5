/**
 * The run's worktree (LocalWorkTree) remembers what git said about it only until the next
 * effect: a repository command, a revert and its restore, a file taken, or anyone handed the
 * worktree's root or writer. A change made by any of them is seen by the next query.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { localEffects } from "../src/adapters/review/local-effects.ts";
import { testSandbox } from "./helpers/sandbox.ts";

const EXAMPLE = join(import.meta.dirname, "..", "examples", "review-fix");

async function prepared() {
  const out = join(mkdtempSync(join(tmpdir(), "terfyn-tree-cache-")), "repo");
  const info = JSON.parse(
    execFileSync(process.execPath, [join(EXAMPLE, "build-repo.mjs"), out], { encoding: "utf8" }),
  ) as { repo: string; request: string; head: string };
  const fx = localEffects({
    repoDir: info.repo,
    requestFile: info.request,
    runDir: join(out, "..", "run"),
    agents: undefined as never,
    model: undefined as never,
    sandbox: await testSandbox(),
    progress: () => {},
  });
  await fx.tree.prepare(info.head);
  return { fx, info };
}

describe("the run's worktree: what git said is never older than the last effect", () => {
  it("a repository command's edit, a revert and its restore are all seen", async () => {
    const { fx } = await prepared();
    const tree = fx.tree;
    expect(await tree.trackedChanges()).toEqual([]);
    expect(await tree.untrackedAmong(["new.txt"])).toEqual([]);
    const r = await fx.commands.run(
      "echo more >> src/add.js && echo x > new.txt && echo y > README.md",
      { passEnv: [] },
    );
    expect(r.code).toBe(0);
    expect(await tree.trackedChanges()).toEqual(["README.md", "src/add.js"]);
    expect(await tree.untrackedAmong(["new.txt"])).toEqual(["new.txt"]);
    const putBack = await tree.revert(["src/add.js", "new.txt"]);
    expect(await tree.trackedChanges()).toEqual(["README.md"]);
    expect(await tree.untrackedAmong(["new.txt"])).toEqual([]);
    await putBack();
    expect(await tree.trackedChanges()).toEqual(["README.md", "src/add.js"]);
    expect(await tree.untrackedAmong(["new.txt"])).toEqual(["new.txt"]);
    expect((await tree.fileVersions("new.txt")).worktree?.toString()).toBe("x\n");
    expect(await tree.takeFile("new.txt")).toBe("x\n");
    expect(await tree.untrackedAmong(["new.txt"])).toEqual([]);
  });

  it("an edit through the root anyone was handed is seen, and the head's bytes stay the commit's", async () => {
    const { fx } = await prepared();
    const tree = fx.tree;
    expect(await tree.trackedChanges()).toEqual([]);
    const before = await tree.fileVersions("src/add.js");
    writeFileSync(join(tree.root(), "src", "add.js"), "export const add = (a, b) => a + b;\n");
    expect(await tree.trackedChanges()).toEqual(["src/add.js"]);
    const after = await tree.fileVersions("src/add.js");
    expect(after.head?.equals(before.head as Buffer)).toBe(true);
    expect(after.worktree?.toString()).toBe("export const add = (a, b) => a + b;\n");
    // A caller changing the bytes it was given changes nothing the tree remembers.
    after.head?.fill(0);
    expect((await tree.fileVersions("src/add.js")).head?.equals(before.head as Buffer)).toBe(true);
    expect(await tree.readAtHead("src/add.js")).toBe(before.head?.toString());
  });
});
