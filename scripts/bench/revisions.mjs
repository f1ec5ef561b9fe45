#!/usr/bin/env node
// Two revisions of medbench side by side, so that a regression shows as a ratio: each revision is checked
// out in a git worktree and built there (`npm ci`, or a copy of this checkout's node_modules when its
// package-lock.json is the same; `npm run build`), then both build the same synthetic voice-command
// release (./release.mjs, each from its own specs) against one fake server (scripts/fake-openai.mjs as its
// own process, zero latency, the same for both), the route's concurrency given. Per side and pair:
//   first build     from an empty cache (every request sent; counted at the server)
//   rebuild         from the cached replies (every stage record, object and result removed; 0 sent)
//   no-op build     nothing changed, its no-op record (docs/noop-record.md) replayed
//   status          nothing changed
// each a whole process tree measured by the kernel (./rusage.mjs: CPU = user + system of the process and
// its children, wall, peak RSS), plus `node -e 0` once per pair. Pairs are interleaved, the order inside a
// pair alternating; each figure's B/A is formed within a pair and printed as min / median / max, with the
// load average of each pair. A worktree is kept under the temp folder for the next run (--clean removes it).
// A REV that is a folder holding bin/medbench.js is used as it is (built), e.g. `.` for this checkout.
// `--in-process a` (or b) runs that side's stages in medbench's process (the executor's runsIsolated made
// to answer false by the preload of ./in-process.mjs, as isolation.mjs does): `revisions.mjs HEAD HEAD
// --in-process a` is what isolation costs, `revisions.mjs 37df44a HEAD --in-process b` the rest of a change.
//   node scripts/bench/revisions.mjs REV_A REV_B [--pairs 3] [--items 2000] [--concurrency 64] [--clean]
//     [--in-process a|b]
import { $, fs, path, os, argv } from "zx";
import { measured } from "./rusage.mjs";
import { inProcessPreload } from "./in-process.mjs";
import { syntheticProject } from "./release.mjs";
import { load, median, server, spread, writeFakeRoutes } from "./fake-process.mjs";

$.verbose = false;
const [revA, revB] = argv._.map(String);
if (!revA || !revB) {
  console.log("usage: node scripts/bench/revisions.mjs REV_A REV_B [--pairs 3] [--items 2000] [--clean]");
  process.exit(2);
}
const pairs = Number(argv.pairs ?? 3);
const target = Number(argv.items ?? 2000);
const concurrency = Number(argv.concurrency ?? 64);
const repo = path.resolve(import.meta.dirname, "../..");
const trees = path.join(os.tmpdir(), "medbench-revisions");

/** A built checkout of `rev`: a folder as it is, or a worktree of the commit (made and built once). */
async function checkout(rev) {
  if (await fs.pathExists(path.join(rev, "bin/medbench.js"))) return { name: rev, dir: path.resolve(rev) };
  const sha = (await $({ cwd: repo })`git rev-parse --verify ${rev + "^{commit}"}`).stdout.trim();
  const dir = path.join(trees, sha);
  const name = `${rev} (${sha.slice(0, 7)})`;
  if (argv.clean && (await fs.pathExists(dir))) {
    await $({ cwd: repo })`git worktree remove --force ${dir}`.nothrow();
    await fs.remove(dir);
  }
  // A worktree of an earlier run with a link to this checkout's node_modules is made again: see below.
  const linked = (await fs.lstat(path.join(dir, "node_modules")).catch(() => null))?.isSymbolicLink();
  if ((await fs.pathExists(path.join(dir, ".bench-built"))) && !linked) return { name, dir };
  await fs.remove(dir);
  await $({ cwd: repo })`git worktree prune`;
  await $({ cwd: repo })`git worktree add --quiet --detach ${dir} ${sha}`;
  const lock = (d) => fs.readFile(path.join(d, "package-lock.json"), "utf8");
  const modules = path.join(repo, "node_modules");
  // A copy with its times (npm's records are trusted while no package folder is newer than them), not a
  // link: a build's code-memo seed holds only the packages under the install's own folder, and with a
  // linked node_modules a first build peaked 3 to 4 MB under a real install's (docs/performance.md).
  if ((await lock(dir)) === (await lock(repo)) && (await fs.pathExists(modules)))
    await $`cp -a ${await fs.realpath(modules)} ${path.join(dir, "node_modules")}`;
  else await $({ cwd: dir })`npm ci --no-audit --no-fund`;
  console.log(`building ${name} in ${dir}`);
  await $({ cwd: dir })`npm run build`;
  await fs.writeFile(path.join(dir, ".bench-built"), "");
  return { name, dir };
}

const work = await fs.mkdtemp(path.join(os.tmpdir(), "medbench-bench-revisions-"));
const sides = [await checkout(revA), await checkout(revB)];
const inProcess = { a: sides[0], b: sides[1] }[argv["in-process"]];
if (argv["in-process"] !== undefined && !inProcess) throw new Error("--in-process takes a or b");
if (inProcess) inProcess.name += " (stages in-process)";

