/**
 * `terfyn plan` in a directory without terfyn.yaml that holds host configurations (Claude Code's
 * `.claude/settings.json` and `.claude/settings.local.json`, `.mcp.json`, Codex's
 * `.codex/config.toml`): the files are read from the directory, and with `--against REF` as that
 * revision has them (git objects, no checkout), and planned as host agents (`Host/claude-code`,
 * `Host/codex`: core/hosts/hosts.ts). stderr names the files read and their hosts.
 */
import { lstat, readdir, readFile } from "node:fs/promises";
import { join, sep } from "node:path";
import { diagnostic } from "../../core/diagnostics.ts";
import type { HostFile } from "../../core/hosts/claude-settings.ts";
import {
  HOST_DIRS,
  HOST_PATHS,
  isGhAwSharedPath,
  isHostPath,
} from "../../core/hosts/host-paths.ts";
import { hostPlanJson, hostPlanSummary, hostPlanText } from "../../core/hosts/host-plan.ts";
import { HOST_KINDS, hostAgentsOf, planHosts } from "../../core/hosts/hosts.ts";
import { diagnosticsToJson, renderDiagnosticsText } from "../../core/render/diagnostics-text.ts";
import { escapeTerminalText } from "../../core/render/terminal-text.ts";
import { SourceText } from "../../core/source.ts";
import { type CliIo, UsageError, useColor } from "../io.ts";

/** The host configuration files present in `root` (links included, to be refused by name). */
export async function hostFilesIn(root: string): Promise<string[]> {
  const out: string[] = [];
  const listed: string[] = [];
  // Links are listed, never followed.
  for (const dir of HOST_DIRS) {
    const names = await readdir(join(root, dir), { recursive: true }).catch(() => [] as string[]);
    listed.push(...names.map((n) => `${dir}/${n.split(sep).join("/")}`).sort());
  }
  for (const p of [...HOST_PATHS, ...listed]) {
    if (!isHostPath(p)) continue;
    try {
      const st = await lstat(join(root, p));
      // A workflow counts when it runs an agent (or cannot be read: then nobody can say it does
      // not); a link is listed, to be refused by name.
      if (HOST_PATHS.includes(p) || isGhAwSharedPath(p) || !st.isFile()) out.push(p);
      else if (hostAgentsOf([{ path: p, text: await readFile(join(root, p), "utf8") }]).length > 0)
        out.push(p);
    } catch {
      // absent
    }
  }
  return out;
}

export async function hostPlanCommand(
  io: CliIo,
  root: string,
  present: readonly string[],
  options: { against?: string; format: string; detailedExitcode: boolean },
): Promise<number> {
  if (options.format !== "text" && options.format !== "json")
    throw new UsageError(
      `plan: a plan of host configurations prints text or json, not ${options.format}`,
    );
  const head: HostFile[] = [];
  const refused = [];
  for (const path of present) {
    const full = join(root, path);
    const st = await lstat(full);
    if (!st.isFile()) {
      // A link is not followed: what it points to is not part of the reviewed tree.
      refused.push(
        diagnostic(
          "TF6001",
          { file: path, line: 1, column: 1, endLine: 1, endColumn: 1 },
          `${path} is not a regular file (a link or a directory): it is not read, and a plan cannot say what it allows`,
        ),
      );
      continue;
    }
    head.push({ path, text: await readFile(full, "utf8") });
  }
  const base = options.against === undefined ? [] : await hostFilesAt(root, options.against);
  // A host is named when a file of its own is read (Copilot also reads Claude Code's files).
  const hosts = HOST_KINDS.filter(
    (k) =>
      present.some((p) => k.owns(p)) &&
      (k.agentOf(head.filter((f) => k.owns(f.path))) !== undefined ||
        head.every((f) => !k.owns(f.path))),
  )
    .map((k) => k.label)
    .join(", ");
  io.stderr(
    `terfyn plan: no terfyn.yaml here; ${present.length === 0 ? "no host configuration left" : `read the host configuration${present.length === 1 ? "" : "s"} ${present.map((p) => escapeTerminalText(p)).join(", ")} (${hosts})`}${options.against ? `, and ${base.length === 0 ? "none" : base.map((f) => escapeTerminalText(f.path)).join(", ")} at ${escapeTerminalText(options.against)}` : ""}\n`,
  );
  const plans = planHosts(base, head);
  const diagnostics = [...refused, ...plans.flatMap((p) => p.diagnostics)];
  if (diagnostics.length > 0)
    io.stderr(
      `${renderDiagnosticsText(diagnostics, {
        sources: new Map(head.map((f) => [f.path, new SourceText(f.path, f.text)])),
        displayPath: (f) => f,
        color: useColor(io),
      })}\n\n`,
    );
  const against = options.against ?? null;
  io.stdout(
    options.format === "json"
      ? `${JSON.stringify({ ...hostPlanJson(plans, against), diagnostics: diagnosticsToJson(diagnostics, (f) => f).diagnostics }, null, 2)}\n`
      : hostPlanText(plans, against),
  );
  if (diagnostics.some((d) => d.severity === "error")) return 1;
  if (options.detailedExitcode) return hostPlanSummary(plans).has_changes ? 2 : 0;
  return 0;
}

/** The host files as `revision` has them (git objects; a link or an absent file is not read). */
export async function hostFilesAt(root: string, revision: string): Promise<HostFile[]> {
  const { listTree, locateProject, readFileAtRevision, resolveTree } = await import(
    "../../adapters/git/read-revision.ts"
  );
  const { top, prefix } = await locateProject(root);
  const out: HostFile[] = [];
  const at = (p: string) => (prefix ? `${prefix}/${p}` : p);
  const { tree } = await resolveTree(top, revision);
  const listed: string[] = [];
  for (const dir of HOST_DIRS)
    listed.push(
      ...(await listTree(top, tree, at(dir)))
        .map((e) => (prefix ? e.path.slice(prefix.length + 1) : e.path))
        .filter((p) => isHostPath(p) && !HOST_PATHS.includes(p))
        .sort(),
    );
  for (const path of [...HOST_PATHS, ...listed]) {
    const r = await readFileAtRevision(top, revision, at(path));
    if (r.kind === "file") out.push({ path, text: r.text });
  }
  return out;
}
