/**
 * Facts for the referee (docs/review-doctrine.md, doctrine 7): a failure's signature with what
 * changes between two runs of the same failure taken out (durations, timestamps, temporary
 * paths, the run's own directories, memory addresses, process ids), so the same failure twice
 * is recognised as such; and the failure's class as observed from the command, not as an agent
 * would describe it: a command that is not there, a service that refuses the connection, a
 * credential that is missing or refused, or a timeout is the environment; the same attempt
 * failing differently is mechanical (flaky: phases/build.ts); anything else is tactical. Pure.
 */
import { createHash } from "node:crypto";
import type { FailureClass } from "./referee.ts";

/** `text` with the parts that differ between two runs of one failure replaced by placeholders. */
export function normaliseFailureText(text: string, roots: readonly string[] = []): string {
  let out = text;
  for (const root of [...roots].filter((r) => r.length > 1).sort((a, b) => b.length - a.length))
    out = out.split(root).join("<root>");
  return (
    out
      // ISO and common log timestamps, then clock times.
      .replace(
        /\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?/g,
        "<time>",
      )
      .replace(/\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b/g, "<time>")
      // Durations: 12ms, 0.9 ms, 1.5s, (0.00s), duration_ms: 12.3, in 0.001s, 2m3s.
      .replace(/\bduration_ms:?\s*[\d.]+/gi, "duration_ms <n>")
      .replace(/\b\d+(?:\.\d+)?\s?(?:ns|µs|us|ms|s|sec|secs|seconds|m|min)\b/g, "<duration>")
      // Temporary paths and the like.
      .replace(/(?:\/private)?\/(?:tmp|var\/folders|var\/tmp)\/[^\s'":)]+/g, "<tmp>")
      .replace(/[A-Za-z]:\\(?:Users\\[^\\]+\\AppData\\Local\\)?Temp\\[^\s'":)]+/g, "<tmp>")
      // Memory addresses and object ids, then process ids.
      .replace(/\b0x[0-9a-f]{4,}\b/gi, "<addr>")
      .replace(/\b(pid|process)\s*[:=]?\s*\d+/gi, "$1 <pid>")
      .replace(/[ \t]+$/gm, "")
  );
}

/** A stable id of a failure: which gate, its exit status and its normalised output. */
export function failureSignature(
  gate: string,
  code: number,
  output: string,
  roots: readonly string[] = [],
): string {
  return createHash("sha256")
    .update(`${gate}\n${code}\n${normaliseFailureText(output, roots)}`)
    .digest("hex")
    .slice(0, 16);
}

const COMMAND_NOT_FOUND =
  /\bcommand not found\b|:\s*not found\s*$|\bNo such file or directory\b.*\b(?:sh|exec|spawn)\b|\bENOENT\b.*\bspawn\b|\bis not recognized as an internal or external command\b/im;
const CONNECTION =
  /\bECONNREFUSED\b|\bconnection refused\b|\bENOTFOUND\b|\bEAI_AGAIN\b|\bETIMEDOUT\b|\bcould not resolve host\b|\bnetwork is unreachable\b|\bname or service not known\b/i;
const AUTHENTICATION =
  /\b(?:401|403)\b.*\b(?:unauthori[sz]ed|forbidden)\b|\bunauthori[sz]ed\b|\bauthentication (?:failed|required)\b|\bpermission denied \(publickey\)|\b(?:invalid|expired|bad) (?:credentials?|token|api key|password)\b/i;
const MISSING_CREDENTIAL =
  /\bmissing (?:credentials?|api key|token|secret)\b|\b(?:credentials?|api key|token) (?:is |are )?(?:missing|not set|not found|required)\b|\b[A-Z][A-Z0-9_]*(?:TOKEN|KEY|SECRET|PASSWORD)\b[^\n]{0,40}\b(?:is )?(?:not set|missing|undefined|required)\b/i;

export interface ObservedRun {
  code: number;
  timedOut: boolean;
  output: string;
}

/**
 * The class of a failing run, from what was observed, and the evidence. (The same attempt
 * failing differently, mechanical, needs the loop's history: the build phase decides it.)
 */
export function observedFailureClass(run: ObservedRun): {
  failure_class: FailureClass;
  evidence: string;
} {
  const line = (re: RegExp) =>
    run.output
      .split("\n")
      .find((l) => re.test(l))
      ?.trim() ??
    run.output.match(re)?.[0] ??
    "";
  if (run.timedOut)
    return {
      failure_class: "environmental",
      evidence: "the command timed out (killed with its process group)",
    };
  if (run.code === 127 || COMMAND_NOT_FOUND.test(run.output))
    return {
      failure_class: "environmental",
      evidence: `command not found (exit ${run.code}): ${line(COMMAND_NOT_FOUND) || "exit 127"}`,
    };
  if (run.code === 126)
    return {
      failure_class: "environmental",
      evidence: "the command could not be executed (exit 126)",
    };
  if (CONNECTION.test(run.output))
    return {
      failure_class: "environmental",
      evidence: `a service refused or could not be reached: ${line(CONNECTION)}`,
    };
  if (MISSING_CREDENTIAL.test(run.output))
    return {
      failure_class: "environmental",
      evidence: `a credential is missing: ${line(MISSING_CREDENTIAL)}`,
    };
  if (AUTHENTICATION.test(run.output))
    return {
      failure_class: "environmental",
      evidence: `authentication failed: ${line(AUTHENTICATION)}`,
    };
  return { failure_class: "tactical", evidence: `exit ${run.code}` };
}
