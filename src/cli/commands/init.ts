/**
 * `terfyn init [DIR]`: scaffolds a project a newcomer can validate, plan and test at once: one
 * agent on the mock model, the native workspace tool, a schema, a policy, a capability test,
 * and the GitHub Action's workflow with the base's judge configuration. Nothing is ever
 * overwritten: a project file that exists stops it before anything is written; a workflow file
 * that exists is left alone and named. Then it validates and tests what it wrote.
 */

import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { gitToplevel, realPathOf } from "../../adapters/fs/real-path.ts";
import { escapeTerminalText } from "../../core/render/terminal-text.ts";
import { runCapabilityTests } from "../../core/testing/capability-tests.ts";
import { parseFlags } from "../args.ts";
import { refuseStdinDirectories } from "../file-args.ts";
import { type CliIo, UsageError, UserError } from "../io.ts";
import { VERSION } from "../version.ts";
import { loadProject, printDiagnostics } from "./project-context.ts";

export const INIT_HELP = `Usage: terfyn init [DIR]

Create a Terfyn project in DIR (default: .): terfyn.yaml, main.agent (one agent on the mock
model), tools.yaml (the workspace tool), schemas.yaml, policies.yaml, tests/capabilities.yaml,
and, at the repository's root, .github/workflows/terfyn.yml (the GitHub Action) and
.github/terfyn.yml (who may approve, and what fails). Nothing existing is overwritten. The new
project is validated and its capability tests run; then try \`terfyn plan --project DIR\`.

Options:
  -h, --help  show this help
`;

const PROJECT_FILES = (name: string): Record<string, string> => ({
  "terfyn.yaml": `# The project: every .agent file and YAML resource below this directory belongs to it.
apiVersion: terfyn.dev/v1
kind: Project
metadata: { name: ${name} }
spec:
  state: .terfyn/state.json
  runs: .terfyn/runs
`,
  "main.agent": `// One agent, bounded by its grants: it may read the workspace, and nothing else.
defaults {
  model "mock/gpt-4"
  maxTurns 8
}

tool workspace {}

agent Assistant {
  input Task
  output Task
  instructions "Read the files the task names and answer in the task's notes."
  grants {
    tool.workspace.read_file
  }
}

workflow Answer(input: Task) -> Task
effects { workspace.read }
{
  return Assistant(input)
}
`,
  "tools.yaml": `# The native workspace tool: each operation's effect is fixed by the adapter.
apiVersion: terfyn.dev/v1
kind: Tool
metadata: { name: workspace }
spec:
  adapter: workspace
  operations:
    read_file:
      effects: [workspace.read]
      idempotent: true
      input: { type: object, required: [path], properties: { path: { type: string } } }
    write_file:
      effects: [workspace.write]
      idempotent: true
      input: { type: object, required: [path, content], properties: { path: { type: string }, content: { type: string } } }
`,
  "schemas.yaml": `apiVersion: terfyn.dev/v1
kind: Schema
metadata: { name: Task }
spec:
  type: object
  required: [task]
  properties:
    task: { type: string }
    notes: { type: string }
`,
  "policies.yaml": `# Guards: a pull request that relaxes one needs an approval.
apiVersion: terfyn.dev/v1
kind: Policy
metadata: { name: guards }
spec:
  rules:
    - requireApproval: { effect: workspace.write }
    - maxLoopLimit: 5
`,
  "tests/capabilities.yaml": `# Checked by \`terfyn test\` with no model: the Assistant never writes.
apiVersion: terfyn.dev/v1
kind: CapabilityTest
metadata: { name: capabilities }
spec:
  assertions:
    - forbidEffect: { agent: Assistant, effect: workspace.write }
    - workflowEffects: { workflow: Answer, equals: [workspace.read] }
`,
});

/** The Action pinned at this CLI's major release tag (docs/github-action.md, "Pinning"). */
const ACTION = `terfyn/terfyn@v${VERSION.split(".")[0]}`;

