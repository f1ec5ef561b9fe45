import { defineConfig } from "vitest/config";

// No test may fail for being slow: CI shares a two-core machine, and a run at load 15 takes several times as
// long as one at load 2. The limits below only stop a test that hangs (a bug), long after any slow run ends;
// tests bound their own waits by what they wait for, never by the clock.
const HANG = 30 * 60_000;

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    testTimeout: HANG,
    hookTimeout: HANG,
    // CLI tests spawn node processes; two workers fit the 2-core machines.
    maxWorkers: 2,
    // The console report, and a JSON one that .ci/run sums up in a plain "N passed, N failed" line.
    reporters: ["default", "json"],
    outputFile: { json: "test-artifacts/vitest.json" },
  },
});
