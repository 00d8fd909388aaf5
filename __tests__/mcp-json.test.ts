/**
 * A repository's .mcp.json: each server with what it reaches (the program it starts, the URL it
 * calls), at its line; any change to a server widens, a removed server narrows; values of env
 * and headers are compared but never kept; a malformed file or server is an error at its line.
 */
import { describe, expect, it } from "vitest";
import { mcpChanges, readMcpJson } from "../src/core/hosts/mcp-json.ts";

const read = (text: string) => readMcpJson({ path: ".mcp.json", text });
const changes = (base: string, head: string) =>
  mcpChanges(read(base), read(head)).map((c) => `${c.direction} ${c.change} ${c.key} @${c.line}`);

const REAL = `{
  "mcpServers": {
    "serena": {
      "command": "uvx",
      "args": ["--from", "git+https://github.com/oraios/serena", "serena", "start-mcp-server"]
    },
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/",
      "headers": { "Authorization": "Bearer \${GITHUB_PAT}" }
    },
    "db": { "command": "npx", "args": ["-y", "@example/db-mcp"], "env": { "DB_URL": "postgres://x" } }
  }
}
`;

describe(".mcp.json", () => {
  it("reads stdio and http servers at their line; env and header values are not kept", () => {
    const c = read(REAL);
    expect(c.diagnostics).toEqual([]);
    expect(c.servers.map((s) => [s.name, s.transport, s.span.line])).toEqual([
      ["serena", "stdio", 3],
      ["github", "http", 7],
      ["db", "stdio", 12],
    ]);
    expect(c.servers[1]).toMatchObject({
      url: "https://api.githubcopilot.com/mcp/",
      headers: ["Authorization"],
    });
    expect(c.servers[2]).toMatchObject({ command: "npx", env: ["DB_URL"] });
    expect(JSON.stringify(c.servers.map(({ fingerprint: _, ...s }) => s))).not.toContain(
      "postgres://x",
    );
  });

  it("a new server widens, a changed one widens (its URL, or only an env value), a removed one narrows; an unchanged file is no change", () => {
    expect(changes(REAL, REAL)).toEqual([]);
    const moved = REAL.replace(
      "https://api.githubcopilot.com/mcp/",
      "https://collector.example/mcp/",
    );
    expect(changes(REAL, moved)).toEqual(["widened changed mcpServers.github @7"]);
    expect(changes(REAL, REAL.replace("postgres://x", "postgres://prod"))).toEqual([
      "widened changed mcpServers.db @12",
    ]);
    expect(changes('{"mcpServers":{}}', REAL)).toEqual([
      "widened added mcpServers.serena @3",
      "widened added mcpServers.github @7",
      "widened added mcpServers.db @12",
    ]);
    expect(changes(REAL, '{"mcpServers":{}}')).toEqual([
      "narrowed removed mcpServers.serena @3",
      "narrowed removed mcpServers.github @7",
      "narrowed removed mcpServers.db @12",
    ]);
  });

  it("a malformed file or server is an error at its line, never a skipped server", () => {
    expect(read('{"mcpServers": {,}}').diagnostics.map((d) => d.code)).toEqual(["TF6001"]);
    expect(read('{"mcpServers": []}').diagnostics.map((d) => d.code)).toEqual(["TF6002"]);
    const bad = read(`{"mcpServers": {
  "a": {"command": 1},
  "b": {"command": "x", "args": "y"},
  "c": {"type": "http"},
  "d": "npx thing"
}}`);
    expect(bad.diagnostics.map((d) => `${d.code} ${d.span.line}`)).toEqual([
      "TF6002 2",
      "TF6002 3",
      "TF6002 4",
      "TF6002 5",
    ]);
    expect(bad.servers).toEqual([]);
  });
});
