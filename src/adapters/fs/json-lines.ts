/**
 * Append-only JSON Lines files (approval logs): one fsync'd line per record; reading skips
 * lines that do not parse (a torn last line after a crash).
 */
import { closeSync, fsyncSync, openSync, writeSync } from "node:fs";
import { readFile } from "node:fs/promises";

export function appendJsonLine(path: string, record: unknown): void {
  const fd = openSync(path, "a");
  try {
    writeSync(fd, `${JSON.stringify(record)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The records of a JSON Lines file; none when it does not exist. */
export async function readJsonLines(path: string): Promise<unknown[]> {
  return (await readJsonLineEntries(path)).map((e) => e.value);
}

/** The records of a JSON Lines file with their 1-based line numbers, for located messages. */
export async function readJsonLineEntries(
  path: string,
): Promise<{ line: number; value: unknown }[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw e;
  }
  return text.split("\n").flatMap((l, i) => {
    if (l.trim() === "") return [];
    try {
      return [{ line: i + 1, value: JSON.parse(l) as unknown }];
    } catch {
      return [];
    }
  });
}
