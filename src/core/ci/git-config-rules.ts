/**
 * Which of a checkout's git settings the Action refuses to run git with (issue 22): the
 * configuration keys whose value is a program git may run (a filter, a merge driver, the
 * fsmonitor hook, a credential helper, …) or that pull in configuration from elsewhere, and the
 * repository files that make git read objects or history it did not fetch (alternates, grafts,
 * replace refs, a common directory elsewhere).
 *
 * A checkout the Action runs in is made by actions/checkout, which writes none of these (but for
 * the exceptions below). One that holds any came from somewhere else: a `.git/` a pull
 * request's artifact carried into the workspace, or a step of the job. The Action overrides what
 * it can on git's command line (src/adapters/git/git-process.ts), but a driver or a hook is
 * named by the repository (`filter.<driver>.*`, `hook.<name>.*`), so no override reaches every
 * one: the checkout is refused instead, before any other git command runs in it.
 *
 * What actions/checkout itself writes passes: `http.<url>.extraheader` (the token, not a
 * program), `gc.auto`, the sparse-checkout keys, the exact `filter.lfs.*` lines of
 * `git lfs install --local` (with `lfs: true`; they run the runner's own git-lfs) and, from
 * v6 on, an `includeIf.gitdir:….path` naming a credentials file under the runner's temporary
 * directory (what it brings is judged like the rest). `core.sshCommand` (written with `ssh-key`
 * and `persist-credentials`) is refused like any other program.
 *
 * Keys and values are hostile data: they are parsed from `git config --list -z` (NUL-separated
 * records), compared, and shown escaped; nothing in them is ever run. Pure.
 */
import { plainText } from "../render/escape.ts";

/** One entry of `git config --list --show-scope --show-origin -z`. */
export interface GitConfigEntry {
  /** `local`, `worktree`, `global`, `system`, `command`, … */
  scope: string;
  /** `file:<path>` (the file that holds the entry, an included one too), `command line:`, … */
  origin: string;
  /** `section.variable` or `section.<subsection>.variable`, as git prints it. */
  key: string;
  /** Undefined for a key given without `=` (a boolean true). */
  value: string | undefined;
}

/** A setting the Action refuses, named for the message. */
export interface ForeignGitSetting {
  /** The key, or the repository file (`objects/info/alternates`). */
  name: string;
  /** Where it is: the config file, or the git directory. */
  where: string;
  why: string;
}

/**
 * The records of `git config --list --show-scope --show-origin -z`: scope NUL origin NUL then
 * the key, a line feed and the value NUL (or the key and NUL alone when it has no value). A key
 * never holds a line feed or a NUL; a value may hold line feeds. Undefined when the text is not
 * that shape (a git that prints something else): the caller refuses rather than guess.
 */
export function parseGitConfigList(raw: string): GitConfigEntry[] | undefined {
  if (raw === "") return [];
  if (!raw.endsWith("\0")) return undefined;
  const fields = raw.slice(0, -1).split("\0");
  if (fields.length % 3 !== 0) return undefined;
  const entries: GitConfigEntry[] = [];
  for (let i = 0; i < fields.length; i += 3) {
    const [scope, origin, keyValue] = [fields[i]!, fields[i + 1]!, fields[i + 2]!];
    const lf = keyValue.indexOf("\n");
    const key = lf < 0 ? keyValue : keyValue.slice(0, lf);
    if (!/^[A-Za-z0-9-]+(\..*)?\.[A-Za-z0-9-]+$/s.test(key) || !/^[a-z]+$/.test(scope))
      return undefined;
    entries.push({ scope, origin, key, value: lf < 0 ? undefined : keyValue.slice(lf + 1) });
  }
  return entries;
}

/** The runner's own configuration, and the Action's overrides: not the checkout's. */
const NOT_THE_CHECKOUTS = new Set(["system", "global", "command"]);

/** What `git lfs install --local` writes (actions/checkout with `lfs: true`). */
const GIT_LFS_FILTER: Readonly<Record<string, readonly string[]>> = {
  clean: ["git-lfs clean -- %f"],
  smudge: ["git-lfs smudge -- %f", "git-lfs smudge --skip -- %f"],
  process: ["git-lfs filter-process", "git-lfs filter-process --skip"],
};

