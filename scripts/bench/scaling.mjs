#!/usr/bin/env node
// Whether any stage of a whole build grows faster than the run: each task built with a built-in
// baseline (no server, no network) on synthetic releases of N items (every item distinct: ./release.mjs,
// ./note-errors-release.mjs, ./mtsamples-release.mjs), from an empty cache, the sizes interleaved (the order
// alternates by round) for several rounds. Per stage (the build's own `ms` in its stage-done events) and for
// the whole process: the time per item at each size (median over rounds) and, within each round, the ratio
// of the largest size's per-item time to the smallest's, printed as min / median / max over the rounds with
// the load average. A linear stage's ratio stays near 1 (below it when fixed costs dominate small runs);
// 10x the items at 10x the per-item time is a quadratic term.
//   node scripts/bench/scaling.mjs [--items 2000,20000] [--rounds 3]
//        [--tasks voice-command,note-errors,mtsamples] [--medbench DIR]
import { fs, path, os, argv } from "zx";
import { timed } from "./timed.mjs";
import { syntheticProject } from "./release.mjs";
import { noteErrorsProject } from "./note-errors-release.mjs";
import { mtsamplesProject } from "./mtsamples-release.mjs";
import { load, median, spread } from "./fake-process.mjs";

const sizes = String(argv.items ?? "2000,20000")
  .split(",")
  .map(Number);
const rounds = Number(argv.rounds ?? 3);
const repo = path.resolve(import.meta.dirname, "../..");
// --medbench DIR: another install's build (e.g. main's checkout, built) measured with this benchmark.
const bin = path.join(path.resolve(String(argv.medbench ?? repo)), "bin/medbench.js");

/** Per task: its synthetic project maker and the build's arguments (a built-in baseline that reads the
 *  input). */
const TASKS = {
  "voice-command": {
    project: syntheticProject,
    args: ["specs/voice-command.yaml", "--model", "medbench/keyword-stop", "--data-dir", "release"],
  },
  "note-errors": {
    project: noteErrorsProject,
    args: ["specs/note-errors.yaml", "--model", "medbench/note-errors-conjunction-lr"],
  },
  mtsamples: {
    project: mtsamplesProject,
    args: [
      "specs/mtsamples.yaml",
      ...["--model", "medbench/impression", "--judge", "medbench/overlap-judge", "--data-dir", "release"],
    ],
  },
};
const tasks = String(argv.tasks ?? Object.keys(TASKS).join(","))
  .split(",")
  .filter(Boolean);
for (const t of tasks) if (!TASKS[t]) throw new Error(`unknown task ${t} (known: ${Object.keys(TASKS)})`);

/** One build from an empty cache: the whole process's ms and each stage's. */
async function build(task, dir) {
  await Promise.all(["cache", "results", "medbench.lock"].map((n) => fs.remove(path.join(dir, n))));
  const out = await timed("node", [bin, "build", ...TASKS[task].args, "--json"], dir, { rss: false });
  const stages = {};
  for (const l of out.stderr.split("\n")) {
    if (!l.startsWith("{")) continue;
    const e = JSON.parse(l);
    if (e.type === "stage-done") stages[e.stage] = e.ms;
  }
  return { whole: out.ms, ...stages };
}

const work = await fs.mkdtemp(path.join(os.tmpdir(), "medbench-bench-scaling-"));
console.log(
  `${bin}: built-in baselines from an empty cache, sizes ${sizes.join(", ")} interleaved, ` +
    `${rounds} rounds; ` +
    `per-item ms (median) and per-item ratio ${sizes[sizes.length - 1]} / ${sizes[0]} ` +
    `(min / median / max over rounds); node ${process.version}, ${os.cpus().length} cores`,
);
try {
  for (const task of tasks) {
    const projects = [];
    for (const n of sizes) projects.push(await TASKS[task].project(n, work));
    const loadBefore = load();
    const runs = projects.map(() => []);
    for (let r = 0; r < rounds; r++) {
      const order = projects.map((_, i) => i);
      if (r % 2) order.reverse();
      for (const i of order) runs[i].push(await build(task, projects[i].dir));
    }
    const items = projects.map((p) => p.items);
    console.log(`\n${task} (${TASKS[task].args.slice(1).join(" ")}); load ${loadBefore} -> ${load()}`);
    const small = 0,
      large = sizes.length - 1;
    const head = items.map((n) => `ms/item @${n}`.padStart(16)).join("");
    console.log(`  ${"stage".padEnd(12)}${head}   ratio ${items[large]} / ${items[small]} per item`);
    for (const stage of Object.keys(runs[large][0])) {
      const perItem = runs.map((rs, i) => rs.map((x) => (x[stage] ?? NaN) / items[i]));
      const ratios = perItem[large].map((x, k) => x / perItem[small][k]);
      const cols = perItem.map((xs) => median(xs).toFixed(4).padStart(16)).join("");
      console.log(`  ${stage.padEnd(12)}${cols}   ${spread(ratios)}`);
    }
  }
} finally {
  await fs.remove(work);
}
