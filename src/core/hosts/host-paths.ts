/**
 * Where each host keeps its configuration in a repository: the conventional paths a project
 * and a plan read. Pure.
 */

/** Claude Code's settings, least specific first. */
export const CLAUDE_SETTINGS_PATHS = [".claude/settings.json", ".claude/settings.local.json"];

/** The project's MCP servers, which Claude Code offers its agent. */
export const MCP_JSON = ".mcp.json";

/** OpenAI Codex's project configuration. */
export const CODEX_CONFIG = ".codex/config.toml";

/** GitHub Copilot's repository settings, then its local (personal, uncommitted) overrides. */
export const COPILOT_SETTINGS_PATHS = [
  ".github/copilot/settings.json",
  ".github/copilot/settings.local.json",
];

/** The MCP servers Copilot CLI reads from a repository besides `.mcp.json`. */
export const COPILOT_MCP_JSON = ".github/mcp.json";

/**
 * Where a project lists a file of Copilot's managed settings (`managed-settings.json`, deployed
 * to /etc/github-copilot/ and its platform equivalents): only through `spec.hosts`, since no
 * repository path is conventional for it.
 */
export const COPILOT_MANAGED_ROLE = "github-copilot/managed-settings.json";

/** Copilot's repository hooks directory: every `*.json` in it is a hooks file. */
export const COPILOT_HOOKS_DIR = ".github/hooks";

/** Whether a path is one of Copilot's repository hooks files. */
export function isCopilotHooksPath(path: string): boolean {
  return /^\.github\/hooks\/[^/]+\.json$/.test(path);
}

/** Claude Code's slash commands (namespaced in subdirectories) and skills. */
export function isClaudeCommandPath(path: string): boolean {
  return (
    /^\.claude\/commands\/(?:[^/]+\/)*[^/]+\.md$/.test(path) ||
    /^\.claude\/skills\/[^/]+\/SKILL\.md$/.test(path)
  );
}

/** Claude Code's project subagents. */
export function isClaudeAgentPath(path: string): boolean {
  return /^\.claude\/agents\/[^/]+\.md$/.test(path);
}

/** The Markdown files through which a repository gives Claude Code authority (claude-markdown.ts). */
export function isClaudeMarkdownPath(path: string): boolean {
  return isClaudeCommandPath(path) || isClaudeAgentPath(path);
}

/** The directories those files live in, listed (recursively) to find them. */
export const CLAUDE_MARKDOWN_DIRS = [".claude/commands", ".claude/skills", ".claude/agents"];

/** Every host configuration file a project or a plan reads, by its conventional path. */
export const HOST_PATHS = [
  ...CLAUDE_SETTINGS_PATHS,
  MCP_JSON,
  CODEX_CONFIG,
  ...COPILOT_SETTINGS_PATHS,
  COPILOT_MCP_JSON,
];

/** GitHub workflow files, where claude-code-action steps (and gh-aw workflows) live. */
export const WORKFLOWS_DIR = ".github/workflows";

/** Whether a path is a GitHub workflow file (where claude-code-action steps live). */
export function isWorkflowPath(path: string): boolean {
  return /^\.github\/workflows\/[^/]+\.ya?ml$/.test(path);
}

/** Whether a path is a gh-aw workflow source (`.github/workflows/<name>.md`). */
export function isGhAwPath(path: string): boolean {
  return /^\.github\/workflows\/[^/]+\.md$/.test(path);
}

/** Whether a path is a gh-aw shared component (`.github/workflows/<dir>/…/<name>.md`), read through imports. */
export function isGhAwSharedPath(path: string): boolean {
  return /^\.github\/workflows\/(?:[^/]+\/)+[^/]+\.md$/.test(path);
}

/**
 * The directories whose files are host files by their name (workflows and shared gh-aw
 * components, Copilot's hooks, Claude Code's commands, skills and subagents): listed in full to
 * find them, since their files nest.
 */
export const HOST_DIRS = [WORKFLOWS_DIR, COPILOT_HOOKS_DIR, ...CLAUDE_MARKDOWN_DIRS];

/** Whether a project-relative path is a host configuration file (hosts.ts reads each kind). */
export function isHostPath(path: string): boolean {
  return (
    HOST_PATHS.includes(path) ||
    isWorkflowPath(path) ||
    isGhAwPath(path) ||
    isGhAwSharedPath(path) ||
    isCopilotHooksPath(path) ||
    isClaudeMarkdownPath(path)
  );
}

/**
 * The project a repository without terfyn.yaml is, when its root holds host files (the Action
 * plans it as it plans any project): no agents of its own, its hosts' agents only.
 */
export const HOST_ONLY_PROJECT_NAME = "hosts";
export const HOST_ONLY_PROJECT_YAML = `apiVersion: terfyn.dev/v1
kind: Project
metadata:
  name: ${HOST_ONLY_PROJECT_NAME}
spec: {}
`;

/** The value a host-only project has in a tree's project map, where a terfyn.yaml has its blob id. */
export const HOST_ONLY_MARK = "host-only";

/** The kinds a project's `spec.hosts` may name, and the conventional path each stands for. */
export const HOST_KIND_ROLES: Readonly<Record<string, (path: string) => string>> = {
  "claude-code": () => CLAUDE_SETTINGS_PATHS[0] as string,
  "claude-code-local": () => CLAUDE_SETTINGS_PATHS[1] as string,
  mcp: () => MCP_JSON,
  codex: () => CODEX_CONFIG,
  "claude-code-action": (p) =>
    `${WORKFLOWS_DIR}/${p.slice(p.lastIndexOf("/") + 1).replace(/\.[^.]*$/, "")}.yml`,
  "gh-aw": (p) => `${WORKFLOWS_DIR}/${p.slice(p.lastIndexOf("/") + 1).replace(/\.[^.]*$/, "")}.md`,
  copilot: () => COPILOT_SETTINGS_PATHS[0] as string,
  "copilot-local": () => COPILOT_SETTINGS_PATHS[1] as string,
  "copilot-mcp": () => COPILOT_MCP_JSON,
  "copilot-managed": () => COPILOT_MANAGED_ROLE,
  "copilot-hooks": (p) =>
    `${COPILOT_HOOKS_DIR}/${p.slice(p.lastIndexOf("/") + 1).replace(/\.[^.]*$/, "")}.json`,
};

/** A file as a host reads it: the conventional path it stands for (its own, unless listed). */
export function roleOf(file: { path: string; role?: string }): string {
  return file.role ?? file.path;
}