/** Git's boolean spellings (a key without a value is true). */
function isBoolean(value: string | undefined): boolean {
  return value === undefined || /^(true|false|yes|no|on|off|-?[0-9]+)?$/i.test(value.trim());
}

/** `<transport>::<address>`: git runs the remote helper `git-remote-<transport>`. */
const REMOTE_HELPER = /^[A-Za-z0-9][A-Za-z0-9+.-]*::/;

/**
 * Why git would run a program this key names (or why it pulls in other configuration), or
 * undefined when it names none. `section` and `variable` are lower case; `sub` keeps its case.
 */
function commandKey(
  section: string,
  sub: string | undefined,
  variable: string,
  value: string | undefined,
): string | undefined {
  const v = value ?? "";
  switch (section) {
    case "core":
      if (sub !== undefined) return undefined;
      if (variable === "fsmonitor")
        return isBoolean(value) ? undefined : "the fsmonitor hook: a program git runs";
      if (variable === "hookspath") return "where git looks for hooks: programs git runs";
      if (variable === "sshcommand") return "the ssh program git runs";
      if (variable === "gitproxy") return "the proxy program git runs for git://";
      if (variable === "askpass") return "the password prompt program git runs";
      if (variable === "editor") return "the editor program git runs";
      if (variable === "pager") return "the pager program git runs";
      if (variable === "alternaterefscommand") return "a shell command git runs on fetch";
      return undefined;
    case "sequence":
      return variable === "editor" ? "the editor program git runs" : undefined;
    case "pager":
      return sub === undefined && !isBoolean(value) ? "a pager program git runs" : undefined;
    case "interactive":
      return variable === "difffilter" ? "a shell command git runs" : undefined;
    case "diff":
      if (sub === undefined)
        return variable === "external" ? "an external diff program git runs" : undefined;
      return variable === "command" || variable === "textconv"
        ? "a diff driver's program, chosen by .gitattributes"
        : undefined;
    case "merge":
      return sub !== undefined && variable === "driver"
        ? "a merge driver's program, chosen by .gitattributes"
        : undefined;
    case "filter":
      if (sub === undefined || !["clean", "smudge", "process"].includes(variable)) return undefined;
      if (sub === "lfs" && value !== undefined && GIT_LFS_FILTER[variable]?.includes(v.trim()))
        return undefined;
      return "a filter driver's program, chosen by .gitattributes";
    case "difftool":
    case "mergetool":
    case "browser":
    case "man":
      return sub !== undefined && (variable === "cmd" || variable === "path")
        ? `a program git ${section === "browser" || section === "man" ? "help" : section} runs`
        : undefined;
    case "guitool":
      return sub !== undefined && variable === "cmd" ? "a shell command git gui runs" : undefined;
    case "instaweb":
      return variable === "httpd" ? "the web server git instaweb runs" : undefined;
    case "gpg":
      if (variable === "program") return "the signature program git runs";
      return sub === "ssh" && variable === "defaultkeycommand"
        ? "a command git runs for the signing key"
        : undefined;
    case "credential":
      return variable === "helper" && v.trim() !== "" ? "a credential helper git runs" : undefined;
    case "alias":
      // `alias.<name>` and `alias.<name>.command`: a leading `!` is a shell command.
      return (sub === undefined || variable === "command") && v.trimStart().startsWith("!")
        ? "an alias that runs a shell command"
        : undefined;
    case "sendemail":
      return ["sendmailcmd", "tocmd", "cccmd", "headercmd", "smtpserver"].includes(variable)
        ? "a program git send-email runs"
        : undefined;
    case "imap":
      return variable === "tunnel" ? "a tunnel command git runs" : undefined;
    case "trailer":
      return sub !== undefined && (variable === "command" || variable === "cmd")
        ? "a trailer command git runs"
        : undefined;
    case "hook":
      return sub !== undefined && variable === "command"
        ? "a hook git runs (configured hooks)"
        : undefined;
    case "gc":
      return variable === "recentobjectshook" ? "a shell command git gc runs" : undefined;
    case "uploadpack":
      return variable === "packobjectshook" ? "a shell command upload-pack runs" : undefined;
    case "remote":
      if (sub === undefined) return undefined;
      if (variable === "uploadpack" || variable === "receivepack")
        return "the program git runs on the remote side (a local or ssh remote)";
      if (variable === "vcs") return "the remote helper git runs";
      return (variable === "url" || variable === "pushurl") && REMOTE_HELPER.test(v.trim())
        ? "a remote helper git runs (`<transport>::`)"
        : undefined;
    case "url":
      return sub !== undefined &&
        (variable === "insteadof" || variable === "pushinsteadof") &&
        REMOTE_HELPER.test(sub)
        ? "rewrites remote URLs to a remote helper git runs"
        : undefined;
    case "submodule":
      return sub !== undefined && variable === "update" && v.trimStart().startsWith("!")
        ? "a shell command git submodule update runs"
        : undefined;
    case "lfs":
      // git-lfs, which the lfs filter runs, runs these.
      if (sub?.toLowerCase().startsWith("customtransfer.") && variable === "path")
        return "a transfer agent git-lfs runs";
      if (sub?.toLowerCase().startsWith("extension.") && ["clean", "smudge"].includes(variable))
        return "an extension program git-lfs runs";
      return undefined;
    default:
      return undefined;
  }
}

