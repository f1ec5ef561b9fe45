#!/usr/bin/env node
// An S3-compatible server (s3rver) on 127.0.0.1 for tests, benchmarks and trying MEDBENCH_REMOTE by hand:
//   node scripts/s3-server.mjs --dir /tmp/s3 [--bucket medbench] [--port 0] [--no-conditional-writes]
// Prints one JSON line {"endpoint": …, "bucket": …, "dir": …} once it listens, and serves until killed.
// Tests can stall it through stdin (`stall MATCH N`, `late METHOD MATCH`, `go`: see stallable, lateAnswers).
// Its credentials are s3rver's fixed test pair (AWS_ACCESS_KEY_ID=S3RVER, AWS_SECRET_ACCESS_KEY=S3RVER).
// Objects live as plain files under DIR/BUCKET/<key>._S3rver_object (tests damage them there).
import S3rver from "s3rver";
import S3Object from "s3rver/lib/models/object.js";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
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
    // A delete of another key in the folder may remove it as empty after it was made (raceFree, below).
    await againOnENOENT(
      () => writeFile(temp, data),
      () => folderFor(path),
    );
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
    await folderFor(path);
    await store.putMetadata(object.bucket, object.key, object.metadata, md5);
    await whole(path, content);
    return { size: content.length, md5 };
  };
}

/** `run`, again (after `between`) while it fails with ENOENT, a hundred tries at most: a file or folder
 *  another key's write or delete moved or removed at that moment. */
async function againOnENOENT(run, between = async () => {}) {
  for (let attempt = 1; ; attempt++)
    try {
      return await run();
    } catch (e) {
      if (e.code !== "ENOENT" || attempt === 100) throw e;
      await between();
    }
}

/** The folder of `path`, made: a recursive mkdir fails (ENOENT) when a delete of another key removes a
 *  folder on its way as empty while it works, so it is made again. */
const folderFor = (path) => againOnENOENT(() => mkdir(dirname(path), { recursive: true }));

/** s3rver lists a bucket by reading each folder and then stating each name in it, and a delete removes
 *  the folders it left empty: a name renamed or deleted between the two (another key's write or delete at
 *  that moment: four shards at once) failed the listing with ENOENT, a 500 InternalError that S3 never
 *  gives for it, and a folder that gained a file failed the delete (ENOTEMPTY) after its object was gone.
 *  A listing is taken again until it reads a stable folder tree; a folder that is not empty is kept. */
function raceFree(store) {
  const list = store.listObjects.bind(store);
  // (A bucket's folder gone is no race: its listing fails a hundred times, then as s3rver fails it.)
  store.listObjects = (bucket, options) => againOnENOENT(() => list(bucket, options));
  const remove = store.deleteObject.bind(store);
  store.deleteObject = async (bucket, key) => {
    try {
      await remove(bucket, key);
    } catch (e) {
      // Its files are gone by then: only the clean-up of an emptied folder met another key's file.
      if (e.code !== "ENOTEMPTY" && e.code !== "ENOENT") throw e;
    }
  };
}

/** S3 reads are strongly consistent: a GET answers one whole version of an object, its ETag with its
 *  bytes. s3rver reads an object's ETag (object.md5) and opens its bytes one after the other, and writeWhole
 *  replaces them one after the other, so a GET during a PUT of the same key could pair the new ETag with
 *  the old bytes: a machine would then replace, by that ETag, a claim it never read (two machines sending
 *  one request). Requests on one key therefore take turns; registered first, this runs innermost, so a
 *  test's stall or late answer never holds a key's turn. */
function oneRequestAKey(server) {
  const turns = new Map();
  server.middleware.unshift(async (ctx, next) => {
    const [, bucket, ...rest] = ctx.path.split("/");
    if (!bucket || rest.length === 0) return next(); // a bucket's own requests (list, DeleteObjects)
    const name = `${bucket}/${decodeURIComponent(rest.join("/"))}`;
    const before = turns.get(name) ?? Promise.resolve();
    let done;
    const turn = new Promise((resolve) => (done = resolve));
    const mine = before.then(() => turn);
    turns.set(name, mine);
    await before;
    try {
      await next();
    } finally {
      done();
      if (turns.get(name) === mine) turns.delete(name);
    }
  });
}

/** A stall for tests that kill a client mid-transfer: once started, `allow` more GETs of keys holding
 *  `match` are answered, and the rest wait until the stall ends (then they are answered as usual). With
 *  `miss`, every GET it holds is answered 404 when it ends, whatever was written since: a read that started
 *  before a write and is slow (a client's race between its own lookup and its own write). */
