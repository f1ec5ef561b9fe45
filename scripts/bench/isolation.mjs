#!/usr/bin/env node
// What running task code isolated costs (docs/records.md, "Task code runs isolated"): a process of its own
// per stage run that calls task code. Times, in one run and side by side, each a whole CLI process:
//   1. a first build (empty cache) of the bundled voice-command and note-errors specs, and
//   2. a rebuild: `--refresh` of every stage that runs task code (prompts, fit, model, parse, score,
//      bootstrap), the cost of a task code edit,
// isolated (the CLI as shipped) against in-process (the same CLI started with the preload of
// ./in-process.mjs, which makes the executor's runsIsolated answer false: the build before isolation, same
// results; this bench's baseline).
// Each ratio is taken within one round and printed as min / median / max over the rounds, with the load.
// Usage: node scripts/bench/isolation.mjs [--runs 5]
import { fs, path, os, argv } from "zx";
import { timed } from "./timed.mjs";
import { inProcessPreload } from "./in-process.mjs";

const runs = Number(argv.runs ?? 5);
const repo = path.resolve(import.meta.dirname, "../..");
const bin = path.join(repo, "bin/medbench.js");
const SPECS = ["specs/voice-command.yaml", "specs/note-errors.yaml"];
const TASK_STAGES = ["prompts", "fit", "model", "parse", "score", "bootstrap"];

const work = await fs.mkdtemp(path.join(os.tmpdir(), "medbench-bench-isolation-"));
process.once("exit", () => fs.removeSync(work));
const inProcess = ["--require", await inProcessPreload(repo, work), bin];

async function project() {
  const dir = await fs.mkdtemp(path.join(work, "p-"));
  await fs.copy(path.join(repo, "specs"), path.join(dir, "specs"));
  return dir;
}

/** The `--refresh` flags of every stage kind of the spec that runs task code. */
async function refreshOf(dir, spec) {
  const text = await fs.readFile(path.join(dir, spec), "utf8");
  const kinds = new Set([...text.matchAll(/^\s+kind: (\S+)/gm)].map((match) => match[1]));
  return TASK_STAGES.filter((kind) => kinds.has(kind)).flatMap((kind) => ["--refresh", kind]);
}

/** Wall ms of building every spec in `dir` with node `entry` (`rebuild`: refreshing its task stages). */
async function builds(entry, dir, rebuild = false) {
  let ms = 0;
  for (const spec of SPECS) {
    const args = ["build", spec, "--quiet", ...(rebuild ? await refreshOf(dir, spec) : [])];
    ms += (await timed("node", [...entry, ...args], dir, { rss: false })).ms;
  }
  return ms;
}

const rows = { first: [], rebuild: [] };
const seconds = { isolated: { first: [], rebuild: [] }, inProcess: { first: [], rebuild: [] } };
for (let round = 0; round < runs; round++) {
  const times = {};
  for (const [name, entry] of [
    ["isolated", [bin]],
    ["inProcess", inProcess],
  ]) {
    const dir = await project();
    const first = await builds(entry, dir);
    const rebuild = await builds(entry, dir, true);
    times[name] = { first, rebuild };
    seconds[name].first.push(first / 1000);
    seconds[name].rebuild.push(rebuild / 1000);
    await fs.remove(dir);
  }
  for (const phase of ["first", "rebuild"]) rows[phase].push(times.isolated[phase] / times.inProcess[phase]);
}

const stats = (list) => {
  const sorted = [...list].sort((a, b) => a - b);
  return { min: sorted[0], median: sorted[Math.floor(sorted.length / 2)], max: sorted.at(-1) };
};
const fmt = (x) => x.toFixed(2);
console.log(
  `isolation cost, ${runs} rounds, load ${os.loadavg().map(fmt).join(" ")} (${os.cpus().length} cores)`,
);
console.log(`specs: ${SPECS.join(", ")}; rebuild: --refresh ${TASK_STAGES.join(", ")}`);
for (const phase of ["first", "rebuild"]) {
  const ratio = stats(rows[phase]);
  const iso = stats(seconds.isolated[phase]);
  const base = stats(seconds.inProcess[phase]);
  console.log(
    `${phase.padEnd(8)} isolated / in-process: ` +
      `${fmt(ratio.min)} / ${fmt(ratio.median)} / ${fmt(ratio.max)}` +
      `   (median ${fmt(iso.median)} s against ${fmt(base.median)} s)`,
  );
}
