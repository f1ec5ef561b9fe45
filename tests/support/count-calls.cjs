// A preload (`node --require tests/support/count-calls.cjs`) that counts the calls of named exports of
// medbench's compiled modules (CommonJS: a module calls another's export through its exports object, so
// the count sees every call from outside the module), written to $COUNT_CALLS_OUT at exit as JSON
// { "file:export": calls }. $COUNT_CALLS names them: { "<file name>": ["<export>", …] } (a file of dist/,
// by its name alone). An export that is never loaded is absent from the output, so a renamed one fails
// the test that counts it. The repeats test uses it to count what a build works out once per stage or
// once per request.
const Module = require("node:module");
const fs = require("node:fs");
const { basename, sep } = require("node:path");

const targets = JSON.parse(process.env.COUNT_CALLS ?? "{}");
const counts = {};
const compile = Module._extensions[".js"];
Module._extensions[".js"] = function (module, filename) {
  compile(module, filename);
  const names = filename.includes(`${sep}dist${sep}`) ? targets[basename(filename)] : undefined;
  for (const name of names ?? []) {
    const original = module.exports[name];
    if (typeof original !== "function") continue;
    const label = `${basename(filename)}:${name}`;
    counts[label] = 0;
    module.exports[name] = function (...args) {
      counts[label]++;
      return original.apply(this, args);
    };
  }
};
process.on("exit", () => {
  if (process.env.COUNT_CALLS_OUT)
    fs.writeFileSync(process.env.COUNT_CALLS_OUT, JSON.stringify(counts, null, 1));
});
