// Preloaded with `node -r`: at exit, writes the CommonJS modules the process loaded (one absolute path a
// line, after a marker line) to stderr, for tests/startup-imports.test.ts.
process.on("exit", () => {
  process.stderr.write(`--- loaded modules\n${Object.keys(require.cache).join("\n")}\n`);
});
