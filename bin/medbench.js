#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ (CommonJS). A packed medbench ships dist/ (built by `prepack`)
// and runs no install script; a checkout compiles itself on first use, below.
// CommonJS too (bin/package.json): Node starts an ES module entry through its ES loader, and an ES import of
// a CommonJS module scans its source for the names it exports first; together about 0.07 of a no-op build's
// CPU (docs/performance.md, "Work a build does once").
const { existsSync } = require("node:fs");
const { join, resolve } = require("node:path");

const root = resolve(__dirname, "..");
const entry = join(root, "dist/src/cli/main.js");
// A fresh checkout after `npm ci` (tsconfig.json and its compiler at hand, nothing compiled yet): compile
// once, as `npm run build` does. Compiled code older than its sources is refused later, never rebuilt here.
if (
  !existsSync(entry) &&
  existsSync(`${root}/tsconfig.json`) &&
  existsSync(`${root}/node_modules/typescript`)
) {
  process.stderr.write("medbench: compiling this checkout on first use (npm run build)\n");
  // Required here only: child_process brings net and streams, about 0.07 of Node's start-up to every
  // command.
  const { spawnSync } = require("node:child_process");
  const build = spawnSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: ["ignore", 2, 2] });
  if (build.status !== 0) {
    process.stderr.write(`error: compiling medbench failed\n  fix: run \`npm run build\` in ${root}\n`);
    process.exit(2);
  }
}
let main;
try {
  // Before the CLI loads: its modules then find each other by path, not by Node's whole search
  // (docs/performance.md, "Compiled modules resolved by their path"). A dist/ compiled before the resolver
  // existed runs without it: Node's resolver finds the same files.
  const resolver = join(root, "dist/src/load/resolve-compiled.js");
  if (existsSync(resolver)) require(resolver).resolveCompiledByPath(join(root, "dist"));
  ({ main } = require(entry));
} catch (e) {
  // An install whose build never ran (npm ci --ignore-scripts), a removed dist/, or one compiled by tsc
  // alone (without dist/package.json, Node takes the CommonJS files for ES modules): say so, not a stack
  // trace.
  const missing = e?.code === "MODULE_NOT_FOUND" && !existsSync(entry);
  const unmarked = e instanceof ReferenceError && /\b(exports|require) is not defined/.test(e.message);
  if (!missing && !unmarked) throw e;
  // The fix src/util/paths.ts compileFix() gives, which cannot be loaded here.
  const fix = existsSync(`${root}/tsconfig.json`)
    ? `run \`npm run build\` in ${root} (it compiles and records the sources), ` +
      "then run this command again"
    : "install medbench again (npm install): this installed copy is incomplete or was edited";
  const what = missing ? "dist/src/cli/main.js is missing" : "dist/package.json is missing";
  process.stderr.write(`error: medbench is not compiled (${what})\n  fix: ${fix}\n`);
  process.exit(2);
}
// A reader that stops early (`medbench status | head -c1`) closes the pipe: stop quietly, as cat does.
for (const stream of [process.stdout, process.stderr])
  stream.on("error", (e) => {
    if (e.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw e;
  });
main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
