/**
 * gh-aw's `imports:`: shared components (`.github/workflows/shared/…/*.md`) whose front matter
 * gh-aw merges into every workflow that imports them, directly or through another import. Only
 * these fields are merged (gh-aw's reuse reference): `tools`, `mcp-servers`, `safe-outputs`,
 * `network`, `permissions`, `runtimes`, `services`, `cache`, `features` (deep-merged), `env`,
 * `github-app`, and the step lists (appended); everything else in an imported file is ignored.
 *
 * So a change to a shared file changes the authority of each workflow importing it: planned as
 * that workflow's change, at the shared file's line. Merged fields add to a workflow, so in a
 * shared file a key added or changed widens and a key removed narrows (a list: an item added
 * widens, only removals narrow). A remote import (`owner/repo/path@ref`) is not a file here: a
 * change of the `imports` list itself is the workflow's own change (it widens). Pure.
 */
import { posix } from "node:path";
import type { HostChange } from "./claude-settings.ts";
import type { GhAwWorkflow } from "./gh-aw.ts";
import { keyLine } from "./json-nodes.ts";

/** The fields gh-aw merges from an imported file. */
export const MERGED_FIELDS = [
  "tools",
  "mcp-servers",
  "safe-outputs",
  "network",
  "permissions",
  "runtimes",
  "services",
  "cache",
  "features",
  "env",
  "github-app",
  "steps",
  "pre-steps",
  "pre-agent-steps",
  "post-steps",
];

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The local files a front matter imports, as repository paths, resolved against the importing
 * file's directory (`shared/a.md` from `.github/workflows/x.md`); a remote import, or one that
 * leaves `.github/`, is not a file here.
 */
export function localImports(front: Record<string, unknown> | undefined, from: string): string[] {
  const list = Array.isArray(front?.imports) ? front.imports : [];
  const out: string[] = [];
  for (const entry of list) {
    const raw =
      typeof entry === "string" ? entry : isObject(entry) ? (entry.uses ?? entry.path) : undefined;
    if (typeof raw !== "string" || raw.includes("@")) continue;
    const path = raw.replace(/#.*$/, "").trim();
    if (!path.endsWith(".md")) continue;
    const resolved = posix.normalize(posix.join(posix.dirname(from), path));
    if (resolved.startsWith(".github/")) out.push(resolved);
  }
  return out;
}

/** Every local file `root` imports, transitively, in first-seen order (a cycle is read once). */
export function importClosure(
  root: GhAwWorkflow,
  read: (path: string) => GhAwWorkflow | undefined,
): string[] {
  const seen = new Set<string>();
  const walk = (wf: GhAwWorkflow) => {
    for (const p of localImports(wf.front, wf.path)) {
      if (seen.has(p)) continue;
      seen.add(p);
      const next = read(p);
      if (next) walk(next);
    }
  };
  walk(root);
  return [...seen];
}

/** The merged fields' leaves by dotted key (a list is one leaf). */
function leavesOf(front: Record<string, unknown> | undefined): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const walk = (v: unknown, key: string) => {
    if (isObject(v) && Object.keys(v).length > 0)
      for (const [k, x] of Object.entries(v)) walk(x, `${key}.${k}`);
    else out.set(key, v);
  };
  for (const field of [...MERGED_FIELDS, "imports"])
    if (front && Object.hasOwn(front, field)) walk(front[field], field);
  return out;
}

/** Each change of a shared file's merged fields, with its direction (the module's note). */
export function importChanges(
  base: GhAwWorkflow | undefined,
  head: GhAwWorkflow | undefined,
): HostChange[] {
  const a = leavesOf(base?.front);
  const b = leavesOf(head?.front);
  const out: HostChange[] = [];
  const show = (v: unknown) => JSON.stringify(v);
  for (const key of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    const was = a.get(key);
    const now = b.get(key);
    if (show(was) === show(now)) continue;
    const side = b.has(key) ? head : base;
    const change: HostChange["change"] = !a.has(key)
      ? "added"
      : !b.has(key)
        ? "removed"
        : "changed";
    let direction: HostChange["direction"] = change === "removed" ? "narrowed" : "widened";
    let reason =
      change === "removed"
        ? "no longer merged into the workflows that import this file"
        : "merged into every workflow that imports this file: it cannot be shown to reach less";
    if (Array.isArray(was) && Array.isArray(now)) {
      const added = now.filter((x) => !was.some((y) => show(y) === show(x)));
      direction = added.length > 0 ? "widened" : "narrowed";
      reason =
        added.length > 0
          ? `merged into every workflow that imports this file, with more: ${added.map((x) => (typeof x === "string" ? x : show(x))).join(", ")}`
          : "fewer entries merged into the workflows that import this file";
    }
    if (key === "imports" || key.startsWith("imports."))
      direction = change === "removed" ? "narrowed" : "widened";
    out.push({
      direction,
      key,
      change,
      file: side?.path ?? "",
      line: keyLine(side?.lines, key),
      reason,
    });
  }
  return out;
}

/**
 * The front matter a workflow runs with: its own, with each imported file's merged fields
 * deep-merged in (objects merged, lists appended, the workflow's own scalars first).
 */
export function mergedFront(
  front: Record<string, unknown>,
  imported: readonly (Record<string, unknown> | undefined)[],
): Record<string, unknown> {
  const merge = (x: unknown, y: unknown): unknown => {
    if (isObject(x) && isObject(y)) {
      const out: Record<string, unknown> = { ...x };
      for (const [k, v] of Object.entries(y)) out[k] = Object.hasOwn(x, k) ? merge(x[k], v) : v;
      return out;
    }
    if (Array.isArray(x) && Array.isArray(y)) return [...x, ...y];
    return x === undefined || x === null ? y : x;
  };
  let out: Record<string, unknown> = { ...front };
  for (const f of imported)
    for (const field of MERGED_FIELDS)
      if (f && Object.hasOwn(f, field))
        out = {
          ...out,
          [field]: Object.hasOwn(out, field) ? merge(out[field], f[field]) : f[field],
        };
  return out;
}
