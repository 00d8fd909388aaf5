/**
 * The validation pipeline: files → resolved project → every static rule → diagnostics.
 *
 * This is what `terfyn validate` runs and what plan, test and run build on. Pure and total:
 * any input yields a project (possibly partial) and diagnostics, never an exception.
 */
import { analyseProject, type ProjectAnalysis } from "./analysis/analysis.ts";
import { checkEffects } from "./analysis/check-effects.ts";
import { loadResources } from "./config/load-resources.ts";
import { type Diagnostic, hasErrors, sortDiagnostics } from "./diagnostics.ts";
import { isHostPath } from "./hosts/host-paths.ts";
import { hostAgentsOf } from "./hosts/hosts.ts";
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
  const excludes = projectExcludes(files);
  const inProject = files.filter((f) => belongsToProject(f.path, excludes));
  const { project, diagnostics } = resolveProject(inProject.filter((f) => !isHostPath(f.path)));
  const hosts = hostAgentsOf(inProject.filter((f) => isHostPath(f.path)));
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

/** The `spec.exclude` directories of the project document, read before the full load. */
function projectExcludes(files: readonly ProjectFile[]): string[] {
  const settings = files.find((f) => f.path === PROJECT_FILE);
  if (!settings) return [];
  for (const r of loadResources(settings.path, settings.text).resources) {
    if (r.kind === "Project")
      return (r.value as { spec: { exclude?: string[] } }).spec.exclude ?? [];
  }
  return [];
}
