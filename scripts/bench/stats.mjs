#!/usr/bin/env node
// The bootstrap work of the task documents, medbench against the Python reference (numpy), each as a
// whole process (start-up included), timed side by side in one run. Prints ratios.
//   A: 2,000 resamples over 620 pairs (numpy default_rng(0)), the note-errors paired bootstrap's size
//   B: 1,000 resamples over 219 clusters (numpy default_rng(0)), the voice-command interval
//   C: 2,000 resamples over 219 clusters, paired, Python random seed 0 (compare-voice-command)
// Needs python3 with numpy and scipy (scripts/reference/stats_ref.py).
import { $, fs, path, os, argv } from "zx";

$.verbose = false;
const runs = Number(argv.runs ?? 7);
const repo = path.resolve(import.meta.dirname, "../..");
const ref = path.join(repo, "scripts/reference/stats_ref.py");
const golden = path.join(repo, "tests/data/golden/stats");
const bin = path.join(repo, "bin/medbench.js");

const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "medbench-bench-stats-"));
// 620 pairs, each its own cluster (values 0/1), as rows of the note-errors paired bootstrap.
const pairs = (await fs.readFile(path.join(golden, "pairs.jsonl"), "utf8"))
  .trim()
  .split("\n")
  .map((l) => JSON.parse(l));
await fs.writeFile(
  path.join(tmp, "a.jsonl"),
  pairs.map((r) => JSON.stringify({ id: r.id, v: r.both_correct })).join("\n") + "\n",
);
await fs.writeFile(
  path.join(tmp, "b.jsonl"),
  pairs.map((r, i) => JSON.stringify({ id: r.id, v: (i * 7919) % 3 === 0 ? 1 : 0 })).join("\n") + "\n",
);

const work = {
  "A 2000 x 620 pairs, numpy": [
    "paired",
    "--a",
    path.join(tmp, "a.jsonl"),
    "--b",
    path.join(tmp, "b.jsonl"),
    "--value",
    "v",
    "--id",
    "id",
    "--resamples",
    "2000",
    "--rng",
    "numpy",
  ],
  "B 1000 x 219 clusters, numpy": [
    "ci",
    "--input",
    path.join(golden, "clustered.jsonl"),
    "--value",
    "correct",
    "--cluster",
    "group",
    "--resamples",
    "1000",
    "--rng",
    "numpy",
  ],
  "C 2000 x 219 clusters, python": [
    "paired",
    "--a",
    path.join(golden, "paired_a.jsonl"),
    "--b",
    path.join(golden, "paired_b.jsonl"),
    "--value",
    "correct",
    "--id",
    "id",
    "--cluster",
    "group",
    "--resamples",
    "2000",
    "--rng",
    "python",
  ],
};

async function median(fn) {
  const t = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    t.push(performance.now() - t0);
  }
  return t.sort((a, b) => a - b)[Math.floor(runs / 2)];
}

console.log(`median of ${runs} runs; ratio = medbench time / reference time (below 1: medbench faster)`);
for (const [name, args] of Object.entries(work)) {
  const ours = JSON.parse((await $`node ${bin} stats ${args}`).stdout);
  const theirs = JSON.parse((await $`python3 ${ref} ${args}`).stdout);
  const same = ["lo", "hi"].every((k) => ours[k] === theirs[k]);
  const py = await median(() => $`python3 ${ref} ${args}`);
  const mb = await median(() => $`node ${bin} stats ${args}`);
  console.log(`${name.padEnd(32)} ${(mb / py).toFixed(2)}   (bounds identical: ${same})`);
}
await fs.remove(tmp);
