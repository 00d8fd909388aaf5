/**
 * The sandbox (src/adapters/sandbox): each property it promises, held on its own, by the real
 * bubblewrap on this machine, against a command that tries to break it.
 */
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BubblewrapSandbox } from "../../src/adapters/sandbox/bubblewrap.ts";
import {
  bubblewrapArgs,
  type HostView,
  type PathKind,
} from "../../src/adapters/sandbox/bubblewrap-args.ts";
import { visibleInSandbox } from "../../src/adapters/sandbox/open-sandbox.ts";
import { SandboxUnavailable } from "../../src/adapters/sandbox/sandbox.ts";
import { secretFiles } from "../../src/app/secret-files.ts";
import { runInSandbox, testSandbox } from "../helpers/sandbox.ts";

/** A run laid out as a review run lays it out: the run directory beside the worktree. */
function layout() {
  const base = mkdtempSync(join(tmpdir(), "terfyn-sbx-"));
  const repo = join(base, "repo");
  const run = join(base, "run");
  const worktree = join(base, "run.worktree");
  mkdirSync(join(repo, ".git"), { recursive: true });
  writeFileSync(join(repo, ".git", "config"), "[core]\n");
  mkdirSync(run);
  writeFileSync(join(run, "approvals.jsonl"), "");
  mkdirSync(worktree);
  writeFileSync(join(worktree, ".git"), `gitdir: ${join(repo, ".git", "worktrees", "w")}\n`);
  return { base, repo, run, worktree };
}

/** No process whose command line holds `marker` is running (zombies aside). */
function survivors(marker: string): string[] {
  try {
    return execFileSync("pgrep", ["-af", marker], { encoding: "utf8" })
      .split("\n")
      .filter((l) => l && !l.includes("pgrep"));
  } catch {
    return [];
  }
}

