/**
 * The `command` and `http` settings of a Tool resource, checked and resolved: each operation's
 * reach (its argv, or its method and URL template with a fixed origin), the command tool's
 * environment allowlist, the http tool's headers. Problems are diagnostics at the YAML field:
 * TF2011 (argv), TF2012 (URL template), TF2013 (settings missing or on the wrong adapter),
 * TF2014 (headers). Pure: argv[0] is resolved on disk only when a run starts.
 */
import type { LoadedResource, PathSegment } from "../config/load-resources.ts";
import type { OperationSpec } from "../config/schemas.ts";
import { type Diagnostic, type DiagnosticCode, diagnostic } from "../diagnostics.ts";
import type { HttpHeader, OperationReach, ResolvedTool } from "./project.ts";
import { parseUrlTemplate } from "./url-template.ts";

export const COMMAND_DEFAULTS = { timeoutMs: 30_000, maxOutputBytes: 1024 * 1024 } as const;
export const HTTP_DEFAULTS = { timeoutMs: 10_000, maxResponseBytes: 1024 * 1024 } as const;

/** Headers Terfyn or the transport sets; a resource may not. */
const RESERVED_HEADERS = new Set([
  "host",
  "content-length",
  "content-type",
  "transfer-encoding",
  "connection",
]);
/** Header names that carry credentials: their value must come from the environment. */
const CREDENTIAL_HEADER =
  /^(authorization|proxy-authorization|cookie)$|token|secret|key|auth|pass|session/i;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export interface ResolvedAdapterSettings {
  command?: NonNullable<ResolvedTool["command"]>;
  http?: NonNullable<ResolvedTool["http"]>;
  /** Reach of each operation, by name (command and http tools only). */
  reach: Map<string, OperationReach>;
}

export function resolveAdapterSettings(
  res: LoadedResource<"Tool">,
  diagnostics: Diagnostic[],
): ResolvedAdapterSettings {
  const spec = res.value.spec;
  const adapter = spec.adapter;
  const report = (code: DiagnosticCode, path: PathSegment[], message: string, hint?: string) =>
    diagnostics.push(
      diagnostic(
        code,
        res.spanOf(path),
        `Tool/${res.name}: ${message}`,
        hint === undefined ? {} : { hint },
      ),
    );
  const out: ResolvedAdapterSettings = { reach: new Map() };
  const operations = Object.entries(spec.operations) as [string, OperationSpec][];

  for (const block of ["command", "http"] as const) {
    if (spec[block] !== undefined && adapter !== block)
      report(
        "TF2013",
        ["spec", block],
        `\`spec.${block}\` applies only to \`adapter: ${block}\`; this tool's adapter is ${adapter}`,
      );
    for (const [op, o] of operations) {
      if (o[block] !== undefined && adapter !== block)
        report(
          "TF2013",
          ["spec", "operations", op, block],
          `operation \`${op}\`: \`${block}\` applies only to \`adapter: ${block}\`; this tool's adapter is ${adapter}`,
        );
    }
  }

  if (adapter === "command") {
    const tool = spec.command ?? {};
    out.command = {
      env: [...new Set(tool.env ?? [])],
      maxOutputBytes: tool.maxOutputBytes ?? COMMAND_DEFAULTS.maxOutputBytes,
    };
    if (tool.argv !== undefined) checkArgv(tool.argv, ["spec", "command", "argv"]);
    for (const [op, o] of operations) {
      const argv = o.command?.argv ?? tool.argv;
      if (o.command?.argv !== undefined)
        checkArgv(o.command.argv, ["spec", "operations", op, "command", "argv"]);
      if (argv === undefined) {
        report(
          "TF2011",
          ["spec", "operations", op],
          `operation \`${op}\` has no argv: a command tool runs a fixed program`,
          "declare `spec.command.argv: [program, arg, …]`, or `command: { argv: […] }` on the operation",
        );
        continue;
      }
      if (argv.length === 0) continue; // reported where the argv is written
      out.reach.set(op, {
        kind: "command",
        argv: [...argv],
        inputAs: o.command?.inputAs ?? tool.inputAs ?? "stdin",
        timeoutMs: o.command?.timeoutMs ?? tool.timeoutMs ?? COMMAND_DEFAULTS.timeoutMs,
      });
    }
  }

  if (adapter === "http") {
    const tool = spec.http ?? {};
    const headers: HttpHeader[] = [];
    const seen = new Set<string>();
    for (const [name, value] of Object.entries(tool.headers ?? {})) {
      const path = ["spec", "http", "headers", name];
      const lower = name.toLowerCase();
      if (!HEADER_NAME.test(name)) {
        report("TF2014", path, `header name \`${name}\` is not a valid HTTP header name`);
        continue;
      }
      if (RESERVED_HEADERS.has(lower)) {
        report(
          "TF2014",
          path,
          `header \`${name}\` is set by Terfyn or the transport, not by a resource`,
        );
        continue;
      }
      if (seen.has(lower)) {
        report("TF2014", path, `header \`${name}\` is given twice (header names ignore case)`);
        continue;
      }
      seen.add(lower);
      if (typeof value === "string") {
        if (CREDENTIAL_HEADER.test(name)) {
          report(
            "TF2014",
            path,
            `header \`${name}\` carries a credential, so its value must not be written in the resource`,
            `use \`${name}: { fromEnv: SOME_VARIABLE }\` (with \`prefix: "Bearer "\` if needed)`,
          );
          continue;
        }
        if (/[\r\n\0]/.test(value)) {
          report("TF2014", path, `header \`${name}\` holds a line break or NUL`);
          continue;
        }
        headers.push({ name, literal: value });
      } else {
        if (value.prefix !== undefined && /[\r\n\0]/.test(value.prefix)) {
          report("TF2014", path, `header \`${name}\`: its prefix holds a line break or NUL`);
          continue;
        }
        headers.push({
          name,
          fromEnv: value.fromEnv,
          ...(value.prefix !== undefined ? { prefix: value.prefix } : {}),
        });
      }
    }
    out.http = {
      headers,
      maxResponseBytes: tool.maxResponseBytes ?? HTTP_DEFAULTS.maxResponseBytes,
    };
    for (const [op, o] of operations) {
      if (o.http === undefined) {
        report(
          "TF2013",
          ["spec", "operations", op],
          `operation \`${op}\` has no \`http: { method, url }\`: an http operation names its request`,
        );
        continue;
      }
      const t = parseUrlTemplate(o.http.url);
      if (!t.ok) {
        report(
          "TF2012",
          ["spec", "operations", op, "http", "url"],
          `operation \`${op}\`: url ${t.message}`,
        );
        continue;
      }
      out.reach.set(op, {
        kind: "http",
        method: o.http.method,
        url: o.http.url,
        origin: t.origin,
        timeoutMs: o.http.timeoutMs ?? tool.timeoutMs ?? HTTP_DEFAULTS.timeoutMs,
      });
    }
  }
  return out;

  function checkArgv(argv: string[], path: PathSegment[]): void {
    if (argv.length === 0) {
      report(
        "TF2011",
        path,
        "argv is empty: name the program to run",
        "e.g. argv: [node, scripts/deploy.mjs]",
      );
      return;
    }
    if ((argv[0] as string).trim() === "")
      report("TF2011", [...path, 0], "argv[0] is empty: name the program to run");
    for (const [i, a] of argv.entries()) {
      if (a.includes("\0")) report("TF2011", [...path, i], `argv[${i}] holds a NUL byte`);
    }
  }
}
