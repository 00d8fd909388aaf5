/**
 * esbuild's `target` for the bundles, read from where each bundle's Node is declared, so that a
 * bundle is built for the Node it runs on and the two cannot drift apart:
 * - the Action's (dist/index.js, dist/review-fix.js) for action.yml's `runs.using` (node24);
 * - the CLI's (dist/cli.js) for the lowest Node package.json's engines admits: it runs on
 *   whatever Node its user has.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { minVersion } from "semver";
import { parse } from "yaml";

/** `node24`, from action.yml's `runs.using`. */
export function actionTarget(root: string): string {
  const using: unknown = parse(readFileSync(join(root, "action.yml"), "utf8"))?.runs?.using;
  if (typeof using !== "string" || !/^node\d+$/.test(using))
    throw new Error(`action.yml's runs.using is ${JSON.stringify(using)}, not node<major>`);
  return using;
}

/** `node22.12.0`, from package.json's engines.node. */
export function cliTarget(root: string): string {
  const range: unknown = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).engines?.node;
  const lowest = typeof range === "string" ? minVersion(range) : null;
  if (lowest === null)
    throw new Error(`package.json's engines.node (${JSON.stringify(range)}) has no lowest version`);
  return `node${lowest.version}`;
}
