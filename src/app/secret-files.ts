/**
 * The App's secrets that live as files, where a sandbox could show them (the system directories
 * are bound read-only into every sandbox): the private key, named by PRIVATE_KEY_PATH or the
 * `*.pem` Probot picks up from its working directory, and the `.env` Probot reads there. The
 * server hides each from every command it runs.
 */
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";

export function secretFiles(
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): string[] {
  const pems = readdirSync(cwd).filter((n) => n.endsWith(".pem"));
  return [
    ...(env.PRIVATE_KEY_PATH ? [resolve(cwd, env.PRIVATE_KEY_PATH)] : []),
    join(cwd, ".env"),
    ...pems.map((n) => join(cwd, n)),
  ];
}