describe("the sandbox's properties, each on its own", () => {
  it("the parent's environment is unreadable: no /proc entry of any process outside", async () => {
    const sandbox = await testSandbox();
    const { worktree } = layout();
    process.env.TERFYN_TEST_PARENT_SECRET = "parent-secret-4b1d";
    try {
      const r = await runInSandbox(
        sandbox,
        `cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'; echo; echo "PROCESSES $(ls /proc | grep -cE '^[0-9]+$')"; [ -e /proc/${process.pid} ] && echo SAW-HOST-PROCESS; cat /proc/${process.pid}/environ 2>&1; cat /proc/${process.ppid}/environ 2>&1; echo END`,
        { writable: worktree, env: { GIVEN: "given-value" } },
      );
      expect(r.out).toContain("END");
      expect(r.out).toContain("given-value");
      expect(r.out).not.toContain("parent-secret-4b1d");
      expect(r.out).not.toContain("TERFYN_TEST_PARENT_SECRET");
      // Its own PID namespace: only the sandbox's few processes exist, none of the host's.
      expect(r.out).not.toContain("SAW-HOST-PROCESS");
      expect(Number(/PROCESSES (\d+)/.exec(r.out)?.[1])).toBeLessThan(8);
    } finally {
      delete process.env.TERFYN_TEST_PARENT_SECRET;
    }
  });

  it("the run directory, git directories and the real HOME are not there", async () => {
    const sandbox = await testSandbox();
    const { repo, run, worktree } = layout();
    const r = await runInSandbox(
      sandbox,
      `for p in "${run}" "${run}/approvals.jsonl" "${repo}" "${repo}/.git/config" "${process.env.HOME}" /work /root; do if [ -e "$p" ]; then echo "VISIBLE $p"; fi; done; cat .git 2>/dev/null && echo READ-GIT; echo x >> .git 2>/dev/null && echo WROTE-GIT; echo "$HOME $TMPDIR"; echo ok > in-tree.txt; echo END`,
      { writable: worktree },
    );
    expect(r.out).toContain("END");
    expect(r.out).not.toContain("VISIBLE");
    expect(r.out).not.toContain("READ-GIT");
    expect(r.out).not.toContain("WROTE-GIT");
    expect(r.out).toContain("/tmp/home /tmp");
    expect(readFileSync(join(worktree, "in-tree.txt"), "utf8")).toBe("ok\n");
    expect(readFileSync(join(worktree, ".git"), "utf8")).toMatch(/^gitdir: /);
  });

  it("the system is read-only and its secret files are masked", async () => {
    const sandbox = await testSandbox();
    const { worktree } = layout();
    const r = await runInSandbox(
      sandbox,
      "touch /usr/terfyn-x 2>/dev/null && echo WROTE-USR; touch /etc/terfyn-x 2>/dev/null && echo WROTE-ETC; head -c 10 /etc/shadow 2>/dev/null | grep -q . && echo READ-SHADOW; ls /etc/ssh 2>/dev/null | grep -q . && echo SAW-SSH; echo END",
      { writable: worktree },
    );
    expect(r.out).toContain("END");
    expect(r.out).not.toMatch(/WROTE-|READ-SHADOW|SAW-SSH/);
  });

  it("a hidden path below the writable directory is empty and read-only", async () => {
    const sandbox = await testSandbox();
    const { worktree } = layout();
    mkdirSync(join(worktree, ".terfyn", "runs"), { recursive: true });
    writeFileSync(join(worktree, ".terfyn", "runs", "approvals.jsonl"), "secret-record\n");
    const r = await runInSandbox(
      sandbox,
      "cat .terfyn/runs/approvals.jsonl 2>/dev/null; echo forged >> .terfyn/x 2>/dev/null && echo WROTE; echo END",
      { writable: worktree, hide: [join(worktree, ".terfyn")] },
    );
    expect(r.out).toContain("END");
    expect(r.out).not.toContain("secret-record");
    expect(r.out).not.toContain("WROTE");
    expect(existsSync(join(worktree, ".terfyn", "x"))).toBe(false);
  });

  // Under /tmp too: a read-only path there (a Node fetched into a checkout in /tmp) is bound after
  // the sandbox's own empty /tmp, so it is shown, and what must stay hidden in it still is.
  it.each(["/var/tmp", tmpdir()])(
    "the App's secret files where the system is bound are hidden from every command (under %s)",
    async (base) => {
      // An App installed under a bound directory (here: one the operator binds read-only, as /opt
      // is), its key named by PRIVATE_KEY_PATH and a *.pem and .env beside it.
      const app = mkdtempSync(join(base, "terfyn-app-home-"));
      writeFileSync(join(app, ".env"), "WEBHOOK_SECRET=env-secret\n");
      writeFileSync(join(app, "app.pem"), "pem-secret\n");
      mkdirSync(join(app, "keys"));
      writeFileSync(join(app, "keys", "private.key"), "key-secret\n");
      writeFileSync(join(app, "README"), "shown\n");
      const hide = secretFiles({ PRIVATE_KEY_PATH: "keys/private.key" }, app);
      const sandbox = await BubblewrapSandbox.open({
        searchPath: process.env.PATH ?? "/usr/bin:/bin",
        extraReadOnly: [app],
        alwaysHidden: hide,
      });
      const { worktree } = layout();
      const r = await runInSandbox(
        sandbox,
        `cat ${app}/.env ${app}/app.pem ${app}/keys/private.key ${app}/README 2>/dev/null; echo END`,
        { writable: worktree },
      );
      expect(r.out).toContain("shown");
      expect(r.out).toContain("END");
      expect(r.out).not.toMatch(/env-secret|pem-secret|key-secret/);
    },
  );

  it("the App's runs directory is refused where a sandbox would show it", () => {
    expect(visibleInSandbox("/opt/terfyn/runs", {})).toBe("/opt");
    expect(visibleInSandbox("/srv/terfyn/runs", { TERFYN_SANDBOX_READ_ONLY: "/srv/terfyn" })).toBe(
      "/srv/terfyn",
    );
    expect(visibleInSandbox("/var/lib/terfyn/runs", {})).toBeUndefined();
    expect(visibleInSandbox(join(tmpdir(), "terfyn-app-runs"), {})).toBeUndefined();
  });

  it("no network: a server on this machine's loopback cannot be reached, unless declared", async () => {
    const sandbox = await testSandbox();
    const { worktree } = layout();
    const server = createServer((s) => s.end("hello-from-host\n"));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    const script = `python3 -c 'import socket; s=socket.create_connection(("127.0.0.1",${port}),timeout=2); print(s.recv(100).decode())' 2>&1; echo END`;
    try {
      const closed = await runInSandbox(sandbox, script, { writable: worktree });
      expect(closed.out).toContain("END");
      expect(closed.out).not.toContain("hello-from-host");
      const open = await runInSandbox(sandbox, script, { writable: worktree, network: true });
      expect(open.out).toContain("hello-from-host");
    } finally {
      server.close();
    }
  });

  it("no process survives the command, setsid and nohup included", async () => {
    const sandbox = await testSandbox();
    const { worktree } = layout();
    const marker = `terfyn-survivor-${process.pid}-${Date.now()}`;
    const r = await runInSandbox(
      sandbox,
      `setsid sh -c 'sleep 2; echo late > late-setsid' ${marker} >/dev/null 2>&1 & nohup sh -c 'sleep 2; echo late > late-nohup' ${marker} >/dev/null 2>&1 & echo started`,
      { writable: worktree },
    );
    expect(r.out).toContain("started");
    expect(survivors(marker)).toEqual([]);
    await new Promise((res) => setTimeout(res, 2500));
    expect(existsSync(join(worktree, "late-setsid"))).toBe(false);
    expect(existsSync(join(worktree, "late-nohup"))).toBe(false);
  });

  it("a timeout kills the whole sandbox", async () => {
    const sandbox = await testSandbox();
    const { worktree } = layout();
    const marker = `terfyn-timeout-${process.pid}-${Date.now()}`;
    const r = await runInSandbox(sandbox, `setsid sh -c 'sleep 30; :' ${marker} & sleep 30`, {
      writable: worktree,
      timeoutMs: 700,
    });
    expect(r.timedOut).toBe(true);
    await new Promise((res) => setTimeout(res, 200));
    expect(survivors(marker)).toEqual([]);
  });

  it("a symlinked writable directory is bound at its real path", async () => {
    const sandbox = await testSandbox();
    const { base, worktree } = layout();
    const link = join(base, "link");
    symlinkSync(worktree, link);
    const r = await runInSandbox(sandbox, "pwd; echo ok > via-link", { writable: link });
    expect(r.code).toBe(0);
    expect(readFileSync(join(worktree, "via-link"), "utf8")).toBe("ok\n");
  });
});

