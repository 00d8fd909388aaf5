/**
 * The Octokit client every GitHub adapter uses: @actions/github's Octokit with the retry and
 * throttling plugins (secondary rate limits wait and retry a bounded number of times; writes
 * are spaced only past a short burst). Tests
 * pass Node's global fetch, which nock intercepts, and turn retries off.
 */
import { getOctokit } from "@actions/github";
import { retry } from "@octokit/plugin-retry";
import { throttling } from "@octokit/plugin-throttling";
import Bottleneck from "bottleneck/light.js";

/**
 * Mutating requests: a burst of up to 10 at once, then one per second (comments: one per 3 s). GitHub asks for a
 * second between writes when making *many* of them; the plugin's default spaces every write
 * (a normal pull request's check run, comment and status cost two idle seconds), so only long
 * runs (annotation batches, many projects) are spaced.
 */
export const WRITE_BURST = 10;
function burstLimiter(id: string, spacingMs: number): Bottleneck.Group {
  return new Bottleneck.Group({
    id,
    maxConcurrent: 1,
    minTime: 0,
    reservoir: WRITE_BURST,
    reservoirIncreaseAmount: 1,
    reservoirIncreaseInterval: spacingMs,
    reservoirIncreaseMaximum: WRITE_BURST,
  });
}

export type GitHubClient = ReturnType<typeof getOctokit>;

export interface ClientOptions {
  fetch?: typeof fetch;
  /** Retries on 5xx and rate limits; 0 in tests. */
  retries?: number;
  log?: (message: string) => void;
}

export function createGitHubClient(token: string, options: ClientOptions = {}): GitHubClient {
  const retries = options.retries ?? 3;
  return getOctokit(
    token,
    {
      // Only tests replace `request` (to hand Octokit Node's global fetch): replacing it drops
      // @actions/github's proxy-aware fetch, which self-hosted runners behind a proxy need.
      ...(options.fetch ? { request: { fetch: options.fetch } } : {}),
      retry: { doNotRetry: [400, 401, 403, 404, 422, 451], enabled: retries > 0, retries },
      throttle: {
        enabled: retries > 0,
        // Writes, and the writes that notify people (comments), each past their own burst: the
        // plugin's spacing (1 s, and 3 s between comments) otherwise makes every project of a
        // pull request wait seconds.
        write: burstLimiter("terfyn-write", 1000),
        notifications: burstLimiter("terfyn-notifications", 3000),
        onRateLimit: (
          after: number,
          o: { method: string; url: string },
          _octokit: unknown,
          count: number,
        ) => {
          options.log?.(`GitHub rate limit on ${o.method} ${o.url}; retrying after ${after}s`);
          return count < retries;
        },
        onSecondaryRateLimit: (
          after: number,
          o: { method: string; url: string },
          _octokit: unknown,
          count: number,
        ) => {
          options.log?.(
            `GitHub secondary rate limit on ${o.method} ${o.url}; retrying after ${after}s`,
          );
          return count < retries;
        },
      },
    },
    retry,
    throttling,
  );
}

/** A GitHub API failure as one clear sentence. */
export function describeApiError(e: unknown, what: string): string {
  const err = e as {
    status?: number;
    message?: string;
    response?: { data?: { message?: string } };
  };
  const status = err.status;
  const detail = err.response?.data?.message ?? err.message ?? String(e);
  if (status === 403 || status === 404) {
    return `${what} failed (HTTP ${status}: ${detail}); the token may lack permission (a fork's pull request gets a read-only token)`;
  }
  return `${what} failed${status ? ` (HTTP ${status})` : ""}: ${detail}`;
}
