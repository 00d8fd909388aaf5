/**
 * The state file: the resources and bounds `terfyn apply` last recorded. `terfyn plan` diffs
 * against it. Parsed with zod so a hand-edited or foreign file is a clear error, not a crash.
 */
import { z } from "zod";
import type { ResourceRecord } from "./resources.ts";

export const STATE_FORMAT_VERSION = "1";

const boundEntry = z.object({
  effect: z.string(),
  mode: z.enum(["autonomous", "gated"]),
  tool: z.string(),
  severity: z.enum(["critical", "high", "medium", "low", "info"]),
});

const resourceRecord = z.object({
  address: z.string(),
  kind: z.enum([
    "Agent",
    "Workflow",
    "Tool",
    "Schema",
    "Policy",
    "CapabilityTest",
    "Provider",
    "Host",
  ]),
  name: z.string(),
  spec: z.unknown(),
  effect_bound: z.array(boundEntry).optional(),
  bounds: z
    .object({
      effects: z.array(z.string()),
      loop_limits: z.array(z.number()),
      max_iterations: z.number(),
      hitl: z.array(z.string()),
      model_call_bound: z.number(),
    })
    .optional(),
  host_files: z
    .array(z.object({ path: z.string(), text: z.string(), role: z.string().optional() }))
    .optional(),
});

export const stateFileSchema = z.object({
  format_version: z.literal(STATE_FORMAT_VERSION),
  terfyn_version: z.string(),
  project: z.string(),
  /** Increases by one on every apply. */
  serial: z.number().int().min(1),
  /** Hash of the plan that produced this state. */
  applied_plan: z.string(),
  applied_at: z.string(),
  resources: z.array(resourceRecord),
});

export type StateFile = z.infer<typeof stateFileSchema> & { resources: ResourceRecord[] };

export type ParseStateResult = { ok: true; state: StateFile } | { ok: false; error: string };

export function parseStateFile(text: string): ParseStateResult {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: `not valid JSON (${(e as Error).message})` };
  }
  const parsed = stateFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      error: `not a Terfyn state file: ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}`,
    };
  }
  return { ok: true, state: parsed.data as StateFile };
}

export function buildState(input: {
  project: string;
  terfynVersion: string;
  previousSerial: number;
  planHash: string;
  appliedAt: string;
  resources: ResourceRecord[];
}): StateFile {
  return {
    format_version: STATE_FORMAT_VERSION,
    terfyn_version: input.terfynVersion,
    project: input.project,
    serial: input.previousSerial + 1,
    applied_plan: input.planHash,
    applied_at: input.appliedAt,
    resources: input.resources,
  };
}
