#!/usr/bin/env node
// The model stage against the fake server, each figure beside a baseline measured in the same run:
//   1. requests/s through the whole model stage (cache writes included), zero latency, against a bare
//      fetch loop sending the same bodies at the same concurrency   (goal: ratio >= 0.8)
//   2. a fully cached rebuild of every item, against a no-op build  (goal: under 1 s beyond it)
//   3. 200 ms latency, concurrency 64: wall time against n x latency / concurrency  (goal: within 10 %)
import { $, fs, path, os, argv } from "zx";
import { startFakeOpenAI } from "../fake-openai.mjs";

$.verbose = false;
$.quiet = true;
const copies = Number(argv.copies ?? 20); // the sample release repeated, for enough requests to time
const repo = path.resolve(import.meta.dirname, "../..");
const bin = path.join(repo, "bin/medbench.js");

const dir = await fs.mkdtemp(path.join(os.tmpdir(), "medbench-bench-model-"));
await fs.copy(path.join(repo, "specs"), path.join(dir, "specs"));
// A bigger synthetic release: every item repeated with new ids and a marker so that bodies differ.
const sample = path.join(dir, "specs/voice-command/sample");
const release = path.join(dir, "release");
await fs.copy(sample, release);
for (const f of [
  "commands_v0.1.jsonl",
  "commands_v0.1_asr_generic.jsonl",
  "commands_v0.1_asr_kor_or_stt.jsonl",
  "kor_overheard_v0.1.jsonl",
]) {
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

async function routes(url, concurrency) {
  await fs.writeFile(
    path.join(dir, "routes.yaml"),
    `routes:\n  fake:\n    base_url: ${url}\n    concurrency: ${concurrency}\n    request:\n      thinking_off: { chat_template_kwargs: { enable_thinking: false } }\n`,
  );
}
const build = (...extra) =>
  $({
    cwd: dir,
  })`node ${bin} build specs/voice-command.yaml --model fake/bench --registry routes.yaml --data-dir release --json ${extra}`;
const stageMs = (out, stage) =>
  out.stderr
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .find((e) => e.type === "stage-done" && e.stage === stage).ms;

// 1. throughput
{
  const server = await startFakeOpenAI({ policy: "voice-command" });
  const concurrency = 8;
  await routes(server.url, concurrency);
  await build(); // warm: prompts and the rest exist; the model stage is what we time below
  const bodies = server.stats.received.map((r) => r.body);
  const n = bodies.length;
  // A first run: no reply in the per-request cache yet (as when a new model is evaluated).
  await fs.remove(path.join(dir, "cache/memo"));
  const modelMs = stageMs(await build("--refresh", "model"), "model");
  // The bare loop runs in its own process, as medbench does, and times itself after start-up.
  await fs.writeFile(path.join(dir, "bodies.json"), JSON.stringify(bodies));
  const loop = `const bodies = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); let next = 0;
    const t0 = performance.now();
    Promise.all(Array.from({ length: ${concurrency} }, async () => { while (next < bodies.length) {
      const res = await fetch("${server.url}/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(bodies[next++]) });
      await res.json(); } })).then(() => console.log(performance.now() - t0));`;
  const bareMs = Number((await $`node -e ${loop} ${path.join(dir, "bodies.json")}`).stdout.trim());
  console.log(
    `1. ${n} requests at concurrency ${concurrency}: model stage ${((n / modelMs) * 1000).toFixed(0)} req/s, bare fetch loop ${((n / bareMs) * 1000).toFixed(0)} req/s, ratio ${(bareMs / modelMs).toFixed(2)} (goal >= 0.8)`,
  );

  // 2. fully cached rebuild (the model stage forgotten, every reply from the per-request cache) against a no-op build
  const modelKey = JSON.parse((await build()).stdout.trim().split("\n").pop()).stages.find(
    (s) => s.name === "model",
  ).key;
  await fs.remove(path.join(dir, "cache/stages", `${modelKey}.json`));
  const t1 = performance.now();
  await build();
  const cachedMs = performance.now() - t1;
  const t2 = performance.now();
  await build();
  const noopMs = performance.now() - t2;
  console.log(
    `2. fully cached rebuild of ${n} items: ${((cachedMs - noopMs) / 1000).toFixed(2)} s beyond a no-op build (goal < 1 s)`,
  );
  await server.close();
}

// 3. latency-bound: 200 ms each at concurrency 64
{
  const latency = 200,
    concurrency = 64;
  const server = await startFakeOpenAI({ policy: "voice-command", latencyMs: latency });
  await routes(server.url, concurrency);
  await fs.remove(path.join(dir, "cache/memo"));
  const out = await build("--refresh", "model");
  const n = server.stats.requests;
  const ideal = Math.ceil(n / concurrency) * latency;
  const ms = stageMs(out, "model");
  console.log(
    `3. ${n} requests, ${latency} ms latency, concurrency ${concurrency}: ${(ms / ideal).toFixed(3)} x the ideal ceil(n / c) x latency (goal <= 1.10)`,
  );
  await server.close();
}
await fs.remove(dir);