const preload = inProcess && (await inProcessPreload(inProcess.dir, work));

const fake = await server(null);
const sent = async () => (await fake.stats()).requests;
const ARGS = ["specs/voice-command.yaml", "--model", "fake/bench", "--registry", "routes.yaml"];
const DATA = ["--data-dir", "release"];

for (const side of sides) {
  const { dir, items } = await syntheticProject(target, work, side.dir);
  Object.assign(side, { project: dir, items });
  await writeFakeRoutes(dir, fake.url, concurrency);
  const before = await sent();
  await run(side, "build"); // untimed warm-up: how many requests a first build sends
  side.requests = (await sent()) - before;
}
if (sides[0].items !== sides[1].items)
  console.log(`note: the items differ (${sides[0].items}, ${sides[1].items})`);

function run(side, command) {
  const bin = path.join(side.dir, "bin/medbench.js");
  const node = side === inProcess ? ["node", "--require", preload] : ["node"];
  return measured([...node, bin, command, ...ARGS, ...DATA], side.project, {
    ...process.env,
    NO_COLOR: "1",
  });
}

const rm = (side, ...names) => Promise.all(names.map((n) => fs.remove(path.join(side.project, n))));
const settle = () => new Promise((r) => setTimeout(r, 2200)); // a no-op is recorded once its files settled

/** One side's four figures, in order; the server's count checked after each build. */
async function round(side) {
  await rm(side, "cache", "results", "medbench.lock");
  let before = await sent();
  const first = await run(side, "build");
  if ((await sent()) - before !== side.requests) throw new Error(`${side.name}: the first build's requests`);
  await rm(side, "cache/stages", "cache/objects", "results");
  before = await sent();
  const rebuild = await run(side, "build");
  if ((await sent()) !== before) throw new Error(`${side.name}: the rebuild sent requests`);
  await settle();
  await run(side, "build"); // a full no-op, which writes the record the next one replays
  const noop = await run(side, "build");
  const files = /nothing changed since the last build \(([\d,]+) files/.exec(noop.stderr);
  if (!files) throw new Error(`${side.name}: the no-op build did not replay its record:\n${noop.stderr}`);
  side.recordFiles = files[1];
  const status = await run(side, "status");
  return { first, rebuild, noop, status };
}

const FIGURES = ["first", "rebuild", "noop", "status"];
const got = { node: [], loads: [], a: [], b: [] };
const loadStart = load();
for (let i = 0; i < pairs; i++) {
  const order = i % 2 === 0 ? ["a", "b"] : ["b", "a"];
  for (const key of order) got[key].push(await round(key === "a" ? sides[0] : sides[1]));
  got.node.push(await measured(["node", "-e", "0"], work));
  got.loads.push(load());
}
await fake.close();

const LABEL = {
  first: "first build",
  rebuild: "rebuild, cached replies",
  noop: "no-op build",
  status: "status",
};
const ratios = (fig, what) => got.b.map((b, i) => b[fig][what] / got.a[i][fig][what]);
const med = (key, fig, what) => median(got[key].map((r) => r[fig][what]));
const cell = (fig, what, unit, scale, digits) => {
  const [a, b] = ["a", "b"].map((key) => (med(key, fig, what) / scale).toFixed(digits));
  return `${a} → ${b}${unit}  ${spread(ratios(fig, what))}`;
};
console.log(
  `\nA = ${sides[0].name}, B = ${sides[1].name}; ${sides[0].items} items (${sides[0].requests} requests), ` +
    `concurrency ${concurrency}; ${pairs} interleaved pairs; node ${process.version}, ` +
    `${os.cpus().length} cores`,
);
console.log(`load average: start ${loadStart}; after each pair: ${got.loads.join(" | ")}`);
console.log("figure                   | CPU A → B (medians), B/A min / median / max | wall, the same");
for (const fig of FIGURES)
  console.log(
    `${LABEL[fig].padEnd(24)} | ${cell(fig, "cpuMs", " s", 1000, 3)} | ` +
      cell(fig, "wallMs", " s", 1000, 3),
  );
console.log(`first build, peak RSS    | ${cell("first", "rssKB", " MB", 1024, 0)}`);
console.log(`rebuild, peak RSS        | ${cell("rebuild", "rssKB", " MB", 1024, 0)}`);
const nodeCpu = got.node.map((x) => x.cpuMs);
console.log(`node -e 0, CPU           | ${(median(nodeCpu) / 1000).toFixed(3)} s`);
for (const [key, side] of [
  ["a", sides[0]],
  ["b", sides[1]],
])
  for (const fig of ["noop", "status"])
    console.log(
      `${key.toUpperCase()} ${LABEL[fig]} CPU ÷ node -e 0 | ` +
        `${spread(got[key].map((r, i) => r[fig].cpuMs / nodeCpu[i]))}` +
        (fig === "noop" ? `   (its record lists ${side.recordFiles} files)` : ""),
    );
await fs.remove(work);
