/**
 * A small YAML file a user hands the CLI (a model script, a price table) read against its zod
 * schema: the value, or the first problem as `path:line:col: message`. Syntax errors, alias
 * bombs and the like (yamlDocumentValue) and a value the schema refuses are all located in the
 * file. Pure: the caller reads the file and turns the message into its own error.
 */
import { isMap, isSeq, LineCounter, parseDocument } from "yaml";
import type { z } from "zod";
import { QUIET_YAML, yamlDocumentValue } from "./yaml-value.ts";

export type YamlFileResult<T> = { ok: true; value: T } | { ok: false; message: string };

export function readYamlFile<S extends z.ZodType>(
  path: string,
  text: string,
  schema: S,
  /** Said after a schema problem: what the file should look like. */
  shape: string,
): YamlFileResult<z.infer<S>> {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, ...QUIET_YAML });
  const at = (offset: number) => {
    const pos = lineCounter.linePos(offset);
    return `${path}:${pos.line}:${pos.col}`;
  };
  const first = doc.errors[0];
  if (first) return { ok: false, message: `${at(first.pos[0])}: ${first.message.split("\n")[0]}` };
  const read = yamlDocumentValue(doc);
  if (!read.ok) {
    const hint = read.problem.hint === undefined ? "" : `; ${read.problem.hint}`;
    return {
      ok: false,
      message: `${at(read.problem.range.start)}: ${read.problem.message}${hint}`,
    };
  }
  const parsed = schema.safeParse(read.value);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0];
  const p = issue?.path.filter((x): x is string | number => typeof x !== "symbol") ?? [];
  let node = doc.contents as unknown;
  let offset = 0;
  for (const seg of p) {
    const next = isMap(node)
      ? node.get(seg, true)
      : isSeq(node)
        ? node.get(seg as number, true)
        : undefined;
    if (!next) break;
    node = next;
    offset = (next as { range?: [number] }).range?.[0] ?? offset;
  }
  return {
    ok: false,
    message: `${at(offset)}: ${p.join(".") || "(file)"}: ${issue?.message ?? "invalid"} (${shape})`,
  };
}
