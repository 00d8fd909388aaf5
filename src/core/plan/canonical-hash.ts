/**
 * Content hashes over canonical JSON (RFC 8785, via `canonicalize`): the same data hashes the
 * same on every machine, whatever the key order it was built in.
 */
import { createHash } from "node:crypto";
import canonicalizeModule from "canonicalize";

type Canonicalize = (input: unknown) => string | undefined;
// A CommonJS module whose types declare an ES default export: take whichever shape arrives.
const canonicalize: Canonicalize =
  (canonicalizeModule as unknown as { default?: Canonicalize }).default ??
  (canonicalizeModule as unknown as Canonicalize);

export function canonicalJson(value: unknown): string {
  return canonicalize(value) ?? "null";
}

export function sha256(value: unknown): string {
  return `sha256:${createHash("sha256").update(canonicalJson(value)).digest("hex")}`;
}
