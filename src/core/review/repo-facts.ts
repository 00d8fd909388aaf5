/**
 * The repository knows itself (docs/review-doctrine.md, doctrines 18–19): its commands (install, test, single
 * test, lint, format, typecheck) and its protected and extend-only files come from its
 * AGENTS.md. A missing fact is named, never guessed from the shape of the tree. Protected and
 * extend-only entries are read as the repository writes them: a path, a glob (lock files at any
 * depth, `src/*.generated.js`), or a directory (`vendor`, `vendor/`: everything below it). Pure.
 */
import { minimatch } from "minimatch";

export const COMMAND_FACTS = [
  "install",
  "test",
  "single test",
  "lint",
  "format",
  "typecheck",
] as const;
export type CommandFact = (typeof COMMAND_FACTS)[number];

const ALIASES: Record<string, CommandFact> = {
  install: "install",
  setup: "install",
  test: "test",
  tests: "test",
  "test suite": "test",
  "single test": "single test",
  "single-test": "single test",
  "one test": "single test",
  "test one": "single test",
  lint: "lint",
  linter: "lint",
  format: "format",
  formatter: "format",
  fmt: "format",
  typecheck: "typecheck",
  "type check": "typecheck",
  "type-check": "typecheck",
  types: "typecheck",
};

export interface RepoFacts {
  commands: Partial<Record<CommandFact, string>>;
  /** Paths or globs never to modify. */
  protected: string[];
  /** Paths or globs that may only be appended to. */
  extendOnly: string[];
  /**
   * Variables of the run's environment the repository's commands need (an `environment:`
   * line), by name. The repository is untrusted (a pull request can change its AGENTS.md), so
   * secret-shaped names are never passed whatever it says (see passableEnvNames).
   */
  environment?: string[];
  /**
   * The commands that may use the network (a `network:` line: command names such as
   * `install`, or `all`). Every other command runs with no network at all.
   */
  network?: CommandFact[];
  /** The repository's conventions (the items under a "Conventions" heading), as written. */
  conventions?: string[];
  /** How the single-test command reports what ran (`test report:`): tap, junit <path>, or its summary. */
  testReport?: string;
}

/** The commands a run cannot do without; the other gates are run when declared and reported when not. */
export const REQUIRED_FACTS: readonly CommandFact[] = ["test", "single test"];

/** The gates validation runs besides the test suite, when AGENTS.md declares them. */
export const GATE_FACTS = ["format", "lint", "typecheck"] as const satisfies readonly CommandFact[];

const ENV_KEYS = new Set(["environment", "env", "pass env", "environment variables"]);
const REPORT_KEYS = new Set(["test report", "test output", "test format"]);
const NETWORK_KEYS = new Set(["network", "network access", "needs network"]);

