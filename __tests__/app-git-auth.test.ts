/**
 * The App's installation token reaches git only through git's environment (gitAuthEnv), as an
 * extra header for the clone URL's origin: never on disk, never in argv. Real git reads it.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { BranchWriter } from "../src/adapters/git/branch-writer.ts";
import { gitAuthEnv } from "../src/adapters/review/review-runner.ts";

describe("the installation token in git's environment", () => {
  it("git reads it as the origin's extra header, and the branch writer accepts that environment", async () => {
    const env = gitAuthEnv("https://github.com", "ghs_abc123");
    const header = execFileSync(
      "git",
      ["config", "--get", "http.https://github.com/.extraHeader"],
      {
        env: {
          PATH: process.env.PATH ?? "",
          GIT_CONFIG_GLOBAL: "/dev/null",
          GIT_CONFIG_NOSYSTEM: "1",
          ...env,
        },
        encoding: "utf8",
      },
    ).trim();
    expect(header).toBe(
      `AUTHORIZATION: basic ${Buffer.from("x-access-token:ghs_abc123").toString("base64")}`,
    );
    await expect(BranchWriter.open(process.cwd(), { env })).resolves.toBeDefined();
  });

  it("a token that could break out of the header is refused", () => {
    expect(() => gitAuthEnv("https://github.com", "abc\n[core]")).toThrow("unexpected characters");
    expect(() => gitAuthEnv("https://github.com", 'a"b')).toThrow("unexpected characters");
  });
});
