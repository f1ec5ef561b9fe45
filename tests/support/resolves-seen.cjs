// Preloaded with `node -r`: at exit, writes each request that reached Node's own resolver (`Module.
// _resolveFilename`), with the file that required it, to stderr (one `request TAB parent` a line, after a
// marker line), for tests/runner/resolve-compiled.test.ts.
const Module = require("node:module");
const nodeResolve = Module._resolveFilename;
const seen = [];
Module._resolveFilename = function (request, parent, ...rest) {
  seen.push(`${request}\t${parent?.filename ?? ""}`);
  return nodeResolve.call(this, request, parent, ...rest);
};
process.on("exit", () => process.stderr.write(`--- resolved by node\n${seen.join("\n")}\n`));