/** The commands a `network:` value names: command names (and their aliases), or `all`. */
export function networkFacts(value: string): CommandFact[] {
  const out = new Set<CommandFact>();
  const words = value
    .replace(/\(.*\)/g, "")
    .toLowerCase()
    .split(/\s*(?:,|;|\band\b|`)\s*/)
    .map((w) => w.trim())
    .filter((w) => w !== "");
  for (const w of words) {
    if (w === "all" || w === "every command" || w === "all commands")
      for (const f of COMMAND_FACTS) out.add(f);
    const fact = ALIASES[w];
    if (fact) out.add(fact);
  }
  return COMMAND_FACTS.filter((f) => out.has(f));
}
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Names a repository may not ask for: credentials of the run, whatever they are called. */
const SECRET_SHAPED = /TOKEN|KEY|SECRET|PASSW|CREDENTIAL|AUTH|SESSION|COOKIE|PRIVATE/i;

/** The names AGENTS.md asked for that may be passed, and those refused as secret-shaped. */
export function passableEnvNames(names: readonly string[]): {
  passed: string[];
  refused: string[];
} {
  const passed = names.filter((n) => ENV_NAME.test(n) && !SECRET_SHAPED.test(n));
  return { passed, refused: names.filter((n) => !passed.includes(n)) };
}

/** Headings of a section whose plain `key: value` lines are commands (without backticks too). */
const COMMANDS_HEADING =
  /command|how to|\brun|build|develop|\btest|script|setup|getting started|workflow|tooling/i;

/**
 * Reads `key: command` lines (list items or plain lines) and the lists under headings
 * containing "protected" or "extend-only". A command line counts when its command is in
 * backticks, or when it is in a section about commands (a heading such as "Commands", "How to
 * run", "Build", "Development") or before any heading. Prose elsewhere ("Setup: ask in #dev")
 * and anything inside a fenced code block (a YAML example's `lint: flake8`) is not a command.
 */
export function parseAgentsMd(text: string): RepoFacts {
  const facts: RepoFacts = { commands: {}, protected: [], extendOnly: [] };
  let list: "protected" | "extendOnly" | "conventions" | undefined;
  let commandsSection = true;
  let fence: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    const opens = /^(`{3,}|~{3,})/.exec(line);
    if (fence !== undefined) {
      if (
        opens &&
        opens[1]?.[0] === fence[0] &&
        (opens[1]?.length ?? 0) >= fence.length &&
        line.slice(opens[1]?.length).trim() === ""
      )
        fence = undefined;
      continue;
    }
    if (opens) {
      fence = opens[1];
      continue;
    }
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (heading) {
      const h = (heading[1] ?? "").toLowerCase();
      commandsSection = COMMANDS_HEADING.test(h);
      list = /extend[- ]only|append[- ]only/.test(h)
        ? "extendOnly"
        : /protected|do not (edit|touch|modify)/.test(h)
          ? "protected"
          : /convention|coding standard|style guide/.test(h)
            ? "conventions"
            : undefined;
      continue;
    }
    const item = line.replace(/^[-*+]\s+/, "");
    const kv = /^\*{0,2}([A-Za-z][A-Za-z -]*?)\*{0,2}\s*:\s*(.+)$/.exec(item);
    if (kv && ENV_KEYS.has((kv[1] ?? "").toLowerCase().trim())) {
      const names = (kv[2] ?? "")
        .replace(/\(.*\)/g, "")
        .split(/[\s,`]+/)
        .filter((n) => n !== "");
      facts.environment = [...(facts.environment ?? []), ...names];
      continue;
    }
    if (kv && NETWORK_KEYS.has((kv[1] ?? "").toLowerCase().trim())) {
      facts.network = [...new Set([...(facts.network ?? []), ...networkFacts(kv[2] ?? "")])];
      continue;
    }
    if (kv && REPORT_KEYS.has((kv[1] ?? "").toLowerCase().trim())) {
      const value = (kv[2] ?? "").trim();
      facts.testReport ??= (/`([^`]+)`/.exec(value)?.[1] ?? value.split(/\s+\(/)[0] ?? "").trim();
      continue;
    }
    const key = kv ? ALIASES[(kv[1] ?? "").toLowerCase().trim()] : undefined;
    if (kv && key) {
      const value = (kv[2] ?? "").trim();
      const code = /`([^`]+)`/.exec(value);
      if (code || commandsSection) {
        facts.commands[key] ??= (code ? code[1] : value)?.trim() ?? "";
        continue;
      }
    }
    if (list === "conventions") {
      if (/^[-*+]\s/.test(line)) facts.conventions = [...(facts.conventions ?? []), item.trim()];
      continue;
    }
    if ((list && line.startsWith("-")) || (list && /^[*+]\s/.test(line))) {
      const path = item
        .replace(/`/g, "")
        .split(/\s+[—–-]\s+|\s+\(/)[0]
        ?.trim();
      if (path) facts[list].push(path);
    }
  }
  return facts;
}

/** The facts a run needs that the repository does not declare. */
export function missingFacts(
  facts: RepoFacts,
  needed: readonly CommandFact[] = COMMAND_FACTS,
): CommandFact[] {
  return needed.filter((f) => !facts.commands[f]);
}

const MATCH = { dot: true, nonegate: true, nocomment: true } as const;

/**
 * Whether a repository-relative file is covered by a protected or extend-only entry of
 * AGENTS.md: the path itself, a glob that matches it, or a directory (with or without a
 * trailing slash, glob or not) it lies below. A leading `./` or `/` anchors at the root, as it
 * does anyway.
 */
export function matchesRepoPattern(file: string, pattern: string): boolean {
  const p = pattern
    .trim()
    .replace(/^\.?\/+/, "")
    .replace(/\/+$/, "");
  if (p === "") return false;
  return minimatch(file, p, MATCH) || minimatch(file, `${p}/**`, MATCH);
}

/** Whether any of `patterns` covers `file`. */
export function matchesAnyRepoPattern(file: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => matchesRepoPattern(file, p));
}

/**
 * Whether an extend-only file was only appended to, at its end: the new bytes start with the
 * old ones, and an old last line without its newline was not continued. A new file is all
 * appended; a deleted one is not.
 */
export function isAppendedAtEnd(
  before: Uint8Array | undefined,
  after: Uint8Array | undefined,
): boolean {
  if (before === undefined) return true;
  if (after === undefined || after.length < before.length) return false;
  for (let i = 0; i < before.length; i++) if (after[i] !== before[i]) return false;
  const NEWLINE = 0x0a;
  return (
    before.length === 0 ||
    after.length === before.length ||
    before[before.length - 1] === NEWLINE ||
    after[before.length] === NEWLINE
  );
}
