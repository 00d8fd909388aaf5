/**
 * Who judges a pull request, and by which rules. The `pull_request` job runs the pull
 * request's own copy of the workflow, so its inputs are the pull request's to change:
 * `approvers: read` or `fail-on: forbidden` there must not loosen the judge. The judge's
 * settings therefore come from the base: `.github/terfyn.yml` read from the base commit's git
 * objects. When the base has one, its `approvers` and `fail-on` bind (an input can only make
 * them stricter); when it has none, the `pull_request` job counts no approval (it never turns
 * `terfyn/approval` green because of one): approvals are counted by the `issue_comment` job,
 * which runs the default branch's workflow. Every other event runs a workflow the pull request
 * cannot edit (or has no approvals). Pure.
 */
import { parseDocument } from "yaml";
import { z } from "zod";
import { PERMISSION_LEVELS, type PermissionLevel } from "../approvals/approval-comment.ts";
import type { FailOn } from "./outcome.ts";

export const JUDGE_CONFIG_PATH = ".github/terfyn.yml";

const APPROVER_LEVELS = PERMISSION_LEVELS.slice(1) as unknown as [
  "read",
  "triage",
  "write",
  "maintain",
  "admin",
];
const FAIL_ON: readonly FailOn[] = ["forbidden", "widening", "any-change"];

const schema = z
  .object({
    approvers: z.enum(APPROVER_LEVELS, {
      message: "`approvers` must be one of read, triage, write, maintain, admin",
    }),
    "fail-on": z.enum(["forbidden", "widening", "any-change"], {
      message: "`fail-on` must be forbidden, widening or any-change",
    }),
  })
  .partial()
  .strict();

export interface JudgeConfig {
  approvers?: Exclude<PermissionLevel, "none">;
  failOn?: FailOn;
}

export class JudgeConfigError extends Error {}

/** The base's `.github/terfyn.yml`; an error names the file, the line when known, and the fix. */
export function parseJudgeConfig(text: string): JudgeConfig {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0)
    throw new JudgeConfigError(
      `${JUDGE_CONFIG_PATH} on the base is not valid YAML: ${doc.errors[0]?.message ?? "parse error"}`,
    );
  const value = doc.toJS() ?? {};
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new JudgeConfigError(
      `${JUDGE_CONFIG_PATH} on the base: ${parsed.error.issues
        .map((i) =>
          i.code === "unrecognized_keys"
            ? `unknown key ${i.keys.map((k) => `\`${k}\``).join(", ")} (it may set approvers and fail-on)`
            : i.message,
        )
        .join("; ")}`,
    );
  return {
    ...(parsed.data.approvers ? { approvers: parsed.data.approvers } : {}),
    ...(parsed.data["fail-on"] ? { failOn: parsed.data["fail-on"] } : {}),
  };
}

export interface Judge {
  approvers: Exclude<PermissionLevel, "none">;
  failOn: FailOn;
  /** Whether approvals found among the pull request's comments count in this job. */
  countsApprovals: boolean;
  /** Said in the log and, when approvals are not counted, in the status. */
  source: string;
}

/**
 * The judge of this job: the inputs, made stricter by the base's configuration when it has
 * one. `untrustedInputs` is true in the `pull_request` job (the workflow file is the pull
 * request's own).
 */
export function decideJudge(
  inputs: { approvers: Exclude<PermissionLevel, "none">; failOn: FailOn },
  base: JudgeConfig | undefined,
  untrustedInputs: boolean,
): Judge {
  if (base === undefined)
    return {
      ...inputs,
      countsApprovals: !untrustedInputs,
      source: untrustedInputs
        ? `the pull request's workflow inputs (the base has no ${JUDGE_CONFIG_PATH}, so this job counts no approval)`
        : "the workflow inputs",
    };
  const approvers =
    APPROVER_LEVELS.indexOf(inputs.approvers) >= APPROVER_LEVELS.indexOf(base.approvers ?? "write")
      ? inputs.approvers
      : (base.approvers ?? "write");
  const baseFailOn = base.failOn ?? "forbidden";
  const failOn =
    FAIL_ON.indexOf(inputs.failOn) >= FAIL_ON.indexOf(baseFailOn) ? inputs.failOn : baseFailOn;
  return {
    approvers,
    failOn,
    countsApprovals: true,
    source: `${JUDGE_CONFIG_PATH} on the base (inputs only make it stricter)`,
  };
}
