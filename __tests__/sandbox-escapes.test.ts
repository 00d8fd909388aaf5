/**
 * Adversarial suite for the workspace tool's sandbox (DESIGN.md, "Execution (execir)", workspace
 * tool bullet): `read_file` / `write_file` / `run_tests` must stay inside the sandbox root,
 * deciding on real paths at the time of use, never on the string.
 *
 * Every escape attempt is a row `{ name, setup(ctx), attempt(ws, ctx), escaped(ctx) }` that runs
 * twice, each time in fresh temp directories:
 *
 *   <base>/sandbox          the sandbox root
 *   <base>/sandbox-evil     a sibling sharing the root's string prefix, holding a secret
 *   <base>/outside          an unrelated directory, holding a secret
 *
 * 1. against the real WorkspaceTool: the attempt is refused (ok:false), `escaped` is false, and
 *    the outside world is unchanged (a recursive listing of <base> — the parent of the root,
 *    which holds both outside directories — minus the root itself, with file contents and link
 *    targets, is identical before and after);
 * 2. against NaiveWorkspace (below), the obvious wrong implementation: a string-prefix check
 *    `path.resolve(root, p).startsWith(root)`, then open/write following symlinks. There
 *    `escaped` must be TRUE — this proves each row is able to fail, i.e. that it tests
 *    something. The few rows the naive check stops as well are flagged `naiveAlsoBlocks`.
 *
 * Rows with `expect: "contained"` may succeed (e.g. `%2e%2e` is a plain name, so the write
 * lands inside the root); they must still not escape.
 */
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { mkdir, open, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import {
  SandboxViolation,
  type WorkspaceConfig,
  WorkspaceTool,
} from "../src/adapters/workspace/workspace-tool.ts";
import { testSandbox } from "./helpers/sandbox.ts";

const SECRET = `TOP-SECRET-${randomBytes(6).toString("hex")}`;
const EVIL_SECRET = `${SECRET} (sandbox-evil)`;
const OUTSIDE_SECRET = `${SECRET} (outside)`;
/** How long an operation may take before the row records it as hung (and unblocks it). */
const HANG_MS = 1000;

interface Outcome {
  ok: boolean;
  result: unknown;
}

/** What both implementations offer: the agent-facing boundary. */
interface Workspace {
  execute(operation: string, input: unknown): Promise<Outcome>;
}

interface Ctx {
  base: string;
  /** `<base>/sandbox`, a real directory. */
  root: string;
  /** `<base>/sandbox-evil`: shares the root's prefix as a string. */
  evil: string;
  /** `<base>/outside`. */
  outside: string;
  evilSecret: string;
  outsideSecret: string;
  /** The root handed to `open()`; a symlink in the symlinked-root rows. */
  wsRoot: string;
  /** The directory whose subtree is "inside" (excluded from the outside snapshot). */
  realRoot: string;
  testCommand?: string;
  /** Installed by setup/attempt; the workspace's `beforeOpen` hook calls it. */
  beforeOpen?: (absolutePath: string) => Promise<void> | void;
  /** Outside paths that the *attacker* (the row itself) changes, not the tool. */
  ignore: Set<string>;
  cleanups: (() => void)[];
  outcome?: Outcome;
  hung: boolean;
}

interface Case {
  group: string;
  name: string;
  setup?: (ctx: Ctx) => void | Promise<void>;
  attempt: (ws: Workspace, ctx: Ctx) => Promise<Outcome>;
  /** True when the attempt breached the sandbox (read a secret, changed or created something outside, hung). */
  escaped: (ctx: Ctx) => boolean;
  /** "refused" (default): the real tool returns ok:false. "contained": it may succeed, but stays inside. */
  expect?: "refused" | "contained";
  /** The naive string-prefix check stops this attempt too; kept to a small group on purpose. */
  naiveAlsoBlocks?: true;
  /** Extra assertions on the real tool's run. */
  check?: (ctx: Ctx) => void;
  /** A reason to skip this row on this machine. */
  skip?: string | false;
}

// ---------------------------------------------------------------------------------------------
// The deliberately naive workspace: string-prefix containment, follows every symlink.
// ---------------------------------------------------------------------------------------------

class NaiveWorkspace implements Workspace {
  private constructor(
    private readonly root: string,
    private readonly config: WorkspaceConfig,
  ) {}

  static async open(config: WorkspaceConfig): Promise<NaiveWorkspace> {
    return new NaiveWorkspace(resolve(config.root), config);
  }

  /** The obvious (wrong) check: on the string, by prefix, with symlinks left for the OS to follow. */
  private resolveInside(path: unknown): string {
    const abs = resolve(this.root, String(path));
    if (!abs.startsWith(this.root)) throw new Error(`${String(path)} is outside the workspace`);
    return abs;
  }

  async readFile(path: unknown): Promise<string> {
    const abs = this.resolveInside(path);
    await this.config.beforeOpen?.(abs);
    // fs.readFile, but bounded so that a /dev/zero escape does not eat the test machine's memory.
    const handle = await open(abs, "r");
    try {
      const buffer = Buffer.alloc(1024 * 1024);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      return buffer.subarray(0, bytesRead).toString("utf8");
    } finally {
      await handle.close();
    }
  }

  async writeFile(path: unknown, content: string): Promise<string> {
    const abs = this.resolveInside(path);
    await mkdir(dirname(abs), { recursive: true });
    await this.config.beforeOpen?.(abs);
    await writeFile(abs, content);
    return abs;
  }

  runTests(command?: unknown): Promise<{ exit_code: number | null; stdout: string }> {
    const cmd = typeof command === "string" ? command : this.config.testCommand;
    if (!cmd) return Promise.reject(new Error("no test command"));
    return new Promise((done, fail) => {
      const child = spawn("/bin/sh", ["-c", cmd], { cwd: this.root, env: process.env });
      let stdout = "";
      child.stdout.on("data", (c: Buffer) => {
        stdout += c.toString("utf8");
      });
      child.on("error", fail);
      child.on("close", (code) => done({ exit_code: code, stdout }));
    });
  }

  async execute(operation: string, input: unknown): Promise<Outcome> {
    const args = (input ?? {}) as Record<string, unknown>;
    try {
      switch (operation) {
        case "read_file":
          return { ok: true, result: { content: await this.readFile(args.path) } };
        case "write_file":
          return {
            ok: true,
            result: { written: await this.writeFile(args.path, String(args.content)) },
          };
        case "run_tests":
          return { ok: true, result: await this.runTests(args.command) };
        default:
          return { ok: false, result: { error: `no operation ${operation}` } };
      }
    } catch (e) {
      return { ok: false, result: { error: (e as Error).message } };
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Fixtures and helpers
// ---------------------------------------------------------------------------------------------

function makeCtx(): Ctx {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "terfyn-escape-")));
  const root = join(base, "sandbox");
  const evil = join(base, "sandbox-evil");
  const outside = join(base, "outside");
  for (const d of [root, evil, outside]) mkdirSync(d);
  const evilSecret = join(evil, "secret.txt");
  const outsideSecret = join(outside, "secret.txt");
  writeFileSync(evilSecret, EVIL_SECRET);
  writeFileSync(outsideSecret, OUTSIDE_SECRET);
  writeFileSync(join(root, "README.md"), "inside the sandbox\n");
  return {
    base,
    root,
    evil,
    outside,
    evilSecret,
    outsideSecret,
    wsRoot: root,
    realRoot: root,
    ignore: new Set(),
    cleanups: [],
    hung: false,
  };
}

/** A recursive listing of <base> minus the real root: type, file content, link target. */
function snapshot(ctx: Ctx): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (p === ctx.realRoot || ctx.ignore.has(p)) continue;
      const st = lstatSync(p);
      const rel = p.slice(ctx.base.length);
      if (st.isSymbolicLink()) out[rel] = `symlink -> ${readlinkSync(p)}`;
      else if (st.isDirectory()) {
        out[rel] = "dir";
        walk(p);
      } else if (st.isFile()) out[rel] = `file ${readFileSync(p, "utf8")}`;
      else out[rel] = "special";
    }
  };
  walk(ctx.base);
  return out;
}

