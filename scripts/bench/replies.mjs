#!/usr/bin/env node
// Model-stage start-up against the size of the reply store: the time and memory a fresh process needs to
// open the reply memo and answer one stage's requests (200 lookups of replies it already has; timed from
// when the code is loaded, so that Node's own module loading does not drown the store's cost), with the
// store at 1x and at 10x (many earlier builds' logs). Printed as ratios 10x/1x (flat is 1.00), with the
// absolute figures beside them, for the indexed store (src/runner/replies/reply-log.ts, compiled in dist/)
// and, as the baseline timed in the same run, the reader it replaced: every log read whole into a map
// (reimplemented below in a few lines, as src/runner/replies/memo.ts did it before the index).
// Usage: npm run build && node scripts/bench/replies.mjs [--base 2000] [--runs 5]
import { $, fs, path, os, argv } from "zx";
import { createHash, randomBytes } from "node:crypto";
import { pathToFileURL } from "node:url";

$.verbose = false;
const repo = path.resolve(import.meta.dirname, "../..");
const REPLY_LOG_URL = pathToFileURL(path.join(repo, "dist/src/runner/replies/reply-log.js")).href;
const base = Number(argv.base ?? 2000); // replies at 1x
const runs = Number(argv.runs ?? 5);
const perLog = 100; // replies per earlier build's log
const sha = (b) => createHash("sha256").update(b).digest("hex");

/** A reply payload shaped like a chat completion of ~1.5 kB. */
function payload(i) {
  const content = randomBytes(900).toString("base64");
  return Buffer.from(
    JSON.stringify({
      kind: "reply",
      status: 200,
      body: {
        id: `chatcmpl-${i}`,
        choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
        usage: { prompt_tokens: 300, completion_tokens: 200 },
      },
    }),
  );
}

// Logs as earlier builds leave them (same record format; writers long gone: pids above Linux's pid_max).
let nextLog = 0;
async function addLogs(dir, from, to) {
  const keys = [];
  for (let start = from; start < to; start += perLog) {
    const lines = [];
    for (let i = start; i < Math.min(to, start + perLog); i++) {
      const key = sha(`request ${i}`);
      const p = payload(i);
      keys.push(key);
      lines.push(`${key} ${sha(p)} ${p.toString("base64")}\n`);
    }
    await fs.writeFile(path.join(dir, `${5_000_000 + nextLog++}-bench.log`), lines.join(""));
  }
  return keys;
}

const child = (mode) => `
  const [dir, keysFile] = process.argv.slice(1);
  const keys = JSON.parse(require("node:fs").readFileSync(keysFile, "utf8"));
  let get, t0;
  if (${JSON.stringify(mode)} === "index") {
    const { ReplyLog } = await import(${JSON.stringify(REPLY_LOG_URL)});
    t0 = performance.now(); // the module loaded: what follows is the store's own cost
    const log = new ReplyLog(dir);
    get = (k) => log.get(k);
  } else {
    const fs = require("node:fs"), { createHash } = require("node:crypto");
    t0 = performance.now();
    const RECORD = /^([0-9a-f]{64}) ([0-9a-f]{64}) ([A-Za-z0-9+/=]*)$/;
    const entries = new Map();
    const logs = fs.readdirSync(dir).filter((f) => f.endsWith(".log"))
      .map((f) => ({ f, t: fs.statSync(dir + "/" + f).mtimeMs })).sort((a, b) => a.t - b.t);
    for (const { f } of logs)
      for (const line of fs.readFileSync(dir + "/" + f, "utf8").split("\\n")) {
        const m = RECORD.exec(line);
        if (!m) continue;
        const p = Buffer.from(m[3], "base64");
        if (createHash("sha256").update(p).digest("hex") === m[2]) entries.set(m[1], p);
      }
    get = (k) => entries.get(k) ?? null;
  }
  let hits = 0;
  for (const k of keys) if (get(k)) hits++;
  const ms = performance.now() - t0;
  globalThis.gc();
  const m = process.memoryUsage();
  process.stdout.write(JSON.stringify({ ms, hits, held: m.heapUsed + m.external, rss: m.rss }));
`;

async function measure(mode, dir, keysFile) {
  const out = [];
  for (let r = 0; r < runs; r++) {
    const code =
      'import { createRequire } from "node:module"; const require = createRequire(import.meta.url);' +
      child(mode);
    const { stdout } = await $`node --expose-gc --input-type=module -e ${code} ${dir} ${keysFile}`;
    out.push(JSON.parse(stdout));
  }
  const med = (f) => out.map(f).sort((a, b) => a - b)[Math.floor(out.length / 2)];
  return { ms: med((o) => o.ms), held: med((o) => o.held), rss: med((o) => o.rss), hits: out[0].hits };
}

const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "medbench-bench-replies-"));
const dir = path.join(tmp, "memo/requests");
await fs.mkdirp(dir);
const keysFile = path.join(tmp, "keys.json");
const { ReplyLog } = await import(
  pathToFileURL(path.join(repo, "dist/src/runner/replies/reply-log.js")).href
);

const results = {};
let all = [];
const indexMs = [];
for (let step = 1; step <= 10; step++) {
  all = all.concat(await addLogs(dir, (step - 1) * base, step * base));
  // The first start after a build: it reads the new logs and indexes them (timed separately).
  const t0 = performance.now();
  new ReplyLog(dir);
  indexMs.push(performance.now() - t0);
  if (step === 1 || step === 10) {
    const pick = Array.from({ length: 200 }, (_, i) => all[Math.floor(((i + 0.5) * all.length) / 200)]);
    await fs.writeFile(keysFile, JSON.stringify(pick));
    results[step] = {
      index: await measure("index", dir, keysFile),
      whole: await measure("whole", dir, keysFile),
    };
  }
}
const runsLeft = (await fs.readdir(dir)).filter((f) => f.endsWith(".idx")).length;
const mb = (b) => `${(b / 1048576).toFixed(1)} MB`;
const storeBytes = (
  await Promise.all((await fs.readdir(dir)).map((f) => fs.stat(path.join(dir, f))))
).reduce((a, s) => a + s.size, 0);
console.log(
  `reply store: ${base} replies at 1x, ${10 * base} at 10x (${mb(storeBytes)} on disk, ` +
    `${runsLeft} index runs); 200 lookups per start, median of ${runs} fresh processes`,
);
for (const [mode, label] of [
  ["index", "indexed (now)"],
  ["whole", "every log read whole (before)"],
]) {
  const [a, b] = [results[1][mode], results[10][mode]];
  if (a.hits !== 200 || b.hits !== 200) throw new Error(`${mode}: ${a.hits}/${b.hits} of 200 found`);
  console.log(
    `${label.padEnd(32)} start-up ${a.ms.toFixed(1)} -> ${b.ms.toFixed(1)} ms ` +
      `(x${(b.ms / a.ms).toFixed(2)}); ` +
      `memory held ${mb(a.held)} -> ${mb(b.held)} (x${(b.held / a.held).toFixed(2)}); ` +
      `rss ${mb(a.rss)} -> ${mb(b.rss)} (x${(b.rss / a.rss).toFixed(2)})`,
  );
}
console.log(
  `first start after a build adds ${base} replies (reads them, indexes, merges runs): ` +
    indexMs.map((t) => t.toFixed(0)).join(", ") +
    " ms at 1x..10x",
);
await fs.remove(tmp);
