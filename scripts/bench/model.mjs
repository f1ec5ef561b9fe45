#!/usr/bin/env node
// What a model build costs beyond the physical limit, at each size N (a synthetic voice-command release of N
// items, every request body distinct: ./release.mjs), against the fake server (scripts/fake-openai.mjs, zero
// latency) running as its own process and keeping no body. Every ratio is formed within one pair of runs
// taken back to back, the pairs interleaved (the order inside a pair alternates), and printed as min /
// median / max over the pairs with the load average, since a shared machine's noise is large:
//   overhead ratio   first run (empty cache) / (full rebuild from the cached replies + bare loop)
//   sending          the first run's model stage from its first request to its last reply (the last
//                    progress event's ms) / bare loop: both sides' sending alone
//   model stage      the first run's whole model stage (reading its requests, writing its replies) / bare
//   verify           verify of the run's bundle / the full rebuild (at --verify sizes)
// and per size: the first run's time per item, its peak RSS per item above a no-op build's (the no-op that
// replays its record, docs/noop-record.md), and that no-op's peak.
// The bare loop is node:http with a keep-alive agent of the same concurrency sending the same bodies (those
// the first run sent, recorded by the server in an untimed warm-up run) and parsing each reply; its time is
// its sending loop alone, measured inside it (neither its start-up nor its reading of the bodies counts,
// which makes the ratios stricter). Builds are whole processes, start-up included, as a user waits for them.
// A full rebuild: every stage record and object and the results removed, the reply memo kept; it must send
// nothing and give the first run's metrics byte for byte (checked).
// Goals (docs/performance.md): overhead <= 1.15 at 2,000, 20,000 and 100,000 items; sending <= 1.2 at
// 20,000; per-item first-run time at 100,000 within 10 % of 2,000's; peak <= 25 KB/item at 2,000, <= 8 at
// 100,000; verify no slower than a rebuild at 20,000.
//   node scripts/bench/model.mjs [--items 2000,20000] [--pairs 3] [--concurrency 64] [--verify 20000]
//        [--medbench DIR]
import { fs, path, os, argv } from "zx";
import { timed } from "./timed.mjs";
import { syntheticProject } from "./release.mjs";
import { BARE_LOOP, load, median, server, spread, writeFakeRoutes } from "./fake-process.mjs";

const sizes = String(argv.items ?? "2000,20000")
  .split(",")
  .map(Number);
const pairs = Number(argv.pairs ?? 3);
const concurrency = Number(argv.concurrency ?? 64);
const verifySizes = new Set(
  String(argv.verify ?? "20000")
    .split(",")
    .filter(Boolean)
    .map(Number),
);
const repo = path.resolve(import.meta.dirname, "../..");
// --medbench DIR: another install's build (e.g. main's checkout, built) measured with this benchmark.
const bin = path.join(path.resolve(String(argv.medbench ?? repo)), "bin/medbench.js");
const work = await fs.mkdtemp(path.join(os.tmpdir(), "medbench-bench-model-"));
const routes = (dir, url) => writeFakeRoutes(dir, url, concurrency);
const BUILD = ["build", "specs/voice-command.yaml", "--model", "fake/bench", "--registry", "routes.yaml"];
const build = (dir, ...extra) =>
  timed("node", [bin, ...BUILD, "--data-dir", "release", "--json", ...extra], dir);
const events = (out) =>
  out.stderr
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));
const stageMs = (out, stage) => events(out).find((e) => e.type === "stage-done" && e.stage === stage)?.ms;
const sendingMs = (out, stage) =>
  events(out).findLast((e) => e.type === "progress" && e.stage === stage)?.ms;
// A build of the real release (--data-dir) of a spec that bundles a sample writes to <results.dir>.release/.
const resultDir = async (dir) => {
  const base = path.join(dir, "results/kor-surgical-robot-voice-command/fake_bench");
  return (await fs.pathExists(`${base}.release`)) ? `${base}.release` : base;
};
const metricsOf = async (dir) => fs.readFile(path.join(await resultDir(dir), "metrics.json"), "utf8");
const rm = (dir, ...names) => Promise.all(names.map((n) => fs.remove(path.join(dir, n))));

