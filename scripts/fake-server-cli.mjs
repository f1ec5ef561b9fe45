// What every fake provider server shares: listening on 127.0.0.1 with a handle its tests hold (url, stats,
// set, close), and being started from the command line (--help, an argument error with the usage, SIGTERM).

/** Listens on opts.port (0: any) and resolves to the handle tests and benches use. */
export function listening(server, opts, stats) {
  return new Promise((resolve) => {
    server.listen(opts.port, "127.0.0.1", () => {
      const { port } = server.address();
      resolve({
        port,
        url: `http://127.0.0.1:${port}`,
        stats,
        set: (changes) => Object.assign(opts, changes),
        close: () =>
          new Promise((done) => {
            server.closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
  });
}

/**
 * Runs a fake server as a command: `start(opts)` with the options `parseArgs` reads, `said(server)` printed
 * once it listens; stopped by SIGTERM after its close (a fake that records bodies flushes them there).
 */
export async function runFromCommandLine({ usage, parseArgs, start, said }) {
  const argv = process.argv.slice(2);
  if (argv.includes("--help") || argv.includes("-h")) {
    console.log(usage);
    process.exit(0);
  }
  let opts;
  try {
    opts = parseArgs(argv);
  } catch (e) {
    console.error(`error: ${e.message}\n\n${usage}`);
    process.exit(2);
  }
  const server = await start(opts);
  console.log(said(server));
  process.once("SIGTERM", () => server.close().then(() => process.exit(0)));
}
