/**
 * Gates (docs/review-doctrine.md, doctrine 5): an approval is the content hash of the artifact it approves,
 * recorded in an append-only log. One shared check is called at every gate and again inside
 * every publisher, so a revised artifact needs a fresh approval, a mis-sequenced publish fails,
 * and nothing an agent writes can approve anything (agents cannot write the log: see
 * RESERVED_NAMES). Pure.
 */
import { createHash } from "node:crypto";

export type GateName = "plan" | "publish";

export interface ApprovalEntry {
  gate: GateName;
  hash: string;
  approved_at: string;
  /** Who recorded it: `--by`, else the git identity where approve ran, else the OS user. */
  by: string;
  /** A recorded refusal ends the run as not-approved; absent means approve. */
  decision?: "approve" | "deny";
  /** Why a refusal was made (required with `decision: "deny"`). */
  reason?: string;
}

/**
 * What is wrong with one line of the approvals log, as read back: nothing for a well-formed
 * entry. A damaged log is refused rather than read around, so a line that lost its gate or its
 * hash cannot quietly stop counting (or start counting) as an approval.
 */
export function approvalEntryProblems(value: unknown): string[] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return ["not an object"];
  const v = value as Record<string, unknown>;
  const problems: string[] = [];
  if (v.gate !== "plan" && v.gate !== "publish") problems.push("`gate` must be plan or publish");
  if (typeof v.hash !== "string" || !/^sha256:[0-9a-f]{64}$/.test(v.hash))
    problems.push("`hash` must be sha256:<64 hex digits>");
  if (typeof v.approved_at !== "string" || Number.isNaN(Date.parse(v.approved_at)))
    problems.push("`approved_at` must be a timestamp");
  if (typeof v.by !== "string" || v.by.trim() === "") problems.push("`by` must name who");
  if (v.decision !== undefined && v.decision !== "approve" && v.decision !== "deny")
    problems.push("`decision` must be approve or deny");
  if (v.reason !== undefined && typeof v.reason !== "string")
    problems.push("`reason` must be text");
  if (v.decision === "deny" && (typeof v.reason !== "string" || v.reason.trim() === ""))
    problems.push("a deny needs a `reason`");
  return problems;
}

/** Files of a run directory that no phase or agent may write: only the orchestrator's adapters do. */
export const RESERVED_NAMES = [
  "approvals.jsonl",
  "state.json",
  // The run's copy of its validated agents (adapters/fs/agents-cache.ts).
  "agents-project.json",
] as const;

/** `sha256:` over an artifact's exact bytes. */
export function artifactHash(bytes: string | Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

export type GateCheck =
  | { ok: true; hash: string }
  | { ok: false; reason: string; hash: string; refused?: true };

/**
 * The one check every gate and every publisher calls: is there an approval, for this gate, of
 * exactly these bytes, and no refusal of them? A refusal wins over any approval of the same
 * bytes, whichever was recorded first.
 */
export function checkGate(
  gate: GateName,
  artifact: string | Uint8Array,
  log: readonly ApprovalEntry[],
): GateCheck {
  const hash = artifactHash(artifact);
  const refusal = log.find((a) => a.gate === gate && a.hash === hash && a.decision === "deny");
  if (refusal)
    return {
      ok: false,
      hash,
      refused: true,
      reason: `the ${gate} gate's ${hash} was refused by ${refusal.by}${refusal.reason ? `: ${refusal.reason}` : ""}`,
    };
  const mine = log.filter((a) => a.gate === gate && a.decision !== "deny");
  if (mine.some((a) => a.hash === hash)) return { ok: true, hash };
  if (mine.length > 0) {
    return {
      ok: false,
      hash,
      reason: `the ${gate} artifact changed since it was approved (approved ${mine.at(-1)?.hash}, now ${hash}); it needs a fresh approval`,
    };
  }
  return { ok: false, hash, reason: `gate ${gate} has no approval for ${hash}` };
}

export class GateRefused extends Error {
  constructor(
    readonly gate: GateName,
    readonly reason: string,
  ) {
    super(`gate ${gate} refused: ${reason}`);
  }
}

/** For publishers: throws unless the exact publish artifact is approved. */
export function assertGate(
  gate: GateName,
  artifact: string | Uint8Array,
  log: readonly ApprovalEntry[],
): string {
  const r = checkGate(gate, artifact, log);
  if (!r.ok) throw new GateRefused(gate, r.reason);
  return r.hash;
}

/** Whether two commit ids name the same commit (either may be abbreviated). */
export function sameCommit(a: string, b: string): boolean {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x.length >= 7 && y.length >= 7 && (x.startsWith(y) || y.startsWith(x));
}