function stallable(server) {
  let stall = null;
  // s3rver is a Koa app whose routes are registered as it is built: this must come first to see a request.
  server.middleware.unshift(async (ctx, next) => {
    if (stall && ctx.method === "GET" && ctx.path.includes(stall.match)) {
      if (stall.allow > 0) stall.allow--;
      else {
        const { miss } = stall;
        await new Promise((resume) => stall.held.push(resume));
        if (miss) {
          ctx.status = 404;
          ctx.type = "application/xml";
          ctx.body = "<Error><Code>NoSuchKey</Code><Message>held by a stall</Message></Error>";
          return;
        }
      }
    }
    await next();
  });
  return {
    start: (match, allow, miss = false) => (stall = { match, allow, miss, held: [] }),
    end: () => {
      const held = stall?.held ?? [];
      stall = null;
      held.forEach((resume) => resume());
    },
  };
}

/** An answer that comes late, for tests of a client's race between what it read and what it does next:
 *  `late METHOD MATCH` makes the next METHOD request of a key holding MATCH carried out when it comes (a
 *  GET reads what is there then) but answered only at `go`; `late?` says how many such answers wait. */
function lateAnswers(server) {
  let late = null;
  const waiting = [];
  server.middleware.unshift(async (ctx, next) => {
    if (!late || ctx.method !== late.method || !ctx.path.includes(late.match)) return next();
    late = null;
    let failed = null; // an error answer (a GET of a name not there: 404) is late as well
    try {
      await next();
      // A body read from a file is read now: the file may be replaced before the answer goes.
      if (ctx.body && typeof ctx.body.pipe === "function") {
        const chunks = [];
        for await (const chunk of ctx.body) chunks.push(chunk);
        ctx.body = Buffer.concat(chunks);
      }
    } catch (e) {
      failed = e;
    }
    await new Promise((answer) => waiting.push(answer));
    if (failed) throw failed;
  });
  return {
    start: (method, match) => (late = { method, match }),
    count: () => waiting.length,
    end: () => waiting.splice(0).forEach((answer) => answer()),
  };
}

/** Conditional writes as AWS S3 documents them (PutObject): with If-None-Match: *, 412 PreconditionFailed
 *  when the name exists; with If-Match: <etag>, 412 when the object's ETag differs and 404 NoSuchKey when
 *  there is no object of that name; 409 ConditionalRequestConflict while another conditional write of the
 *  name is under way (https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html,
 *  "Conditional write behavior"). Conditional deletes likewise (DeleteObject with If-Match: 412 when the
 *  ETag differs, 404 when the name is gone, 409 beside another conditional request of the name;
 *  https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-deletes.html). s3rver ignores these
 *  headers; `off` keeps it so (a store that cannot claim). DeleteObjects' per-object ETags are not read.
 */
