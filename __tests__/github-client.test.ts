/**
 * The Octokit client keeps @actions/github's proxy-aware request defaults unless a test hands it
 * a fetch (replacing `request` wholesale would silently ignore HTTPS_PROXY on self-hosted runners).
 */
import { describe, expect, it } from "vitest";
import { createGitHubClient, describeApiError } from "../src/adapters/github/client.ts";

type Defaults = { request?: { fetch?: unknown; agent?: unknown } };

describe("GitHub client", () => {
  it("keeps the proxy-aware fetch and agent by default", () => {
    const d = createGitHubClient("t").request.endpoint.DEFAULTS as unknown as Defaults;
    expect(typeof d.request?.fetch).toBe("function");
    expect(d.request?.agent).toBeDefined();
  });

  it("uses the given fetch in tests", () => {
    const f = (async () => new Response("{}")) as unknown as typeof fetch;
    const d = createGitHubClient("t", { fetch: f }).request.endpoint
      .DEFAULTS as unknown as Defaults;
    expect(d.request?.fetch).toBe(f);
  });

  it("turns API failures into one sentence, naming a read-only token on 403", () => {
    expect(
      describeApiError(
        { status: 403, response: { data: { message: "Resource not accessible by integration" } } },
        "commenting",
      ),
    ).toBe(
      "commenting failed (HTTP 403: Resource not accessible by integration); the token may lack permission (a fork's pull request gets a read-only token)",
    );
    expect(
      describeApiError({ status: 502, message: "Bad Gateway" }, "creating the check run"),
    ).toBe("creating the check run failed (HTTP 502): Bad Gateway");
  });
});
