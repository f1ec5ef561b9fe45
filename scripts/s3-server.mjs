#!/usr/bin/env node
// An S3-compatible server (s3rver) on 127.0.0.1 for tests, benchmarks and trying MEDBENCH_REMOTE by hand:
//   node scripts/s3-server.mjs --dir /tmp/s3 [--bucket medbench] [--port 0]
// Prints one JSON line {"endpoint": …, "bucket": …, "dir": …} once it listens, and serves until killed.
// Its credentials are s3rver's fixed test pair (AWS_ACCESS_KEY_ID=S3RVER, AWS_SECRET_ACCESS_KEY=S3RVER).
// Objects live as plain files under DIR/BUCKET/<key>._S3rver_object (tests damage them there).
import S3rver from "s3rver";
import { mkdirSync } from "node:fs";
import { pathToFileURL } from "node:url";

export async function startS3({ dir, bucket = "medbench", port = 0 }) {
  mkdirSync(dir, { recursive: true });
  const server = new S3rver({
    address: "127.0.0.1",
    port,
    silent: true,
    directory: dir,
    configureBuckets: [{ name: bucket }],
  });
  const { port: bound } = await server.run();
  return { endpoint: `http://127.0.0.1:${bound}`, bucket, dir, close: () => server.close() };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const arg = (name, dflt) => {
    const i = process.argv.indexOf(`--${name}`);
    return i >= 0 ? process.argv[i + 1] : dflt;
  };
  const dir = arg("dir");
  if (!dir) {
    process.stderr.write("usage: node scripts/s3-server.mjs --dir DIR [--bucket NAME] [--port N]\n");
    process.exit(2);
  }
  const s = await startS3({ dir, bucket: arg("bucket", "medbench"), port: Number(arg("port", "0")) });
  process.stdout.write(JSON.stringify({ endpoint: s.endpoint, bucket: s.bucket, dir: s.dir }) + "\n");
}
