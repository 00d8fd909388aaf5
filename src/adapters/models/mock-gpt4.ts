/**
 * `mock/gpt-4`: the deterministic, key-free default. It never calls tools; it answers at once
 * with its input when that fits the output schema (else the schema's minimal value), so a
 * workflow runs to its bounds reproducibly. Use `mock/script` to exercise tools offline.
 */
import type { JsonSchemaNode } from "../../core/config/schemas.ts";
import type { ModelResponse } from "../../core/engine/journal.ts";
import type { ModelPort, ModelRequest } from "../../core/engine/ports.ts";
import { schemaIssues } from "../../core/engine/values.ts";

export class MockGpt4 implements ModelPort {
  async turn(request: ModelRequest): Promise<{ response: ModelResponse }> {
    const first = request.messages[0];
    let input: unknown = null;
    if (first?.role === "user") {
      try {
        input = JSON.parse(first.content);
      } catch {
        input = first.content;
      }
    }
    const schema = request.outputSchema;
    const output =
      schema === undefined || schemaIssues(schema, input).length === 0
        ? input
        : minimalValue(schema);
    return { response: { kind: "output", output } };
  }
}

function minimalValue(schema: JsonSchemaNode): unknown {
  if (schema.default !== undefined) return schema.default;
  if (schema.enum && schema.enum.length > 0) return schema.enum[0];
  switch (schema.type) {
    case "object": {
      const out: Record<string, unknown> = {};
      for (const key of schema.required ?? []) {
        const child = schema.properties?.[key];
        out[key] = child ? minimalValue(child) : null;
      }
      return out;
    }
    case "array":
      return [];
    case "string":
      return "";
    case "number":
    case "integer":
      return 0;
    case "boolean":
      return false;
    default:
      return null;
  }
}
