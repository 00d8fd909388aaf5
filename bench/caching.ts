/**
 * The caching section of `npm run bench`: the review-fix example driven by a recorded transcript
 * (its model script, played back by a local server that speaks the Messages API as the SDK
 * expects: __tests__/helpers/messages-api.ts and review-transcript.ts) with every agent on
 * `anthropic/claude-test`, through both gates to done, in process. Every request the Anthropic
 * adapter sends is kept and read as the API would read it for caching:
 *
 * - a request's input is its blocks in the API's order (each tool, the system blocks, each
 *   message's content blocks), `cache_control` left out when blocks are compared;
 * - the part the API can serve from its cache is the longest prefix of those blocks that ends at
 *   a breakpoint (a block with `cache_control`) of an earlier request of the run and repeats that
 *   request's blocks exactly, when it is at least MIN_CACHEABLE_TOKENS long;
 * - tokens are estimated as the adapter does (estimateTokens: four characters each).
 *
 * Reported: the share of input before a cached breakpoint over every request after each agent
 * step's first (target >= 60%), its lowest per request, the same over the later requests the
 * API could cache at all (the request before them reached its 1,024-token minimum; the
 * example's TestWriter and Builder turns are shorter, so nothing of theirs can be cached), and
 * the input tokens billed at full price per run (input not read from the cache) against the
 * total input. TERFYN_BENCH_VERBOSE=1 prints each request.
 *
 *   npx tsx bench/caching.ts [--check]
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runTerfyn } from "../__tests__/helpers/cli.ts";
import {
  type MessagesApi,
  type MessagesRequest,
  startMessagesApi,
} from "../__tests__/helpers/messages-api.ts";
import { REVIEW_EXAMPLE } from "../__tests__/helpers/review-run.ts";
import { reviewAgentOf, transcriptAnswer } from "../__tests__/helpers/review-transcript.ts";
import { estimateTokens, MIN_CACHEABLE_TOKENS } from "../src/adapters/models/anthropic.ts";
import { type Target, targetLines } from "./target.ts";

export const TARGET_CACHED_SHARE = 0.6;

/** Each request of the last run, for TERFYN_BENCH_VERBOSE=1. */
let lastShares: ReturnType<typeof cacheableShares> = [];

export class CachingBenchBroken extends Error {}

interface Block {
  /** The block as the cache compares it: its JSON without cache_control. */
  key: string;
  breakpoint: boolean;
}

/** A request's input blocks in the API's order: tools, system, messages. */
export function blocksOf(body: MessagesRequest): Block[] {
  const out: Block[] = [];
  const add = (b: Record<string, unknown>) => {
    const { cache_control, ...rest } = b;
    out.push({ key: JSON.stringify(rest), breakpoint: cache_control !== undefined });
  };
  for (const t of body.tools ?? []) add(t);
  for (const s of Array.isArray(body.system) ? body.system : [{ type: "text", text: body.system }])
    add(s);
  for (const m of body.messages ?? []) {
    const content = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    for (const c of content) add({ role: m.role, ...c });
  }
  return out;
}

const tokensOf = (blocks: readonly Block[]) =>
  blocks.reduce((n, b) => n + estimateTokens(b.key), 0);

/**
 * Per request: its input tokens, and those the cache can serve (the longest prefix ending at an
 * earlier request's breakpoint that this request repeats, when long enough to be cached).
 */
export function cacheableShares(bodies: readonly MessagesRequest[]): {
  agent: string;
  total: number;
  cached: number;
  /** The input of the agent step's request before this one (0 for its first). */
  previous: number;
}[] {
  const lastOf = new Map<string, number>();
  /** Every cached prefix written so far: its blocks' keys joined. */
  const written = new Set<string>();
  return bodies.map((body) => {
    const blocks = blocksOf(body);
    let cached = 0;
    const keys: string[] = [];
    for (let i = 0; i < blocks.length; i++) {
      keys.push((blocks[i] as Block).key);
      const prefix = keys.join("\n");
      if (written.has(prefix)) cached = tokensOf(blocks.slice(0, i + 1));
    }
    // This request writes (or refreshes) a cache entry at each of its breakpoints.
    for (let i = 0; i < blocks.length; i++) {
      if (!(blocks[i] as Block).breakpoint) continue;
      const prefix = blocks.slice(0, i + 1);
      if (tokensOf(prefix) >= MIN_CACHEABLE_TOKENS)
        written.add(prefix.map((b) => b.key).join("\n"));
    }
    const agent = reviewAgentOf(body);
    const total = tokensOf(blocks);
    const first = !(body.messages ?? []).some((m: { role: string }) => m.role === "assistant");
    const previous = first ? 0 : (lastOf.get(agent) ?? 0);
    lastOf.set(agent, total);
    return { agent, total, cached, previous };
  });
}

