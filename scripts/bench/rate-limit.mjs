#!/usr/bin/env node
// First builds against rate limiters held out from medbench's pacer (./bucket-server.mjs, over real HTTP in
// front of the fake server, scripts/fake-openai.mjs as its own process), one variant at a time, each on a
// synthetic voice-command release whose bodies all differ (./release.mjs). Printed, from the servers'
// counts:
//   answered       replies / distinct bodies sent (the fake tells bodies by their messages, so each is sent
//                  once by each build that shares a limit), and the build's exit (every item answered)
//   429s           429s / requests received; the goal is < 10 %
//   allowed rate   units answered (requests, or tokens for a token limit) / units the bucket allowed from
//                  the first request to the last answer (its burst, then its refill); the goal is >= 90 %
//                  (>= 80 % headerless)
// and the same for promptfoo (0.121.20, the last for Node 20) on the same server and bodies when it is
// installed (`npm i promptfoo@0.121.20` in an empty folder outside the repository, passed as --promptfoo).
// The limits and item counts are chosen so that each variant takes about a minute at most (items several
// times the burst, so that the refill, not the burst, is measured); the limit a variant names is kept.
//   node scripts/bench/rate-limit.mjs [--variant NAME,...] [--concurrency 16] [--promptfoo DIR] [--timeline]
// (--timeline: the 429s counted per second after the first request, to see when they come)
import { fs, path, os, argv } from "zx";
import { timed } from "./timed.mjs";
import { syntheticProject } from "./release.mjs";
import { load, server, fakeRouteYaml } from "./fake-process.mjs";
import { promptfooEnv, promptfooProject } from "./promptfoo-project.mjs";
import { bucketServer } from "./bucket-server.mjs";

// perMinute(t, answered): the limit at t ms after the first request; burst in the bucket's units.
const VARIANTS = {
  "short-window": { what: "600 requests/minute enforced as 10 a second", items: 460, burst: 10, rpm: 600 },
  tokens: {
    what: "600,000 tokens/minute (a bucket of 20,000), OpenAI's token headers only",
    items: 460,
    tpm: 600_000,
    burst: 20_000,
  },
  openai: { what: "1200 requests/minute, OpenAI-consistent headers", items: 690, burst: 100, rpm: 1200 },
  shared: { what: "1200 requests/minute shared by two builds", items: 345, builds: 2, burst: 50, rpm: 1200 },
  drops: {
    what: "600 requests/minute dropping to 120 halfway",
    items: 300,
    burst: 10,
    rpm: 600,
    dropTo: 120,
  },
  headerless: { what: "60 requests/minute, a bare 429", items: 150, burst: 60, rpm: 60 },
  "http-date": { what: "600 requests/minute, Retry-After as an HTTP date", items: 300, burst: 10, rpm: 600 },
  groq: { what: "600 requests/minute, Groq's headers", items: 300, burst: 10, rpm: 600 },
};
const chosen = argv.variant ? String(argv.variant).split(",") : Object.keys(VARIANTS);
for (const name of chosen) if (!VARIANTS[name]) throw new Error(`no variant ${name}`);
const concurrency = Number(argv.concurrency ?? 16); // the shipped openai and openrouter routes'
const pfDir = argv.promptfoo ?? process.env.PROMPTFOO_DIR;
const promptfoo = pfDir && path.join(path.resolve(String(pfDir)), "node_modules/.bin/promptfoo");
const havePromptfoo = Boolean(promptfoo && (await fs.pathExists(promptfoo)));
const repo = path.resolve(import.meta.dirname, "../..");
const bin = path.join(repo, "bin/medbench.js");
const work = await fs.mkdtemp(path.join(os.tmpdir(), "medbench-bench-rate-limit-"));

/** The bucket of a variant: its units' limit a minute as a function of time since the first request. */
function bucketOf(name, v, answered) {
  const variant = name === "shared" || name === "drops" ? "openai" : name;
  if (v.tpm) return { variant, perMinute: () => v.tpm, burst: v.burst };
  const half = (v.items * (v.builds ?? 1)) / 2;
  const perMinute = v.dropTo ? () => (answered() < half ? v.rpm : v.dropTo) : () => v.rpm;
  return { variant, perMinute, burst: v.burst };
}

