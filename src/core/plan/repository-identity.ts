/**
 * The repository a plan's project lives in, as its hash binds it: `host/owner/name` in lower
 * case (hosts and GitHub's owner and repository names are case-insensitive), from the Action's
 * `GITHUB_SERVER_URL` and `GITHUB_REPOSITORY`, or from a checkout's `origin` URL, so the CLI in
 * a clone of `github.com/acme/agents` and the Action in that repository bind the same name.
 * A URL that names no hosted repository (a local path, `file://`) gives null: the repository
 * is then not known, and the plan says so rather than guessing. Pure.
 */

const SEGMENT = /^[A-Za-z0-9._-]+$/;
const HOST = /^[a-z0-9.-]+(?::[0-9]+)?$/;

function identity(host: string, path: string): string | null {
  const segments = path
    .replace(/\/+$/, "")
    .replace(/\.git$/, "")
    .split("/")
    .filter((s) => s !== "");
  const h = host.toLowerCase();
  if (!HOST.test(h) || segments.length < 2) return null;
  if (!segments.every((s) => SEGMENT.test(s) && s !== "." && s !== "..")) return null;
  return `${h}/${segments.join("/").toLowerCase()}`;
}

/** `https://host/owner/name(.git)`, `ssh://git@host/owner/name.git`, `git@host:owner/name.git`. */
export function repositoryFromRemoteUrl(url: string): string | null {
  const text = url.trim();
  if (/^(?:https?|ssh|git):\/\//i.test(text)) {
    let parsed: URL;
    try {
      parsed = new URL(text);
    } catch {
      return null;
    }
    return identity(parsed.host, decodeURIComponent(parsed.pathname));
  }
  // scp-like syntax: [user@]host:path, where the path does not start with "/" or "//".
  const scp = /^(?:[^@/:\s]+@)?([^@/:\s]+):(?!\/)(\S+)$/.exec(text);
  if (scp) return identity(scp[1] as string, scp[2] as string);
  return null;
}

/** The Action's repository: `GITHUB_SERVER_URL` (default github.com) and `owner/name`. */
export function repositoryFromGitHub(
  serverUrl: string | undefined,
  fullName: string | undefined,
): string | null {
  if (!fullName) return null;
  let host = "github.com";
  if (serverUrl) {
    try {
      host = new URL(serverUrl).host;
    } catch {
      return null;
    }
  }
  return identity(host, fullName);
}