/** One review run of the example on the transcript, to done; every request body. */
async function reviewOnTranscript(): Promise<MessagesApi> {
  const api = await startMessagesApi(transcriptAnswer);
  const { execFileSync } = await import("node:child_process");
  const out = join(mkdtempSync(join(tmpdir(), "terfyn-bench-cache-")), "repo");
  const built = JSON.parse(
    execFileSync(process.execPath, [join(REVIEW_EXAMPLE, "build-repo.mjs"), out], {
      encoding: "utf8",
    }),
  ) as { repo: string; request: string };
  const runDir = join(out, "..", "run");
  const env = { ANTHROPIC_API_KEY: "sk-ant-bench", ANTHROPIC_BASE_URL: api.origin };
  const cli = (args: string[]) => runTerfyn(args, built.repo, env);
  let r = await cli([
    "review",
    "--repo",
    built.repo,
    "--request",
    built.request,
    "--run-dir",
    runDir,
    "--model",
    "anthropic/claude-test",
  ]);
  for (let gate = 0; gate < 2 && r.code === 2; gate++) {
    const { readFileSync } = await import("node:fs");
    const hash = JSON.parse(readFileSync(join(runDir, "state.json"), "utf8")).awaiting.hash;
    const ok = await cli(["approve", "--run", runDir, "--hash", hash]);
    if (ok.code !== 0) throw new CachingBenchBroken(`approve failed: ${ok.stderr}`);
    r = await cli(["review", "--resume", runDir]);
  }
  await api.close();
  if (r.code !== 0 || !r.stdout.startsWith("done:"))
    throw new CachingBenchBroken(`the review run did not end done: ${r.stdout}${r.stderr}`);
  if (api.problems.length > 0)
    throw new CachingBenchBroken(`requests the API refuses: ${api.problems.join("; ")}`);
  return api;
}

export async function runCachingBench(): Promise<{ rows: string[][]; targets: Target[] }> {
  const api = await reviewOnTranscript();
  const shares = cacheableShares(api.bodies);
  lastShares = shares;
  // After each agent step's first turn: a request with an assistant turn in it.
  const later = shares.filter((_, i) =>
    (api.bodies[i]?.messages ?? []).some((m: { role: string }) => m.role === "assistant"),
  );
  const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
  const share = sum(later.map((s) => s.cached)) / Math.max(1, sum(later.map((s) => s.total)));
  const lowest = Math.min(...later.map((s) => s.cached / Math.max(1, s.total)));
  // The later turns the API could cache at all: the turn before them reached its minimum.
  const cacheable = later.filter((s) => s.previous >= MIN_CACHEABLE_TOKENS);
  const cacheableShare =
    sum(cacheable.map((s) => s.cached)) / Math.max(1, sum(cacheable.map((s) => s.total)));
  const total = sum(shares.map((s) => s.total));
  const fullPrice = sum(shares.map((s) => s.total - s.cached));
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  return {
    rows: [
      ["requests (first turns / later turns)", `${shares.length - later.length} / ${later.length}`],
      ["input before a cached breakpoint, later turns", pct(share)],
      ["lowest share of one later request", pct(lowest)],
      [
        `later turns after a turn of >= ${MIN_CACHEABLE_TOKENS} tokens (the API's minimum)`,
        `${cacheable.length} of ${later.length}, ${pct(cacheableShare)} before a cached breakpoint`,
      ],
      [
        "input tokens billed at full price per run (est.)",
        `${fullPrice} of ${total} (${pct(fullPrice / Math.max(1, total))})`,
      ],
    ],
    targets: [
      [
        "prompt cache: input before a cached breakpoint, later turns",
        share >= TARGET_CACHED_SHARE,
        `${pct(share)} (target >= ${pct(TARGET_CACHED_SHARE)}; lowest ${pct(lowest)})`,
      ],
    ],
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await runCachingBench();
  if (process.env.TERFYN_BENCH_VERBOSE)
    for (const row of lastShares) process.stdout.write(`${JSON.stringify(row)}\n`);
  for (const [k, v] of r.rows) process.stdout.write(`${(k ?? "").padEnd(52)} ${v}\n`);
  for (const line of targetLines(r.targets, 60)) process.stdout.write(`${line}\n`);
  if (process.argv.includes("--check") && r.targets.some(([, ok]) => !ok)) process.exit(1);
}
