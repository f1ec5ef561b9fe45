// Preloaded with `node --expose-internals -r`: at exit, writes to stderr the built-in modules Node compiled
// without its code cache (after a marker line, one a line), which it does for each built-in loaded while a
// V8 flag is away from its default (tests/runner/builtins-cache.test.ts).
const { internalBinding } = require("internal/test/binding");
process.on("exit", () => {
  const { compiledWithoutCache } = internalBinding("builtins").getCacheUsage();
  process.stderr.write(`--- compiled without cache\n${[...compiledWithoutCache].join("\n")}\n`);
});
