/**
 * The http tool adapter against a real server on 127.0.0.1: the origin cannot be changed
 * through input, redirects are not followed, the response is capped, the request times out,
 * only declared headers are sent (secrets from the environment, never in a result), and only
 * the run's granted operations exist.
 */
import { afterEach, describe, expect, it } from "vitest";
import { HttpTool } from "../src/adapters/tools/http-tool.ts";
import { buildToolPort, ToolSetupError } from "../src/adapters/workspace/tool-router.ts";
import { expandUrlTemplate } from "../src/core/model/url-template.ts";
import { type LocalServer, startServer } from "./helpers/local-server.ts";
import { toolProject } from "./helpers/tool-project.ts";

const servers: LocalServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function server(handle?: Parameters<typeof startServer>[0]): Promise<LocalServer> {
  const s = await startServer(handle);
  servers.push(s);
  return s;
}

function toolYaml(http: string, operations: string): string {
  const indent = (text: string, n: number) =>
    text
      .trim()
      .split("\n")
      .map((l) => `${" ".repeat(n)}${l}`)
      .join("\n");
  return `apiVersion: terfyn.dev/v1
kind: Tool
metadata: { name: t }
spec:
  adapter: http
${http.trim() === "" ? "" : `  http:\n${indent(http, 4)}\n`}  operations:
${indent(operations, 4)}
`;
}

async function port(
  http: string,
  operations: string,
  grants: string[],
  env: Record<string, string | undefined> = {},
) {
  const { project, program } = toolProject(toolYaml(http, operations), grants, ["network.egress"]);
  const tools = await buildToolPort(project, program, {
    projectRoot: "/",
    cwd: "/",
    env,
    // http tools execute nothing.
    sandbox: () => Promise.reject(new Error("no sandbox for http")),
  });
  return (operation: string, input: unknown) =>
    tools.execute({ tool: "t", operation, input, idempotencyKey: "k" });
}

