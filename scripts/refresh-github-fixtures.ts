/**
 * `npm run refresh:openapi`: installs @octokit/openapi and @octokit/webhooks-examples into a
 * temporary directory (never into this project: the OpenAPI package is ~385 MB) and extracts
 * the small parts the tests check against:
 * - __tests__/fixtures/github/openapi-operations.json: for every operation Terfyn calls, its
 *   method, path template, path/query parameters and request-body fields (required and known);
 * - __tests__/fixtures/github/webhooks/<event>.<action>.json: one real example payload each;
 * - __tests__/fixtures/github/graphql-schema.graphql: GitHub's GraphQL schema (from
 *   @octokit/graphql-schema) pruned to the types and fields Terfyn's documents use, after
 *   validating every document against the full schema.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Every GitHub REST operation Terfyn's adapters may call. */
export const OPERATIONS: [method: string, path: string][] = [
  ["get", "/repos/{owner}/{repo}/issues/{issue_number}/comments"],
  ["post", "/repos/{owner}/{repo}/issues/{issue_number}/comments"],
  ["patch", "/repos/{owner}/{repo}/issues/comments/{comment_id}"],
  ["post", "/repos/{owner}/{repo}/check-runs"],
  ["patch", "/repos/{owner}/{repo}/check-runs/{check_run_id}"],
  ["get", "/repos/{owner}/{repo}/collaborators/{username}/permission"],
  ["get", "/repos/{owner}/{repo}/pulls/{pull_number}"],
  ["get", "/repos/{owner}/{repo}/commits/{commit_sha}/pulls"],
  ["get", "/repos/{owner}/{repo}/pulls/{pull_number}/commits"],
  ["post", "/repos/{owner}/{repo}/statuses/{sha}"],
  ["get", "/repos/{owner}/{repo}/commits/{ref}/statuses"],
  ["put", "/repos/{owner}/{repo}/issues/{issue_number}/labels"],
  ["get", "/user"],
  ["get", "/repos/{owner}/{repo}/compare/{basehead}"],
  ["post", "/repos/{owner}/{repo}/issues/{issue_number}/reactions"],
  ["post", "/repos/{owner}/{repo}/issues"],
  ["get", "/repos/{owner}/{repo}/issues"],
  ["post", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches"],
];

const WEBHOOKS: [event: string, action: string][] = [
  ["pull_request", "opened"],
  ["pull_request", "synchronize"],
  ["issue_comment", "created"],
  ["issue_comment", "edited"],
  ["issue_comment", "deleted"],
  ["merge_group", "checks_requested"],
  ["push", ""],
  ["pull_request", "labeled"],
  ["pull_request_review_thread", "resolved"],
  ["workflow_run", "completed"],
];

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "__tests__", "fixtures", "github");
const tmp = mkdtempSync(join(tmpdir(), "terfyn-refresh-"));
try {
  console.log(`installing @octokit/openapi and @octokit/webhooks-examples into ${tmp} …`);
  execFileSync(
    "npm",
    [
      "install",
      "--no-save",
      "--no-audit",
      "--no-fund",
      "--prefix",
      tmp,
      "@octokit/openapi",
      "@octokit/webhooks-examples",
      "@octokit/graphql-schema",
    ],
    { stdio: "inherit" },
  );
  const pkg = (name: string) => join(tmp, "node_modules", name);
  const openapiVersion = JSON.parse(
    readFileSync(join(pkg("@octokit/openapi"), "package.json"), "utf8"),
  ).version as string;
  const spec = JSON.parse(
    readFileSync(join(pkg("@octokit/openapi"), "generated", "api.github.com.deref.json"), "utf8"),
  );
  const operations: Record<string, unknown> = {};
  for (const [method, path] of OPERATIONS) {
    const op = spec.paths?.[path]?.[method];
    if (!op)
      throw new Error(
        `${method.toUpperCase()} ${path} is not in @octokit/openapi ${openapiVersion}`,
      );
    const body = op.requestBody?.content?.["application/json"]?.schema;
    // Top-level properties and required fields; oneOf/anyOf branches are alternative
    // requirements (e.g. a completed check run needs a conclusion), kept as such.
    type Schema = {
      required?: string[];
      properties?: Record<string, unknown>;
      oneOf?: Schema[];
      anyOf?: Schema[];
    };
    const b = body as Schema | undefined;
    const branches = b?.oneOf ?? b?.anyOf ?? [];
    const properties = new Set(Object.keys(b?.properties ?? {}));
    for (const br of branches) for (const k of Object.keys(br.properties ?? {})) properties.add(k);
    operations[`${method.toUpperCase()} ${path}`] = {
      operationId: op.operationId,
      parameters: (op.parameters ?? []).map(
        (p: { name: string; in: string; required?: boolean }) => ({
          name: p.name,
          in: p.in,
          required: p.required === true,
        }),
      ),
      body: b
        ? {
            required: b.required ?? [],
            properties: [...properties].sort(),
            alternatives: branches.map((br) => br.required ?? []),
          }
        : null,
    };
  }
  mkdirSync(out, { recursive: true });
  writeFileSync(
    join(out, "openapi-operations.json"),
    `${JSON.stringify({ source: `@octokit/openapi@${openapiVersion}`, operations }, null, 2)}\n`,
  );
  console.log(`wrote ${Object.keys(operations).length} operations`);

  const examplesVersion = JSON.parse(
    readFileSync(join(pkg("@octokit/webhooks-examples"), "package.json"), "utf8"),
  ).version as string;
  const all = JSON.parse(
    readFileSync(join(pkg("@octokit/webhooks-examples"), "api.github.com", "index.json"), "utf8"),
  ) as {
    name: string;
    examples: { action?: string }[];
  }[];
  mkdirSync(join(out, "webhooks"), { recursive: true });
  for (const [event, action] of WEBHOOKS) {
    const example = all
      .find((e) => e.name === event)
      ?.examples.find((x) => (x.action ?? "") === action);
    if (!example)
      throw new Error(
        `no ${event}.${action} example in @octokit/webhooks-examples ${examplesVersion}`,
      );
    writeFileSync(
      join(out, "webhooks", `${action ? `${event}.${action}` : event}.json`),
      `${JSON.stringify({ _source: `@octokit/webhooks-examples@${examplesVersion}`, ...example }, null, 2)}\n`,
    );
    console.log(`wrote webhooks/${action ? `${event}.${action}` : event}.json`);
  }

  await writePrunedGraphqlSchema(pkg("@octokit/graphql-schema"));
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

/**
 * Validates Terfyn's GraphQL documents against GitHub's full schema, then keeps only what they
 * touch: each object type with only the fields selected on it, and whole the enums, scalars
 * and input types those fields need. The result is a valid schema that the tests validate the
 * same documents against.
 */
async function writePrunedGraphqlSchema(schemaPkg: string): Promise<void> {
  const g = await import("graphql");
  const { GRAPHQL_DOCUMENTS } = await import("../src/adapters/github/graphql-documents.ts");
  const version = JSON.parse(readFileSync(join(schemaPkg, "package.json"), "utf8"))
    .version as string;
  // GitHub's published SDL repeats a few enterprise fields; the documents never touch them.
  const full = g.buildSchema(readFileSync(join(schemaPkg, "schema.graphql"), "utf8"), {
    assumeValidSDL: true,
  });
  const used = new Map<string, Set<string>>();
  for (const text of GRAPHQL_DOCUMENTS) {
    const doc = g.parse(text);
    const errors = g.validate(full, doc);
    if (errors.length > 0)
      throw new Error(
        `a Terfyn GraphQL document does not validate: ${errors.map((e) => e.message).join("; ")}`,
      );
    const info = new g.TypeInfo(full);
    g.visit(
      doc,
      g.visitWithTypeInfo(info, {
        Field() {
          const parent = info.getParentType();
          const field = info.getFieldDef();
          if (!parent || !field) return;
          if (!used.has(parent.name)) used.set(parent.name, new Set());
          used.get(parent.name)!.add(field.name);
        },
        InlineFragment() {
          const t = info.getType();
          const named = t ? g.getNamedType(t) : undefined;
          if (named && !used.has(named.name)) used.set(named.name, new Set());
        },
      }),
    );
  }
  const printed = new Set<string>();
  const parts: string[] = [];
  const need = (type: import("graphql").GraphQLNamedType) => {
    if (printed.has(type.name) || g.isSpecifiedScalarType(type)) return;
    printed.add(type.name);
    if (g.isObjectType(type) || g.isInterfaceType(type)) {
      // Kept interfaces: those a document selects on, and Node (node(id:) returns it). A type
      // keeps its interfaces' fields too, so the pruned schema stays valid.
      const ifaces = type.getInterfaces().filter((i) => used.has(i.name) || i.name === "Node");
      const fields = new Set(used.get(type.name) ?? []);
      if (type.name === "Node") fields.add("id");
      for (const i of ifaces) {
        for (const f of used.get(i.name) ?? []) fields.add(f);
        if (i.name === "Node") fields.add("id");
      }
      const lines: string[] = [];
      for (const f of Object.values(type.getFields())) {
        if (!fields.has(f.name)) continue;
        const args = f.args.length
          ? `(${f.args
              .map((a) => {
                need(g.getNamedType(a.type));
                return `${a.name}: ${String(a.type)}`;
              })
              .join(", ")})`
          : "";
        need(g.getNamedType(f.type));
        lines.push(`  ${f.name}${args}: ${String(f.type)}`);
      }
      for (const i of ifaces) need(i);
      const kw = g.isObjectType(type) ? "type" : "interface";
      parts.push(
        `${kw} ${type.name}${ifaces.length ? ` implements ${ifaces.map((i) => i.name).join(" & ")}` : ""} {\n${lines.join("\n") || "  _unused: Boolean"}\n}`,
      );
    } else if (g.isInputObjectType(type)) {
      const lines = Object.values(type.getFields()).map((f) => {
        need(g.getNamedType(f.type));
        return `  ${f.name}: ${String(f.type)}`;
      });
      parts.push(`input ${type.name} {\n${lines.join("\n")}\n}`);
    } else if (g.isEnumType(type)) {
      parts.push(
        `enum ${type.name} {\n${type
          .getValues()
          .map((v) => `  ${v.name}`)
          .join("\n")}\n}`,
      );
    } else if (g.isScalarType(type)) {
      parts.push(`scalar ${type.name}`);
    } else if (g.isUnionType(type)) {
      const members = type.getTypes().filter((m) => used.has(m.name));
      for (const m of members) need(m);
      parts.push(`union ${type.name} = ${members.map((m) => m.name).join(" | ") || "Query"}`);
    }
  };
  for (const root of [full.getQueryType(), full.getMutationType()]) if (root) need(root);
  for (const name of used.keys()) {
    const t = full.getType(name);
    if (t) need(t);
  }
  const sdl = `# GitHub's GraphQL schema (@octokit/graphql-schema@${version}), pruned to what Terfyn's documents use.\n# Regenerate with npm run refresh:openapi.\n\n${parts.sort().join("\n\n")}\n`;
  // The pruned schema must itself hold every document.
  const pruned = g.buildSchema(sdl);
  for (const text of GRAPHQL_DOCUMENTS) {
    const errors = g.validate(pruned, g.parse(text));
    if (errors.length > 0)
      throw new Error(`the pruned schema lost something: ${errors[0]?.message}`);
  }
  writeFileSync(join(out, "graphql-schema.graphql"), sdl);
  console.log(`wrote graphql-schema.graphql (${printed.size} types)`);
}