function conditionalWrites(server, off) {
  const writing = new Set();
  const refuse = (ctx, status, code) => {
    ctx.status = status;
    ctx.type = "application/xml";
    ctx.body = `<Error><Code>${code}</Code><Message>conditional write refused</Message></Error>`;
  };
  server.middleware.unshift(async (ctx, next) => {
    const absent = ctx.get("if-none-match") === "*";
    const match = ctx.get("if-match");
    const conditional = (ctx.method === "PUT" && (absent || match)) || (ctx.method === "DELETE" && match);
    if (off || !conditional) return next();
    const [, bucket, ...rest] = ctx.path.split("/");
    const key = decodeURIComponent(rest.join("/"));
    const name = `${bucket}/${key}`;
    if (writing.has(name)) return refuse(ctx, 409, "ConditionalRequestConflict");
    const exists = existsSync(server.store.getResourcePath(bucket, key, "object"));
    if (absent && exists) return refuse(ctx, 412, "PreconditionFailed");
    if (match && !exists) return refuse(ctx, 404, "NoSuchKey");
    if (match && match !== "*" && match.replace(/"/g, "") !== currentMd5(server.store, bucket, key))
      return refuse(ctx, 412, "PreconditionFailed");
    writing.add(name);
    try {
      await next();
    } finally {
      writing.delete(name);
    }
  });
}

/** The md5 an object's ETag quotes (writeWhole keeps it beside the object), or null when it is gone. */
function currentMd5(store, bucket, key) {
  try {
    return readFileSync(store.getResourcePath(bucket, key, "object.md5"), "utf8");
  } catch {
    return null;
  }
}

/** Failures for tests: `refuse METHOD MATCH STATUS [WRITER]` answers every METHOD request whose key holds
 *  MATCH (and, with WRITER, whose x-amz-meta-medbench-writer is WRITER: one machine's uploads) with STATUS,
 *  as S3 answers a throttled call (503 SlowDown) or an internal error (500); `refuse off` ends them. */
function refusals(server) {
  const rules = [];
  const CODES = { 500: "InternalError", 501: "NotImplemented", 503: "SlowDown" };
  server.middleware.unshift(async (ctx, next) => {
    const writer = ctx.get("x-amz-meta-medbench-writer");
    const rule = rules.find(
      (r) => r.method === ctx.method && ctx.path.includes(r.match) && (!r.writer || r.writer === writer),
    );
    if (!rule) return next();
    rule.count++;
    ctx.status = rule.status;
    ctx.type = "application/xml";
    const code = CODES[rule.status] ?? "InternalError";
    ctx.body = `<Error><Code>${code}</Code><Message>refused for a test</Message></Error>`;
  });
  return {
    add: (method, match, status, writer) => rules.push({ method, match, status, writer, count: 0 }),
    clear: () => rules.splice(0),
    count: () => rules.reduce((sum, rule) => sum + rule.count, 0),
  };
}

/** A small seeded generator of numbers in [0, 1) (mulberry32): a throttled run is the same each time. */
function seeded(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

/** A store under load, for tests: `throttle N` answers one request in N, drawn from a seeded sequence, 503
 *  SlowDown (as S3 asks a client to slow down; N = 0 stops it); `delay MS` answers every request MS
 *  later. */
function pacing(server) {
  const pace = { every: 0, draw: seeded(1), delayMs: 0, throttled: 0 };
  server.middleware.unshift(async (ctx, next) => {
    if (pace.delayMs > 0) await new Promise((wake) => setTimeout(wake, pace.delayMs));
    if (pace.every > 0 && pace.draw() < 1 / pace.every) {
      pace.throttled++;
      ctx.status = 503;
      ctx.type = "application/xml";
      ctx.body = "<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>";
      return;
    }
    await next();
  });
  return pace;
}

export async function startS3({ dir, bucket = "medbench", port = 0, conditional = true }) {
  mkdirSync(dir, { recursive: true });
  const server = new S3rver({
    address: "127.0.0.1",
    port,
    silent: true,
    directory: dir,
    configureBuckets: [{ name: bucket }],
  });
  writeWhole(server.store);
  raceFree(server.store);
  oneRequestAKey(server);
  conditionalWrites(server, !conditional);
  const stall = stallable(server);
  const late = lateAnswers(server);
  const pace = pacing(server);
  const refused = refusals(server);
  const { port: bound } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${bound}`,
    bucket,
    dir,
    stall,
    late,
    pace,
    refused,
    close: () => server.close(),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const arg = (name, dflt) => {
    const i = process.argv.indexOf(`--${name}`);
    return i >= 0 ? process.argv[i + 1] : dflt;
  };
  const dir = arg("dir");
  if (!dir) {
    process.stderr.write(
      "usage: node scripts/s3-server.mjs --dir DIR [--bucket NAME] [--port N] [--no-conditional-writes]\n",
    );
    process.exit(2);
  }
  const s = await startS3({
    dir,
    bucket: arg("bucket", "medbench"),
    port: Number(arg("port", "0")),
    conditional: !process.argv.includes("--no-conditional-writes"),
  });
  process.stdout.write(JSON.stringify({ endpoint: s.endpoint, bucket: s.bucket, dir: s.dir }) + "\n");
  // Tests: a line `stall MATCH N [miss]` on stdin starts a stall (see stallable), `late METHOD MATCH` makes
  // an answer late (see lateAnswers; `late?` counts those waiting), `go` ends both;
  // `throttle N` and `delay MS` pace it (see pacing); `refuse METHOD MATCH STATUS [WRITER]` and `refuse off`
  // (see refusals); each is acknowledged (`throttled` and `refused`: with their counts).
  process.stdin.setEncoding("utf8");
  let pending = "";
  process.stdin.on("data", (chunk) => {
    pending += chunk;
    for (let i = pending.indexOf("\n"); i >= 0; i = pending.indexOf("\n")) {
      const [word, match, allow, mode, writer] = pending.slice(0, i).trim().split(" ");
      pending = pending.slice(i + 1);
      if (word === "stall") s.stall.start(match, Number(allow), mode === "miss");
      else if (word === "go") [s.stall, s.late].forEach((held) => held.end());
      else if (word === "late") s.late.start(match, allow);
      else if (word === "throttle") s.pace.every = Number(match);
      else if (word === "delay") s.pace.delayMs = Number(match);
      else if (word === "refuse" && match === "off") s.refused.clear();
      else if (word === "refuse") s.refused.add(match, allow, Number(mode), writer);
      // `throttled` and `refused`: how many requests were answered 503 SlowDown, or refused, so far.
      const counts = { throttled: s.pace.throttled, refused: s.refused.count(), "late?": s.late.count() };
      process.stdout.write(word in counts ? `${counts[word]}\n` : `${word}\n`);
    }
  });
}