/** The Action's workflow, as docs/github-action.md recommends it, planning `project`. */
export function actionWorkflow(project: string): string {
  return `# .github/workflows/terfyn.yml
name: terfyn
on:
  pull_request:
    types: [opened, synchronize, reopened, edited]   # edited: a new base is re-planned
  merge_group:
  issue_comment:
    types: [created]
concurrency:
  group: terfyn-\${{ github.event.pull_request.number || github.event.issue.number || github.ref }}
  cancel-in-progress: false
permissions: {}
jobs:
  plan:
    if: github.event_name != 'issue_comment'
    runs-on: ubuntu-latest
    permissions:
      contents: read
      pull-requests: write   # the sticky comment
      issues: write          # comments live in the issues API
      checks: write          # check run with annotations
      statuses: write        # terfyn/approval
    steps:
      - uses: actions/checkout@v6   # the merge commit; the Action fetches base and head itself
      - id: terfyn
        uses: ${ACTION}
        with:
          project: ${project}
  approve:
    if: github.event.issue.pull_request && contains(github.event.comment.body, '/terfyn approve')
    runs-on: ubuntu-latest
    permissions:
      contents: read
      pull-requests: write   # the reply and the sticky comment
      issues: write
      checks: write
      statuses: write
    steps:
      - uses: actions/checkout@v6
      - uses: ${ACTION}
        with:
          project: ${project}
`;
}

const JUDGE = `# .github/terfyn.yml on the base branch: who may approve, and what fails
approvers: maintain
fail-on: widening
`;

export async function initCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags("init", argv, {});
  if (values.help) {
    io.stdout(INIT_HELP);
    return 0;
  }
  if (positionals.length > 1)
    throw new UsageError(`init: one directory at most, not ${positionals.length}`);
  refuseStdinDirectories("init", {
    DIR: { value: positionals[0], what: "where the project is created" },
  });
  const dir = resolve(io.cwd, positionals[0] ?? ".");
  const where = relative(io.cwd, dir) || ".";
  const name =
    basename(dir)
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, "-")
      .replace(/^-+|-+$/g, "") || "agents";
  const files = PROJECT_FILES(name);
  const taken = Object.keys(files).filter((f) => existsSync(join(dir, f)));
  if (taken.length > 0)
    throw new UserError(
      `init: ${escapeTerminalText(where)} already has ${taken.map((f) => escapeTerminalText(f)).join(", ")}; nothing was written (init never overwrites)`,
    );
  // The Action's files go to the repository's root; outside a repository, beside the project.
  const top = gitToplevel(dir) ?? dir;
  const projectPath = relative(realPathOf(top), realPathOf(dir)).split(sep).join("/") || ".";
  const ci: Record<string, string> = {
    ".github/workflows/terfyn.yml": actionWorkflow(projectPath),
    ".github/terfyn.yml": JUDGE,
  };
  for (const [file, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, file)), { recursive: true });
    // wx: created here, or an error; never written over something that appeared meanwhile.
    await writeFile(join(dir, file), text, { flag: "wx" });
  }
  const created = Object.keys(files).map((f) => join(where, f));
  const kept: string[] = [];
  for (const [file, text] of Object.entries(ci)) {
    const path = join(top, file);
    const shown = relative(io.cwd, path) || path;
    if (existsSync(path)) {
      kept.push(shown);
      continue;
    }
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text, { flag: "wx" });
    created.push(shown);
  }
  io.stdout(`Created:\n${created.map((f) => `  ${escapeTerminalText(f)}`).join("\n")}\n`);
  if (kept.length > 0)
    io.stdout(
      `Left as they are (they exist):\n${kept.map((f) => `  ${escapeTerminalText(f)}`).join("\n")}\n`,
    );
  const ctx = await loadProject(io, dir);
  const errors = ctx.diagnostics.filter((d) => d.severity === "error");
  printDiagnostics(io, ctx, ctx.diagnostics);
  const tests = runCapabilityTests(ctx.validation);
  if (errors.length > 0 || tests.failed > 0) {
    io.stderr(
      `terfyn init: the new project does not validate (${errors.length} errors, ${tests.failed} failed assertions); please report this\n`,
    );
    return 1;
  }
  io.stdout(
    `\nValid: ${ctx.validation.project.agents.size} agent, ${tests.passed} capability assertions pass.\nNext: terfyn plan --project ${escapeTerminalText(where)}\n`,
  );
  return 0;
}
