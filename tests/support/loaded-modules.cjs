// Preloaded with `node -r`: at exit, writes the CommonJS modules the process loaded (one absolute path a
// line, after a marker line) and then Node's builtins it loaded (`NativeModule child_process`, after another
// marker) to stderr, for tests/structure/startup-imports.test.ts.
process.on("exit", () => {
  process.stderr.write(`--- loaded modules\n${Object.keys(require.cache).join("\n")}\n`);
  process.stderr.write(`--- loaded builtins\n${process.moduleLoadList.join("\n")}\n`);
});