const exists = (p: string): boolean => {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
};
const isDir = (p: string): boolean => exists(p) && lstatSync(p).isDirectory();
const content = (ctx: Ctx): string | undefined =>
  ctx.outcome?.ok ? ((ctx.outcome.result as { content?: string }).content ?? undefined) : undefined;
/** The outcome's result as a record (empty when there is none). */
const resultOf = (ctx: Ctx): Record<string, unknown> =>
  (ctx.outcome?.result ?? {}) as Record<string, unknown>;
/** The call succeeded and its result carries a secret. */
const leaked = (ctx: Ctx): boolean =>
  ctx.outcome?.ok === true && JSON.stringify(ctx.outcome.result).includes(SECRET);
/** Either secret file no longer holds its original content. */
const secretChanged = (ctx: Ctx): boolean =>
  !exists(ctx.evilSecret) ||
  !exists(ctx.outsideSecret) ||
  readFileSync(ctx.evilSecret, "utf8") !== EVIL_SECRET ||
  readFileSync(ctx.outsideSecret, "utf8") !== OUTSIDE_SECRET;

const read =
  (path: unknown) =>
  (ws: Workspace): Promise<Outcome> =>
    ws.execute("read_file", { path });
const write =
  (path: unknown, text = "PWNED") =>
  (ws: Workspace): Promise<Outcome> =>
    ws.execute("write_file", { path, content: text });

/** Replaces `path` (file or directory) with a symlink to `target`. */
function swapForSymlink(path: string, target: string): void {
  rmSync(path, { recursive: true, force: true });
  symlinkSync(target, path);
}

/** Makes `<base>/ws-link` -> the sandbox and opens the workspace through it. */
function symlinkedRoot(ctx: Ctx): string {
  const link = join(ctx.base, "ws-link");
  symlinkSync(ctx.root, link);
  ctx.wsRoot = link;
  ctx.ignore.add(link); // rows retarget it: that is the attacker's doing, not the tool's
  return link;
}

/**
 * Runs `op`; if it has not settled after HANG_MS, records `ctx.hung`, calls `unblock` (which
 * may return a release function, called once `op` settles) and waits for it.
 */
async function guardHang(
  ctx: Ctx,
  op: Promise<Outcome>,
  unblock: () => (() => void) | undefined,
): Promise<Outcome> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"hung">((r) => {
    timer = setTimeout(() => r("hung"), HANG_MS);
  });
  const first = await Promise.race([op, timeout]);
  clearTimeout(timer);
  if (first !== "hung") return first;
  ctx.hung = true;
  const release = unblock();
  try {
    return await op;
  } finally {
    release?.();
  }
}
/** Wakes an open() blocked reading a FIFO: a writer comes and goes, the reader then sees EOF. */
const wakeReader = (fifo: string) => (): undefined => {
  closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
  return undefined;
};
/** Wakes an open() blocked writing a FIFO: a reader stays until the writer is done. */
const wakeWriter = (fifo: string) => (): (() => void) => {
  const fd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  return () => closeSync(fd);
};

