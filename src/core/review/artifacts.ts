/**
 * The artifacts of a review-response run, as a typed registry (docs/review-doctrine.md, doctrines 2–3): each
 * name in the run directory with its format and its zod schema. Phases read an artifact only
 * through `readArtifact`, which parses and validates it (a malformed file stops the run naming
 * the file and the field, never reaches a phase as a cast), and write one only through
 * `writeArtifact`, which refuses a value that does not match. Pure.
 */
import { z } from "zod";
import { decisionsSchema, planSchema, standardsFindingSchema } from "./doctrine.ts";
import type { RunFiles } from "./ports.ts";
import { requestSchema } from "./request.ts";
import { schemaProblems } from "./schema-problems.ts";

const verdictSchema = z.object({
  status: z.enum(["pass", "fail"]),
  failure_class: z.enum(["tactical", "mechanical", "strategic", "environmental"]).optional(),
  tests_run: z.number().int().nonnegative(),
  new_tests_run: z.number().int().nonnegative(),
  reason: z.string(),
  evidence: z.string(),
  failure_signature: z.string().optional(),
  /** Each gate validation ran (tests, format, lint, typecheck), or why it did not. */
  gates: z
    .array(
      z.object({
        gate: z.string(),
        command: z.string().optional(),
        status: z.enum(["pass", "fail", "not declared"]),
        code: z.number().int().optional(),
      }),
    )
    .optional(),
  /** What each new test's run showed: whether it ran, and the evidence. */
  new_tests: z
    .array(
      z.object({ test: z.string(), passed: z.boolean(), ran: z.boolean(), evidence: z.string() }),
    )
    .optional(),
  /** What the failure class was decided from. */
  failure_evidence: z.string().optional(),
  /** The content id of the files the pass validated (read back on resume: "the same attempt"). */
  attempt: z.string().optional(),
  /** The failing command's output, bounded: what the next pass's Builder is shown. */
  output: z.string().optional(),
});

const provenanceSchema = z.object({
  thread: z.string(),
  made_against: z.string(),
  commits_behind: z.number().int(),
  anchor_moved: z.boolean(),
});

const publishSchema = z.object({
  commit_message: z.string(),
  files: z.array(z.string().min(1)),
  replies: z.array(z.object({ item: z.string().min(1), body: z.string() })),
  tickets: z.array(z.object({ item: z.string().min(1), title: z.string(), body: z.string() })),
  content: z.array(z.object({ path: z.string().min(1), sha256: z.string().nullable() })).optional(),
  diff: z.string().optional(),
});

interface ArtifactSpec {
  format: "json" | "text";
  schema: z.ZodType;
}

export const ARTIFACTS = {
  /** The request as intake read it, with the provenance of each unresolved thread. */
  "request.json": {
    format: "json",
    schema: requestSchema.extend({ provenance: z.array(provenanceSchema).optional() }),
  },
  "decisions.json": { format: "json", schema: decisionsSchema },
  "plan.json": { format: "json", schema: planSchema },
  "plan.md": { format: "text", schema: z.string() },
  "red-tests.json": {
    format: "json",
    schema: z.object({
      tests: z.array(
        z.object({
          test: z.string(),
          failed: z.boolean(),
          ran: z.boolean().optional(),
          evidence: z.string().optional(),
        }),
      ),
    }),
  },
  /** The latest validation pass; `verdict-<n>.json` keeps each pass, the loop's history. */
  "verdict.json": { format: "json", schema: verdictSchema },
  "verdict-<n>.json": { format: "json", schema: verdictSchema },
  "proof.json": {
    format: "json",
    schema: z.object({
      verdict: z.enum(["proven", "vacuous"]),
      vacuous: z.array(z.string()),
      results: z.array(
        z.object({
          test: z.string(),
          passed: z.boolean(),
          ran: z.boolean().optional(),
          evidence: z.string().optional(),
        }),
      ),
    }),
  },
  /**
   * The standards lane's review of the real change (principle 18): the files it was shown and a
   * finding for each; `skipped` says why no reviewer was asked (AGENTS.md declares nothing to
   * check against).
   */
  "standards.json": {
    format: "json",
    schema: z.object({
      files: z.array(z.string().min(1)),
      findings: z.array(standardsFindingSchema),
      skipped: z.string().optional(),
    }),
  },
  /** The commit and the exact reply texts the publish gate approves. */
  "publish.json": { format: "json", schema: publishSchema },
  /** Written just before publishing starts: with no published.json, the outcome is unknown. */
  "publishing.json": {
    format: "json",
    schema: z.object({ started_at: z.string(), publish: z.string() }),
  },
  "published.json": {
    format: "json",
    schema: z.object({
      commit: z.string().optional(),
      replies: z.number().int().nonnegative(),
      tickets: z.number().int().nonnegative(),
    }),
  },
  "report.md": { format: "text", schema: z.string() },
} as const satisfies Record<string, ArtifactSpec>;

export type ArtifactName = keyof typeof ARTIFACTS;
export type ArtifactValue<N extends ArtifactName> = z.output<(typeof ARTIFACTS)[N]["schema"]>;

/** The file an artifact lives in: `verdict-<n>.json` with `n` filled in, else the name itself. */
export function artifactFile(name: ArtifactName, n?: number): string {
  if (!name.includes("<n>")) return name;
  if (n === undefined || !Number.isInteger(n) || n < 1)
    throw new Error(`artifact ${name} needs a positive number, got ${n}`);
  return name.replace("<n>", String(n));
}

/** A malformed artifact: the run stops naming the file and the fields. */
export class InvalidArtifact extends Error {
  constructor(
    readonly file: string,
    readonly problems: readonly string[],
  ) {
    super(`${file} is not a valid artifact: ${problems.join("; ")}`);
  }
}

/** Reads and validates an artifact; undefined when the file does not exist. */
export async function readArtifact<N extends ArtifactName>(
  files: RunFiles,
  name: N,
  n?: number,
): Promise<ArtifactValue<N> | undefined> {
  const file = artifactFile(name, n);
  const text = await files.read(file);
  if (text === undefined) return undefined;
  const spec: ArtifactSpec = ARTIFACTS[name];
  let raw: unknown = text;
  if (spec.format === "json") {
    try {
      raw = JSON.parse(text);
    } catch (e) {
      throw new InvalidArtifact(file, [`not JSON (${(e as Error).message})`]);
    }
  }
  const parsed = spec.schema.safeParse(raw);
  if (!parsed.success) throw new InvalidArtifact(file, schemaProblems(parsed.error));
  return parsed.data as ArtifactValue<N>;
}

/** The text an artifact value is stored as (pretty JSON with a final newline, or the text). */
export function artifactText<N extends ArtifactName>(name: N, value: ArtifactValue<N>): string {
  const spec: ArtifactSpec = ARTIFACTS[name];
  const parsed = spec.schema.safeParse(value);
  if (!parsed.success) throw new InvalidArtifact(name, schemaProblems(parsed.error));
  return spec.format === "json" ? `${JSON.stringify(value, null, 2)}\n` : String(value);
}

/** Validates and writes an artifact; a value that does not match its schema is not written. */
export async function writeArtifact<N extends ArtifactName>(
  files: RunFiles,
  name: N,
  value: ArtifactValue<N>,
  n?: number,
): Promise<void> {
  await files.write(artifactFile(name, n), artifactText(name, value));
}
