#!/usr/bin/env node
// medbench's HTTP client alone (postJson of dist/src/model/http.js: the route's keep-alive agent, one timer per
// try, the abort listener, the decoding of the reply) against a bare node:http keep-alive loop, sending the
// same N distinct bodies (about 3.3 KB, mostly Korean text, as a voice-command request) to the fake server as
// its own process, at the same concurrency, in one process; rounds interleaved, the order alternating.
// It separates the client's cost from the model stage's bookkeeping (keys, reply log, records), which
// scripts/bench/model.mjs measures with it.
// --spin 25,50,100: the bare loop again with that many microseconds of busy work per reply (bookkeeping of
// the client's own), in the same rounds; printed as the wall time each microsecond of it costs per request.
// About 1 while the client is what limits the loop; far below 1 while the server is; above 1 when an idle
// server must be woken for each request (on 2 cores, the fake server and the client share the machine).
//   node scripts/bench/http-client.mjs [--requests 10000] [--rounds 6] [--concurrency 64] [--spin 25,50]
//   (npm run build first)
import http from "node:http";
import path from "node:path";
import os from "node:os";
import { createRequire } from "node:module";
import { argv } from "zx";
import { load, median, server, spread } from "./fake-process.mjs";

const n = Number(argv.requests ?? 10000);
const rounds = Number(argv.rounds ?? 6);
const concurrency = Number(argv.concurrency ?? 64);
const spins = String(argv.spin ?? "")
  .split(",")
  .filter(Boolean)
  .map(Number);
const require = createRequire(import.meta.url);
const { postJson, agentFor, targetOf } = require(
  path.resolve(import.meta.dirname, "../../dist/src/model/http.js"),
);

const system = "수술 로봇에 내린 음성 명령을 정해진 JSON으로 바꾸세요. ".repeat(40);
const bodies = Array.from({ length: n }, (_, i) =>
  JSON.stringify({
    max_tokens: 512,
    messages: [
      { content: system, role: "system" },
      { content: `명령 ${i}: 카메라를 왼쪽으로 10도 돌려`, role: "user" },
    ],
    model: "bench",
    temperature: 0,
  }),
);

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
const client = async (body) => JSON.parse((await postJson(target, body, 120_000)).text);

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
const ratios = [];
const perSpin = new Map(spins.map((us) => [us, []]));
const loadBefore = load();
for (let r = 0; r < rounds; r++) {
  const t = {};
  for (const side of r % 2 ? ["bare", "client"] : ["client", "bare"])
    t[side] = await run(side === "bare" ? bare : client);
  ratios.push(t.client / t.bare);
  // The wall time a microsecond of work per reply adds, per request: (spun - bare) / (us * requests).
  for (const [us, xs] of perSpin)
    xs.push(((await run((body) => bare(body, us))) - t.bare) / ((us / 1000) * bodies.length));
}
await fake.close();
agent.destroy();
console.log(
  `medbench's HTTP client / a bare node:http loop: ${n} requests, concurrency ${concurrency}, ${rounds} ` +
    `interleaved rounds; node ${process.version}, ${os.cpus().length} cores; load ${loadBefore} -> ${load()}`,
);
console.log(`  min / median / max   ${spread(ratios)}   (median ${median(ratios).toFixed(3)})`);
for (const [us, xs] of perSpin)
  console.log(`  bare loop + ${us} us of work per reply: wall time per us of it   ${spread(xs)}`);
process.exit(0);
