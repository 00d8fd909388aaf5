import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["__tests__/**/*.test.ts"],
    testTimeout: 30_000,
    pool: "forks",
    // One temporary directory per run, removed at the end (see the file).
    globalSetup: ["./__tests__/helpers/temp-root.ts"],
    reporters: ["default", "./__tests__/helpers/summary-reporter.ts"],
  },
});
