#!/usr/bin/env node
// A first build against a rate-limited server: the fake server (scripts/fake-openai.mjs as its own process)
// with a token bucket of RPM requests refilled at RPM a minute, answering 429 with OpenAI's rate-limit
// headers when it is empty (scripts/fake-rate-limit.mjs), and a synthetic voice-command release of N items,
// every body distinct (./release.mjs). Printed, from the server's own counts:
//   answered       bodies given a reply / bodies sent (every item must be answered)
//   allowed rate   replies / what the bucket allowed from the first request to the last reply
//                  (RPM at once, then RPM a minute); the goal is >= 95 %
//   wasted on 429  429s / requests received; the goal is < 10 %
// and the same for promptfoo (0.121.20, the last for Node 20) on the same server and bodies when it is
// installed (`npm i promptfoo@0.121.20` in an empty folder outside the repository, passed as --promptfoo).
//   node scripts/bench/rate-limit.mjs [--items 2070] [--rpm 600] [--concurrency 16] [--promptfoo DIR]
import { fs, path, os, argv } from "zx";
import { timed } from "./timed.mjs";
import { syntheticProject } from "./release.mjs";
import { load, server, writeFakeRoutes } from "./fake-process.mjs";
import { promptfooEnv, promptfooProject } from "./promptfoo-project.mjs";

const target = Number(argv.items ?? 2070);
const rpm = Number(argv.rpm ?? 600);
const concurrency = Number(argv.concurrency ?? 16); // the shipped openai and openrouter routes'
const pfDir = argv.promptfoo ?? process.env.PROMPTFOO_DIR;
const promptfoo = pfDir && path.join(path.resolve(String(pfDir)), "node_modules/.bin/promptfoo");
const repo = path.resolve(import.meta.dirname, "../..");
const bin = path.join(repo, "bin/medbench.js");
const work = await fs.mkdtemp(path.join(os.tmpdir(), "medbench-bench-rate-limit-"));
const { dir, items } = await syntheticProject(target, work);
const bodiesFile = path.join(work, "bodies.jsonl");

/** Runs `side` against a fresh rate-limited server (a full bucket) and returns the server's figures. */
async function measured(side, record = null) {
  const fake = await server(record, ["--rate-limit", String(rpm)]);
  let exit = "0";
  try {
    await side(fake.url);
  } catch (e) {
    exit = /exited (\d+)/.exec(String(e.message))?.[1] ?? "error";
  }
  const s = await fake.stats();
  await fake.close();
  const seconds = (s.last_answered_at - s.first_at) / 1000;
  const allowed = rpm + (rpm / 60) * seconds;
  const limited = s.faults["rate-limit"] ?? 0;
  return { exit, bodies: s.bodies, replies: s.replies, requests: s.requests, limited, seconds, allowed };
}

const medbench = (url) =>
  writeFakeRoutes(dir, url, concurrency).then(() =>
    timed(
      "node",
      [bin, "build", "specs/voice-command.yaml", "--model", "fake/bench", "--registry", "routes.yaml"].concat(
        ["--data-dir", "release"],
      ),
      dir,
      { rss: false },
    ),
  );

function print(name, r) {
  const pct = (x) => `${(100 * x).toFixed(1)} %`;
  console.log(
    `  ${name.padEnd(10)} exit ${r.exit}; answered ${r.replies} of ${r.bodies} bodies; ` +
      `${r.requests} requests in ${r.seconds.toFixed(1)} s; ` +
      `allowed rate ${pct(r.replies / r.allowed)} (goal >= 95 %); ` +
      `wasted on 429 ${pct(r.limited / r.requests)} (${r.limited}; goal < 10 %)`,
  );
}

console.log(
  `rate limit ${rpm} requests/minute (a bucket of ${rpm}), ${items} items, concurrency ${concurrency}; ` +
    `node ${process.version}, ${os.cpus().length} cores, load ${load()}`,
);
print("medbench", await measured(medbench, bodiesFile));

if (promptfoo && (await fs.pathExists(promptfoo))) {
  print("promptfoo", await measured((url) => promptfooEval(url)));
} else {
  console.log("  promptfoo  not installed (--promptfoo DIR: a folder with `npm i promptfoo@0.121.20`)");
}
console.log(`  load at the end ${load()}`);
await fs.remove(work);

/** promptfoo's eval of the bodies medbench sent (each once), set up as scripts/bench/promptfoo.mjs does. */
async function promptfooEval(url) {
  const lines = (await fs.readFile(bodiesFile, "utf8")).split("\n").filter(Boolean);
  const pf = path.join(work, "promptfoo");
  const config = await promptfooProject(
    pf,
    [...new Set(lines)].map((l) => JSON.parse(l)),
  );
  await config(url);
  const args = ["eval", "-c", "promptfooconfig.yaml", "--max-concurrency", String(concurrency)];
  const env = promptfooEnv(pf);
  return timed(promptfoo, [...args, "--no-progress-bar", "--no-table", "--no-cache"], pf, {
    env,
    rss: false,
  });
}
