/**
 * The validation pipeline: files → resolved project → every static rule → diagnostics.
 *
 * This is what `terfyn validate` runs and what plan, test and run build on. Pure and total:
 * any input yields a project (possibly partial) and diagnostics, never an exception.
 */

import { analyseProject, type ProjectAnalysis } from "./analysis/analysis.ts";
import { checkEffects } from "./analysis/check-effects.ts";
import { loadResources } from "./config/load-resources.ts";
import { type Diagnostic, diagnostic, hasErrors, sortDiagnostics } from "./diagnostics.ts";
import { HOST_KIND_ROLES, isHostPath } from "./hosts/host-paths.ts";
import { hostAgentsOf } from "./hosts/hosts.ts";
import { own } from "./hosts/json-nodes.ts";
import { checkWorkflows } from "./model/check-workflow.ts";
import type { ResolvedProject } from "./model/project.ts";
import {
  belongsToProject,
  PROJECT_FILE,
  type ProjectFile,
  resolveProject,
} from "./model/resolve-project.ts";
import { SourceText } from "./source.ts";

export interface ValidationResult {
  project: ResolvedProject;
  /** The project's authority analysis, computed once here and read by plan and tests. */
  analysis: ProjectAnalysis;
  diagnostics: Diagnostic[];
  ok: boolean;
}

export function validateProject(files: readonly ProjectFile[]): ValidationResult {
  // Read once: computing it inside the filter re-parsed terfyn.yaml for every file.
  // The project document is read once before the full load: what it excludes and lists.
  const spec = projectSpecOf(files.find((f) => f.path === PROJECT_FILE)?.text);
  const excludes = spec.exclude ?? [];
  const listed = spec.hosts ?? [];
  const role = new Map(
    listed.map((h) => [h.path, own(HOST_KIND_ROLES, h.kind)?.(h.path) ?? h.path]),
  );
  const inProject = files.filter((f) => belongsToProject(f.path, excludes) || role.has(f.path));
  const isHost = (f: ProjectFile) => role.has(f.path) || isHostPath(f.path);
  const { project, diagnostics } = resolveProject(inProject.filter((f) => !isHost(f)));
  const hosts = hostAgentsOf(
    inProject.filter(isHost).map((f) => {
      const r = role.get(f.path);
      return r !== undefined && r !== f.path ? { ...f, role: r } : f;
    }),
  );
  diagnostics.push(...unlistedHosts(listed, inProject));
  if (hosts.length > 0) project.hostAgents = new Map(hosts.map((h) => [h.name, h]));
  for (const host of hosts) {
    for (const f of host.files) project.sources.set(f.path, new SourceText(f.path, f.text));
    diagnostics.push(...host.diagnostics);
  }
  diagnostics.push(...checkWorkflows(project));
  const analysis = analyseProject(project);
  diagnostics.push(...checkEffects(project, analysis));
  const sorted = sortDiagnostics(dedupe(diagnostics));
  return { project, analysis, diagnostics: sorted, ok: !hasErrors(sorted) };
}

function dedupe(diagnostics: Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  return diagnostics.filter((d) => {
    const key = `${d.code}|${d.span.file}|${d.span.line}|${d.span.column}|${d.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * The host files terfyn.yaml lists in `spec.hosts` (`{kind, path}`, paths relative to the
 * project), read before the full load: the readers read these files too. An unreadable or
 * invalid document lists none (its own diagnostics say why).
 */
export function listedHosts(projectYaml: string | undefined): { kind: string; path: string }[] {
  return projectSpecOf(projectYaml).hosts ?? [];
}

/** The project document's `spec.exclude` and `spec.hosts`, or nothing when it does not load. */
function projectSpecOf(projectYaml: string | undefined): {
  exclude?: string[];
  hosts?: { kind: string; path: string }[];
} {
  if (projectYaml === undefined) return {};
  for (const r of loadResources(PROJECT_FILE, projectYaml).resources) {
    if (r.kind === "Project")
      return (r.value as { spec: { exclude?: string[]; hosts?: { kind: string; path: string }[] } })
        .spec;
  }
  return {};
}

/** A `spec.hosts` entry whose file the project does not have: what it lists guards nothing. */
function unlistedHosts(
  listed: readonly { kind: string; path: string }[],
  files: readonly ProjectFile[],
): Diagnostic[] {
  const project = files.find((f) => f.path === PROJECT_FILE);
  return listed
    .filter((h) => !files.some((f) => f.path === h.path))
    .map((h) => {
      const line = project ? lineOfText(project.text, h.path) : 1;
      return diagnostic(
        "TF3011",
        { file: PROJECT_FILE, line, column: 1, endLine: line, endColumn: 1 },
        `spec.hosts lists ${h.path} (${h.kind}), which the project does not have as a regular file: nothing of that host is planned`,
        {
          hint: "fix the path (relative to the project, not under fixtures/, .terfyn/ or node_modules/), or remove the entry",
        },
      );
    });
}

function lineOfText(text: string, needle: string): number {
  const i = text.split("\n").findIndex((l) => l.includes(needle));
  return i < 0 ? 1 : i + 1;
}
