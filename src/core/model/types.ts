/**
 * Value types of workflow expressions, derived from the project's JSON Schemas.
 *
 * Typing is structural: a value fits a slot when every field the slot requires is present with
 * a fitting type. Schema names label types for messages and make the common case (the same
 * schema on both sides) a fast path.
 */
import type { JsonSchemaNode } from "../config/schemas.ts";

export type Type =
  | { kind: "string" | "number" | "integer" | "boolean" | "unknown"; name?: string }
  | { kind: "object"; name?: string; properties: Map<string, Type>; required: Set<string> }
  | { kind: "array"; name?: string; items: Type };

export const STRING: Type = { kind: "string" };
export const INTEGER: Type = { kind: "integer" };
export const BOOLEAN: Type = { kind: "boolean" };
export const UNKNOWN: Type = { kind: "unknown" };

/** Converts a schema node to a type; `name` labels the top level only. */
export function typeFromSchema(node: JsonSchemaNode, name?: string): Type {
  const labelled = <T extends Type>(t: T): T => (name === undefined ? t : { ...t, name });
  const kind =
    node.type ?? (node.properties ? "object" : node.items ? "array" : inferEnumKind(node));
  switch (kind) {
    case "object": {
      const properties = new Map<string, Type>();
      for (const [key, child] of Object.entries(node.properties ?? {}))
        properties.set(key, typeFromSchema(child));
      return labelled({ kind: "object", properties, required: new Set(node.required ?? []) });
    }
    case "array":
      return labelled({ kind: "array", items: node.items ? typeFromSchema(node.items) : UNKNOWN });
    case "string":
    case "number":
    case "integer":
    case "boolean":
      return labelled({ kind });
    default:
      return labelled({ kind: "unknown" });
  }
}

function inferEnumKind(node: JsonSchemaNode): string | undefined {
  if (!node.enum || node.enum.length === 0) return undefined;
  const kinds = new Set(node.enum.map((v) => (v === null ? "null" : typeof v)));
  if (kinds.size !== 1) return undefined;
  const only = [...kinds][0];
  return only === "string" || only === "boolean" || only === "number" ? only : undefined;
}

/** Whether a value of type `from` may be used where `to` is expected. */
export function isAssignable(from: Type, to: Type, depth = 0): boolean {
  if (from.kind === "unknown" || to.kind === "unknown") return true;
  if (from.name !== undefined && from.name === to.name) return true;
  if (depth > 32) return true;
  if (from.kind === "integer" && to.kind === "number") return true;
  if (from.kind !== to.kind) return false;
  if (from.kind === "array" && to.kind === "array")
    return isAssignable(from.items, to.items, depth + 1);
  if (from.kind === "object" && to.kind === "object") {
    for (const key of to.required) {
      if (!from.required.has(key)) return false;
    }
    for (const [key, toType] of to.properties) {
      const fromType = from.properties.get(key);
      if (fromType !== undefined && !isAssignable(fromType, toType, depth + 1)) return false;
    }
    return true;
  }
  return true;
}

/** Whether two values may be compared with `==` / `!=`. */
export function isComparable(a: Type, b: Type): boolean {
  return isAssignable(a, b) || isAssignable(b, a);
}

export function describeType(t: Type): string {
  if (t.name !== undefined) return t.name;
  switch (t.kind) {
    case "object":
      return t.properties.size === 0 ? "object" : `{ ${[...t.properties.keys()].join(", ")} }`;
    case "array":
      return `array of ${describeType(t.items)}`;
    default:
      return t.kind;
  }
}

/** What fields `from` lacks that `to` requires (for messages). */
export function missingRequiredFields(from: Type, to: Type): string[] {
  if (from.kind !== "object" || to.kind !== "object") return [];
  return [...to.required].filter((k) => !from.required.has(k));
}