describe("where no sandbox can be made, nothing runs", () => {
  it("no bwrap: refused, naming what to install", async () => {
    const err = await BubblewrapSandbox.open({ searchPath: "/nonexistent-dir" }).catch((e) => e);
    expect(err).toBeInstanceOf(SandboxUnavailable);
    expect((err as Error).message).toMatch(/apt-get install bubblewrap/);
  });

  it("not Linux: refused, naming the way out", async () => {
    const err = await BubblewrapSandbox.open({
      platform: "darwin",
      searchPath: process.env.PATH ?? "",
    }).catch((e) => e);
    expect(err).toBeInstanceOf(SandboxUnavailable);
    expect((err as Error).message).toMatch(/needs Linux; this is darwin/);
  });

  it("bwrap that cannot make namespaces: refused, naming user namespaces", async () => {
    const dir = mkdtempSync(join(tmpdir(), "terfyn-fakebwrap-"));
    const fake = join(dir, "bwrap");
    writeFileSync(
      fake,
      "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n",
      {
        mode: 0o755,
      },
    );
    const err = await BubblewrapSandbox.open({ bwrap: fake }).catch((e) => e);
    expect(err).toBeInstanceOf(SandboxUnavailable);
    expect((err as Error).message).toMatch(/setting up uid map: Permission denied/);
    expect((err as Error).message).toMatch(/apparmor_restrict_unprivileged_userns/);
  });
});