/** Where the checkout is: includes pointing inside it are refused. */
export interface CheckoutPlace {
  /** Absolute paths of the workspace (as given, and with links resolved). */
  workspace: readonly string[];
  /** HOME, which git expands `~/` with; undefined when unset. */
  home: string | undefined;
}

/** `path` with `.` and `..` segments resolved and slashes collapsed (POSIX, absolute). */
function normalizeAbsolute(path: string): string {
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") out.pop();
    else out.push(part);
  }
  return `/${out.join("/")}`;
}

/**
 * Why an include's path is refused, or undefined when it is a file outside the checkout (the
 * credentials file actions/checkout v6 writes under the runner's temporary directory). A
 * relative path is the git directory's (or an included file's) neighbour; `~user/` cannot be
 * placed; anything inside the workspace is the checkout's own.
 */
function includeProblem(path: string, place: CheckoutPlace): string | undefined {
  const p = path.trim();
  let absolute: string | undefined;
  if (p.startsWith("%(prefix)/")) return undefined;
  if (p.startsWith("/")) absolute = p;
  else if ((p === "~" || p.startsWith("~/")) && place.home?.startsWith("/"))
    absolute = `${place.home}/${p.slice(1)}`;
  if (absolute === undefined) return "pulls in configuration from a file relative to the checkout";
  const target = normalizeAbsolute(absolute);
  for (const w of place.workspace) {
    const root = normalizeAbsolute(w);
    if (target === root || target.startsWith(root === "/" ? "/" : `${root}/`))
      return "pulls in configuration from a file inside the checkout";
  }
  return undefined;
}

/** `section`, `subsection` (case kept) and `variable` of a key as git prints it. */
export function splitKey(key: string): { section: string; sub?: string; variable: string } {
  const first = key.indexOf(".");
  const last = key.lastIndexOf(".");
  const section = key.slice(0, first).toLowerCase();
  const variable = key.slice(last + 1).toLowerCase();
  return first === last
    ? { section, variable }
    : { section, sub: key.slice(first + 1, last), variable };
}

/** The origin as the message shows it: the file, without git's `file:` prefix. */
function shownOrigin(origin: string): string {
  return origin.startsWith("file:") ? origin.slice("file:".length) : origin;
}

/**
 * The checkout's entries (every scope but the runner's system and global files and the
 * Action's own command-line overrides; entries an include brought in count as the including
 * file's) that name a program git may run, or include configuration from inside the checkout.
 */
