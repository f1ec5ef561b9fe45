// Preloaded with NODE_OPTIONS=--require: when the CLI prints the line that starts the stage named by
// MEDBENCH_TEST_STAGE, the CommonJS modules loaded so far are noted; at exit they are written to stderr
// after a marker line (one absolute path a line), for tests/runner/load-ahead.test.ts.
const stage = process.env.MEDBENCH_TEST_STAGE;
let loaded = null;
for (const stream of [process.stdout, process.stderr]) {
  const write = stream.write.bind(stream);
  stream.write = (chunk, ...rest) => {
    if (loaded === null && new RegExp(`\\brun\\s+${stage}\\b`).test(String(chunk)))
      loaded = Object.keys(require.cache);
    return write(chunk, ...rest);
  };
}
process.on("exit", () => {
  process.stderr.write(`--- loaded as ${stage} started\n${(loaded ?? []).join("\n")}\n`);
});