describe("bubblewrapArgs (table)", () => {
  const host = (kinds: Record<string, PathKind>, extraReadOnly: string[] = []): HostView => ({
    extraReadOnly,
    kindOf: (p) => kinds[p],
  });
  const merged = host({
    "/usr": { kind: "dir" },
    "/bin": { kind: "symlink", target: "usr/bin" },
    "/lib": { kind: "symlink", target: "usr/lib" },
    "/etc": { kind: "dir" },
    "/etc/shadow": { kind: "file" },
    "/w/.git": { kind: "file" },
    "/w/.terfyn": { kind: "dir" },
    "/opt/tools": { kind: "dir" },
  });
  const base = {
    argv: ["/bin/sh", "-c", "x"],
    writable: "/w",
    env: {},
    timeoutMs: 1,
    onStdout() {},
    onStderr() {},
  };

  const cases: Array<{
    name: string;
    command: Partial<typeof base> & Record<string, unknown>;
    has?: string[][];
    lacks?: string[][];
    throws?: RegExp;
  }> = [
    {
      name: "every namespace, no capabilities, a new session, dies with Terfyn",
      command: {},
      has: [
        ["--unshare-user"],
        ["--unshare-pid"],
        ["--unshare-ipc"],
        ["--unshare-uts"],
        ["--unshare-net"],
        ["--die-with-parent"],
        ["--new-session"],
        ["--cap-drop", "ALL"],
      ],
    },
    { name: "network only when asked", command: { network: true }, lacks: [["--unshare-net"]] },
    {
      name: "the system read-only; merged-/usr symlinks kept as symlinks; absent paths skipped",
      command: {},
      has: [
        ["--ro-bind", "/usr", "/usr"],
        ["--symlink", "usr/bin", "/bin"],
        ["--ro-bind", "/etc", "/etc"],
      ],
      lacks: [
        ["--ro-bind", "/opt", "/opt"],
        ["--bind", "/usr", "/usr"],
      ],
    },
    { name: "/etc/shadow masked", command: {}, has: [["--ro-bind", "/dev/null", "/etc/shadow"]] },
    {
      name: "a fresh /proc, /dev and /tmp with HOME; the writable directory bound at its path",
      command: {},
      has: [
        ["--proc", "/proc"],
        ["--dev", "/dev"],
        ["--tmpfs", "/tmp"],
        ["--dir", "/tmp/home"],
        ["--bind", "/w", "/w"],
        ["--chdir", "/w"],
      ],
    },
    {
      name: "the worktree's .git masked",
      command: {},
      has: [["--ro-bind", "/dev/null", "/w/.git"]],
    },
    {
      name: "a hidden directory below the writable one: an empty read-only tmpfs",
      command: { hide: ["/w/.terfyn"] },
      has: [["--tmpfs", "/w/.terfyn", "--remount-ro", "/w/.terfyn"]],
    },
    {
      name: "a hidden path outside every bind needs no mask",
      command: { hide: ["/elsewhere"] },
      lacks: [["/elsewhere"]],
    },
    { name: "the command after --", command: { argv: ["a", "--b"] }, has: [["--", "a", "--b"]] },
    {
      name: "cwd must be inside the writable directory",
      command: { cwd: "/etc" },
      throws: /not inside/,
    },
    {
      name: "/ can never be writable",
      command: { writable: "/" },
      throws: /cannot make \/ writable/,
    },
    {
      name: "a relative writable directory is refused",
      command: { writable: "w" },
      throws: /absolute/,
    },
    {
      name: "a hidden path holding the writable directory is refused",
      command: { hide: ["/"] },
      throws: /must stay hidden/,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const build = () => bubblewrapArgs({ ...base, ...c.command } as never, merged);
      if (c.throws) {
        expect(build).toThrow(c.throws);
        return;
      }
      const args = build();
      const joined = `\u0001${args.join("\u0001")}\u0001`;
      for (const seq of c.has ?? []) expect(joined).toContain(`\u0001${seq.join("\u0001")}\u0001`);
      for (const seq of c.lacks ?? [])
        expect(joined).not.toContain(`\u0001${seq.join("\u0001")}\u0001`);
      // The writable bind comes after the system and /tmp, so nothing later hides it, and masks after it.
      expect(args.indexOf("--bind")).toBeGreaterThan(args.indexOf("--tmpfs"));
    });
  }

  it("the operator's extra read-only paths are bound read-only", () => {
    const args = bubblewrapArgs(
      base as never,
      host({ "/opt/tools": { kind: "dir" } }, ["/opt/tools", "/missing"]),
    );
    expect(args.join(" ")).toContain("--ro-bind /opt/tools /opt/tools");
    expect(args.join(" ")).not.toContain("/missing");
  });
});
