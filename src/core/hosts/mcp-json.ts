/**
 * A repository's `.mcp.json` (the MCP servers a project offers its agent, read by Claude Code
 * and others): each server with what it reaches, a program it starts (stdio: `command`, `args`,
 * the names of the `env` it is given) or a URL it calls (`http`/`sse`: `url`, the names of its
 * `headers`), at its line. Any change to a server is a change of reach: a server added or
 * changed widens, one removed narrows. Strict JSON, like the settings files. Pure.
 */
import { getNodeValue, type Node } from "jsonc-parser";
import { type Diagnostic, diagnostic, type Span } from "../diagnostics.ts";
import type { HostChange, HostFile } from "./claude-settings.ts";
import { child, parseStrictJson, spanOf, stringList } from "./json-nodes.ts";

export interface McpServer {
  name: string;
  transport: "stdio" | "http" | "sse";
  /** stdio: the program and its arguments, as written. */
  command?: string;
  args?: string[];
  /** The names of the environment it is given (values are not kept: they may be secrets). */
  env?: string[];
  /** http/sse: the URL, and the names of the headers sent. */
  url?: string;
  headers?: string[];
  /** A digest of everything about the server, values included, to tell any change. */
  fingerprint: string;
  span: Span;
}

export interface McpConfig {
  servers: McpServer[];
  diagnostics: Diagnostic[];
}

const stringMapKeys = (n: Node | undefined): string[] | undefined =>
  n?.type === "object" &&
  (n.children ?? []).every((p) => (p.children?.[1]?.type ?? "") === "string")
    ? (n.children ?? []).map((p) => String(p.children?.[0]?.value))
    : undefined;

export function readMcpJson(file: HostFile): McpConfig {
  const out: McpConfig = { servers: [], diagnostics: [] };
  const root = parseStrictJson(file, "no server in it is read", out.diagnostics);
  if (!root) return out;
  const servers = child(root, "mcpServers");
  if (root.type !== "object" || (servers !== undefined && servers.type !== "object")) {
    const at = servers ?? root;
    out.diagnostics.push(
      diagnostic(
        "TF6002",
        spanOf(file, at.offset, at.length),
        "`mcpServers` must be an object of servers by name",
      ),
    );
    return out;
  }
  for (const prop of servers?.children ?? []) {
    const [k, v] = prop.children ?? [];
    if (!k || !v) continue;
    const name = String(k.value);
    const span = spanOf(file, k.offset, k.length);
    const wrong = (what: string) =>
      out.diagnostics.push(diagnostic("TF6002", span, `server ${JSON.stringify(name)}: ${what}`));
    if (v.type !== "object") {
      wrong("must be an object with a command (stdio) or a url (http, sse)");
      continue;
    }
    const type = child(v, "type");
    const transport = type === undefined ? undefined : getNodeValue(type);
    const command = child(v, "command");
    const url = child(v, "url");
    const fingerprint = JSON.stringify(getNodeValue(v));
    if (
      url !== undefined ||
      transport === "http" ||
      transport === "sse" ||
      transport === "streamable-http"
    ) {
      const headers = child(v, "headers");
      const headerNames = headers === undefined ? [] : stringMapKeys(headers);
      if (url?.type !== "string") wrong("an http or sse server needs its url as a string");
      else if (headerNames === undefined) wrong("`headers` must map header names to strings");
      else
        out.servers.push({
          name,
          transport: transport === "sse" ? "sse" : "http",
          url: String(getNodeValue(url)),
          headers: headerNames,
          fingerprint,
          span,
        });
      continue;
    }
    const args = child(v, "args");
    const argList = args === undefined ? [] : stringList(args);
    const env = child(v, "env");
    const envNames = env === undefined ? [] : stringMapKeys(env);
    if (command?.type !== "string") wrong("a stdio server needs its command as a string");
    else if (argList === undefined) wrong("`args` must be a list of strings");
    else if (envNames === undefined) wrong("`env` must map variable names to strings");
    else
      out.servers.push({
        name,
        transport: "stdio",
        command: String(getNodeValue(command)),
        args: argList,
        env: envNames,
        fingerprint,
        span,
      });
  }
  return out;
}

/** What the server reaches, in one phrase. */
function reach(s: McpServer): string {
  return s.transport === "stdio"
    ? `runs ${[s.command, ...(s.args ?? [])].join(" ")}`
    : `calls ${s.url}`;
}

/**
 * Each server added, removed or changed, keyed `mcpServers.<name>` as written. Any change to a
 * server (its program, arguments, environment, URL or headers, values included) widens: what it
 * reaches afterwards cannot be shown to be less.
 */
export function mcpChanges(base: McpConfig, head: McpConfig): HostChange[] {
  const before = new Map(base.servers.map((s) => [s.name, s]));
  const after = new Map(head.servers.map((s) => [s.name, s]));
  const out: HostChange[] = [];
  for (const s of head.servers) {
    const was = before.get(s.name);
    if (was && was.fingerprint === s.fingerprint) continue;
    out.push({
      direction: "widened",
      key: `mcpServers.${s.name}`,
      change: was ? "changed" : "added",
      file: s.span.file,
      line: s.span.line,
      reason: was
        ? `the server changed: it ${reach(s)}${reach(was) === reach(s) ? " (its environment or headers changed)" : ` (it ${reach(was)} before)`}`
        : `a new MCP server: it ${reach(s)}`,
    });
  }
  for (const s of base.servers)
    if (!after.has(s.name))
      out.push({
        direction: "narrowed",
        key: `mcpServers.${s.name}`,
        change: "removed",
        file: s.span.file,
        line: s.span.line,
        reason: `the server is gone: it ${reach(s)}`,
      });
  return out;
}