console.log(
  `${bin}: concurrency ${concurrency}, ${pairs} interleaved pairs per size; min / median / max; ` +
    `node ${process.version}, ${os.cpus().length} cores`,
);
const perItemMs = {};
for (const target of sizes) {
  const { dir, items } = await syntheticProject(target, work);
  const loadBefore = load();
  // Untimed warm-up: a first run whose bodies the server records for the bare loop.
  const bodies = path.join(work, "bodies.jsonl");
  await fs.remove(bodies);
  const recorder = await server(bodies);
  await routes(dir, recorder.url);
  await build(dir);
  await recorder.close();
  const sent = (await fs.readFile(bodies, "utf8")).split("\n").filter(Boolean);
  const distinct = new Set(sent).size;

  const fake = await server(null);
  await routes(dir, fake.url);
  const url = `${fake.url}/chat/completions`;
  const r = {
    overhead: [],
    sending: [],
    stage: [],
    verify: [],
    firstPerItem: [],
    firstKB: [],
    rebuildKB: [],
  };
  const bare = async () =>
    Number((await timed("node", ["-e", BARE_LOOP, bodies, url, String(concurrency)], work)).stdout);
  const firstAndRebuild = async () => {
    await rm(dir, "cache", "results", "medbench.lock");
    const first = await build(dir);
    const metrics = await metricsOf(dir);
    const before = (await fake.stats()).requests;
    await rm(dir, "cache/stages", "cache/objects", "results");
    const rebuild = await build(dir);
    if ((await fake.stats()).requests !== before) throw new Error("the rebuild sent requests");
    if ((await metricsOf(dir)) !== metrics)
      throw new Error("the rebuild's metrics differ from the first run's");
    return { first, rebuild };
  };
  for (let i = 0; i < pairs; i++) {
    let loop, runs;
    if (i % 2 === 0) {
      runs = await firstAndRebuild();
      loop = await bare();
    } else {
      loop = await bare();
      runs = await firstAndRebuild();
    }
    const { first, rebuild } = runs;
    r.overhead.push(first.ms / (rebuild.ms + loop));
    r.sending.push(sendingMs(first, "model") / loop);
    r.stage.push(stageMs(first, "model") / loop);
    r.firstPerItem.push(first.ms / items);
    r.firstKB.push(first.rssKB);
    r.rebuildKB.push(rebuild.rssKB);
    if (verifySizes.has(target)) {
      const bundle = path.join(dir, "bundle.tar.gz");
      await fs.remove(bundle);
      await timed("node", [bin, "export", await resultDir(dir), "-o", bundle], dir);
      const v = await timed("node", [bin, "verify", bundle, "--data-dir", "release"], dir);
      r.verify.push(v.ms / rebuild.ms);
    }
  }
  await fake.close();
  // The no-op that replays its record: a no-op build first, then (once settled) one that records it.
  await build(dir);
  await new Promise((res) => setTimeout(res, 2200));
  await build(dir);
  const noops = [];
  for (let i = 0; i < 3; i++) noops.push((await build(dir)).rssKB);
  const noopKB = median(noops);
  perItemMs[target] = median(r.firstPerItem);
  const kb = (xs) =>
    spread(
      xs.map((x) => (x - noopKB) / items),
      1,
    );
  console.log(
    `\n${items} items (${sent.length} requests, ${distinct} distinct bodies); ` +
      `load ${loadBefore} -> ${load()}`,
  );
  console.log(`  overhead: first run / (full rebuild + bare loop)   ${spread(r.overhead)}   (goal <= 1.15)`);
  console.log(
    `  sending: model stage's requests / bare loop       ${spread(r.sending)}   (goal <= 1.2 at 20,000)`,
  );
  console.log(`  whole model stage / bare loop                     ${spread(r.stage)}`);
  if (r.verify.length)
    console.log(`  verify of the bundle / full rebuild               ${spread(r.verify)}   (goal <= 1.0)`);
  console.log(`  first run per item                                ${spread(r.firstPerItem, 3)} ms`);
  console.log(
    `  peak RSS above the no-op, first run               ${kb(r.firstKB)} KB/item   ` +
      "(goal <= 25 at 2,000, <= 8 at 100,000)",
  );
  console.log(`  peak RSS above the no-op, full rebuild            ${kb(r.rebuildKB)} KB/item`);
  console.log(`  peak RSS of the no-op build (replayed record)     ${(noopKB / 1024).toFixed(0)} MiB`);
  await fs.remove(dir);
}
if (sizes.length > 1) {
  const [small, large] = [sizes[0], sizes[sizes.length - 1]];
  console.log(
    `\nfirst-run time per item, ${large} / ${small} items (medians): ` +
      `${(perItemMs[large] / perItemMs[small]).toFixed(2)}   (goal <= 1.10)`,
  );
}
await fs.remove(work);
