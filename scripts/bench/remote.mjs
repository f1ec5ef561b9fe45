#!/usr/bin/env node
// A build whose every stage and reply comes from the shared remote cache (a fresh clone, an empty local
// cache) against the same build with everything in the local cache (a no-op), side by side in one run, as a
// ratio. The remote is s3rver on 127.0.0.1 (scripts/s3-server.mjs), the model the fake OpenAI-compatible
// server (scripts/fake-openai.mjs); neither is asked anything the caches hold (checked).
// Usage: npm run build && node scripts/bench/remote.mjs [--runs 5]
import { $, fs, path, os, argv } from "zx";
import { startS3 } from "../s3-server.mjs";
import { startFakeOpenAI } from "../fake-openai.mjs";
import { remoteEnv, specsProject, writeFakeRoutes } from "./fake-process.mjs";

$.verbose = false;
const runs = Number(argv.runs ?? 5);
const repo = path.resolve(import.meta.dirname, "../..");
const bin = path.join(repo, "bin/medbench.js");
const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "medbench-bench-remote-"));
const s3 = await startS3({ dir: path.join(tmp, "s3") });
const fake = await startFakeOpenAI({});
const env = remoteEnv(s3.endpoint);
let clones = 0;
async function clone() {
  const dir = await specsProject(tmp, `clone-${clones++}`);
  await writeFakeRoutes(dir, fake.url, 4);
  return dir;
}
const build = (dir, e = env) =>
  $({
    cwd: dir,
    env: e,
  })`node ${bin} build specs/voice-command.yaml --model fake/test-model --registry routes.yaml --quiet`;

await build(await clone()); // fills the remote
const sent = fake.stats.requests;
const local = await clone();
await build(local);
const remoteMs = [],
  localMs = [];
for (let i = 0; i < runs; i++) {
  const fresh = await clone();
  let t0 = performance.now();
  await build(fresh); // every stage from the remote
  remoteMs.push(performance.now() - t0);
  t0 = performance.now();
  await build(local); // every stage in the local cache
  localMs.push(performance.now() - t0);
}
if (fake.stats.requests !== sent)
  throw new Error(`the caches missed: ${fake.stats.requests - sent} requests`);
const med = (a) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)];
console.log(`voice-command (fake model, ${sent} requests), median of ${runs} runs each`);
console.log(`${"locally cached rebuild (no-op)".padEnd(40)}1.00  (${med(localMs).toFixed(0)} ms)`);
console.log(
  `${"fully remote-cached build, empty cache".padEnd(40)}${(med(remoteMs) / med(localMs)).toFixed(2)}  ` +
    `(${med(remoteMs).toFixed(0)} ms)`,
);
await fake.close();
await s3.close();
await fs.remove(tmp);