const mkfifo = (p: string): void => {
  execFileSync("mkfifo", [p]);
};

const CAN_MKNOD = (() => {
  const d = mkdtempSync(join(tmpdir(), "terfyn-mknod-"));
  try {
    execFileSync("mknod", [join(d, "zero"), "c", "1", "5"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
})();

// ---------------------------------------------------------------------------------------------
// The escape attempts
// ---------------------------------------------------------------------------------------------

const CASES: Case[] = [
  // -- `..` ------------------------------------------------------------------------------------
  {
    group: "dot-dot",
    name: "read ../sandbox-evil/secret.txt (sibling sharing the root's prefix)",
    attempt: read("../sandbox-evil/secret.txt"),
    escaped: leaked,
  },
  {
    group: "dot-dot",
    name: "write ../sandbox-evil/secret.txt overwrites the sibling's secret",
    attempt: write("../sandbox-evil/secret.txt"),
    escaped: secretChanged,
  },
  {
    group: "dot-dot",
    name: "write ../sandbox-evil/pwned.txt creates a file in the sibling",
    attempt: write("../sandbox-evil/pwned.txt"),
    escaped: (ctx) => exists(join(ctx.evil, "pwned.txt")),
  },
  {
    group: "dot-dot",
    name: "read nested a/../../sandbox-evil/secret.txt",
    setup: (ctx) => mkdirSync(join(ctx.root, "a")),
    attempt: read("a/../../sandbox-evil/secret.txt"),
    escaped: leaked,
  },
  {
    group: "dot-dot",
    name: "write nested a/b/../../../sandbox-evil/pwned.txt",
    attempt: write("a/b/../../../sandbox-evil/pwned.txt"),
    escaped: (ctx) => exists(join(ctx.evil, "pwned.txt")),
  },
  {
    group: "dot-dot",
    name: "read ./..//sandbox-evil/./secret.txt (dots and doubled slashes)",
    attempt: read("./..//sandbox-evil/./secret.txt"),
    escaped: leaked,
  },
  {
    group: "dot-dot",
    name: "%2e%2e is a plain name: write %2e%2e/%2e%2e/sandbox-evil/pwned.txt lands inside",
    expect: "contained",
    naiveAlsoBlocks: true, // neither implementation URL-decodes; both keep it inside
    attempt: async (ws) => {
      const w = await write("%2e%2e/%2e%2e/sandbox-evil/pwned.txt")(ws);
      if (!w.ok) return w;
      return read("%2e%2e/%2e%2e/sandbox-evil/pwned.txt")(ws);
    },
    escaped: (ctx) => exists(join(ctx.evil, "pwned.txt")) || exists(join(ctx.base, "pwned.txt")),
    check: (ctx) => {
      expect(ctx.outcome).toEqual({ ok: true, result: { content: "PWNED" } });
      expect(
        readFileSync(join(ctx.root, "%2e%2e", "%2e%2e", "sandbox-evil", "pwned.txt"), "utf8"),
      ).toBe("PWNED");
    },
  },

  // -- absolute paths --------------------------------------------------------------------------
  {
    group: "absolute",
    name: "read /etc/passwd",
    naiveAlsoBlocks: true, // "/etc/passwd" does not start with the root
    attempt: read("/etc/passwd"),
    escaped: (ctx) => content(ctx)?.includes("root:") === true,
  },
  {
    group: "absolute",
    name: "read the sibling secret by its absolute path",
    attempt: (ws, ctx) => read(ctx.evilSecret)(ws),
    escaped: leaked,
  },
  {
    group: "absolute",
    name: "write a new file in the sibling by its absolute path",
    attempt: (ws, ctx) => write(join(ctx.evil, "pwned.txt"))(ws),
    escaped: (ctx) => exists(join(ctx.evil, "pwned.txt")),
  },
  {
    group: "absolute",
    name: "read <root>/../sandbox-evil/secret.txt (absolute, through the root and back out)",
    attempt: (ws, ctx) => read(`${ctx.root}/../sandbox-evil/secret.txt`)(ws),
    escaped: leaked,
  },

  // -- sibling sharing the root's prefix, reached through a symlink ----------------------------
  {
    group: "sibling prefix",
    name: "read evil/secret.txt, evil -> ../sandbox-evil",
    setup: (ctx) => symlinkSync("../sandbox-evil", join(ctx.root, "evil")),
    attempt: read("evil/secret.txt"),
    escaped: leaked,
  },
  {
    group: "sibling prefix",
    name: "write evil/pwned.txt, evil -> <abs>/sandbox-evil",
    setup: (ctx) => symlinkSync(ctx.evil, join(ctx.root, "evil")),
    attempt: write("evil/pwned.txt"),
    escaped: (ctx) => exists(join(ctx.evil, "pwned.txt")),
  },

  // -- symlinked directory pointing outside ----------------------------------------------------
  {
    group: "symlinked dir",
    name: "read out/secret.txt, out -> <outside>",
    setup: (ctx) => symlinkSync(ctx.outside, join(ctx.root, "out")),
    attempt: read("out/secret.txt"),
    escaped: leaked,
  },
  {
    group: "symlinked dir",
    name: "write out/secret.txt overwrites through out -> <outside>",
    setup: (ctx) => symlinkSync(ctx.outside, join(ctx.root, "out")),
    attempt: write("out/secret.txt"),
    escaped: secretChanged,
  },
  {
    group: "symlinked dir",
    name: "write out/new.txt creates a new file through out -> <outside>",
    setup: (ctx) => symlinkSync(ctx.outside, join(ctx.root, "out")),
    attempt: write("out/new.txt"),
    escaped: (ctx) => exists(join(ctx.outside, "new.txt")),
  },
  {
    group: "symlinked dir",
    name: "write out/deep/er/new.txt creates new directories through out -> <outside>",
    setup: (ctx) => symlinkSync(ctx.outside, join(ctx.root, "out")),
    attempt: write("out/deep/er/new.txt"),
    escaped: (ctx) => exists(join(ctx.outside, "deep")),
  },
  {
    group: "symlinked dir",
    name: "read up/outside/secret.txt, up -> .. (the root's parent)",
    setup: (ctx) => symlinkSync("..", join(ctx.root, "up")),
    attempt: read("up/outside/secret.txt"),
    escaped: leaked,
  },
  {
    group: "symlinked dir",
    name: "read l1/secret.txt through a chain l1 -> l2 (inside) -> <outside>",
    setup: (ctx) => {
      symlinkSync("l2", join(ctx.root, "l1"));
      symlinkSync(ctx.outside, join(ctx.root, "l2"));
    },
    attempt: read("l1/secret.txt"),
    escaped: leaked,
  },
  {
    group: "symlinked dir",
    name: "read proc/secret.txt, proc -> /proc/self/root<outside> (magic link)",
    setup: (ctx) => symlinkSync(`/proc/self/root${ctx.outside}`, join(ctx.root, "proc")),
    attempt: read("proc/secret.txt"),
    escaped: leaked,
  },

  // -- symlinked file pointing outside ---------------------------------------------------------
  {
    group: "symlinked file",
    name: "read s.txt -> <outside>/secret.txt",
    setup: (ctx) => symlinkSync(ctx.outsideSecret, join(ctx.root, "s.txt")),
    attempt: read("s.txt"),
    escaped: leaked,
  },
  {
    group: "symlinked file",
    name: "write s.txt -> <outside>/secret.txt must not follow the link",
    setup: (ctx) => symlinkSync(ctx.outsideSecret, join(ctx.root, "s.txt")),
    attempt: write("s.txt"),
    escaped: secretChanged,
  },
  {
    group: "symlinked file",
    name: "read rel.txt -> ../outside/secret.txt (relative target)",
    setup: (ctx) => symlinkSync("../outside/secret.txt", join(ctx.root, "rel.txt")),
    attempt: read("rel.txt"),
    escaped: leaked,
  },
  {
    group: "symlinked file",
    name: "write a.txt through a chain a.txt -> b.txt (inside) -> <outside>/secret.txt",
    setup: (ctx) => {
      symlinkSync("b.txt", join(ctx.root, "a.txt"));
      symlinkSync(ctx.outsideSecret, join(ctx.root, "b.txt"));
    },
    attempt: write("a.txt"),
    escaped: secretChanged,
  },

  // -- dangling symlink ------------------------------------------------------------------------
  {
    group: "dangling symlink",
    name: "write dangling.txt -> <outside>/created.txt must not create the target",
    setup: (ctx) => symlinkSync(join(ctx.outside, "created.txt"), join(ctx.root, "dangling.txt")),
    attempt: write("dangling.txt"),
    escaped: (ctx) => exists(join(ctx.outside, "created.txt")),
  },
  {
    group: "dangling symlink",
    name: "write ghost.txt -> ../sandbox-evil/created.txt (relative, into the sibling)",
    setup: (ctx) => symlinkSync("../sandbox-evil/created.txt", join(ctx.root, "ghost.txt")),
    attempt: write("ghost.txt"),
    escaped: (ctx) => exists(join(ctx.evil, "created.txt")),
  },

  // -- swapped between check and use (beforeOpen runs after the checks, right before open) -----
  {
    group: "check/use swap",
    name: "read: victim.txt is replaced by a symlink to <outside>/secret.txt before the open",
    setup: (ctx) => {
      writeFileSync(join(ctx.root, "victim.txt"), "benign");
      ctx.beforeOpen = () => swapForSymlink(join(ctx.root, "victim.txt"), ctx.outsideSecret);
    },
    attempt: read("victim.txt"),
    escaped: leaked,
  },
  {
    group: "check/use swap",
    name: "read: the parent dir is replaced by a symlink to <outside> before the open",
    setup: (ctx) => {
      mkdirSync(join(ctx.root, "dir"));
      writeFileSync(join(ctx.root, "dir", "secret.txt"), "benign");
      ctx.beforeOpen = () => swapForSymlink(join(ctx.root, "dir"), ctx.outside);
    },
    attempt: read("dir/secret.txt"),
    escaped: leaked,
  },
  {
    group: "check/use swap",
    name: "write: existing victim.txt is replaced by a symlink to <outside>/secret.txt",
    setup: (ctx) => {
      writeFileSync(join(ctx.root, "victim.txt"), "benign");
      ctx.beforeOpen = () => swapForSymlink(join(ctx.root, "victim.txt"), ctx.outsideSecret);
    },
    attempt: write("victim.txt"),
    escaped: secretChanged,
  },
  {
    group: "check/use swap",
    name: "write: a symlink to <outside>/planted.txt appears at the new file's name",
    setup: (ctx) => {
      ctx.beforeOpen = () =>
        symlinkSync(join(ctx.outside, "planted.txt"), join(ctx.root, "fresh.txt"));
    },
    attempt: write("fresh.txt"),
    escaped: (ctx) => exists(join(ctx.outside, "planted.txt")),
  },
  {
    group: "check/use swap",
    name: "write: the parent dir is replaced by a symlink to <outside> (new file)",
    setup: (ctx) => {
      mkdirSync(join(ctx.root, "dir"));
      ctx.beforeOpen = () => swapForSymlink(join(ctx.root, "dir"), ctx.outside);
    },
    attempt: write("dir/new.txt"),
    // The real tool may create the file through the swapped parent for an instant; it must
    // notice (the opened file's real path is outside) and remove it before answering.
    escaped: (ctx) => exists(join(ctx.outside, "new.txt")),
  },
  {
    group: "check/use swap",
    name: "write: the parent dir is replaced by a symlink to <outside> (existing secret.txt)",
    setup: (ctx) => {
      mkdirSync(join(ctx.root, "dir"));
      writeFileSync(join(ctx.root, "dir", "secret.txt"), "benign");
      ctx.beforeOpen = () => swapForSymlink(join(ctx.root, "dir"), ctx.outside);
    },
    attempt: write("dir/secret.txt"),
    escaped: secretChanged,
  },
  {
    group: "check/use swap",
    name: "write: the grandparent dir is replaced by a symlink to <outside> (a/b/new.txt)",
    setup: (ctx) => {
      mkdirSync(join(ctx.root, "a", "b"), { recursive: true });
      mkdirSync(join(ctx.outside, "b"));
      ctx.beforeOpen = () => swapForSymlink(join(ctx.root, "a"), ctx.outside);
    },
    attempt: write("a/b/new.txt"),
    escaped: (ctx) => exists(join(ctx.outside, "b", "new.txt")),
  },

  // -- symlinked sandbox root: containment is by the real path ---------------------------------
  {
    group: "symlinked root",
    name: "read secret.txt after the root symlink is retargeted to <outside>",
    setup: (ctx) => {
      symlinkedRoot(ctx);
    },
    attempt: (ws, ctx) => {
      swapForSymlink(ctx.wsRoot, ctx.outside);
      return read("secret.txt")(ws);
    },
    escaped: leaked,
  },
  {
    group: "symlinked root",
    name: "write secret.txt after the root symlink is retargeted: lands in the real root",
    expect: "contained",
    setup: (ctx) => {
      symlinkedRoot(ctx);
    },
    attempt: (ws, ctx) => {
      swapForSymlink(ctx.wsRoot, ctx.outside);
      return write("secret.txt")(ws);
    },
    escaped: secretChanged,
    check: (ctx) => {
      expect(ctx.outcome?.ok).toBe(true);
      expect(readFileSync(join(ctx.root, "secret.txt"), "utf8")).toBe("PWNED");
    },
  },
  {
    group: "symlinked root",
    name: "read esc.txt -> ../ws/x.txt: inside from the link's location, outside in reality",
    setup: (ctx) => {
      // <base>/ws -> deep/real. Lexically, <base>/ws/esc.txt -> ../ws/x.txt is <base>/ws/x.txt,
      // inside the root as named; really it is <base>/deep/ws/x.txt, outside.
      const real = join(ctx.base, "deep", "real");
      mkdirSync(real, { recursive: true });
      mkdirSync(join(ctx.base, "deep", "ws"));
      writeFileSync(join(ctx.base, "deep", "ws", "x.txt"), `${SECRET} (deep)`);
      symlinkSync("deep/real", join(ctx.base, "ws"));
      symlinkSync("../ws/x.txt", join(real, "esc.txt"));
      ctx.wsRoot = join(ctx.base, "ws");
      ctx.realRoot = real;
    },
    attempt: read("esc.txt"),
    escaped: leaked,
  },

  // -- path syntax -----------------------------------------------------------------------------
  {
    group: "path syntax",
    name: "NUL byte: notes.txt\\0/../../sandbox-evil/pwned.txt",
    // Node rejects NUL in paths it opens, but path.resolve first normalises the NUL-bearing
    // component away ("notes.txt\0/../.." is just ".."), so the naive check still escapes.
    attempt: write("notes.txt\0/../../sandbox-evil/pwned.txt"),
    escaped: (ctx) =>
      exists(join(ctx.evil, "pwned.txt")) || readdirSync(ctx.evil).some((n) => n !== "secret.txt"),
  },
  {
    group: "path syntax",
    name: "backslashes: ..\\sandbox-evil\\pwned.txt",
    naiveAlsoBlocks: true, // on POSIX a backslash is an ordinary character: one odd name, inside
    attempt: write("..\\sandbox-evil\\pwned.txt"),
    escaped: (ctx) => exists(join(ctx.evil, "pwned.txt")),
  },
  {
    group: "path syntax",
    name: "empty path (would be the root itself)",
    naiveAlsoBlocks: true, // writeFile(root) fails with EISDIR
    attempt: write(""),
    escaped: (ctx) => !isDir(ctx.root),
  },
  {
    group: "path syntax",
    name: "write . : replace the root directory with a file",
    naiveAlsoBlocks: true, // EISDIR
    attempt: write("."),
    escaped: (ctx) => !isDir(ctx.root),
  },
  {
    group: "path syntax",
    name: "very long read: ./ x3000 then ../sandbox-evil/secret.txt",
    attempt: read(`${"./".repeat(3000)}../sandbox-evil/secret.txt`),
    escaped: leaked,
  },
  {
    group: "path syntax",
    name: "very long write: a/ x1500, ../ x1501, then sandbox-evil/pwned.txt",
    attempt: write(`${"a/".repeat(1500)}${"../".repeat(1501)}sandbox-evil/pwned.txt`),
    escaped: (ctx) => exists(join(ctx.evil, "pwned.txt")),
  },

  // -- hard link -------------------------------------------------------------------------------
  {
    // A hard link is not a symlink: notes.txt IS a name inside the root, and /proc/self/fd
    // reports the path it was opened by (inside), so the real-path check passes. But the inode
    // is shared with <outside>/secret.txt, so truncating and writing it in place changes the
    // file outside. The tool cannot create hard links itself; they arrive with the workspace
    // (pnpm hard-links node_modules files to its global store; `git clone` of a local path
    // hard-links .git/objects; cp -al, backup tools). Reading one is accepted (see "documented
    // behaviour"); writing through one modifies a file outside the root, so this row counts it
    // as an escape. Fix: refuse (or replace via temp file + rename) when the opened file has
    // st.nlink > 1.
    group: "hard link",
    name: "write notes.txt, a hard link to <outside>/secret.txt, changes the outside file",
    setup: (ctx) => linkSync(ctx.outsideSecret, join(ctx.root, "notes.txt")),
    attempt: write("notes.txt"),
    escaped: secretChanged,
  },

  // -- FIFOs, devices, directories -------------------------------------------------------------
  {
    group: "special files",
    name: "read a FIFO inside the root: refused at once, no hang",
    setup: (ctx) => mkfifo(join(ctx.root, "pipe")),
    attempt: (ws, ctx) => guardHang(ctx, read("pipe")(ws), wakeReader(join(ctx.root, "pipe"))),
    escaped: (ctx) => ctx.hung,
  },
  {
    group: "special files",
    name: "write a FIFO inside the root: refused at once, no hang",
    setup: (ctx) => mkfifo(join(ctx.root, "pipe")),
    attempt: (ws, ctx) => guardHang(ctx, write("pipe")(ws), wakeWriter(join(ctx.root, "pipe"))),
    escaped: (ctx) => ctx.hung,
  },
  {
    group: "special files",
    name: "read a FIFO outside through a symlink: refused, no hang",
    setup: (ctx) => {
      mkfifo(join(ctx.outside, "pipe"));
      symlinkSync(join(ctx.outside, "pipe"), join(ctx.root, "pipe"));
    },
    attempt: (ws, ctx) => guardHang(ctx, read("pipe")(ws), wakeReader(join(ctx.outside, "pipe"))),
    escaped: (ctx) => ctx.hung || ctx.outcome?.ok === true,
  },
  {
    group: "special files",
    name: "read zero -> /dev/zero",
    setup: (ctx) => symlinkSync("/dev/zero", join(ctx.root, "zero")),
    attempt: read("zero"),
    escaped: (ctx) => content(ctx)?.includes("\0") === true,
  },
  {
    group: "special files",
    name: "read a character device node made inside the root (mknod c 1 5)",
    skip: !CAN_MKNOD && "mknod is not permitted here",
    setup: (ctx) => {
      execFileSync("mknod", [join(ctx.root, "zero"), "c", "1", "5"]);
    },
    attempt: read("zero"),
    escaped: (ctx) => content(ctx)?.includes("\0") === true,
  },
  {
    group: "special files",
    name: "write src/ (a directory) as a file",
    naiveAlsoBlocks: true, // EISDIR
    setup: (ctx) => {
      mkdirSync(join(ctx.root, "src"));
      writeFileSync(join(ctx.root, "src", "main.go"), "package main\n");
    },
    attempt: write("src"),
    escaped: (ctx) => !isDir(join(ctx.root, "src")),
  },

  // -- run_tests -------------------------------------------------------------------------------
  {
    group: "run_tests",
    name: "a command smuggled in the input is ignored; only the configured one runs",
    expect: "contained",
    setup: (ctx) => {
      ctx.testCommand = "true";
    },
    attempt: (ws, ctx) =>
      ws.execute("run_tests", {
        command: `cp '${ctx.evilSecret}' '${join(ctx.outside, "pwned.txt")}'`,
      }),
    escaped: (ctx) => exists(join(ctx.outside, "pwned.txt")),
    check: (ctx) => {
      expect(ctx.outcome?.ok).toBe(true);
      expect(resultOf(ctx).passed).toBe(true);
    },
  },
  {
    group: "run_tests",
    name: "no configured command: refused, even when the input names one",
    attempt: (ws, ctx) => ws.execute("run_tests", { command: `cat '${ctx.evilSecret}'` }),
    escaped: leaked,
  },
  {
    group: "run_tests",
    name: "the test command does not see the host environment's secrets",
    expect: "contained",
    setup: (ctx) => {
      process.env.TERFYN_ESCAPE_PROBE = SECRET;
      ctx.cleanups.push(() => {
        delete process.env.TERFYN_ESCAPE_PROBE;
      });
      ctx.testCommand = "env";
    },
    attempt: (ws) => ws.execute("run_tests", {}),
    escaped: leaked,
    check: (ctx) => {
      expect(ctx.outcome?.ok).toBe(true);
      expect(resultOf(ctx).stdout).toContain("CI=true");
    },
  },
  {
    group: "run_tests",
    name: "runs in the real root even after the root symlink is retargeted to <outside>",
    expect: "contained",
    setup: (ctx) => {
      symlinkedRoot(ctx);
      ctx.testCommand = "cat secret.txt";
    },
    attempt: (ws, ctx) => {
      swapForSymlink(ctx.wsRoot, ctx.outside);
      return ws.execute("run_tests", {});
    },
    escaped: leaked,
    check: (ctx) => {
      expect(resultOf(ctx).passed).toBe(false);
    },
  },
];

// ---------------------------------------------------------------------------------------------
// The harness: each row, against the real tool and against the naive one
// ---------------------------------------------------------------------------------------------

type Impl = "WorkspaceTool" | "NaiveWorkspace";

async function withCase(
  c: Case,
  impl: Impl,
  assert: (ctx: Ctx, before: Record<string, string>) => void,
): Promise<void> {
  const ctx = makeCtx();
  try {
    await c.setup?.(ctx);
    const before = snapshot(ctx);
    const config: WorkspaceConfig = {
      root: ctx.wsRoot,
      sandbox: await testSandbox(),
      beforeOpen: (abs) => ctx.beforeOpen?.(abs),
      ...(ctx.testCommand ? { testCommand: ctx.testCommand } : {}),
    };
    const ws: Workspace =
      impl === "WorkspaceTool"
        ? await WorkspaceTool.open(config)
        : await NaiveWorkspace.open(config);
    ctx.outcome = await c.attempt(ws, ctx);
    assert(ctx, before);
  } finally {
    for (const f of ctx.cleanups) f();
    rmSync(ctx.base, { recursive: true, force: true });
  }
}

describe("sandbox escape attempts", () => {
  it("has at least 30 rows, most of which defeat the naive check", () => {
    expect(CASES.length).toBeGreaterThanOrEqual(30);
    const alsoBlocked = CASES.filter((c) => c.naiveAlsoBlocks).length;
    expect(alsoBlocked).toBeLessThanOrEqual(Math.floor(CASES.length / 5));
  });

  for (const c of CASES) {
    describe(`${c.group}: ${c.name}`, () => {
      it.skipIf(Boolean(c.skip))("WorkspaceTool: refused, outside unchanged", async () => {
        await withCase(c, "WorkspaceTool", (ctx, before) => {
          const outcome = JSON.stringify(ctx.outcome);
          if ((c.expect ?? "refused") === "refused") {
            expect(ctx.outcome?.ok, outcome).toBe(false);
            expect(resultOf(ctx).error).toMatch(/\S/);
          }
          expect(ctx.hung, "the operation hung").toBe(false);
          expect(c.escaped(ctx), `escaped: ${outcome}`).toBe(false);
          expect(secretChanged(ctx), "a secret changed").toBe(false);
          expect(snapshot(ctx), "the world outside the root changed").toEqual(before);
          c.check?.(ctx);
        });
      });

      it.skipIf(Boolean(c.skip))(
        c.naiveAlsoBlocks
          ? "NaiveWorkspace: also blocks this one (naiveAlsoBlocks)"
          : "NaiveWorkspace: escapes (the row can fail)",
        async () => {
          await withCase(c, "NaiveWorkspace", (ctx) => {
            expect(c.escaped(ctx), JSON.stringify(ctx.outcome)).toBe(!c.naiveAlsoBlocks);
          });
        },
      );
    });
  }
});

// ---------------------------------------------------------------------------------------------
// Legitimate operations work (on both implementations: the naive one is a working workspace,
// so its escapes above come from its check, not from being broken)
// ---------------------------------------------------------------------------------------------

interface Legit {
  name: string;
  setup?: (ctx: Ctx) => void;
  run: (ws: Workspace, ctx: Ctx) => Promise<void>;
}

async function roundTrip(ws: Workspace, path: string, text: string): Promise<void> {
  expect(await write(path, text)(ws)).toMatchObject({ ok: true });
  expect(await read(path)(ws)).toEqual({ ok: true, result: { content: text } });
}

const LEGIT: Legit[] = [
  {
    name: "write creates nested new directories; read returns the content",
    run: async (ws, ctx) => {
      await roundTrip(ws, "src/pkg/deep/add.go", "package deep\n");
      expect(readFileSync(join(ctx.root, "src/pkg/deep/add.go"), "utf8")).toBe("package deep\n");
    },
  },
  {
    name: "./a//b.txt and a/./b.txt name the same inside file",
    run: async (ws) => {
      await roundTrip(ws, "./a//b.txt", "one");
      expect(await read("a/./b.txt")(ws)).toEqual({ ok: true, result: { content: "one" } });
    },
  },
  {
    name: "names that merely contain dots or encodings are plain names",
    run: async (ws, ctx) => {
      for (const p of ["..foo", "foo..", "...", "%2e%2e/x.txt", "..%2f..%2fx.txt", "a/..b/c"]) {
        await roundTrip(ws, p, `content of ${p}`);
      }
      expect(readdirSync(ctx.root).sort()).toEqual(
        ["...", "..%2f..%2fx.txt", "..foo", "%2e%2e", "README.md", "a", "foo.."].sort(),
      );
    },
  },
  {
    name: "overwriting an existing file replaces (truncates) its content",
    run: async (ws) => {
      await roundTrip(ws, "f.txt", "a long first version");
      await roundTrip(ws, "f.txt", "short");
    },
  },
  {
    name: "read through a symlink inside the root pointing inside the root",
    setup: (ctx) => {
      mkdirSync(join(ctx.root, "docs"));
      writeFileSync(join(ctx.root, "docs", "guide.md"), "# guide");
      symlinkSync("docs/guide.md", join(ctx.root, "GUIDE.md"));
    },
    run: async (ws) => {
      expect(await read("GUIDE.md")(ws)).toEqual({ ok: true, result: { content: "# guide" } });
    },
  },
  {
    name: "read and write through a symlinked directory inside the root pointing inside",
    setup: (ctx) => {
      mkdirSync(join(ctx.root, "real-dir"));
      symlinkSync("real-dir", join(ctx.root, "alias"));
    },
    run: async (ws, ctx) => {
      await roundTrip(ws, "alias/new/file.txt", "via alias");
      expect(readFileSync(join(ctx.root, "real-dir", "new", "file.txt"), "utf8")).toBe("via alias");
    },
  },
  {
    name: "a symlinked root works: files land in the real root",
    setup: (ctx) => {
      symlinkedRoot(ctx);
    },
    run: async (ws, ctx) => {
      await roundTrip(ws, "inside.txt", "fine");
      expect(readFileSync(join(ctx.root, "inside.txt"), "utf8")).toBe("fine");
      expect(await read("README.md")(ws)).toMatchObject({ ok: true });
    },
  },
  {
    name: "run_tests runs the configured command in the root",
    setup: (ctx) => {
      ctx.testCommand = "pwd -P; test -f README.md";
    },
    run: async (ws, ctx) => {
      const r = await ws.execute("run_tests", {});
      expect(r.ok).toBe(true);
      expect((r.result as { stdout: string }).stdout.trim()).toBe(ctx.root);
      expect((r.result as { exit_code: number }).exit_code).toBe(0);
    },
  },
];

describe("legitimate operations", () => {
  for (const l of LEGIT) {
    for (const impl of ["WorkspaceTool", "NaiveWorkspace"] as const) {
      it(`${impl}: ${l.name}`, async () => {
        const c: Case = {
          group: "legit",
          name: l.name,
          ...(l.setup ? { setup: l.setup } : {}),
          attempt: async (ws, ctx) => {
            await l.run(ws, ctx);
            return { ok: true, result: null };
          },
          escaped: () => false,
        };
        await withCase(c, impl, (ctx, before) => {
          expect(secretChanged(ctx)).toBe(false);
          expect(snapshot(ctx)).toEqual(before);
        });
      });
    }
  }
});

// ---------------------------------------------------------------------------------------------
// Documented behaviour
// ---------------------------------------------------------------------------------------------

describe("documented behaviour", () => {
  it("reading a hard link placed inside the root is allowed: it is inside by path", async () => {
    // Decision: a hard link is a real directory entry inside the root, not a pointer out of it;
    // there is no "real path" elsewhere to check (the /proc/self/fd path is the inside name).
    // Its content is whatever someone with access to both places put there — the same as if
    // they had copied the file in. The tool cannot create hard links, so an agent cannot use
    // this to reach a file of its choosing; it only sees what the workspace owner linked in
    // (e.g. pnpm's hard-linked node_modules, which reads must keep working for). Writing
    // through one is a different matter: see the "hard link" escape row.
    const ctx = makeCtx();
    try {
      linkSync(ctx.outsideSecret, join(ctx.root, "linked.txt"));
      const ws = await WorkspaceTool.open({ root: ctx.root });
      expect(await ws.execute("read_file", { path: "linked.txt" })).toEqual({
        ok: true,
        result: { content: OUTSIDE_SECRET },
      });
    } finally {
      rmSync(ctx.base, { recursive: true, force: true });
    }
  });

  it("the methods throw SandboxViolation (execute turns it into ok:false)", async () => {
    const ctx = makeCtx();
    try {
      symlinkSync(ctx.outside, join(ctx.root, "out"));
      const ws = await WorkspaceTool.open({ root: ctx.root });
      await expect(ws.readFile("../sandbox-evil/secret.txt")).rejects.toBeInstanceOf(
        SandboxViolation,
      );
      await expect(ws.readFile("out/secret.txt")).rejects.toBeInstanceOf(SandboxViolation);
      await expect(ws.writeFile(ctx.evilSecret, "x")).rejects.toBeInstanceOf(SandboxViolation);
      await expect(ws.writeFile("out/new.txt", "x")).rejects.toBeInstanceOf(SandboxViolation);
      await expect(ws.runTests()).rejects.toBeInstanceOf(SandboxViolation);
      expect(() => ws.components("a/../../x")).toThrow(SandboxViolation);
      expect(secretChanged(ctx)).toBe(false);
    } finally {
      rmSync(ctx.base, { recursive: true, force: true });
    }
  });

  it("run_tests stops a command that outlives its timeout", async () => {
    const ctx = makeCtx();
    try {
      const ws = await WorkspaceTool.open({
        sandbox: await testSandbox(),
        root: ctx.root,
        testCommand: "sleep 30",
        testTimeoutMs: 300,
      });
      const started = Date.now();
      const r = await ws.execute("run_tests", {});
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(r).toMatchObject({ ok: true, result: { timed_out: true, passed: false } });
    } finally {
      rmSync(ctx.base, { recursive: true, force: true });
    }
  });

  it("read_file refuses a file larger than maxReadBytes", async () => {
    const ctx = makeCtx();
    try {
      writeFileSync(join(ctx.root, "big.txt"), "x".repeat(2048));
      const ws = await WorkspaceTool.open({ root: ctx.root, maxReadBytes: 1024 });
      expect(await ws.execute("read_file", { path: "big.txt" })).toMatchObject({ ok: false });
      expect(statSync(join(ctx.root, "big.txt")).size).toBe(2048);
    } finally {
      rmSync(ctx.base, { recursive: true, force: true });
    }
  });
});
