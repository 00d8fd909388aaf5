/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: a guard is source text, template placeholders included */
/**
 * The guards of confinement (issue 20): the sandbox every executed command runs in, the gate
 * that a refusal wins, and the commit built from the approved bytes, each with the test that
 * must catch its removal. Run by scripts/mutate.ts (the `confinement` set).
 */
import type { Mutation } from "./mutation.ts";

const SANDBOX_TEST = "__tests__/adapters/sandbox.test.ts";

export const CONFINEMENT: Mutation[] = [
  {
    group: "sandbox",
    guard: "a new network namespace unless the command may use the network",
    file: "src/adapters/sandbox/bubblewrap-args.ts",
    find: '...(command.network ? [] : ["--unshare-net"]),',
    replace: "...([] as string[]),",
    test: SANDBOX_TEST,
    filter: "no network",
  },
  {
    group: "sandbox",
    guard: "a PID namespace of its own: no other process's /proc/<pid>/environ",
    file: "src/adapters/sandbox/bubblewrap-args.ts",
    find: '    "--unshare-pid",\n',
    replace: "",
    test: SANDBOX_TEST,
    filter: "environment is unreadable",
  },
  {
    group: "sandbox",
    guard: "the worktree's .git (which leads to the user's repository) is masked",
    file: "src/adapters/sandbox/bubblewrap-args.ts",
    find: '    posix.join(writable, ".git"),\n',
    replace: "",
    test: SANDBOX_TEST,
    filter: "git directories and the real HOME",
  },
  {
    group: "sandbox",
    guard: "the system's secret files are masked",
    file: "src/adapters/sandbox/bubblewrap-args.ts",
    find: "  for (const path of MASKED_SYSTEM_FILES) mask(args, path, host.kindOf(path));\n",
    replace: "",
    test: SANDBOX_TEST,
    filter: "secret files are masked",
  },
  {
    group: "sandbox",
    guard: "a hidden path below the writable directory is masked",
    file: "src/adapters/sandbox/bubblewrap-args.ts",
    find: "    if (bound.some((b) => isWithin(path, b))) mask(args, path, host.kindOf(path));",
    replace: "    if (false) mask(args, path, host.kindOf(path));",
    test: SANDBOX_TEST,
    filter: "hidden path below",
  },
  {
    group: "sandbox",
    guard: "the sandbox dies with Terfyn (a timeout's kill reaches the sandbox's own session)",
    file: "src/adapters/sandbox/bubblewrap-args.ts",
    find: '    "--die-with-parent",\n',
    replace: "",
    test: SANDBOX_TEST,
    filter: "timeout kills the whole sandbox",
  },
  {
    group: "sandbox",
    guard: "the system is bound read-only",
    file: "src/adapters/sandbox/bubblewrap-args.ts",
    find: '      args.push("--ro-bind", path, path);\n      bound.push(path);\n    }\n  }\n  for (const path of MASKED',
    replace:
      '      args.push("--bind", path, path);\n      bound.push(path);\n    }\n  }\n  for (const path of MASKED',
    test: SANDBOX_TEST,
    filter: "read-only and its secret",
  },
  {
    group: "fail-closed",
    guard: "a bwrap that cannot make the namespaces refuses, instead of running anything",
    file: "src/adapters/sandbox/bubblewrap.ts",
    find: "    if (exit.code !== 0) {",
    replace: "    if (false) {",
    test: SANDBOX_TEST,
    filter: "cannot make namespaces",
  },
  {
    group: "fail-closed",
    guard: "run_tests without a sandbox refuses",
    file: "src/adapters/workspace/workspace-tool.ts",
    find: "    if (!sandbox)\n",
    replace: "    if (false)\n",
    test: "__tests__/run-tests-tool.test.ts",
    filter: "without a sandbox",
  },
  {
    group: "fail-closed",
    guard: "a review run's commands run in the sandbox unless --unconfined",
    file: "src/cli/commands/review.ts",
    find: "const sandbox = await openSandbox({ env: io.env, unconfined });",
    replace: "const sandbox = await openSandbox({ env: io.env, unconfined: true });",
    test: "__tests__/confinement-attacks.test.ts",
    filter: "confined:",
  },
  {
    group: "gates",
    guard: "a refusal of the bytes wins over any approval of them",
    file: "src/core/review/gates.ts",
    find: "  if (refusal)\n",
    replace: "  if (false)\n",
    test: "__tests__/review-machinery.test.ts",
    filter: "refusal of the bytes wins",
  },
  {
    group: "publish",
    guard: "the commit holds exactly the approved bytes",
    file: "src/adapters/git/branch-writer.ts",
    find: "        if (want !== got)\n",
    replace: "        if (false)\n",
    test: "__tests__/git-branch-writer.test.ts",
    filter: "not the approved ones",
  },
  {
    group: "publish",
    guard: "no symbolic link is committed",
    file: "src/adapters/git/branch-writer.ts",
    find: '      if (now.kind === "symlink")\n        throw new BranchWriterRefusal(\n          "bad-path",\n          `${p} is a symbolic link in the work tree (to ${JSON.stringify(now.target)}); a run commits',
    replace:
      '      if (false)\n        throw new BranchWriterRefusal(\n          "bad-path",\n          `${p} is a symbolic link in the work tree (to ${JSON.stringify(now.target)}); a run commits',
    test: "__tests__/git-branch-writer.test.ts",
    filter: "symbolic link where a planned file",
  },
  {
    group: "publish",
    guard: "a link is never read as a deleted file (what compose binds and shows)",
    file: "src/adapters/git/branch-writer.ts",
    find: '    if (now?.kind === "symlink")\n',
    replace: "    if (false)\n",
    test: "__tests__/git-branch-writer.test.ts",
    filter: "symbolic link where a planned file",
  },
  {
    group: "publish",
    guard: "no mode change is committed",
    file: "src/adapters/git/branch-writer.ts",
    find: '        if (was ? executable !== (mode === "100755") : executable)\n',
    replace: "        if (false)\n",
    test: "__tests__/git-branch-writer.test.ts",
    filter: "mode change",
  },
];
