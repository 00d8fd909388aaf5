/**
 * What a person approves, shown whole: a paused run's awaited item (a gated tool call's agent,
 * operation and every input field; an `approve` statement's value) as terminal text.
 *
 * Nothing is cut silently. A value longer than FOLD_CHARS characters or FOLD_LINES lines is
 * folded into one line giving its size in bytes, its line count and the sha256 of its content
 * (a string's UTF-8 text, anything else's compact JSON text, `JSON.stringify(value)`), and the
 * reader is pointed at
 * `terfyn runs show DIR --json`, which holds it in full. Every value is untrusted (the model
 * chose it): each content line is escaped and sits behind a `| ` gutter, so a value can neither
 * drive the terminal nor pass for another field or for Terfyn's own lines. Pure.
 */
import { createHash } from "node:crypto";
import { escapeTerminalText } from "./terminal-text.ts";

/** The awaited item, as the interpreter records it. */
export type ApprovalSubject =
  | { kind: "gated-grant"; agent: string; tool: string; input: unknown }
  | { kind: "approve"; label: string; value: unknown };

/** A value longer than this (characters of its shown text) is folded. */
export const FOLD_CHARS = 2000;
/** A value with more lines than this is folded. */
export const FOLD_LINES = 40;

export interface ApprovalTextOptions {
  /** Prefix of every line (default two spaces). */
  indent?: string;
  /** The run directory as the reader should type it, for the "full value" pointer. */
  runDir?: string;
}

/** The lines showing `subject`; a fold, when there is one, says where the full value is. */
export function renderApprovalSubject(
  subject: ApprovalSubject,
  options: ApprovalTextOptions = {},
): string[] {
  const pad = options.indent ?? "  ";
  const out: string[] = [];
  let folded = false;
  const field = (key: string, value: unknown, depth: string) => {
    const r = renderValue(value);
    folded ||= r.folded;
    if (r.inline !== undefined) out.push(`${pad}${depth}${key}: ${r.inline}`);
    else {
      out.push(`${pad}${depth}${key}: ${r.header}`);
      for (const line of r.lines) out.push(`${pad}${depth}  | ${line}`);
    }
  };
  const fields = (label: string, value: unknown) => {
    if (isPlainObject(value) && Object.keys(value).length > 0) {
      out.push(`${pad}${label}:`);
      for (const [k, v] of Object.entries(value)) field(showKey(k), v, "  ");
    } else field(label, value, "");
  };
  if (subject.kind === "gated-grant") {
    out.push(`${pad}agent: ${escapeTerminalText(subject.agent)}`);
    out.push(`${pad}operation: ${escapeTerminalText(subject.tool)}`);
    fields("input", subject.input);
  } else {
    out.push(`${pad}approve: ${escapeTerminalText(subject.label)}`);
    fields("value", subject.value);
  }
  if (folded) {
    const where = options.runDir !== undefined ? escapeTerminalText(options.runDir) : "RUN_DIR";
    out.push(`${pad}(folded values in full: terfyn runs show ${where} --json)`);
  }
  return out;
}

interface Rendered {
  /** The whole value on the key's line. */
  inline?: string;
  /** Otherwise: what follows the key, then the content lines. */
  header: string;
  lines: string[];
  folded: boolean;
}

function renderValue(value: unknown): Rendered {
  if (typeof value === "string") {
    const lines = value.split("\n");
    const finalNewline = value.endsWith("\n") && lines.length > 1;
    if (finalNewline) lines.pop();
    if (value.length > FOLD_CHARS || lines.length > FOLD_LINES)
      return fold(value, lines.length, "text");
    if (lines.length === 1 && !finalNewline)
      return {
        inline: escapeTerminalText(JSON.stringify(value)),
        header: "",
        lines: [],
        folded: false,
      };
    return {
      header: `(text, ${plural(lines.length, "line")}${finalNewline ? "" : ", no final newline"})`,
      lines: lines.map((l) => escapeTerminalText(l)),
      folded: false,
    };
  }
  const json = JSON.stringify(value, null, 2) ?? String(value);
  const lines = json.split("\n");
  if (json.length > FOLD_CHARS || lines.length > FOLD_LINES)
    return fold(JSON.stringify(value) ?? String(value), lines.length, "JSON");
  if (lines.length === 1)
    return { inline: escapeTerminalText(json), header: "", lines: [], folded: false };
  return { header: "(JSON)", lines: lines.map((l) => escapeTerminalText(l)), folded: false };
}

function fold(text: string, lines: number, what: "text" | "JSON"): Rendered {
  const bytes = new TextEncoder().encode(text).length;
  const hash = createHash("sha256").update(text, "utf8").digest("hex");
  return {
    inline: `(folded ${what}: ${bytes} bytes, ${plural(lines, "line")}, sha256:${hash})`,
    header: "",
    lines: [],
    folded: true,
  };
}

/** Fields keep their own names when they are plain; anything else is shown quoted. */
function showKey(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_.-]*$/.test(key) ? key : escapeTerminalText(JSON.stringify(key));
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
