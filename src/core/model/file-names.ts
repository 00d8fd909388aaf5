/**
 * File names are data from outside (git trees, disk): a name with a control character or a
 * bidirectional-override character can hide a file from a reviewer (a newline splits a listing,
 * U+202E reverses what is shown) or desynchronise a line-based protocol. Such a file is never
 * skipped silently: it is a blocking diagnostic naming the file, escaped. Pure.
 */
import { type Diagnostic, diagnostic } from "../diagnostics.ts";
import { fileSpan, UNSAFE_CHARACTER } from "../source.ts";

// C0 controls, DEL, C1 controls, and the Unicode bidi embedding/override/isolate characters:
// the one class terminal output escapes too.
const UNSAFE = new RegExp(UNSAFE_CHARACTER, "u");

export function hasUnsafeFileName(path: string): boolean {
  return UNSAFE.test(path);
}

/** The name without its unsafe characters and trailing blanks: what a reader takes it for. */
export function stripUnsafe(path: string): string {
  return path.replace(new RegExp(UNSAFE.source, "gu"), "").trimEnd();
}

/** The name as it can be shown safely: JSON escapes for every unsafe character. */
export function escapeFileName(path: string): string {
  return path.replace(
    new RegExp(UNSAFE.source, "gu"),
    (c) => `\\u${c.codePointAt(0)?.toString(16).padStart(4, "0")}`,
  );
}

export function unsafeFileNameDiagnostic(path: string): Diagnostic {
  const shown = escapeFileName(path);
  return diagnostic(
    "TF2010",
    fileSpan(shown),
    `the file name ${JSON.stringify(shown)} contains a control or bidirectional-override character; rename the file (such names can hide a file from review)`,
  );
}

/**
 * A project file (`.agent`, YAML) that is a symbolic link: what it points at is not part of the
 * reviewed change, so it is never read. The same error from the checkout and from git.
 */
export function linkedFileDiagnostic(path: string): Diagnostic {
  return diagnostic(
    "TF2008",
    fileSpan(path),
    "is a symbolic link; a project file must be a regular file (the link's target is not part of the reviewed change, so it is not read)",
    { hint: "replace the link with the file itself" },
  );
}

/**
 * A submodule (a gitlink, or a nested repository on disk) where project files could be: its
 * files are not in this repository's tree, so the reviewed change cannot show them, yet a
 * checkout with its submodules would load them.
 */
export function submoduleDiagnostic(path: string): Diagnostic {
  return diagnostic(
    "TF2008",
    fileSpan(path),
    "is a git submodule (a gitlink): its files are not part of this repository's tree, so the reviewed change cannot show them, while a checkout with submodules would load them as project files; move the files into the repository, or the submodule out of the project directory (or under fixtures/)",
  );
}
