#!/usr/bin/env node
// The peak RSS of a few Node senders that do nothing but send a model stage's requests, each a process of
// its own, against `node -e 0` measured in the same rounds (rounds interleaved, the order rotating): N
// distinct bodies (fake-process.mjs, syntheticBody) to the fake server (scripts/fake-openai.mjs, its own
// process), C at a time:
//   file        the bare loop (fake-process.mjs, BARE_LOOP): every body read from a file and held, as
//               promptfoo.mjs and model.mjs run it beside a build
//   made        each body made as it is sent, none held beyond the C in flight, each reply parsed, dropped
//   made, young generation 2 MB   again with --max-semi-space-size=2
//   made, one at a time           again with C = 1
//   made, medbench's modules      again after loading every module medbench's process loads in a first
//               build (recorded from one, below), none of their functions called: what a build's process
//               holds before it does anything, plus the sending at its leanest
//   fetch       `made` through Node's fetch (undici) instead of node:http
// It reads the memory goal against promptfoo (docs/performance.md, "Peak memory of a first build").
//   node scripts/bench/send-floor.mjs [--requests 2070] [--rounds 3] [--concurrency 64]
// (npm run build first)
import path from "node:path";
import os from "node:os";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { argv } from "zx";
import { timed } from "./timed.mjs";
import { syntheticProject } from "./release.mjs";
import {
  BARE_LOOP,
  HTTP_POST,
  SYNTHETIC_SYSTEM,
  load,
  median,
  server,
  spread,
  syntheticBody,
  writeFakeRoutes,
} from "./fake-process.mjs";

const requests = Number(argv.requests ?? 2070);
const rounds = Number(argv.rounds ?? 3);
const concurrency = String(argv.concurrency ?? 64);
const repo = path.resolve(import.meta.dirname, "../..");

// `made`, for `node -e MADE URL COUNT CONCURRENCY FETCH [MODULES]`: each body syntheticBody's, made as it is
// sent; MODULES, a JSON file listing modules to load first.
const MADE = `const http = require("node:http");
const [url, count, concurrency, viaFetch, modules] = process.argv.slice(1);
if (modules) for (const file of JSON.parse(require("node:fs").readFileSync(modules, "utf8"))) require(file);
const SYNTHETIC_SYSTEM = ${JSON.stringify(SYNTHETIC_SYSTEM)};
const syntheticBody = ${syntheticBody.toString()};
const agent = new http.Agent({ keepAlive: true, maxSockets: Number(concurrency) });
${HTTP_POST}
const send = viaFetch === "1"
  ? async (body) => JSON.parse(await (await fetch(url, { method: "POST", body,
      headers: { "content-type": "application/json" } })).text())
  : post;
let next = 0;
Promise.all(Array.from({ length: Number(concurrency) }, async () => {
  while (next < Number(count)) await send(syntheticBody(next++)); }))
  .then(() => agent.destroy());`;

// Written at exit by medbench's process (a preload): every module it loaded, but this hook and the
// launcher (which would run the CLI).
const RECORD_MODULES = `const out = process.env.MEDBENCH_BENCH_MODULES;
process.on("exit", () => require("node:fs").writeFileSync(out, JSON.stringify(Object.keys(require.cache)
  .filter((file) => file !== __filename && file !== process.argv[1]))));`;

/** The modules medbench's process loads in a first build of a small synthetic voice-command release. */
async function modulesOfABuild(work, url) {
  const { dir } = await syntheticProject(200, work);
  await writeFakeRoutes(dir, url, Number(concurrency));
  const hook = path.join(work, "record-modules.cjs");
  const list = path.join(work, "modules.json");
  await writeFile(hook, RECORD_MODULES);
  const args = ["build", "specs/voice-command.yaml", "--model", "fake/bench", "--registry", "routes.yaml"];
  const env = { NODE_OPTIONS: `--require ${hook}`, MEDBENCH_BENCH_MODULES: list };
  const bin = path.join(repo, "bin/medbench.js");
  await timed("node", [bin, ...args, "--data-dir", "release"], dir, { rss: false, env });
  await rm(dir, { recursive: true, force: true });
  return { list, count: JSON.parse(await readFile(list, "utf8")).length };
}

const work = await mkdtemp(path.join(os.tmpdir(), "medbench-bench-floor-"));
const fake = await server(null);
try {
  const bodies = path.join(work, "bodies.jsonl");
  await writeFile(bodies, Array.from({ length: requests }, (_, i) => `${syntheticBody(i)}\n`).join(""));
  const url = `${fake.url}/chat/completions`;
  const modules = await modulesOfABuild(work, fake.url);
  const node = (args) => timed("node", args, work);
  const made = (flags, inFlight, viaFetch, extra = []) =>
    node([...flags, "-e", MADE, url, String(requests), inFlight, viaFetch, ...extra]);
  const senders = {
    "node -e 0": () => node(["-e", "0"]),
    file: () => node(["-e", BARE_LOOP, bodies, url, concurrency]),
    made: () => made([], concurrency, "0"),
    "made, young generation 2 MB": () => made(["--max-semi-space-size=2"], concurrency, "0"),
    "made, one at a time": () => made([], "1", "0"),
    "made, medbench's modules": () => made([], concurrency, "0", [modules.list]),
    fetch: () => made([], concurrency, "1"),
  };
  const names = Object.keys(senders);
  const peaks = Object.fromEntries(names.map((name) => [name, []]));
  const loadBefore = load();
  for (let round = 0; round < rounds; round++) {
    for (const name of names.map((_, i) => names[(i + round) % names.length])) {
      const before = (await fake.stats()).requests;
      const { rssKB } = await senders[name]();
      const sent = (await fake.stats()).requests - before;
      const expected = name === "node -e 0" ? 0 : requests;
      if (sent !== expected) throw new Error(`${name} sent ${sent} requests, not ${expected}`);
      peaks[name].push(rssKB / 1024);
    }
  }
  console.log(
    `peak RSS of senders of ${requests} bodies, concurrency ${concurrency} (MB, min / median / max over ` +
      `${rounds} rounds; node ${process.version}, ${os.cpus().length} cores; ` +
      `load ${loadBefore} -> ${load()}); medbench's modules: ${modules.count} loaded by its first build`,
  );
  const baseline = median(peaks["node -e 0"]);
  for (const name of names) {
    const ratio =
      name === "node -e 0" ? "" : `   ${(median(peaks[name]) / baseline).toFixed(2)} of node -e 0`;
    console.log(`  ${name.padEnd(30)} ${spread(peaks[name], 1)}${ratio}`);
  }
} finally {
  await fake.close();
  await rm(work, { recursive: true, force: true });
}
