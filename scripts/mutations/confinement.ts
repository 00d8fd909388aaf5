/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: a guard is source text, template placeholders included */
/**
 * The guards of confinement (issue 20): the sandbox every executed command runs in and the one
 * git door, each with the test that must catch its removal. Run by scripts/mutate.ts (the
 * `confinement` set). The gate that a refusal wins and the commit of the approved bytes are in
 * the doctrine set; the App's and the Action's refusals without a sandbox in the app set.
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
    group: "git",
    guard: "no git process reads replace objects",
    file: "src/adapters/git/git-process.ts",
    find: '  GIT_NO_REPLACE_OBJECTS: "1",\n',
    replace: "",
    test: "__tests__/adapters/git-process.test.ts",
    filter: "replace object",
  },
  {
    group: "git",
    guard: "push names the remote's receive-pack on the command line (config never read)",
    file: "src/adapters/git/branch-writer.ts",
    find: "        `--receive-pack=${RECEIVE_PACK}`,\n        url,\n        `${local}:${ref}`,",
    replace: "        url,\n        `${local}:${ref}`,",
    test: "__tests__/adapters/git-process.test.ts",
    filter: "uploadpack and receivepack",
  },
  {
    group: "git",
    guard:
      "remote commands run in a transport repository that reads none of the repository's config",
    file: "src/adapters/git/branch-writer.ts",
    find: "        runGit(dir, args, { ...options, env: { ...this.#env, ...options.env, GIT_DIR: dir } }),",
    replace: "        this.#run(args, options),",
    test: "__tests__/adapters/git-process.test.ts",
    filter: "insteadOf, pushInsteadOf",
  },
  {
    group: "sandbox",
    guard: "a command tool has the network only when its operation declares network.egress",
    file: "src/adapters/workspace/tool-router.ts",
    find: '    const network = tool.operations.get(op)?.effects.includes("network.egress") ?? false;',
    replace: "    const network = true;",
    test: "__tests__/command-tool.test.ts",
    filter: "network only in an operation",
  },
  {
    group: "sandbox",
    guard: "the App's secret files are hidden from every command",
    file: "src/adapters/sandbox/bubblewrap.ts",
    find: "    const hide = [...this.alwaysHidden, ...(command.hide ?? [])].map((h) => realOrSelf(h));",
    replace: "    const hide = [...(command.hide ?? [])].map((h) => realOrSelf(h));",
    test: "__tests__/adapters/sandbox.test.ts",
    filter: "secret files where the system is bound",
  },
];
