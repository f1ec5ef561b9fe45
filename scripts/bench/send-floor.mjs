#!/usr/bin/env node
// The least memory a Node process takes to send a model stage's requests and do nothing else: the peak RSS
// of senders, each a process of its own, against `node -e 0` timed in the same rounds (rounds interleaved,
// the order rotating), N distinct bodies (fake-process.mjs, syntheticBody) to the fake server
// (scripts/fake-openai.mjs, its own process), C at a time:
//   file     the bare loop (fake-process.mjs, BARE_LOOP): the bodies read from a file, as promptfoo.mjs and
//            model.mjs run it beside a build
//   made     each body made from a template as it is sent, none held, each reply parsed and dropped
//   fetch    `made` through Node's fetch (undici) instead of node:http
// The `made` loop is also run with V8's young generation at 2 MB a semi-space (`--max-semi-space-size=2`),
// and one request at a time. It reads the memory goal against promptfoo (docs/performance.md, "Peak memory
// of a first build"): what the sending alone holds, before a build does anything else.
//   node scripts/bench/send-floor.mjs [--requests 2070] [--rounds 3] [--concurrency 64]
import path from "node:path";
import os from "node:os";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { argv } from "zx";
import { timed } from "./timed.mjs";
import {
  BARE_LOOP,
  HTTP_POST,
  SYNTHETIC_SYSTEM,
  load,
  median,
  server,
  spread,
  syntheticBody,
} from "./fake-process.mjs";

const n = Number(argv.requests ?? 2070);
const rounds = Number(argv.rounds ?? 3);
const concurrency = String(argv.concurrency ?? 64);

// `made`, for `node -e MADE URL N CONCURRENCY FETCH`: each body syntheticBody's, made as it is sent.
const MADE = `const http = require("node:http");
const [url, n, c, viaFetch] = process.argv.slice(1);
const SYNTHETIC_SYSTEM = ${JSON.stringify(SYNTHETIC_SYSTEM)};
const syntheticBody = ${syntheticBody.toString()};
const agent = new http.Agent({ keepAlive: true, maxSockets: Number(c) });
${HTTP_POST}
const send = viaFetch === "1"
  ? async (body) => JSON.parse(await (await fetch(url, { method: "POST", body,
      headers: { "content-type": "application/json" } })).text())
  : post;
let next = 0;
Promise.all(Array.from({ length: Number(c) }, async () => {
  while (next < Number(n)) await send(syntheticBody(next++)); }))
  .then(() => agent.destroy());`;

const work = await mkdtemp(path.join(os.tmpdir(), "medbench-bench-floor-"));
const bodies = path.join(work, "bodies.jsonl");
await writeFile(bodies, Array.from({ length: n }, (_, i) => `${syntheticBody(i)}\n`).join(""));
const fake = await server(null);
const url = `${fake.url}/chat/completions`;
const node = (args) => timed("node", args, work);
const senders = {
  "node -e 0": () => node(["-e", "0"]),
  file: () => node(["-e", BARE_LOOP, bodies, url, concurrency]),
  made: () => node(["-e", MADE, url, String(n), concurrency, "0"]),
  "made, young generation 2 MB": () =>
    node(["--max-semi-space-size=2", "-e", MADE, url, String(n), concurrency, "0"]),
  "made, one at a time": () => node(["-e", MADE, url, String(n), "1", "0"]),
  fetch: () => node(["-e", MADE, url, String(n), concurrency, "1"]),
};
const names = Object.keys(senders);
const peaks = Object.fromEntries(names.map((name) => [name, []]));
const loadBefore = load();
for (let round = 0; round < rounds; round++) {
  const order = names.map((_, i) => names[(i + round) % names.length]);
  for (const name of order) {
    const before = (await fake.stats()).requests;
    const { rssKB } = await senders[name]();
    const sent = (await fake.stats()).requests - before;
    if (name !== "node -e 0" && sent !== n) throw new Error(`${name} sent ${sent} requests, not ${n}`);
    peaks[name].push(rssKB / 1024);
  }
}
await fake.close();
await rm(work, { recursive: true, force: true });
console.log(
  `peak RSS of a sender of ${n} bodies, concurrency ${concurrency} (MB, min / median / max over ${rounds} ` +
    `rounds; node ${process.version}, ${os.cpus().length} cores; load ${loadBefore} -> ${load()})`,
);
const zero = median(peaks["node -e 0"]);
for (const name of names) {
  const ratio = name === "node -e 0" ? "" : `   ${(median(peaks[name]) / zero).toFixed(2)} of node -e 0`;
  console.log(`  ${name.padEnd(30)} ${spread(peaks[name], 1)}${ratio}`);
}