describe("http tool", () => {
  it("fills placeholders percent-encoded: input cannot change the host, the path's shape or the query", async () => {
    const s = await server();
    const other = await server();
    const call = await port(
      "",
      `get: { effects: [network.egress], http: { method: GET, url: "${s.origin}/issues/{id}?q={q}" } }`,
      ["tool.t.get"],
    );
    const r = await call("get", { id: "../../admin?x=1#f", q: "a&b=c" });
    expect(r.ok).toBe(true);
    expect(s.requests.map((q) => q.url)).toEqual([
      "/issues/..%2F..%2Fadmin%3Fx%3D1%23f?q=a%26b%3Dc",
    ]);
    await call("get", { id: `@127.0.0.1:${other.port}/x`, q: `//127.0.0.1:${other.port}` });
    expect(s.requests).toHaveLength(2);
    expect(other.requests).toHaveLength(0);
    const dots = await call("get", { id: "..", q: "x" });
    expect(dots.ok).toBe(false);
    expect(JSON.stringify(dots.result)).toContain("must not be empty, `.` or `..`");
    expect(s.requests).toHaveLength(2);
  });

  it("refuses an expansion that leaves the declared origin, and a template with a host placeholder", () => {
    const r = expandUrlTemplate("http://127.0.0.1:{port}/x", "http://127.0.0.1:1", { port: "2" });
    expect(r).toMatchObject({ ok: false });
    expect(
      () =>
        new HttpTool({
          name: "t",
          headers: {},
          maxResponseBytes: 100,
          operations: new Map([
            [
              "get",
              {
                kind: "http",
                method: "GET",
                url: "http://127.0.0.1:{port}/x",
                origin: "http://127.0.0.1:1",
                timeoutMs: 1000,
              },
            ],
          ]),
        }),
    ).toThrow(/placeholder in the host or port/);
  });

  it("does not follow a redirect to another host", async () => {
    const elsewhere = await server();
    const s = await server((_, res) => {
      res.statusCode = 302;
      res.setHeader("location", `${elsewhere.origin}/stolen`);
      res.end();
    });
    const call = await port(
      "",
      `get: { effects: [network.egress], http: { method: GET, url: "${s.origin}/go" } }`,
      ["tool.t.get"],
    );
    const r = await call("get", {});
    expect(r.ok).toBe(false);
    expect(r.result).toMatchObject({ status: 302 });
    expect(elsewhere.requests).toHaveLength(0);
  });

  it("caps the response body, declared or streamed", async () => {
    const s = await server((req, res) => {
      if (req.url === "/chunked") {
        res.write("x".repeat(600));
        res.end("y".repeat(600));
      } else res.end("z".repeat(5000));
    });
    const call = await port(
      "maxResponseBytes: 1000",
      `big: { effects: [network.egress], http: { method: GET, url: "${s.origin}/big" } }
chunked: { effects: [network.egress], http: { method: GET, url: "${s.origin}/chunked" } }
small: { effects: [network.egress], http: { method: GET, url: "${s.origin}/small" } }`,
      ["tool.t.big", "tool.t.chunked"],
    );
    for (const op of ["big", "chunked"]) {
      const r = await call(op, {});
      expect(r.ok, op).toBe(false);
      expect(JSON.stringify(r.result), op).toContain("larger than maxResponseBytes (1000)");
      expect(JSON.stringify(r.result), op).not.toContain("zzzz");
    }
  });

  it("aborts at the timeout", async () => {
    const s = await server(() => {
      // never answers
    });
    const call = await port(
      "timeoutMs: 300",
      `get: { effects: [network.egress], http: { method: GET, url: "${s.origin}/slow" } }`,
      ["tool.t.get"],
    );
    const started = Date.now();
    const r = await call("get", {});
    expect(Date.now() - started).toBeLessThan(3000);
    expect(r.ok).toBe(false);
    expect(JSON.stringify(r.result)).toContain("did not answer within 300 ms");
  });

  it("sends only declared headers, the secret from the environment, and the rest of the input as a JSON body", async () => {
    const s = await server((req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ echoed: req.body }));
    });
    const call = await port(
      'headers:\n  X-Client: terfyn-test\n  Authorization: { fromEnv: API_TOKEN, prefix: "Bearer " }',
      `post: { effects: [network.egress], http: { method: POST, url: "${s.origin}/items/{id}" } }`,
      ["tool.t.post"],
      { API_TOKEN: "secret-123", OTHER_TOKEN: "never-sent" },
    );
    const r = await call("post", {
      id: "7",
      label: "bug",
      headers: { "X-Injected": "1" },
      Authorization: "Bearer forged",
    });
    expect(r.ok).toBe(true);
    const seen = s.requests[0];
    expect(seen?.url).toBe("/items/7");
    expect(seen?.headers.authorization).toBe("Bearer secret-123");
    expect(seen?.headers["x-client"]).toBe("terfyn-test");
    expect(seen?.headers["x-injected"]).toBeUndefined();
    expect(JSON.stringify(seen?.headers)).not.toContain("never-sent");
    expect(JSON.parse(seen?.body ?? "")).toEqual({
      label: "bug",
      headers: { "X-Injected": "1" },
      Authorization: "Bearer forged",
    });
    expect(JSON.stringify(r.result)).not.toContain("secret-123");
  });

  it("only the run's granted operations exist, and an unset header variable stops the run before it starts", async () => {
    const s = await server();
    const call = await port(
      "",
      `get: { effects: [network.egress], http: { method: GET, url: "${s.origin}/a" } }
delete: { effects: [network.egress], http: { method: DELETE, url: "${s.origin}/a" } }`,
      ["tool.t.get"],
    );
    const r = await call("delete", {});
    expect(r.ok).toBe(false);
    expect(s.requests).toHaveLength(0);
    await expect(
      port(
        "headers:\n  Authorization: { fromEnv: UNSET_TOKEN }",
        `get: { effects: [network.egress], http: { method: GET, url: "${s.origin}/a" } }`,
        ["tool.t.get"],
      ),
    ).rejects.toThrow(ToolSetupError);
  });
});
