/**
 * Incoming text is data, never instructions (docs/review-doctrine.md, doctrine 13). Review comments reach an
 * agent only through this module: hidden HTML comments and invisible or bidirectional-control
 * characters are removed (they hide text from the human who reads the same comment), the text
 * is wrapped in a delimited data block it cannot close, and text shaped like directions is
 * reported rather than silently absorbed. Pure.
 */

/**
 * Zero-width and other invisible format characters, variation selectors, bidi controls, and
 * Unicode tag characters: code point ranges, inclusive.
 */
const INVISIBLE_RANGES: readonly [number, number][] = [
  [0x00ad, 0x00ad],
  [0x034f, 0x034f],
  [0x061c, 0x061c],
  [0x115f, 0x1160],
  [0x17b4, 0x17b5],
  [0x180b, 0x180f],
  [0x200b, 0x200f],
  [0x202a, 0x202e],
  [0x2060, 0x2064],
  [0x2066, 0x206f],
  [0x3164, 0x3164],
  [0xfe00, 0xfe0f],
  [0xfeff, 0xfeff],
  [0xffa0, 0xffa0],
  [0xe0000, 0xe007f],
];

function isInvisible(cp: number): boolean {
  return INVISIBLE_RANGES.some(([lo, hi]) => cp >= lo && cp <= hi);
}

const HTML_COMMENT = /<!--[\s\S]*?(-->|$)/g;

export interface SanitizedText {
  text: string;
  /** What was removed, for the record: counts, never the hidden content as an instruction. */
  removed: { hiddenComments: number; invisibleCharacters: number };
  /** Direction-shaped passages found in the text (quoted, as data). */
  injectedDirections: string[];
}

/** Patterns of text that tries to direct the reader rather than describe the code. */
const DIRECTIONS: readonly RegExp[] = [
  /\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(instructions?|rules?|prompt|guidelines|previous|above|system)\b/i,
  /\byou are now\b|\bact as\b|\bnew instructions?\b|\bsystem prompt\b/i,
  /\b(run|execute)\b[^.\n]{0,30}\b(command|script|this|curl|bash|sh|rm -rf)\b/i,
  /\b(change|expand|extend|widen)\b[^.\n]{0,20}\byour (scope|task|permissions?)\b/i,
  /\bforce[- ]push\b|\bgit push --force\b|\bresolve (this|the|all) (thread|conversation|comments?)\b|\bmerge (this|the) (pr|pull request)\b/i,
  /^\s*\/terfyn\s+approve\b/im,
  /\b(do not|don't) (tell|mention|report)\b/i,
  /\b(exfiltrate|send)\b[^.\n]{0,30}\b(secrets?|tokens?|credentials?|env(ironment)? variables?)\b/i,
];

export function sanitizeUntrustedText(raw: string): SanitizedText {
  let hiddenComments = 0;
  let text = raw.replace(HTML_COMMENT, () => {
    hiddenComments++;
    return "";
  });
  let invisibleCharacters = 0;
  let visible = "";
  for (const ch of text) {
    if (isInvisible(ch.codePointAt(0) ?? 0)) invisibleCharacters++;
    else visible += ch;
  }
  text = visible;
  text = text.replace(/\r\n?/g, "\n");
  const injectedDirections: string[] = [];
  // Look for directions in what the human sees and in what was hidden from them.
  const hidden = [...raw.matchAll(/<!--([\s\S]*?)(-->|$)/g)].map((m) => m[1] ?? "");
  for (const source of [text, ...hidden]) {
    for (const line of source.split("\n")) {
      if (DIRECTIONS.some((re) => re.test(line)))
        injectedDirections.push(line.trim().slice(0, 200));
    }
  }
  return {
    text,
    removed: { hiddenComments, invisibleCharacters },
    injectedDirections: [...new Set(injectedDirections)],
  };
}

/**
 * The text as a delimited data block for an agent's input. Anything inside that looks like
 * the block's own delimiters is defused, so the data cannot end its block and speak as the
 * prompt.
 */
export function asDataBlock(
  kind: string,
  id: string,
  raw: string,
): { block: string; sanitized: SanitizedText } {
  const sanitized = sanitizeUntrustedText(raw);
  const safeKind = kind.replace(/[^a-z0-9-]/gi, "");
  // The id (a thread's, or a file's path, which a repository or an agent chose) is an attribute
  // value: escaped as one, its control and invisible characters dropped, so it reads as written
  // (`src/my file.py`) and cannot end the attribute or the tag.
  const safeId = [...id]
    .filter((ch) => {
      const cp = ch.codePointAt(0) ?? 0;
      return cp >= 0x20 && cp !== 0x7f && !(cp >= 0x80 && cp < 0xa0) && !isInvisible(cp);
    })
    .join("")
    .replace(
      /[&"<>]/g,
      (ch) => ({ "&": "&amp;", '"': "&quot;", "<": "&lt;", ">": "&gt;" })[ch] ?? "",
    );
  const body = sanitized.text.replace(/<\/?\s*untrusted-data\b[^>]*>/gi, (m) =>
    m.replace(/</g, "‹").replace(/>/g, "›"),
  );
  return {
    block: `<untrusted-data kind="${safeKind}" id="${safeId}">\n${body}\n</untrusted-data>`,
    sanitized,
  };
}
