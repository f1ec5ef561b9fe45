#!/usr/bin/env node
// medbench's HTTP client alone (postJson of dist/src/model/http.js: the route's keep-alive agent, one timer
// per try, the abort listener, the decoding of the reply) against a bare node:http keep-alive loop, sending
// the same N distinct bodies (about 3.2 KB, mostly Korean text, as a voice-command request) to the fake
// server as its own process, at the same concurrency, in one process; rounds interleaved, the order
// alternating.
// It separates the client's cost from the model stage's bookkeeping (keys, reply log, records), which
// scripts/bench/model.mjs measures with it.
// --spin 25,50,100: the bare loop again with that many microseconds of busy work per reply (bookkeeping of
// the client's own), in the same rounds; printed as the wall time each microsecond of it costs per request.
// About 1 while the client is what limits the loop; far below 1 while the server is; above 1 when an idle
// server must be woken for each request (on 2 cores, the fake server and the client share the machine).
// --keyed: the bare loop again with the two things every request of the model stage must do beyond it: its
// key (the body's sorted JSON and its sha256, serialisedRequest of dist/src/model/openai.js) and the durable
// write of its reply the moment it arrives (ReplyLog.put of dist/src/runner/replies/reply-log.js, one write
// call per reply, as a kill -9 must not lose a paid reply). Printed as its ratio to the bare loop: the least
// the model stage's sending can cost against the bare loop on this machine. And, to price that promise, the
// same records written once per event-loop turn (every reply parsed in a turn, in one write at its end),
// which a kill -9 can cut short by the replies of one turn: what the sending would cost if the promise were
// relaxed. node scripts/bench/http-client.mjs [--requests 10000] [--rounds 6] [--concurrency 64] [--spin
// 25,50] [--keyed] (npm run build first)
import http from "node:http";
import path from "node:path";
import os from "node:os";
import { createRequire } from "node:module";
import { mkdtemp, rm } from "node:fs/promises";
import { openSync, writeSync } from "node:fs";
import { argv } from "zx";
import { load, median, server, spread, syntheticBody } from "./fake-process.mjs";

const n = Number(argv.requests ?? 10000);
const rounds = Number(argv.rounds ?? 6);
const concurrency = Number(argv.concurrency ?? 64);
const spins = String(argv.spin ?? "")
  .split(",")
  .filter(Boolean)
  .map(Number);
const keyed = Boolean(argv.keyed);
const require = createRequire(import.meta.url);
const dist = (file) => require(path.resolve(import.meta.dirname, "../../dist", file));
const { postJson, agentFor, targetOf } = dist("src/model/http.js");

const bodies = Array.from({ length: n }, (_, i) => syntheticBody(i));

const fake = await server(null);
const url = `${fake.url}/chat/completions`;
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
const bare = (body, spinUs = 0) =>
  new Promise((resolve, reject) => {
    const data = Buffer.from(body);
    const headers = { "content-type": "application/json", "content-length": data.length };
    const req = http.request(url, { method: "POST", agent, headers }, (res) => {
      const chunks = [];
      res.on("data", (d) => chunks.push(d));
      res.on("end", () => {
        const reply = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        for (const until = performance.now() + spinUs / 1000; performance.now() < until; );
        resolve(reply);
      });
    });
    req.on("error", reject);
    req.end(data);
  });
const route = { name: "bench", base_url: fake.url, concurrency };
const target = targetOf(new URL(url), { "content-type": "application/json" }, agentFor(route));
const client = async (body) => JSON.parse((await postJson(target, Buffer.from(body), 120_000)).text);

// The bare loop with the key of each body and the durable write of each reply.
const logDir = keyed ? await mkdtemp(path.join(os.tmpdir(), "medbench-bench-log-")) : null;
const objects = keyed ? bodies.map((b) => JSON.parse(b)) : [];
// write: "each" (ReplyLog.put), "turn" (the same record lines, one write per event-loop turn) or none.
const keyedLoop = async (write) => {
  const { serialisedRequest } = await import(
    path.resolve(import.meta.dirname, "../../dist/src/model/openai.js")
  );
  const { ReplyLog, recordLine } = dist("src/runner/replies/reply-log.js");
  const log = new ReplyLog(path.join(logDir, String(Math.random()).slice(2)), false);
  const byBody = new Map(bodies.map((b, i) => [b, objects[i]]));
  const turnFd = write === "turn" ? openSync(path.join(logDir, `turn-${Math.random()}.log`), "a") : null;
  let pending = [];
  const flush = () => {
    writeSync(turnFd, pending.join(""));
    pending = [];
  };
  return async (body) => {
    const { payload, key } = serialisedRequest(route, byBody.get(body));
    const reply = await bare(payload);
    const record = () => JSON.stringify({ kind: "reply", status: 200, body: reply });
    if (write === "each") log.put(key, record());
    if (write === "turn" && pending.push(recordLine(key, Buffer.from(record()))) === 1) setImmediate(flush);
  };
};

const run = async (send) => {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) await send(bodies[next++]);
    }),
  );
  return performance.now() - t0;
};
await run(bare); // warm-up: sockets open, code compiled
await run(client);
const withKeys = keyed ? await keyedLoop("each") : null;
const keysOnly = keyed ? await keyedLoop(null) : null;
const perTurn = keyed ? await keyedLoop("turn") : null;
if (withKeys) await run(withKeys);
if (perTurn) await run(perTurn);
const ratios = [];
const keyedRatios = [];
const keysOnlyRatios = [];
const perTurnRatios = [];
const perSpin = new Map(spins.map((us) => [us, []]));
const loadBefore = load();
for (let r = 0; r < rounds; r++) {
  const t = {};
  for (const side of r % 2 ? ["bare", "client"] : ["client", "bare"])
    t[side] = await run(side === "bare" ? bare : client);
  ratios.push(t.client / t.bare);
  if (withKeys) keyedRatios.push((await run(withKeys)) / t.bare);
  if (keysOnly) keysOnlyRatios.push((await run(keysOnly)) / t.bare);
  if (perTurn) perTurnRatios.push((await run(perTurn)) / t.bare);
  // The wall time a microsecond of work per reply adds, per request: (spun - bare) / (us * requests).
  for (const [us, xs] of perSpin)
    xs.push(((await run((body) => bare(body, us))) - t.bare) / ((us / 1000) * bodies.length));
}
await fake.close();
agent.destroy();
console.log(
  `medbench's HTTP client / a bare node:http loop: ${n} requests, concurrency ${concurrency}, ${rounds} ` +
    `interleaved rounds; node ${process.version}, ${os.cpus().length} cores; ` +
    `load ${loadBefore} -> ${load()}`,
);
console.log(`  min / median / max   ${spread(ratios)}   (median ${median(ratios).toFixed(3)})`);
for (const [us, xs] of perSpin)
  console.log(`  bare loop + ${us} us of work per reply: wall time per us of it   ${spread(xs)}`);
if (withKeys) {
  console.log(`  bare loop + each request's key / bare loop   ${spread(keysOnlyRatios)}`);
  console.log(
    `  bare loop + each request's key and durable reply write / bare loop   ${spread(keyedRatios)}`,
  );
  console.log(
    `  bare loop + each request's key and the replies written once per turn / bare loop   ` +
      spread(perTurnRatios),
  );
  await rm(logDir, { recursive: true, force: true });
}
process.exit(0);
