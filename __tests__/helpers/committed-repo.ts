/**
 * A git repository in a temporary directory with `base` committed and `head` then written in
 * the work tree (files by their `/`-separated paths): what `terfyn plan --against HEAD` reads.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { git } from "./action-harness.ts";

export function committedRepo(
  base: Record<string, string>,
  head: Record<string, string> = {},
  prefix = "terfyn-repo-",
): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const write = (files: Record<string, string>) => {
    for (const [p, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, p)), { recursive: true });
      writeFileSync(join(dir, p), text);
    }
  };
  write(base);
  git(dir, "init", "-q");
  git(dir, "add", "-A");
  git(dir, "commit", "-qm", "base");
  write(head);
  return dir;
}
