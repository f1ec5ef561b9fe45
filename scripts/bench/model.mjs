#!/usr/bin/env node
// What users wait for in a model build, against the fake server (scripts/fake-openai.mjs, zero latency), each
// figure beside a baseline measured in the same run, at each size (items of the voice-command sample repeated):
//   first run      a build from an empty cache (every request sent)  vs  a bare node:http keep-alive loop
//                  sending the same bodies at the same concurrency, and vs (full rebuild + that loop)
//   full rebuild   every stage recomputed from the cached replies (stage records and objects removed, the
//                  reply store kept; no request sent)  vs  a no-op build of the same project
//   peak memory    each build's peak RSS (its maxRSS, read in the child), per item above `node -e 0`'s
//   latency-bound  200 ms per reply at the same concurrency  vs  the ideal ceil(n / c) x latency (first size)
// Goals (issue 16): first run <= 1.3x (full rebuild + bare loop) at 4,000 items; peak <= 25 KB per item at
// 20,000; full rebuild <= 1 s beyond a no-op at ~2,000; latency-bound within 10 %.
// Every time is a whole process's wall time, start-up included, as a user waits for it.
//   node scripts/bench/model.mjs [--items 2000,4000,20000] [--concurrency 64] [--no-latency]
import { fs, path, os, argv } from "zx";
import { startFakeOpenAI } from "../fake-openai.mjs";
import { timed } from "./timed.mjs";

const sizes = String(argv.items ?? "2000,4000,20000")
  .split(",")
  .map(Number);
const concurrency = Number(argv.concurrency ?? 64);
const repo = path.resolve(import.meta.dirname, "../..");
const bin = path.join(repo, "bin/medbench.js");
const SAMPLE_ITEMS = 138; // items of the voice-command sample
const RELEASE_FILES = [
  "commands_v0.1.jsonl",
  "commands_v0.1_asr_generic.jsonl",
  "commands_v0.1_asr_kor_or_stt.jsonl",
  "kor_overheard_v0.1.jsonl",
];

const work = await fs.mkdtemp(path.join(os.tmpdir(), "medbench-bench-model-"));

/** A project whose release is the sample repeated `copies` times, with new ids and a marker in each text. */
async function project(copies) {
  const dir = await fs.mkdtemp(path.join(work, "p-"));
  await fs.copy(path.join(repo, "specs"), path.join(dir, "specs"));
  const sample = path.join(dir, "specs/voice-command/sample");
  const release = path.join(dir, "release");
  await fs.copy(sample, release);
  for (const f of RELEASE_FILES) {
    const rows = (await fs.readFile(path.join(sample, "benchmark", f), "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const out = [];
    for (let c = 0; c < copies; c++)
      for (const r of rows)
        out.push(
          JSON.stringify({
            ...r,
            id: `${r.id}-c${c}`,
            group: `${r.group}-c${c}`,
            utterance: `${r.utterance} (${c})`,
          }),
        );
    await fs.writeFile(path.join(release, "benchmark", f), out.join("\n") + "\n");
  }
  return dir;
}

async function routes(dir, url) {
  await fs.writeFile(
    path.join(dir, "routes.yaml"),
    `routes:\n  fake:\n    base_url: ${url}\n    concurrency: ${concurrency}\n` +
      `    request:\n      thinking_off: { chat_template_kwargs: { enable_thinking: false } }\n`,
  );
}
const BUILD = ["build", "specs/voice-command.yaml", "--model", "fake/bench", "--registry", "routes.yaml"];
const build = (dir, ...extra) =>
  timed("node", [bin, ...BUILD, "--data-dir", "release", "--json", ...extra], dir);
const stageMs = (out, stage) =>
  out.stderr
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l))
    .find((e) => e.type === "stage-done" && e.stage === stage)?.ms;
// A build of the real release (--data-dir) of a spec that bundles a sample writes to <results.dir>.release/.
const metricsOf = async (dir) => {
  const base = path.join(dir, "results/kor-surgical-robot-voice-command/fake_bench");
  const folder = (await fs.pathExists(`${base}.release`)) ? `${base}.release` : base;
  return fs.readFile(path.join(folder, "metrics.json"), "utf8");
};

