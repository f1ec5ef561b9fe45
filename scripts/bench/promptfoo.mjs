#!/usr/bin/env node
// medbench against promptfoo (0.121.20, the last version for Node 20) on the same work: the same fake
// server (scripts/fake-openai.mjs as its own process, zero latency), the same requests (the bodies a
// medbench build of a synthetic voice-command release of N items sends, recorded in an untimed warm-up:
// promptfoo sends their messages with the same generation fields and schema), the same concurrency.
//   first run   medbench build from an empty cache / promptfoo eval with an empty cache
//   rerun       medbench full rebuild from cached replies (every stage record, object and result removed)
//               / promptfoo eval again with its cache (it sends nothing either; both are checked)
// Wall time of the whole process (start-up included) and peak RSS, over interleaved pairs (the order inside
// a pair alternates), printed as min / median / max with the load average. promptfoo is not a dependency of
// medbench: install it anywhere (`npm i promptfoo@0.121.20` in an empty folder) and pass that folder.
//   node scripts/bench/promptfoo.mjs --promptfoo DIR [--items 2000] [--pairs 4] [--concurrency 64]
// Goals (docs/performance.md): first run <= 0.05 of promptfoo's wall time, rerun <= 0.03, peak RSS <= 0.15.
// A pair in which promptfoo did not send what it should (its cache missed) is said in a line, not a crash.
// Each pair also runs the bare loop after both sides (fake-process.mjs: a node:http loop sending the same
// bodies, read from a file and held, and doing nothing else) and prints its peak RSS against promptfoo's,
// against which the memory goal can be read, and medbench's first run's peak over the loop's.
import { fs, path, os, argv } from "zx";
import { timed } from "./timed.mjs";
import { syntheticProject } from "./release.mjs";
import { BARE_LOOP, load, median, server, spread, writeFakeRoutes } from "./fake-process.mjs";
import { promptfooEnv, promptfooProject } from "./promptfoo-project.mjs";

const target = Number(argv.items ?? 2000);
const pairs = Number(argv.pairs ?? 4);
const concurrency = Number(argv.concurrency ?? 64);
const pfDir = argv.promptfoo ?? process.env.PROMPTFOO_DIR;
const promptfoo = pfDir && path.join(path.resolve(String(pfDir)), "node_modules/.bin/promptfoo");
if (!promptfoo || !(await fs.pathExists(promptfoo))) {
  console.log(
    "promptfoo is not installed: run `npm i promptfoo@0.121.20` in an empty folder " +
      "outside the repository,\n" +
      "then `node scripts/bench/promptfoo.mjs --promptfoo THAT_FOLDER`.",
  );
  process.exit(0);
}
const repo = path.resolve(import.meta.dirname, "../..");
const bin = path.join(repo, "bin/medbench.js");
const work = await fs.mkdtemp(path.join(os.tmpdir(), "medbench-bench-promptfoo-"));
const { dir, items } = await syntheticProject(target, work);

const routes = (url) => writeFakeRoutes(dir, url, concurrency);
const medbench = () =>
  timed(
    "node",
    [bin, "build", "specs/voice-command.yaml", "--model", "fake/bench", "--registry", "routes.yaml"].concat([
      "--data-dir",
      "release",
    ]),
    dir,
  );
const rm = (...names) => Promise.all(names.map((n) => fs.remove(path.join(dir, n))));

// The warm-up: medbench's bodies, recorded by the server.
const bodiesFile = path.join(work, "bodies.jsonl");
const recorder = await server(bodiesFile);
await routes(recorder.url);
await medbench();
await recorder.close();
const bodies = (await fs.readFile(bodiesFile, "utf8"))
  .split("\n")
  .filter(Boolean)
  .map((l) => JSON.parse(l));

// promptfoo's project: one test per body, its messages as a variable the prompt renders as the chat.
const pf = path.join(work, "promptfoo");
const pfConfig = await promptfooProject(pf, bodies);
const pfEnv = promptfooEnv(pf);
const pfEval = () =>
  timed(
    promptfoo,
    ["eval", "-c", "promptfooconfig.yaml", "--max-concurrency", String(concurrency)].concat([
      "--no-progress-bar",
      "--no-table",
    ]),
    pf,
    { env: pfEnv },
  );

const fake = await server(null);
await routes(fake.url);
await pfConfig(fake.url);
const sent = async () => (await fake.stats()).requests;
// medbench's own count is a bug when wrong (the bench stops); promptfoo's is what promptfoo did, said in a
// line of the output (its own cache can miss under load) with that figure left out of the pair.
const expectSent = async (before, n, what) => {
  const got = (await sent()) - before;
  if (got !== n) throw new Error(`${what} sent ${got} requests, not ${n}`);
};
const notes = [];
const peerSent = async (before, n, what, pair) => {
  const got = (await sent()) - before;
  if (got === n) return true;
  notes.push(`pair ${pair + 1}: ${what} sent ${got} requests, not ${n}; left out of that pair's ratios`);
  return false;
};

