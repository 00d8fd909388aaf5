/**
 * Checks a request against GitHub's OpenAPI description (the operations extracted by
 * `npm run refresh:openapi` into __tests__/fixtures/github/openapi-operations.json): the method
 * and path exist, and the body has the required fields and no unknown ones.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { buildSchema, getOperationAST, getVariableValues, parse, validate } from "graphql";

interface Operation {
  operationId: string;
  parameters: { name: string; in: string; required: boolean }[];
  body: { required: string[]; properties: string[]; alternatives: string[][] } | null;
}

const spec = JSON.parse(
  readFileSync(
    join(import.meta.dirname, "..", "fixtures", "github", "openapi-operations.json"),
    "utf8",
  ),
) as {
  operations: Record<string, Operation>;
};

const compiled = Object.entries(spec.operations).map(([key, op]) => {
  const [method, template] = key.split(" ") as [string, string];
  const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`);
  return { method, template, pattern, op };
});

export interface RecordedRequest {
  method: string;
  path: string;
  body: unknown;
}

const graphqlSchema = buildSchema(
  readFileSync(
    join(import.meta.dirname, "..", "fixtures", "github", "graphql-schema.graphql"),
    "utf8",
  ),
);

/** Problems with a GraphQL request: the document and its variables against GitHub's schema. */
export function graphqlProblems(body: unknown): string[] {
  const b = (body ?? {}) as { query?: unknown; variables?: Record<string, unknown> };
  if (typeof b.query !== "string") return ["POST /graphql without a query"];
  let doc: ReturnType<typeof parse>;
  try {
    doc = parse(b.query);
  } catch (e) {
    return [`GraphQL syntax: ${(e as Error).message}`];
  }
  const errors = validate(graphqlSchema, doc).map((e) => `GraphQL: ${e.message}`);
  if (errors.length > 0) return errors;
  const op = getOperationAST(doc);
  if (!op) return ["GraphQL: no single operation"];
  const vars = getVariableValues(graphqlSchema, op.variableDefinitions ?? [], b.variables ?? {});
  return (vars.errors ?? []).map((e) => `GraphQL variables: ${e.message}`);
}

/** Problems with a request, or [] when it matches an operation of the description. */
export function openApiProblems(req: RecordedRequest): string[] {
  const path = req.path.split("?")[0] as string;
  if (req.method.toUpperCase() === "POST" && path === "/graphql") return graphqlProblems(req.body);
  const match = compiled.find((c) => c.method === req.method.toUpperCase() && c.pattern.test(path));
  if (!match)
    return [
      `${req.method} ${path} is not an operation Terfyn is known to call (see scripts/refresh-github-fixtures.ts)`,
    ];
  const problems: string[] = [];
  const body = match.op.body;
  if (body === null) {
    if (req.body !== undefined && req.body !== "" && req.body !== null)
      problems.push(`${match.op.operationId} takes no body`);
    return problems;
  }
  const given = (req.body ?? {}) as Record<string, unknown>;
  for (const field of body.required)
    if (!(field in given))
      problems.push(`${match.op.operationId}: missing required body field ${field}`);
  for (const field of Object.keys(given))
    if (!body.properties.includes(field))
      problems.push(`${match.op.operationId}: unknown body field ${field}`);
  if (
    body.alternatives.length > 0 &&
    !body.alternatives.some((alt) => alt.every((f) => f in given))
  ) {
    problems.push(
      `${match.op.operationId}: the body meets none of the alternatives ${JSON.stringify(body.alternatives)}`,
    );
  }
  return problems;
}
