import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // CLI tests spawn node processes; two workers fit the 2-core machines.
    maxWorkers: 2,
  },
});
