/**
 * The App's private key, read as Probot will read it (@probot/get-private-key: PRIVATE_KEY, its
 * `\n` escapes and base64 accepted, else the file PRIVATE_KEY_PATH names, else the one `*.pem`
 * in the working directory), then checked: a key Probot cannot read, or that node:crypto does
 * not parse, or that is not RSA (a GitHub App signs its JWTs with RS256), is a start-up problem.
 * Probot itself only logs such a key and runs as if there were none (its setup flow). The
 * problem names where the key came from, never the key.
 */
import { createPrivateKey } from "node:crypto";
import { readdirSync } from "node:fs";
import { resolve } from "node:path";
import { getPrivateKey } from "@probot/get-private-key";
import type { AppKeyRead } from "../core/app/app-env.ts";

const REGENERATE = "generate a private key on the App's settings page";

export function readAppKey(
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): AppKeyRead {
  const source = env.PRIVATE_KEY
    ? "PRIVATE_KEY"
    : env.PRIVATE_KEY_PATH
      ? `PRIVATE_KEY_PATH (${env.PRIVATE_KEY_PATH})`
      : `the .pem file in the working directory (${lonePem(cwd) ?? cwd})`;
  let pem: string | null;
  try {
    pem = getPrivateKey({ env: { ...env }, cwd });
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (env.PRIVATE_KEY)
      return {
        kind: "problem",
        problem: `PRIVATE_KEY is not a PEM private key (BEGIN RSA PRIVATE KEY or BEGIN PRIVATE KEY, its newlines as they are, as \\n or the whole in base64): copy the .pem file's contents, or ${REGENERATE}`,
      };
    if (env.PRIVATE_KEY_PATH)
      return {
        kind: "problem",
        problem:
          err.code === undefined
            ? `PRIVATE_KEY_PATH names no file: ${resolve(cwd, env.PRIVATE_KEY_PATH)} does not exist`
            : `PRIVATE_KEY_PATH (${resolve(cwd, env.PRIVATE_KEY_PATH)}) cannot be read: ${err.code}`,
      };
    // More than one *.pem in the working directory (Probot names them), or one it cannot read.
    return {
      kind: "problem",
      problem: `${err.message.replace(/^\[@probot\/get-private-key\] /, "")} (Probot reads the private key from PRIVATE_KEY, PRIVATE_KEY_PATH, or the one *.pem file in the working directory ${cwd})`,
    };
  }
  if (pem === null) return { kind: "absent" };
  let type: string | undefined;
  try {
    type = createPrivateKey(pem).asymmetricKeyType;
  } catch (e) {
    const reason = (e as Error).message;
    return {
      kind: "problem",
      problem: `${source} is not a valid private key (${reason}): ${REGENERATE}`,
    };
  }
  if (type !== "rsa")
    return {
      kind: "problem",
      problem: `${source} is ${type ? `an ${type.toUpperCase()}` : "not an RSA"} key; a GitHub App's key is RSA (its JWTs are signed RS256): ${REGENERATE}`,
    };
  return { kind: "found" };
}

function lonePem(cwd: string): string | undefined {
  try {
    return readdirSync(cwd).find((n) => n.endsWith(".pem"));
  } catch {
    return undefined;
  }
}
