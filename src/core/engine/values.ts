/**
 * Runtime values: expression evaluation over JSON data and validation against the project's
 * JSON Schemas (through zod's JSON Schema support, so no hand-written validator).
 */
import { z } from "zod";
import type { JsonSchemaNode } from "../config/schemas.ts";

const validators = new WeakMap<JsonSchemaNode, z.ZodType>();

/** Issues of `value` against `schema`, as `path: message` lines; empty when it is valid. */
export function schemaIssues(schema: JsonSchemaNode, value: unknown): string[] {
  let v = validators.get(schema);
  if (!v) {
    v = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
    validators.set(schema, v);
  }
  const r = v.safeParse(value);
  if (r.success) return [];
  return r.error.issues.map(
    (i) => `${i.path.length > 0 ? i.path.join(".") : "(value)"}: ${i.message}`,
  );
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (
    a &&
    b &&
    typeof a === "object" &&
    typeof b === "object" &&
    !Array.isArray(a) &&
    !Array.isArray(b)
  ) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return (
      ka.length === kb.length &&
      ka.every((k) =>
        deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
      )
    );
  }
  return false;
}

export function getField(value: unknown, field: string): unknown {
  if (
    value !== null &&
    typeof value === "object" &&
    !Array.isArray(value) &&
    Object.hasOwn(value, field)
  ) {
    return (value as Record<string, unknown>)[field];
  }
  return undefined;
}