export function foreignConfigSettings(
  entries: readonly GitConfigEntry[],
  place: CheckoutPlace,
): ForeignGitSetting[] {
  const found: ForeignGitSetting[] = [];
  for (const e of entries) {
    if (NOT_THE_CHECKOUTS.has(e.scope)) continue;
    const { section, sub, variable } = splitKey(e.key);
    let why: string | undefined;
    if (
      (section === "include" && sub === undefined) ||
      (section === "includeif" && sub !== undefined)
    ) {
      why = variable === "path" ? includeProblem(e.value ?? "", place) : undefined;
    } else {
      why = commandKey(section, sub, variable, e.value);
    }
    if (why !== undefined) found.push({ name: e.key, where: shownOrigin(e.origin), why });
  }
  return found;
}

/** What the adapter found in the git directory; every field is hostile text or a count. */
export interface GitDirectoryFacts {
  /** The git directory, for the message. */
  gitDir: string;
  /** `.git` at the workspace's root is not a directory: a file, a link, or missing. */
  notADirectory?: "file" | "symbolic link" | "missing" | "other";
  /** `commondir` exists: refs, objects and config are another directory's. */
  commonDir?: boolean;
  /** The text of `objects/info/alternates`, when it exists. */
  alternates?: string;
  /** The text of `info/grafts`, when it exists. */
  grafts?: string;
  /** Names under `refs/replace/` (loose, packed, or as git lists them). */
  replaceRefs: readonly string[];
}

/** The repository files that make git read what it did not fetch. */
export function foreignRepositoryFiles(facts: GitDirectoryFacts): ForeignGitSetting[] {
  const at = facts.gitDir;
  if (facts.notADirectory !== undefined)
    return [
      {
        name: ".git",
        where: at,
        why: `is ${facts.notADirectory === "missing" ? "missing" : `a ${facts.notADirectory}`}, not the directory actions/checkout makes: git would read a repository elsewhere`,
      },
    ];
  const found: ForeignGitSetting[] = [];
  const lines = (text: string | undefined) =>
    (text ?? "").split("\n").filter((l) => l.trim() !== "" && !l.trimStart().startsWith("#"));
  if (facts.commonDir)
    found.push({
      name: "commondir",
      where: at,
      why: "makes git read refs, objects and configuration of another directory",
    });
  if (lines(facts.alternates).length > 0)
    found.push({
      name: "objects/info/alternates",
      where: at,
      why: "makes git read objects (and run git) in other repositories",
    });
  if (lines(facts.grafts).length > 0)
    found.push({
      name: "info/grafts",
      where: at,
      why: "makes git see other parents than a commit names",
    });
  if (facts.replaceRefs.length > 0)
    found.push({
      name: `refs/replace/ (${facts.replaceRefs.length} ref${facts.replaceRefs.length === 1 ? "" : "s"})`,
      where: at,
      why: "replace refs make git show another object than the one named",
    });
  return found;
}

/** At most this many settings are named; the rest are counted. */
const NAMED = 20;

/**
 * The Action's refusal: each setting named (escaped: keys are hostile text), then what to do.
 * One message for the job's failure line.
 */
export function foreignCheckoutMessage(
  workspace: string,
  settings: readonly ForeignGitSetting[],
): string {
  const shown = settings
    .slice(0, NAMED)
    .map((s) => `- ${plainText(s.name)} (${plainText(s.where)}): ${s.why}`);
  if (settings.length > NAMED) shown.push(`- and ${settings.length - NAMED} more`);
  return [
    `the git checkout in ${plainText(workspace)} holds configuration or files that make git run programs or read what it did not fetch, so Terfyn runs no further git command in it:`,
    ...shown,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the workflow expression the reader types
    "actions/checkout writes none of these (but `core.sshCommand` with `ssh-key`: give it `persist-credentials: false`). If a step of this job downloaded a pull request's artifact into the workspace before actions/checkout (a `workflow_run` job), checkout reused the artifact's .git: download artifacts into `${{ runner.temp }}` instead (docs/github-action.md, \"Forks\"), and treat this job's token as exposed, since checkout runs git in the .git it finds. If a step of this job set them, run Terfyn before that step or in a job of its own.",
  ].join("\n");
}
