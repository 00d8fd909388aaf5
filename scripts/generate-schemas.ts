/**
 * Writes the JSON Schemas for Terfyn's YAML resources under schemas/, generated from the zod
 * schemas in src/core/config/schemas.ts. `--check` fails (exit 1) when a committed file is stale.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { RESOURCE_KINDS, resourceSchemas } from "../src/core/config/schemas.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outDir = join(root, "schemas");
const check = process.argv.includes("--check");

function schemaFor(schema: z.ZodType, id: string, title: string): string {
  const json = z.toJSONSchema(schema, {
    target: "draft-2020-12",
    io: "input",
    unrepresentable: "any",
  }) as Record<string, unknown>;
  return `${JSON.stringify({ $id: id, title, ...json }, null, 2)}\n`;
}

const outputs = new Map<string, string>();
for (const kind of RESOURCE_KINDS) {
  const file = `${kind.replace(/([a-z])([A-Z])/g, "$1-$2").toLowerCase()}.schema.json`;
  outputs.set(
    file,
    schemaFor(
      resourceSchemas[kind],
      `https://terfyn.dev/schemas/v1/${file}`,
      `Terfyn ${kind} (terfyn.dev/v1)`,
    ),
  );
}
// One schema that accepts any Terfyn resource document, for editors mapping *.yaml to it.
const any = z.union(
  RESOURCE_KINDS.map((k) => resourceSchemas[k]) as unknown as [
    z.ZodType,
    z.ZodType,
    ...z.ZodType[],
  ],
);
outputs.set(
  "resource.schema.json",
  schemaFor(
    any,
    "https://terfyn.dev/schemas/v1/resource.schema.json",
    "Any Terfyn resource (terfyn.dev/v1)",
  ),
);

let stale = 0;
// The VS Code extension ships its own copy (vsce packages editors/vscode alone).
const targets = [outDir, join(root, "editors", "vscode", "schemas")];
for (const dir of targets) mkdirSync(dir, { recursive: true });
for (const [dir, [file, text]] of targets.flatMap((d) =>
  [...outputs].map((o) => [d, o] as const),
)) {
  const path = join(dir, file);
  const shown = `${relative(root, dir)}/${file}`;
  let current: string | undefined;
  try {
    current = readFileSync(path, "utf8");
  } catch {
    current = undefined;
  }
  if (current === text) continue;
  if (check) {
    console.error(`${shown} is out of date: run \`npm run schemas\` and commit the result`);
    stale++;
  } else {
    writeFileSync(path, text);
    console.log(`wrote ${shown}`);
  }
}
if (check && stale === 0)
  console.log(`schemas/ and editors/vscode/schemas/ are up to date (${outputs.size} files each)`);
process.exitCode = stale > 0 ? 1 : 0;
