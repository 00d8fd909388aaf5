/**
 * `npm run refresh:openapi`: installs @octokit/openapi and @octokit/webhooks-examples into a
 * temporary directory (never into this project: the OpenAPI package is ~385 MB) and extracts
 * the small parts the tests check against:
 * - __tests__/fixtures/github/openapi-operations.json: for every operation Terfyn calls, its
 *   method, path template, path/query parameters and request-body fields (required and known);
 * - __tests__/fixtures/github/webhooks/<event>.<action>.json: one real example payload each.
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
  ["post", "/repos/{owner}/{repo}/statuses/{sha}"],
  ["get", "/repos/{owner}/{repo}/commits/{ref}/statuses"],
  ["put", "/repos/{owner}/{repo}/issues/{issue_number}/labels"],
  ["get", "/user"],
];

const WEBHOOKS: [event: string, action: string][] = [
  ["pull_request", "opened"],
  ["pull_request", "synchronize"],
  ["issue_comment", "created"],
  ["issue_comment", "edited"],
  ["issue_comment", "deleted"],
  ["merge_group", "checks_requested"],
  ["push", ""],
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
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
