/**
 * The real sandbox for tests: bubblewrap, proven on this machine once per test file. The tests
 * that execute code run it exactly as the product does (.ci/run installs bubblewrap).
 */
import { openSandbox } from "../../src/adapters/sandbox/open-sandbox.ts";
import type { Sandbox } from "../../src/adapters/sandbox/sandbox.ts";

let opened: Promise<Sandbox> | undefined;

export function testSandbox(): Promise<Sandbox> {
  // As the product opens it from the operator's environment: PATH, and TERFYN_SANDBOX_READ_ONLY
  // (.ci/run shows a fetched Node's directory there).
  opened ??= openSandbox({ env: process.env });
  return opened;
}

/** Runs a shell script in the sandbox, with `writable` as the worktree; output as text. */
export async function runInSandbox(
  sandbox: Sandbox,
  script: string,
  options: {
    writable: string;
    env?: Record<string, string>;
    network?: boolean;
    timeoutMs?: number;
    hide?: string[];
  },
): Promise<{ code: number | null; timedOut: boolean; out: string }> {
  let out = "";
  const exit = await sandbox.run({
    argv: ["/bin/sh", "-c", script],
    writable: options.writable,
    env: { PATH: "/usr/bin:/bin", ...options.env },
    timeoutMs: options.timeoutMs ?? 20_000,
    ...(options.network ? { network: true } : {}),
    ...(options.hide ? { hide: options.hide } : {}),
    onStdout: (c) => {
      out += c.toString();
    },
    onStderr: (c) => {
      out += c.toString();
    },
  });
  return { code: exit.code, timedOut: exit.timedOut, out };
}
