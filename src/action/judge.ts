/**
 * The judge of this job (src/core/ci/judge-config.ts): the Action's inputs, made stricter by
 * the base commit's `.github/terfyn.yml` when it has one, read from git objects (never from the
 * checkout, which may be the pull request's).
 */
import * as core from "@actions/core";
import { readFileAtRevision } from "../adapters/git/read-revision.ts";
import {
  decideJudge,
  JUDGE_CONFIG_PATH,
  type JudgeConfig,
  JudgeConfigError,
  parseJudgeConfig,
} from "../core/ci/judge-config.ts";
import type { Settings } from "./settings.ts";

export async function judgeFor(
  repoRoot: string,
  base: string | undefined,
  settings: Settings,
  /** True in the `pull_request` job: the workflow (and so the inputs) is the pull request's. */
  untrustedInputs: boolean,
): Promise<{ settings: Settings; countsApprovals: boolean }> {
  let config: JudgeConfig | undefined;
  if (base !== undefined) {
    const file = await readFileAtRevision(repoRoot, base, JUDGE_CONFIG_PATH);
    if (file.kind === "not-a-file")
      throw new JudgeConfigError(
        `${JUDGE_CONFIG_PATH} on the base (${base.slice(0, 12)}) is not a regular file (a symbolic link or a submodule); make it a file, or remove it`,
      );
    if (file.kind === "file") config = parseJudgeConfig(file.text);
  }
  const judge = decideJudge(
    { approvers: settings.approvers, failOn: settings.failOn },
    config,
    untrustedInputs,
  );
  core.info(
    `terfyn: judged by ${judge.source}: approvers ${judge.approvers}, fail-on ${judge.failOn}`,
  );
  return {
    settings: { ...settings, approvers: judge.approvers, failOn: judge.failOn },
    countsApprovals: judge.countsApprovals,
  };
}
