// A preload (`node --require tests/support/resolves-from.cjs`) that notes the paths given to path.resolve
// by the callers whose stack frame matches $RESOLVES_FROM (a regular expression), written
// to $RESOLVES_OUT at exit as a JSON list (each call's parts joined by a space), for
// tests/runner/consulted-paths.test.ts.
const path = require("node:path");
const fs = require("node:fs");

const from = new RegExp(process.env.RESOLVES_FROM);
const noted = [];
const resolve = path.resolve;
path.resolve = function (...parts) {
  const caller = new Error().stack.split("\n")[2] ?? "";
  if (from.test(caller)) noted.push(parts.join(" "));
  return resolve.apply(this, parts);
};
process.on("exit", () => {
  if (process.env.RESOLVES_OUT) fs.writeFileSync(process.env.RESOLVES_OUT, JSON.stringify(noted));
});
