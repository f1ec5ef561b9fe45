#!/usr/bin/env node
// An S3-compatible server (s3rver) on 127.0.0.1 for tests, benchmarks and trying MEDBENCH_REMOTE by hand:
//   node scripts/s3-server.mjs --dir /tmp/s3 [--bucket medbench] [--port 0]
// Prints one JSON line {"endpoint": …, "bucket": …, "dir": …} once it listens, and serves until killed.
// Its credentials are s3rver's fixed test pair (AWS_ACCESS_KEY_ID=S3RVER, AWS_SECRET_ACCESS_KEY=S3RVER).
// Objects live as plain files under DIR/BUCKET/<key>._S3rver_object (tests damage them there).
import S3rver from "s3rver";
import S3Object from "s3rver/lib/models/object.js";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { pathToFileURL } from "node:url";

/** s3rver writes an object and its metadata in place and answers before the bytes are down, so a read
 *  during a write of the same key (four shards uploading one stage manifest) sees half a file or half a
 *  JSON and fails. S3 itself never shows a partial object: this store writes each file whole, then renames
 *  it, the metadata before the object (a reader looks for the object first). */
function writeWhole(store) {
  const ALLOWED = new Set(S3Object.ALLOWED_METADATA);
  const whole = async (path, data) => {
    const temp = `${path}.${randomBytes(6).toString("hex")}.tmp`;
    await writeFile(temp, data);
    await rename(temp, path);
  };
  store.putMetadata = async (bucket, key, metadata, md5) => {
    // s3rver's own selection of what it keeps: the allowed headers and the user metadata.
    const kept = Object.fromEntries(
      Object.entries(metadata).filter(([name]) => ALLOWED.has(name) || name.startsWith("x-amz-meta-")),
    );
    if (md5) await whole(store.getResourcePath(bucket, key, "object.md5"), md5);
    await whole(store.getResourcePath(bucket, key, "metadata.json"), JSON.stringify(kept, null, 2));
  };
  store.putObject = async (object) => {
    const path = store.getResourcePath(object.bucket, object.key, "object");
    const chunks = [];
    if (Buffer.isBuffer(object.content)) chunks.push(object.content);
    else for await (const chunk of object.content) chunks.push(chunk);
    const content = Buffer.concat(chunks);
    const md5 = createHash("md5").update(content).digest("hex");
    await mkdir(dirname(path), { recursive: true });
    await store.putMetadata(object.bucket, object.key, object.metadata, md5);
    await whole(path, content);
    return { size: content.length, md5 };
  };
}

export async function startS3({ dir, bucket = "medbench", port = 0 }) {
  mkdirSync(dir, { recursive: true });
  const server = new S3rver({
    address: "127.0.0.1",
    port,
    silent: true,
    directory: dir,
    configureBuckets: [{ name: bucket }],
  });
  writeWhole(server.store);
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
