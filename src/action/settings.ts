/**
 * The Action's inputs, read once and validated into a typed settings object. Every field is
 * documented in action.yml; errors name the input and what it accepts.
 */
import { z } from "zod";
import { PERMISSION_LEVELS } from "../core/approvals/approval-comment.ts";

const bool = (name: string) =>
  z
    .string()
    .transform((v) => v.trim().toLowerCase())
    .refine((v) => ["true", "false", ""].includes(v), {
      message: `input \`${name}\` must be true or false`,
    })
    .transform((v) => v !== "false");

const TOKEN_MISSING = [
  "input `github-token` is empty; pass `github-token: $",
  "{{ github.token }}`",
].join("");

export const settingsSchema = z.object({
  /** Project directories or glob patterns (relative to the repository root), one per line or comma-separated. */
  projects: z.array(z.string().min(1)).min(1, "input `project` names no project"),
  /** Token for the GitHub API (comments, check runs, permission checks). */
  token: z.string().min(1, TOKEN_MISSING),
  /**
   * When to write the sticky plan comment per project: `changes` (default: only when a
   * resource or authority changed, or something blocks; an existing comment is always kept
   * current), `always`, or `never`. `true`/`false` are accepted as `changes`/`never`.
   */
  comment: z
    .string()
    .transform((v) => v.trim().toLowerCase())
    .transform((v) => (v === "true" || v === "" ? "changes" : v === "false" ? "never" : v))
    .pipe(
      z.enum(["changes", "always", "never"], {
        message: "input `comment` must be changes, always or never",
      }),
    ),
  /**
   * Plan this pull request (its number) whatever the event: for a trusted `workflow_run` job
   * that reports a fork's pull request. The number is validated; head and base come from the API.
   */
  pullRequest: z
    .string()
    .trim()
    .refine((v) => v === "" || /^[1-9][0-9]{0,9}$/.test(v), {
      message: "input `pull-request` must be a pull request number",
    })
    .transform((v) => (v === "" ? undefined : Number(v))),
  /** Add the labels `terfyn:widened` / `terfyn:forbidden` to the pull request when they apply. */
  labels: bool("labels"),
  /** Create a check run with annotations on the .agent lines. */
  annotations: bool("annotations"),
  /** What fails the step: forbidden (default), widening (unapproved autonomous widening), any-change. */
  failOn: z.enum(["forbidden", "widening", "any-change"], {
    message: "input `fail-on` must be forbidden, widening or any-change",
  }),
  /** The repository permission an approver needs. */
  approvers: z.enum(
    PERMISSION_LEVELS.slice(1) as unknown as ["read", "triage", "write", "maintain", "admin"],
    {
      message: "input `approvers` must be one of read, triage, write, maintain, admin",
    },
  ),
});

export type Settings = z.infer<typeof settingsSchema>;

export class SettingsError extends Error {}

export function readSettings(getInput: (name: string) => string): Settings {
  const projects = (getInput("project") || ".")
    .split(/[\n,]/)
    .map((p) => p.trim())
    .filter((p) => p !== "");
  const parsed = settingsSchema.safeParse({
    projects,
    token: getInput("github-token"),
    comment: getInput("comment") || "changes",
    labels: getInput("labels") || "false",
    pullRequest: getInput("pull-request"),
    annotations: getInput("annotations") || "true",
    failOn: getInput("fail-on") || "forbidden",
    approvers: getInput("approvers") || "write",
  });
  if (!parsed.success)
    throw new SettingsError(parsed.error.issues.map((i) => i.message).join("; "));
  return parsed.data;
}