/** Runs `side(url)` against a fresh limiter before a fresh fake; the servers' figures. */
async function measured(name, v, side, record = null) {
  const fake = await server(record);
  let answered = 0;
  const bucket = await bucketServer({ ...bucketOf(name, v, () => answered), upstream: fake.url });
  const poll = setInterval(() => (answered = bucket.report().answered), 50);
  let exit = "0";
  try {
    await side(bucket.url);
  } catch (e) {
    exit = /exited (\d+)/.exec(String(e.message))?.[1] ?? "error";
  }
  clearInterval(poll);
  const s = await fake.stats();
  const b = bucket.report();
  await Promise.all([fake.close(), bucket.close()]);
  return { exit, bodies: s.bodies, replies: s.replies, ...b };
}

/** A side's figures; `builds`: the builds (or evals) that each send every body once. */
function print(who, r, builds) {
  const pct = (x) => `${(100 * x).toFixed(1)} %`;
  const each = builds > 1 ? ` (${r.bodies} bodies, each sent by ${builds} builds)` : " bodies";
  console.log(
    `  ${who.padEnd(10)} exit ${r.exit}; answered ${r.replies} of ${r.bodies * builds}${each}; ` +
      `${r.requests} requests in ${r.seconds.toFixed(1)} s; 429s ${pct(r.limited / r.requests)} ` +
      `(${r.limited}); allowed rate ${pct(r.answeredUnits / r.allowedUnits)} (${r.units})`,
  );
  if (argv.timeline) console.log(`    429s per second from the first request: ${timeline(r.limitedAt)}`);
}

/** The 429s counted per second after the first request, as "s:count" for the seconds that had any. */
function timeline(times) {
  const perSecond = new Map();
  for (const t of times) perSecond.set(Math.floor(t / 1000), (perSecond.get(Math.floor(t / 1000)) ?? 0) + 1);
  return [...perSecond].map(([s, n]) => `${s}:${n}`).join(" ") || "none";
}

/** One medbench build of the project in `dir` per model (the builds of the shared variant run at once). */
function medbench(dir, models) {
  return async (url) => {
    await fs.writeFile(path.join(dir, "routes.yaml"), `routes:\n${fakeRouteYaml("fake", url, concurrency)}`);
    const build = (model) =>
      timed(
        "node",
        [
          bin,
          "build",
          "specs/voice-command.yaml",
          "--model",
          `fake/${model}`,
          "--registry",
          "routes.yaml",
        ].concat(["--data-dir", "release"]),
        dir,
        { rss: false },
      ).then((run) => {
        const note = /the rate limit set the pace[^\n]*/.exec(run.stderr + run.stdout);
        if (note) console.log(`    (${model}) ${note[0]}`);
      });
    await Promise.all(models.map(build));
  };
}

console.log(
  `rate limits held out from medbench's pacer, concurrency ${concurrency}; node ${process.version}, ` +
    `${os.cpus().length} cores, load ${load()}`,
);
for (const name of chosen) {
  const v = VARIANTS[name];
  const { dir, items } = await syntheticProject(v.items, work);
  const models = v.builds ? ["bench-a", "bench-b"] : ["bench"];
  console.log(`${name}: ${v.what}; ${items} items${v.builds ? " in each build" : ""}`);
  const bodiesFile = path.join(work, `${name}-bodies.jsonl`);
  const builds = v.builds ?? 1;
  print("medbench", await measured(name, v, medbench(dir, models), bodiesFile), builds);
  if (havePromptfoo)
    print("promptfoo", await measured(name, v, (url) => promptfooEval(url, bodiesFile, builds)), builds);
}
if (!havePromptfoo)
  console.log("  promptfoo  not installed (--promptfoo DIR: a folder with `npm i promptfoo@0.121.20`)");
console.log(`  load at the end ${load()}`);
await fs.remove(work);

/** promptfoo's evals (`evals` at once, the bodies split among them) of the bodies medbench sent, each once,
 *  set up as scripts/bench/promptfoo.mjs does. */
async function promptfooEval(url, bodiesFile, evals) {
  const lines = [...new Set((await fs.readFile(bodiesFile, "utf8")).split("\n").filter(Boolean))];
  const bodies = lines.map((l) => JSON.parse(l));
  const runs = Array.from({ length: evals }, async (_, i) => {
    const pf = path.join(work, `promptfoo-${path.basename(bodiesFile)}-${i}`);
    const config = await promptfooProject(
      pf,
      bodies.filter((_b, j) => j % evals === i),
    );
    await config(url);
    const args = ["eval", "-c", "promptfooconfig.yaml", "--max-concurrency", String(concurrency)];
    return timed(promptfoo, [...args, "--no-progress-bar", "--no-table", "--no-cache"], pf, {
      env: promptfooEnv(pf),
      rss: false,
    });
  });
  await Promise.all(runs);
}