// The baseline client: node:http with a keep-alive agent of `concurrency` sockets, the same bodies in order.
const LOOP = `const http = require("node:http"), fs = require("node:fs");
const [file, url, c] = process.argv.slice(1);
const bodies = JSON.parse(fs.readFileSync(file, "utf8"));
const agent = new http.Agent({ keepAlive: true, maxSockets: Number(c) });
const post = (body) => new Promise((resolve, reject) => {
  const data = Buffer.from(JSON.stringify(body));
  const req = http.request(url, { method: "POST", agent, headers: { "content-type": "application/json",
    "content-length": data.length } }, (res) => { const chunks = []; res.on("data", (d) => chunks.push(d));
    res.on("end", () => { JSON.parse(Buffer.concat(chunks).toString("utf8")); resolve(); }); });
  req.on("error", reject); req.end(data); });
let next = 0;
Promise.all(Array.from({ length: Number(c) }, async () => { while (next < bodies.length) await post(bodies[next++]); }))
  .then(() => agent.destroy());`;

const nodeRss = (await timed("node", ["-e", "0"], work)).rssKB;
const r2 = (x) => x.toFixed(2);
const mib = (kb) => (kb / 1024).toFixed(0);
const perItem = (kb, n) => ((kb - nodeRss) / n).toFixed(1);

console.log(`concurrency ${concurrency}; times are whole processes; node -e 0 peaks at ${mib(nodeRss)} MiB`);
for (const [i, target] of sizes.entries()) {
  const copies = Math.max(1, Math.ceil(target / SAMPLE_ITEMS));
  const items = copies * SAMPLE_ITEMS;
  const dir = await project(copies);
  const server = await startFakeOpenAI({ policy: "voice-command", keepReceived: Infinity });
  await routes(dir, server.url);

  const first = await build(dir);
  const sent = server.stats.requests;
  const bodiesFile = path.join(dir, "bodies.json");
  await fs.writeFile(bodiesFile, JSON.stringify(server.stats.received.map((r) => r.body)));
  const url = `${server.url}/chat/completions`;
  const bare = await timed("node", ["-e", LOOP, bodiesFile, url, String(concurrency)], work);
  const metrics = await metricsOf(dir);

  // Full rebuild: every stage's record and object gone, the replies kept (cache/memo).
  await fs.remove(path.join(dir, "cache/stages"));
  await fs.remove(path.join(dir, "cache/objects"));
  await fs.remove(path.join(dir, "results"));
  const rebuild = await build(dir);
  if (server.stats.requests !== 2 * sent)
    throw new Error("the rebuild sent requests: not from cached replies");
  if ((await metricsOf(dir)) !== metrics)
    throw new Error("the rebuild's metrics differ from the first run's");
  const noop = await build(dir);
  await server.close();

  console.log(`\n${items} items (${sent} distinct requests):`);
  console.log(
    `  first run / bare keep-alive loop                 ${r2(first.ms / bare.ms)}` +
      `   (model stage alone / bare loop ${r2(stageMs(first, "model") / bare.ms)})`,
  );
  console.log(
    `  first run / (full rebuild + bare loop)           ${r2(first.ms / (rebuild.ms + bare.ms))}   (goal <= 1.3)`,
  );
  console.log(
    `  full rebuild / no-op build                       ${r2(rebuild.ms / noop.ms)}` +
      `   (${((rebuild.ms - noop.ms) / 1000).toFixed(2)} s beyond it; goal <= 1 s at ~2,000 items)`,
  );
  console.log(
    `  peak RSS, first run                              ${mib(first.rssKB)} MiB, ` +
      `${perItem(first.rssKB, items)} KB/item above node -e 0   (goal <= 25 at 20,000)`,
  );
  console.log(
    `  peak RSS, full rebuild                           ${mib(rebuild.rssKB)} MiB, ` +
      `${perItem(rebuild.rssKB, items)} KB/item`,
  );
  console.log(`  peak RSS, no-op build                            ${mib(noop.rssKB)} MiB`);

  // Latency-bound, on the first size only: 200 ms per reply; every request sent again.
  if (i === 0 && argv.latency !== false) {
    const latency = 200;
    const slow = await startFakeOpenAI({ policy: "voice-command", latencyMs: latency });
    await routes(dir, slow.url);
    const out = await build(dir, "--refresh", "model");
    const ideal = Math.ceil(slow.stats.requests / concurrency) * latency;
    console.log(
      `  ${latency} ms latency: model stage / ideal ceil(n / c) x latency  ` +
        `${(stageMs(out, "model") / ideal).toFixed(3)}   (goal <= 1.10)`,
    );
    await slow.close();
  }
  await fs.remove(dir);
}
await fs.remove(work);
