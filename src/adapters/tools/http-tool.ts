/**
 * The `http` tool adapter: one request per call, through Node's global fetch.
 *
 * - The URL comes from the operation's template; its origin is fixed in the resource and
 *   checked again after expansion; input values only fill path and query placeholders,
 *   percent-encoded (`expandUrlTemplate`).
 * - Redirects are never followed (a 3xx is the result), so a server cannot move the request to
 *   another host.
 * - Headers are only the declared ones (literals, or values of named environment variables,
 *   read when the run starts), plus Accept and, with a body, Content-Type. No header value
 *   appears in a result or an error.
 * - POST, PUT and PATCH send the input's fields not used in the URL as a JSON body.
 * - The response body is read up to the cap; a larger one fails the call. A timeout aborts it.
 */
import type { HttpReach } from "../../core/model/project.ts";
import { expandUrlTemplate, parseUrlTemplate } from "../../core/model/url-template.ts";

export interface HttpToolConfig {
  name: string;
  /** Header name → value, already resolved from literals and the environment. */
  headers: Record<string, string>;
  maxResponseBytes: number;
  operations: Map<string, HttpReach>;
  fetch?: typeof fetch;
}

const BODY_METHODS = new Set(["POST", "PUT", "PATCH"]);

export class HttpTool {
  constructor(private readonly config: HttpToolConfig) {
    for (const [op, reach] of config.operations) {
      const t = parseUrlTemplate(reach.url);
      if (!t.ok || t.origin !== reach.origin)
        throw new Error(
          `Tool/${config.name} operation ${op}: url ${t.ok ? "origin changed" : t.message}`,
        );
    }
  }

  async execute(operation: string, input: unknown): Promise<{ ok: boolean; result: unknown }> {
    const op = this.config.operations.get(operation);
    if (!op)
      return {
        ok: false,
        result: { error: `tool ${this.config.name} offers no operation ${operation} to this run` },
      };
    const fields =
      input !== null && typeof input === "object" && !Array.isArray(input)
        ? (input as Record<string, unknown>)
        : {};
    const expanded = expandUrlTemplate(op.url, op.origin, fields);
    if (!expanded.ok) return { ok: false, result: { error: expanded.message } };
    const template = parseUrlTemplate(op.url);
    const used = new Set(template.ok ? template.placeholders : []);
    const headers: Record<string, string> = { ...this.config.headers, Accept: "application/json" };
    let body: string | undefined;
    if (BODY_METHODS.has(op.method)) {
      const rest: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(fields)) if (!used.has(k)) rest[k] = v;
      body = JSON.stringify(rest);
      headers["Content-Type"] = "application/json";
    }
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), op.timeoutMs);
    const target = `${op.method} ${expanded.url.origin}${expanded.url.pathname}`;
    try {
      const res = await (this.config.fetch ?? fetch)(expanded.url, {
        method: op.method,
        headers,
        ...(body !== undefined ? { body } : {}),
        redirect: "manual",
        signal: controller.signal,
      });
      const read = await readCapped(res, this.config.maxResponseBytes);
      if (read === undefined) {
        controller.abort();
        return {
          ok: false,
          result: {
            status: res.status,
            error: `the response from ${target} is larger than maxResponseBytes (${this.config.maxResponseBytes}); not read`,
          },
        };
      }
      const text = new TextDecoder().decode(read);
      const result: Record<string, unknown> = { status: res.status, body: parseJson(text) };
      if (res.status >= 300 && res.status < 400)
        result.redirect = "not followed: an http tool reaches only its declared origin";
      return { ok: res.status >= 200 && res.status < 300, result };
    } catch (e) {
      const aborted = controller.signal.aborted;
      return {
        ok: false,
        result: {
          error: aborted
            ? `${target} did not answer within ${op.timeoutMs} ms`
            : `${target} failed: ${(e as Error).message}`,
        },
      };
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The body, or undefined when it would exceed `cap` bytes (reading stops there). */
async function readCapped(res: Response, cap: number): Promise<Uint8Array | undefined> {
  const declared = Number(res.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > cap) {
    await res.body?.cancel().catch(() => {});
    return undefined;
  }
  if (!res.body) return new Uint8Array();
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > cap) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

function parseJson(text: string): unknown {
  if (text.trim() === "") return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
