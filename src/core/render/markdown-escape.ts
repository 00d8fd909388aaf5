/**
 * The Markdown escapes under their first names, kept for the code and tests that use them. The
 * escaper itself, one function per context (Markdown prose, inline code, table cell, HTML text
 * and attribute, code block, plain text), is escape.ts.
 */
export {
  codeBlock as mdFence,
  inlineCode as mdCode,
  markdownText as mdText,
} from "./escape.ts";