// The bare loop on the same bodies, its count checked as medbench's is.
const bareLoop = async () => {
  const before = await sent();
  const url = `${fake.url}/chat/completions`;
  const bare = await timed("node", ["-e", BARE_LOOP, bodiesFile, url, String(concurrency)], work);
  await expectSent(before, bodies.length, "the bare loop");
  return bare;
};

const r = {
  first: [],
  rerun: [],
  firstRss: [],
  rerunRss: [],
  pfFirstS: [],
  mbFirstS: [],
  pfFirstMB: [],
  mbFirstMB: [],
  bareRss: [],
  bareMB: [],
  overBare: [],
};
const loads = [];
for (let i = 0; i < pairs; i++) {
  const sides = {
    async medbench() {
      await rm("cache", "results", "medbench.lock");
      let before = await sent();
      const first = await medbench();
      await expectSent(before, bodies.length, "medbench's first run");
      await rm("cache/stages", "cache/objects", "results");
      before = await sent();
      const rerun = await medbench();
      await expectSent(before, 0, "medbench's rebuild");
      return { first, rerun };
    },
    async promptfoo() {
      await fs.remove(path.join(pf, "cache"));
      await fs.remove(path.join(pf, "home"));
      let before = await sent();
      const first = await pfEval();
      const firstOk = await peerSent(before, bodies.length, "promptfoo's first run", i);
      before = await sent();
      const rerun = await pfEval();
      const rerunOk = await peerSent(before, 0, "promptfoo's cached rerun (its cache missed)", i);
      return { first: firstOk ? first : null, rerun: rerunOk ? rerun : null };
    },
  };
  const order = i % 2 === 0 ? ["medbench", "promptfoo"] : ["promptfoo", "medbench"];
  const got = {};
  for (const side of order) got[side] = await sides[side]();
  const bare = await bareLoop();
  r.overBare.push(got.medbench.first.rssKB / bare.rssKB);
  const { first, rerun } = got.promptfoo;
  if (first) {
    r.bareRss.push(bare.rssKB / first.rssKB);
    r.bareMB.push(bare.rssKB / 1024);
    r.first.push(got.medbench.first.ms / first.ms);
    r.firstRss.push(got.medbench.first.rssKB / first.rssKB);
    r.mbFirstS.push(got.medbench.first.ms / 1000);
    r.pfFirstS.push(first.ms / 1000);
    r.mbFirstMB.push(got.medbench.first.rssKB / 1024);
    r.pfFirstMB.push(first.rssKB / 1024);
  }
  if (rerun) {
    r.rerun.push(got.medbench.rerun.ms / rerun.ms);
    r.rerunRss.push(got.medbench.rerun.rssKB / rerun.rssKB);
  }
  loads.push(load());
}
await fake.close();
const version = (await fs.readJson(path.join(String(pfDir), "node_modules/promptfoo/package.json"))).version;
console.log(
  `medbench / promptfoo ${version}: ${items} items (${bodies.length} requests), ` +
    `concurrency ${concurrency}, ` +
    `${pairs} interleaved pairs; min / median / max; node ${process.version}, ${os.cpus().length} cores`,
);
console.log(`  load after each pair: ${loads.join(" | ")}`);
for (const note of notes) console.log(`  note: ${note}`);
const figure = (xs, goal = "") =>
  xs.length ? `${spread(xs, 3)}   (${xs.length} pairs)${goal}` : "no pair gave this figure (see the notes)";
console.log(`  first run, wall time              ${figure(r.first, "   (goal <= 0.05)")}`);
console.log(`  rerun from cached replies, wall   ${figure(r.rerun, "   (goal <= 0.03)")}`);
console.log(`  first run, peak RSS               ${figure(r.firstRss, "   (goal <= 0.15)")}`);
console.log(`  rerun, peak RSS                   ${figure(r.rerunRss)}`);
console.log(`  bare loop, peak RSS               ${figure(r.bareRss)}`);
console.log(`  first run, peak RSS / bare loop's ${figure(r.overBare)}`);
if (r.mbFirstS.length)
  console.log(
    `  first run seconds (medians): medbench ${median(r.mbFirstS).toFixed(2)}, ` +
      `promptfoo ${median(r.pfFirstS).toFixed(2)}; peak RSS (MB, medians): medbench ` +
      `${median(r.mbFirstMB).toFixed(0)}, promptfoo ${median(r.pfFirstMB).toFixed(0)}, ` +
      `bare loop ${median(r.bareMB).toFixed(0)}`,
  );
await fs.remove(work);
