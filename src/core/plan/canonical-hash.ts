/**
 * Content hashes over canonical JSON (RFC 8785, as the `canonicalize` package writes it): the
 * same data hashes the same on every machine, whatever the key order it was built in.
 *
 * `sha256` does not build the canonical text and then hash it: at 2,000 agents each side of a
 * plan is megabytes of JSON, built by `canonicalize` as nested template strings (flattened
 * again by the hash) and held whole in memory. `writeCanonical` writes the very same text
 * piece by piece, and the hash takes it in chunks of about 64 KiB. The output is byte for byte
 * `canonicalize`'s, quirks included (holes in arrays are skipped, a function value is written
 * `undefined`); __tests__/plan-hash.test.ts checks the two agree on arbitrary values.
 */
import { createHash } from "node:crypto";

const CHUNK = 1 << 16;

/** Where canonical text goes: `write` receives whole tokens, never half a surrogate pair. */
interface Sink {
  write(piece: string): void;
}

export function canonicalJson(value: unknown): string {
  const parts: string[] = [];
  if (!writeTop(value, { write: (p) => parts.push(p) })) return "null";
  return parts.join("");
}

export function sha256(value: unknown): string {
  const hash = createHash("sha256");
  let buffer = "";
  const sink: Sink = {
    write(piece) {
      buffer += piece;
      if (buffer.length >= CHUNK) {
        hash.update(buffer);
        buffer = "";
      }
    },
  };
  if (!writeTop(value, sink)) buffer = "null";
  hash.update(buffer);
  return `sha256:${hash.digest("hex")}`;
}

/** False when `canonicalize` would return undefined (a top-level undefined, function, symbol). */
function writeTop(value: unknown, sink: Sink): boolean {
  let v = value;
  while (v !== null && typeof v === "object") {
    const toJSON = (v as { toJSON?: unknown }).toJSON;
    if (!(toJSON instanceof Function)) {
      writeCanonical(v, sink);
      return true;
    }
    v = toJSON.call(v) as unknown;
  }
  check(v);
  const text = JSON.stringify(v) as string | undefined;
  if (text === undefined) return false;
  sink.write(text);
  return true;
}

function check(value: unknown): void {
  if (typeof value === "number" && Number.isNaN(value)) throw new Error("NaN is not allowed");
  if (typeof value === "number" && !Number.isFinite(value))
    throw new Error("Infinity is not allowed");
}

/** The text of a non-object, as `canonicalize` writes it nested (`undefined` for no JSON). */
function scalar(value: unknown): string | undefined {
  if (value !== null && typeof value === "object") return undefined;
  check(value);
  return String(JSON.stringify(value));
}

function writeCanonical(value: unknown, sink: Sink): void {
  if (value === null || typeof value !== "object") {
    sink.write(scalar(value) as string);
    return;
  }
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (toJSON instanceof Function) {
    const replaced = toJSON.call(value) as unknown;
    if (replaced === null || typeof replaced !== "object") {
      check(replaced);
      sink.write(String(JSON.stringify(replaced)));
    } else writeCanonical(replaced, sink);
    return;
  }
  if (Array.isArray(value)) {
    sink.write("[");
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) continue; // Array.prototype.reduce skips holes, and so did canonicalize.
      if (i > 0) sink.write(",");
      const v = value[i] as unknown;
      writeCanonical(v === undefined || typeof v === "symbol" ? null : v, sink);
    }
    sink.write("]");
    return;
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  sink.write("{");
  let first = true;
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined || typeof v === "symbol") continue;
    sink.write(first ? JSON.stringify(k) : `,${JSON.stringify(k)}`);
    sink.write(":");
    writeCanonical(v, sink);
    first = false;
  }
  sink.write("}");
}
