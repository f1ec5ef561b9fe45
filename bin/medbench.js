#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm ci` (the prepare script).
import { main } from "../dist/src/cli/main.js";
// A reader that stops early (`medbench status | head -c1`) closes the pipe: stop quietly, as cat does.
for (const stream of [process.stdout, process.stderr])
  stream.on("error", (e) => {
    if (e.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw e;
  });
main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
