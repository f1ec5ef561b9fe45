// Preloaded with `node -r` (NODE_OPTIONS): this process's host name is $FAKE_HOSTNAME, so that processes on
// one test machine can be "machines" on separate hosts, as claims see them (src/remote/claims.ts judges a
// holder's process only on its own host). For tests/remote/claims-faults.test.ts.
const name = process.env.FAKE_HOSTNAME;
if (name) {
  require("node:os").hostname = () => name;
  require("node:module").syncBuiltinESMExports();
}
