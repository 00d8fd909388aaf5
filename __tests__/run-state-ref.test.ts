/**
 * A review-fix run's files kept as the commit at refs/terfyn/runs/<run> (the Action's jobs on
 * fresh machines), on real bare repositories: bytes round-trip, a save never forces (two jobs
 * that loaded one state cannot both save), and what is read back is hostile data (only regular
 * files with safe names; a bad run id is no ref).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  isSafeStatePath,
  RunStateError,
  RunStateRef,
  stateMac,
  stateRef,
} from "../src/adapters/github/run-state-ref.ts";

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

function remote(): string {
  const dir = join(mkdtempSync(join(tmpdir(), "terfyn-state-")), "origin.git");
  execFileSync("git", ["init", "-q", "--bare", dir]);
  git(dir, "config", "receive.denyNonFastForwards", "true");
  return dir;
}

const KEY = Buffer.from("k".repeat(64));

const store = (url: string, key = KEY) =>
  new RunStateRef({
    gitDir: join(mkdtempSync(join(tmpdir(), "terfyn-state-job-")), "state.git"),
    url,
    identity: { name: "t", email: "t@x" },
    key,
  });

/** A state commit made by hand (someone who can push, not a job): `message` as its message. */
function pushForged(url: string, run: string, files: Record<string, string>, message: string) {
  const work = mkdtempSync(join(tmpdir(), "terfyn-state-forge-"));
  git(work, "init", "-q");
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(work, path)), { recursive: true });
    writeFileSync(join(work, path), text);
  }
  git(work, "add", "-A");
  git(work, "-c", "user.name=m", "-c", "user.email=m@x", "commit", "-qm", message);
  git(work, "push", "-q", "-f", url, `HEAD:${stateRef(run)}`);
  return git(work, "rev-parse", "HEAD");
}

describe("refs/terfyn/runs/<run>", () => {
  it("saves and loads a run's files byte for byte; a run never saved has no state", async () => {
    const url = remote();
    expect(await store(url).load("pr7-abc")).toBeUndefined();
    const files = new Map([
      ["job.json", Buffer.from('{"run":"pr7-abc"}\n')],
      ["run/state.json", Buffer.from("{}\n")],
      ["run/steps/decide/journal.jsonl", Buffer.from([0, 1, 2, 255, 10])],
      ["work/src/odd name ü.js", Buffer.from("x\n")],
    ]);
    const commit = await store(url).save("pr7-abc", files);
    expect(git(url, "rev-parse", stateRef("pr7-abc"))).toBe(commit);
    const loaded = await store(url).load("pr7-abc");
    expect(loaded?.commit).toBe(commit);
    expect([...(loaded?.files ?? new Map())].sort()).toEqual([...files].sort());
  });

  it("a save on a state that moved since it was loaded is refused, never forced", async () => {
    const url = remote();
    const a = await store(url).save("r1", new Map([["job.json", Buffer.from("1")]]));
    // Two jobs load the same state; the first to save wins.
    const first = store(url);
    const second = store(url);
    expect((await first.load("r1"))?.commit).toBe(a);
    expect((await second.load("r1"))?.commit).toBe(a);
    const b = await first.save("r1", new Map([["job.json", Buffer.from("2")]]), a);
    // The same store loads the state again after it moved (it fetched the older one before).
    expect((await first.load("r1"))?.commit).toBe(b);
    await expect(second.save("r1", new Map([["job.json", Buffer.from("3")]]), a)).rejects.toThrow(
      /moved since this job loaded it/,
    );
    expect(git(url, "rev-parse", stateRef("r1"))).toBe(b);
    // A new run's save (no parent) onto an existing state is refused the same way.
    await expect(store(url).save("r1", new Map([["job.json", Buffer.from("4")]]))).rejects.toThrow(
      /moved since this job loaded it/,
    );
  });

  it("a state holding a symlink is refused before anything is read from it", async () => {
    const url = remote();
    const work = mkdtempSync(join(tmpdir(), "terfyn-state-forge-"));
    git(work, "init", "-q");
    execFileSync("sh", ["-c", "mkdir run && ln -s /etc/passwd run/state.json"], { cwd: work });
    git(work, "add", "-A");
    git(work, "-c", "user.name=m", "-c", "user.email=m@x", "commit", "-qm", "forged");
    git(work, "push", "-q", url, `HEAD:${stateRef("r2")}`);
    await expect(store(url).load("r2")).rejects.toThrow(/only regular files/);
  });

  it("only a state signed with the workflow's key loads: none, another key's, or edited files are refused", async () => {
    const url = remote();
    const files = new Map([
      ["job.json", Buffer.from('{"run":"r3"}\n')],
      ["run/approvals.jsonl", Buffer.from("")],
    ]);
    const saved = await store(url).save("r3", files);
    expect((await store(url).load("r3"))?.commit).toBe(saved);
    // Saved by a job of another workflow (another key), or after the key was changed.
    await expect(store(url, Buffer.from("o".repeat(64))).load("r3")).rejects.toThrow(
      /carries a MAC this workflow's state key does not reproduce/,
    );
    // Pushed by hand: no MAC at all.
    const forged = { "job.json": '{"run":"r3"}\n', "run/approvals.jsonl": '{"gate":"publish"}\n' };
    pushForged(url, "r3", forged, "terfyn: the state of review-fix run r3");
    await expect(store(url).load("r3")).rejects.toThrow(/carries no MAC/);
    // The real MAC copied onto edited files (an approval appended).
    const mac = stateMac(KEY, "r3", files);
    pushForged(url, "r3", forged, `terfyn: state\n\nTerfyn-State-MAC: hmac-sha256:${mac}`);
    await expect(store(url).load("r3")).rejects.toThrow(/does not reproduce/);
    // The real MAC and files of one run, replayed as another run's state.
    const asText = Object.fromEntries([...files].map(([p, b]) => [p, b.toString("utf8")]));
    pushForged(url, "r4", asText, `terfyn: state\n\nTerfyn-State-MAC: hmac-sha256:${mac}`);
    await expect(store(url).load("r4")).rejects.toThrow(/does not reproduce/);
    // Two MAC lines (one right, one not) are no MAC a job wrote.
    const two = `terfyn: state\n\nTerfyn-State-MAC: hmac-sha256:${mac}\nTerfyn-State-MAC: hmac-sha256:${"0".repeat(64)}`;
    pushForged(url, "r3", asText, two);
    await expect(store(url).load("r3")).rejects.toThrow(/does not reproduce/);
  });

  it("a state key shorter than 32 bytes is refused", () => {
    expect(() => store(remote(), Buffer.from("short"))).toThrow(/needs at least 32/);
  });

  it("run ids that are not a plain ref component are refused", () => {
    for (const bad of ["", "../x", "-x", "a/b", "a b", "a..b/c", `a${"b".repeat(200)}`])
      expect(() => stateRef(bad), bad).toThrow(RunStateError);
  });

  it("unsafe paths are recognised", () => {
    for (const bad of [
      "",
      "/etc/x",
      "a/../b",
      "..",
      "./a",
      "a//b",
      ".git/config",
      "x/.GIT/y",
      "a\\b",
    ])
      expect(isSafeStatePath(bad), bad).toBe(false);
    for (const ok of ["job.json", "run/a.json", "work/src/x.js", "work/.gitignore"])
      expect(isSafeStatePath(ok), ok).toBe(true);
  });
});
