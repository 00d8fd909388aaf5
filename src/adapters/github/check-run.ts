/**
 * A completed check run on the head commit with the plan's annotations: the first 50 in the
 * create request and the rest in update requests of 50 (the API's per-request limit). Summary
 * and text are kept within the API's 65,535-character limits.
 */
import type { Annotation } from "../../core/render/plan-annotations.ts";
import type { GitHubClient } from "./client.ts";

export const ANNOTATIONS_PER_REQUEST = 50;
export const OUTPUT_TEXT_LIMIT = 65_535;

export interface CheckRunInput {
  name: string;
  headSha: string;
  conclusion: "success" | "failure" | "neutral";
  title: string;
  summary: string;
  text?: string;
  annotations: Annotation[];
}

export function clip(s: string, limit = OUTPUT_TEXT_LIMIT): string {
  if (s.length <= limit) return s;
  const note = "\n\n… (truncated; the full plan is in the job summary)";
  return s.slice(0, limit - note.length) + note;
}

export async function createCheckRun(
  client: GitHubClient,
  repo: { owner: string; repo: string },
  input: CheckRunInput,
): Promise<number> {
  const batches: Annotation[][] = [];
  for (let i = 0; i < input.annotations.length; i += ANNOTATIONS_PER_REQUEST)
    batches.push(input.annotations.slice(i, i + ANNOTATIONS_PER_REQUEST));
  const output = (annotations: Annotation[]) => ({
    title: clip(input.title, 1000),
    summary: clip(input.summary),
    ...(input.text ? { text: clip(input.text) } : {}),
    ...(annotations.length > 0 ? { annotations } : {}),
  });
  const created = await client.rest.checks.create({
    ...repo,
    name: input.name,
    head_sha: input.headSha,
    status: "completed",
    conclusion: input.conclusion,
    output: output(batches[0] ?? []),
  });
  for (const batch of batches.slice(1)) {
    await client.rest.checks.update({
      ...repo,
      check_run_id: created.data.id,
      output: output(batch),
    });
  }
  return created.data.id;
}
