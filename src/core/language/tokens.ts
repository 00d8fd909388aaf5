/**
 * Tokens of the `.agent` language. Keywords are contextual, so the lexer emits identifiers and
 * the parser decides by position whether `input` is an agent item or a variable.
 */
export type TokenKind =
  | "ident"
  | "string"
  | "int"
  | "decimal"
  | "{"
  | "}"
  | "("
  | ")"
  | ","
  | "."
  | ":"
  | "="
  | "->"
  | "!"
  | "&&"
  | "||"
  | "=="
  | "!="
  | "eof";

export interface Token {
  kind: TokenKind;
  /** The source text of the token. */
  text: string;
  /** Decoded value: string contents for `string`, digits for `int`. */
  value: string;
  start: number;
  end: number;
  /** True when a line break separates this token from the previous one (used for recovery). */
  newlineBefore: boolean;
}

export function describeToken(token: Token): string {
  switch (token.kind) {
    case "eof":
      return "end of file";
    case "ident":
      return `\`${token.text}\``;
    case "string":
      return "a string";
    case "int":
    case "decimal":
      return `the number ${token.text}`;
    default:
      return `\`${token.text}\``;
  }
}
