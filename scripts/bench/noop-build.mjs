#!/usr/bin/env node
// No-op build cost against Node's own start-up, measured side by side in one run (ratios, not seconds), each
// a whole process started without a shell (a shell's own start-up would flatter the ratio):
//   1. `node -e 0`                                  (the baseline)
//   2. a no-op `medbench build specs/voice-command.yaml`
//   3. the same with a 100 MB release file among the inputs (the stat cache must keep it at figure 2)
//   4. the no-op build with --rekey: every stage keyed again, not answered from the last no-op's record
//      (src/cli/noop-record.ts), the cost of the first no-op after any change
//   5. `medbench status` with nothing changed (answered from the no-op record), and 6. the same with the
//      record moved away (every stage keyed)
// and, to show where the rest goes, two floors: an empty ES module (Node's module loader starting) and
// `medbench --version` (the CLI's dispatcher, no spec read).
// Each ratio is taken within one round (every command once, back to back) and printed as min / median / max
// over the rounds, with the load average: of wall time, and of CPU (user + system of the process and its
// children, as the kernel counts it: ./rusage.mjs, which needs python3).
// Usage: node scripts/bench/noop-build.mjs [--runs 15]
import { $, fs, path, os, argv } from "zx";
import { createHash } from "node:crypto";
import { measured } from "./rusage.mjs";

$.verbose = false;
const runs = Number(argv.runs ?? 15);
const repo = path.resolve(import.meta.dirname, "../..");
const bin = path.join(repo, "bin/medbench.js");

async function project(bigMB) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "medbench-bench-"));
  await fs.copy(path.join(repo, "specs"), path.join(dir, "specs"));
  if (bigMB) {
    const big = Buffer.alloc(bigMB * 1024 * 1024, 7);
    await fs.writeFile(path.join(dir, "specs/voice-command/sample/big.bin"), big);
    const sha = createHash("sha256").update(big).digest("hex");
    const spec = path.join(dir, "specs/voice-command.yaml");
    let text = await fs.readFile(spec, "utf8");
    text = text.replace(
      "        train/train_v0.2.jsonl: null",
      "        train/train_v0.2.jsonl: null\n        big.bin: null",
    );
    text = text.replace(
      /(          train\/train_v0.2.jsonl: [0-9a-f]{64})/,
      `$1\n          big.bin: ${sha}`,
    );
    await fs.writeFile(spec, text);
    // An old mtime, as a downloaded release has: a file modified in the last seconds is rehashed by design.
    const old = new Date(Date.now() - 3600_000);
    await fs.utimes(path.join(dir, "specs/voice-command/sample/big.bin"), old, old);
  }
  await $({ cwd: dir })`node ${bin} build specs/voice-command.yaml --quiet`;
  await $({ cwd: dir })`node ${bin} build specs/voice-command.yaml --quiet`; // a warm-up no-op
  // A no-op is recorded only once what it consulted has settled (2 s): then the next ones replay it.
  await new Promise((r) => setTimeout(r, 2200));
  for (const extra of [[], ["--rekey"]])
    await $({ cwd: dir })`node ${bin} build specs/voice-command.yaml --quiet ${extra}`;
  return dir;
}

const median = (t) => [...t].sort((a, b) => a - b)[Math.floor(t.length / 2)];
const plain = await project(0);
const big = await project(100);
// Interleaved, run by run, so that machine noise hits all three alike.
const BUILD = [bin, "build", "specs/voice-command.yaml", "--quiet"];
const empty = path.join(plain, "empty.mjs");
await fs.writeFile(empty, "");
const STATUS = [bin, "status", "specs/voice-command.yaml"];
const noRecord = path.join(os.tmpdir(), `medbench-bench-noop-${process.pid}`);
const NAMES = ["node", "empty", "version", "noop", "noopBig", "rekey", "status", "statusKeyed"];
const t = Object.fromEntries(NAMES.map((name) => [name, []]));
const loadBefore = os.loadavg();
const run = async (name, args, cwd) => t[name].push(await measured(["node", ...args], cwd));
for (let i = 0; i < runs; i++) {
  await run("node", ["-e", "0"], plain);
  await run("empty", [empty], plain);
  await run("version", [bin, "--version"], plain);
  await run("noop", BUILD, plain);
  await run("noopBig", BUILD, big);
  await run("rekey", [...BUILD, "--rekey"], plain);
  await run("status", STATUS, plain);
  await fs.move(path.join(plain, "cache/noop"), noRecord);
  await run("statusKeyed", STATUS, plain);
  await fs.move(noRecord, path.join(plain, "cache/noop"));
}
const spreadOf = (name, what) => {
  const r = t[name].map((x, i) => x[what] / t.node[i][what]).sort((a, b) => a - b);
  return `${r[0].toFixed(2)} / ${median(r).toFixed(2)} / ${r[r.length - 1].toFixed(2)}`;
};
const ratio = (name) => `wall ${spreadOf(name, "wallMs")}   CPU ${spreadOf(name, "cpuMs")}`;
const load = (l) => l.map((x) => x.toFixed(2)).join(" ");
const ms = (what) => median(t.node.map((x) => x[what])).toFixed(0);
console.log(`${runs} rounds; each ratio to node -e 0 of the same round, min / median / max`);
console.log(`load average ${load(loadBefore)} -> ${load(os.loadavg())}`);
console.log(
  `node -e 0                           1.00  (median wall ${ms("wallMs")} ms, CPU ${ms("cpuMs")} ms)`,
);
console.log(`node empty.mjs                      ${ratio("empty")}  (floor: the module loader)`);
console.log(`medbench --version                  ${ratio("version")}  (floor: the CLI)`);
console.log(`no-op build                         ${ratio("noop")}  (goal <= 1.5)`);
console.log(`no-op build, 100 MB input           ${ratio("noopBig")}  (goal: same as the line above)`);
console.log(`no-op build --rekey                 ${ratio("rekey")}  (goal <= 2)`);
console.log(`status, nothing changed             ${ratio("status")}  (goal <= 1.5)`);
console.log(`status, every stage keyed           ${ratio("statusKeyed")}  (no record: the old path)`);
await fs.remove(plain);
await fs.remove(big);
