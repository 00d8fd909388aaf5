/**
 * URL templates of http tools: `http(s)://host[:port]/path?query` with `{field}` placeholders.
 *
 * The scheme, host and port are literal, so what an operation may reach is fixed by the
 * resource and shown in the plan; placeholders live only in the path and the query, and each
 * value is percent-encoded as one component, so no input can add a `/`, `?`, `#` or `@` or move
 * the request to another origin. Pure: the http adapter expands with the same code it is
 * checked with here.
 */

export type UrlTemplate =
  | { ok: true; origin: string; placeholders: string[] }
  | { ok: false; message: string };

const PLACEHOLDER = /\{([^{}]*)\}/g;
const FIELD = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Checks a template; on success gives its fixed origin and the input fields it uses. */
export function parseUrlTemplate(template: string): UrlTemplate {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)(.*)$/s.exec(template);
  if (!m) return { ok: false, message: "must be an absolute URL: http(s)://host[:port]/path" };
  const scheme = (m[1] as string).toLowerCase();
  const authority = m[2] as string;
  const rest = m[3] as string;
  if (scheme !== "http" && scheme !== "https")
    return { ok: false, message: `scheme \`${m[1]}\` is not http or https` };
  if (authority.includes("{") || authority.includes("}"))
    return {
      ok: false,
      message: `a placeholder in the host or port (\`${authority}\`); the scheme, host and port are fixed in the resource, placeholders go only in the path and query`,
    };
  if (authority === "") return { ok: false, message: "has no host" };
  if (authority.includes("@"))
    return { ok: false, message: "holds user information (`user@`); send credentials as a header" };
  if (/[\s%\\]/.test(authority))
    return { ok: false, message: `host \`${authority}\` holds whitespace, % or \\` };
  if (rest.includes("#")) return { ok: false, message: "has a fragment (`#…`)" };
  if (/[\s\\]/.test(rest))
    return { ok: false, message: "holds whitespace or a backslash; percent-encode it" };
  const placeholders: string[] = [];
  for (const p of rest.matchAll(PLACEHOLDER)) {
    const field = p[1] as string;
    if (!FIELD.test(field))
      return { ok: false, message: `placeholder \`{${field}}\` is not a field name` };
    placeholders.push(field);
  }
  if (rest.replace(PLACEHOLDER, "").match(/[{}]/))
    return { ok: false, message: "has an unmatched `{` or `}`" };
  let origin: string;
  try {
    const url = new URL(`${scheme}://${authority}/`);
    if (url.hostname === "") return { ok: false, message: "has no host" };
    origin = url.origin;
  } catch {
    return { ok: false, message: `host \`${authority}\` is not a valid host[:port]` };
  }
  return { ok: true, origin, placeholders: [...new Set(placeholders)] };
}

/**
 * Fills a template's placeholders from an input object. Each value (string, number or
 * boolean) is percent-encoded as one component; `.` and `..` are refused as values (they would
 * move along the path). Returns the URL, or the problem.
 */
export function expandUrlTemplate(
  template: string,
  origin: string,
  input: Record<string, unknown>,
): { ok: true; url: URL } | { ok: false; message: string } {
  let problem: string | undefined;
  const filled = template.replace(PLACEHOLDER, (_, field: string) => {
    const v = input[field];
    if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") {
      problem ??= `input field \`${field}\` (used in the URL) must be a string, number or boolean`;
      return "";
    }
    const text = String(v);
    if (text === "" || text === "." || text === "..") {
      problem ??= `input field \`${field}\` (used in the URL) must not be empty, \`.\` or \`..\``;
      return "";
    }
    return encodeURIComponent(text);
  });
  if (problem !== undefined) return { ok: false, message: problem };
  let url: URL;
  try {
    url = new URL(filled);
  } catch {
    return { ok: false, message: "the expanded URL is not valid" };
  }
  // The template was checked, and the values are encoded; this is the last line regardless.
  if (url.origin !== origin)
    return { ok: false, message: `the expanded URL leaves ${origin}; refused` };
  return { ok: true, url };
}
