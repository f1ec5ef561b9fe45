#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm ci` (the prepare script).
const entry = new URL("../dist/src/cli/main.js", import.meta.url);
let main;
try {
  ({ main } = await import(entry.href));
} catch (e) {
  if (e?.code !== "ERR_MODULE_NOT_FOUND" || !String(e.message).includes(decodeURI(entry.pathname))) throw e;
  // An install whose build never ran (npm ci --ignore-scripts) or a removed dist/: say so, not a stack trace.
  const root = decodeURI(new URL("..", import.meta.url).pathname).replace(/\/$/, "");
  process.stderr.write(
    "error: medbench is not compiled (dist/src/cli/main.js is missing)\n" +
      `  fix: run \`npm run build\` in ${root}` +
      " (npm ci runs it unless scripts are ignored)\n",
  );
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
