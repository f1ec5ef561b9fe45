import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // CLI tests spawn node processes; two workers fit the 2-core machines.
    maxWorkers: 2,
    // The console report, and a JSON one that .ci/run sums up in a plain "N passed, N failed" line.
    reporters: ["default", "json"],
    outputFile: { json: "test-artifacts/vitest.json" },
  },
});
